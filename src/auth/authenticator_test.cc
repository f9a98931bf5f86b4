#include "auth/authenticator.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/stat.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <thread>
#include <vector>

#include "auth/password_scheme.h"
#include "test_support/temp_dir.h"

namespace peregrine::auth {
namespace {

namespace fs = std::filesystem;
using base::MailError;
using test_support::TempDir;

// Overwrites in place (same inode), then sets the mtime, like an editor that
// does not rename.
void write_in_place(const fs::path& path, const std::string& text, std::int64_t mtime_sec) {
  {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out << text;
  }
  struct timespec times[2] = {{mtime_sec, 0}, {mtime_sec, 0}};
  ASSERT_EQ(::utimensat(AT_FDCWD, path.c_str(), times, 0), 0);
}

// Counts whole-file reads, to see when the file is re-read.
class CountingFileSystem final : public base::FileSystem {
 public:
  base::Result<std::unique_ptr<base::WritableFile>> create_exclusive(const fs::path& p,
                                                                     mode_t mode) override {
    return real().create_exclusive(p, mode);
  }
  base::Result<std::string> read_file(const fs::path& p, std::size_t max) override {
    ++reads;
    return real().read_file(p, max);
  }
  base::Result<void> rename(const fs::path& a, const fs::path& b) override {
    return real().rename(a, b);
  }
  base::Result<void> remove(const fs::path& p) override { return real().remove(p); }
  base::Result<void> set_mode(const fs::path& p, mode_t m) override {
    return real().set_mode(p, m);
  }
  base::Result<void> sync_dir(const fs::path& p) override { return real().sync_dir(p); }
  base::Result<base::FileInfo> stat(const fs::path& p) override { return real().stat(p); }

  std::atomic<int> reads{0};

 private:
  static base::FileSystem& real() { return base::real_file_system(); }
};

const HashOptions kFast{.crypt_rounds = 4, .argon2_ops = 1, .argon2_mem_bytes = 64 * 1024};

class AuthenticatorTest : public ::testing::Test {
 protected:
  void SetUp() override {
    path_ = dir_.path() / "users";
    std::string text = "# test users\n";
    text += "alice:" + *hash_password(Scheme::kSha512Crypt, "alice pw") +
            ":1000:1000::/home/alice::quota=1G\n";
    text += "bob:" + *hash_password(Scheme::kBlfCrypt, "bob pw", kFast) + "\n";
    text += "carol:" + *hash_password(Scheme::kArgon2id, "carol pw", kFast) + ":7:8::/c\n";
    text += "dave:{PLAIN}dave pw\n";
    text += "erin:" + hash_password(Scheme::kCrypt, "erin pw")->substr(7) + "\n";  // bare $y$
    text += "locked:::::\n";
    text += "broken:{SHA512-CRYPT}not-a-hash\n";
    text += "legacy:{SSHA}abcdef\n";
    // Made by Dovecot: doveadm pw -s SHA256-CRYPT -p secret
    text += "frank:{SHA256-CRYPT}$5$btGyZq/tjlEkzr30$/F/h3YRwTlIBiGV3msAjlQP58PPs4CpbujXxYznvVH0\n";
    ASSERT_TRUE(base::atomic_write(path_, text));
  }

  TempDir dir_;
  fs::path path_;
};

TEST_F(AuthenticatorTest, VerifiesEveryScheme) {
  Authenticator auth(path_);
  struct Case {
    const char* user;
    const char* password;
  };
  for (const Case& c :
       {Case{"alice", "alice pw"}, Case{"bob", "bob pw"}, Case{"carol", "carol pw"},
        Case{"dave", "dave pw"}, Case{"erin", "erin pw"}, Case{"frank", "secret"}}) {
    auto r = auth.verify(c.user, c.password);
    ASSERT_TRUE(r) << c.user << ": " << r.error().message;
    EXPECT_EQ(r->name, c.user);
    auto wrong = auth.verify(c.user, "wrong");
    ASSERT_FALSE(wrong) << c.user;
    EXPECT_EQ(wrong.error().code, MailError::kAuthFailed);
    EXPECT_EQ(wrong.error().message, std::string("wrong password for user ") + c.user);
  }
}

TEST_F(AuthenticatorTest, ReturnsUserInfo) {
  Authenticator auth(path_);
  auto alice = auth.verify("alice", "alice pw");
  ASSERT_TRUE(alice);
  EXPECT_EQ(alice->home, "/home/alice");
  EXPECT_EQ(alice->uid, 1000u);
  EXPECT_EQ(alice->gid, 1000u);
  auto dave = auth.verify("dave", "dave pw");
  ASSERT_TRUE(dave);
  EXPECT_EQ(dave->home, "");
  EXPECT_EQ(dave->uid, std::nullopt);
  auto carol = auth.lookup("carol");
  ASSERT_TRUE(carol);
  EXPECT_EQ(carol->home, "/c");
  EXPECT_EQ(carol->uid, 7u);
  EXPECT_EQ(carol->gid, 8u);
  auto nobody = auth.lookup("nobody");
  ASSERT_FALSE(nobody);
  EXPECT_EQ(nobody.error().code, MailError::kNotFound);
}

TEST_F(AuthenticatorTest, FailureKinds) {
  Authenticator auth(path_);
  struct Case {
    const char* user;
    MailError code;
    std::string message;
  };
  const Case cases[] = {
      {"nobody", MailError::kAuthFailed, "unknown user nobody"},
      {"Alice", MailError::kAuthFailed, "unknown user Alice"},  // case-sensitive
      {"locked", MailError::kAuthFailed, "user locked (passwd file line 7): has no password"},
      {"broken", MailError::kInternal,
       "user broken (passwd file line 8): malformed SHA512-CRYPT hash (wrong prefix)"},
      {"legacy", MailError::kInternal,
       "user legacy (passwd file line 9): unsupported password scheme {SSHA}"},
  };
  for (const Case& c : cases) {
    auto r = auth.verify(c.user, "anything");
    ASSERT_FALSE(r) << c.user;
    EXPECT_EQ(r.error().code, c.code) << c.user;
    EXPECT_EQ(r.error().message, c.message);
  }
}

TEST_F(AuthenticatorTest, MissingFileIsTemporaryUntilItAppears) {
  fs::path missing = dir_.path() / "later";
  Authenticator auth(missing);
  auto r = auth.verify("alice", "alice pw");
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, MailError::kTemporary);
  EXPECT_EQ(r.error().message,
            "passwd file: stat " + missing.string() + ": No such file or directory");
  fs::copy_file(path_, missing);
  EXPECT_TRUE(auth.verify("alice", "alice pw"));
  fs::remove(missing);
  EXPECT_FALSE(auth.verify("alice", "alice pw"));
}

TEST_F(AuthenticatorTest, RereadsWhenTheFileIsReplaced) {
  CountingFileSystem counting;
  Authenticator auth(path_, counting);
  ASSERT_TRUE(auth.verify("dave", "dave pw"));
  ASSERT_TRUE(auth.verify("dave", "dave pw"));
  ASSERT_TRUE(auth.lookup("alice"));
  EXPECT_EQ(counting.reads, 1);  // unchanged: read once

  // `peregrine user passwd` and `user del` go through PasswdFile + atomic_write.
  auto file = PasswdFile::read(base::real_file_system(), path_);
  ASSERT_TRUE(file);
  ASSERT_TRUE(file->set_password("dave", "{PLAIN}new pw"));
  ASSERT_TRUE(file->remove("bob"));
  ASSERT_TRUE(file->write(base::real_file_system(), path_));

  EXPECT_FALSE(auth.verify("dave", "dave pw"));
  EXPECT_TRUE(auth.verify("dave", "new pw"));
  auto bob = auth.verify("bob", "bob pw");
  ASSERT_FALSE(bob);
  EXPECT_EQ(bob.error().message, "unknown user bob");
  EXPECT_EQ(counting.reads, 2);
}

TEST_F(AuthenticatorTest, RereadsWhenEditedInPlace) {
  write_in_place(path_, "dave:{PLAIN}abcd\n", 1'600'000'000);
  Authenticator auth(path_);
  ASSERT_TRUE(auth.verify("dave", "abcd"));
  // Same inode, same size: only the mtime tells.
  write_in_place(path_, "dave:{PLAIN}wxyz\n", 1'600'000'001);
  EXPECT_FALSE(auth.verify("dave", "abcd"));
  EXPECT_TRUE(auth.verify("dave", "wxyz"));
}

TEST_F(AuthenticatorTest, BrokenFileFailsClosedUntilFixed) {
  CountingFileSystem counting;
  Authenticator auth(path_, counting);
  ASSERT_TRUE(auth.verify("dave", "dave pw"));
  write_in_place(path_, "dave:{PLAIN}dave pw\ndave:{PLAIN}again\n", 1'600'000'000);
  auto r = auth.verify("dave", "dave pw");
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, MailError::kTemporary);
  EXPECT_EQ(r.error().message,
            "passwd file " + path_.string() + ": line 2: duplicate user dave (first on line 1)");
  auto again = auth.lookup("dave");
  ASSERT_FALSE(again);
  EXPECT_EQ(again.error().code, MailError::kTemporary);
  EXPECT_EQ(counting.reads, 2);  // the broken version is not re-parsed on every login
  write_in_place(path_, "dave:{PLAIN}dave pw\n", 1'600'000'001);
  EXPECT_TRUE(auth.verify("dave", "dave pw"));
}

TEST_F(AuthenticatorTest, ConcurrentVerifyWhileTheFileChanges) {
  Authenticator auth(path_);
  std::atomic<bool> stop{false};
  std::atomic<int> failures{0};
  std::vector<std::thread> readers;
  for (int t = 0; t < 3; ++t) {
    readers.emplace_back([&] {
      while (!stop) {
        // dave's password never changes; the writer only adds users.
        if (!auth.verify("dave", "dave pw")) {
          ++failures;
        }
        (void)auth.verify("nobody", "x");
      }
    });
  }
  for (int i = 0; i < 20; ++i) {
    auto file = PasswdFile::read(base::real_file_system(), path_);
    ASSERT_TRUE(file);
    ASSERT_TRUE(file->add({.name = "user" + std::to_string(i), .password = "{PLAIN}x"}));
    ASSERT_TRUE(file->write(base::real_file_system(), path_));
  }
  stop = true;
  for (auto& reader : readers) {
    reader.join();
  }
  EXPECT_EQ(failures, 0);
  EXPECT_TRUE(auth.verify("user19", "x"));
}

}  // namespace
}  // namespace peregrine::auth
