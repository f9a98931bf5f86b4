#include "base/files.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "test_support/temp_dir.h"

namespace peregrine::base {
namespace {

namespace fs = std::filesystem;
using test_support::TempDir;

void write_plain(const fs::path& path, const std::string& contents) {
  std::ofstream out(path, std::ios::binary);
  out << contents;
}

mode_t mode_of(const fs::path& path) {
  struct stat st;
  EXPECT_EQ(::stat(path.c_str(), &st), 0);
  return st.st_mode & 07777;
}

// Sets the process umask for the scope of a test.
class ScopedUmask {
 public:
  explicit ScopedUmask(mode_t mask) : old_(::umask(mask)) {}
  ~ScopedUmask() { ::umask(old_); }

 private:
  mode_t old_;
};

// Wraps the real filesystem and fails the chosen step with the chosen errno.
class FaultyFileSystem final : public FileSystem {
 public:
  enum class Step { kNone, kCreate, kAppend, kSync, kClose, kSetMode, kRename, kSyncDir };

  FaultyFileSystem(Step step, int err) : step_(step), err_(err) {}

  Result<std::unique_ptr<WritableFile>> create_exclusive(const fs::path& path,
                                                         mode_t mode) override {
    if (step_ == Step::kCreate) {
      return std::unexpected(errno_error("create", path, err_));
    }
    auto file = real_file_system().create_exclusive(path, mode);
    if (!file) {
      return file;
    }
    return std::make_unique<File>(std::move(*file), this);
  }
  Result<std::string> read_file(const fs::path& path, std::size_t max_bytes) override {
    return real_file_system().read_file(path, max_bytes);
  }
  Result<void> rename(const fs::path& from, const fs::path& to) override {
    if (step_ == Step::kRename) {
      return std::unexpected(errno_error("rename", from, err_));
    }
    return real_file_system().rename(from, to);
  }
  Result<void> remove(const fs::path& path) override {
    removed_.push_back(path);
    return real_file_system().remove(path);
  }
  Result<void> set_mode(const fs::path& path, mode_t mode) override {
    if (step_ == Step::kSetMode) {
      return std::unexpected(errno_error("chmod", path, err_));
    }
    return real_file_system().set_mode(path, mode);
  }
  Result<void> sync_dir(const fs::path& dir) override {
    if (step_ == Step::kSyncDir) {
      return std::unexpected(errno_error("fsync directory", dir, err_));
    }
    synced_dirs_.push_back(dir);
    return real_file_system().sync_dir(dir);
  }
  Result<FileInfo> stat(const fs::path& path) override { return real_file_system().stat(path); }

  const std::vector<fs::path>& removed() const { return removed_; }
  const std::vector<fs::path>& synced_dirs() const { return synced_dirs_; }
  int syncs() const { return syncs_; }

 private:
  class File final : public WritableFile {
   public:
    File(std::unique_ptr<WritableFile> inner, FaultyFileSystem* owner)
        : inner_(std::move(inner)), owner_(owner) {}
    Result<void> append(std::string_view data) override {
      if (owner_->step_ == Step::kAppend) {
        // A full disk: half the data lands, then ENOSPC.
        (void)inner_->append(data.substr(0, data.size() / 2));
        return std::unexpected(errno_error("write", path(), owner_->err_));
      }
      return inner_->append(data);
    }
    Result<void> sync() override {
      if (owner_->step_ == Step::kSync) {
        return std::unexpected(errno_error("fsync", path(), owner_->err_));
      }
      ++owner_->syncs_;
      return inner_->sync();
    }
    Result<void> close() override {
      if (owner_->step_ == Step::kClose) {
        (void)inner_->close();
        return std::unexpected(errno_error("close", path(), owner_->err_));
      }
      return inner_->close();
    }
    const fs::path& path() const override { return inner_->path(); }

   private:
    std::unique_ptr<WritableFile> inner_;
    FaultyFileSystem* owner_;
  };

  Step step_;
  int err_;
  int syncs_ = 0;
  std::vector<fs::path> removed_;
  std::vector<fs::path> synced_dirs_;
};

TEST(Files, AtomicWriteCreatesFileWithContents) {
  TempDir dir;
  fs::path target = dir.path() / "users";
  ASSERT_TRUE(atomic_write(target, "alice:{PLAIN}x\n"));
  auto text = read_file(target);
  ASSERT_TRUE(text);
  EXPECT_EQ(*text, "alice:{PLAIN}x\n");
  EXPECT_EQ(dir.names(), std::set<std::string>{"users"});  // no temp file left
}

TEST(Files, AtomicWriteReplacesAndSyncsFileAndDirectory) {
  TempDir dir;
  fs::path target = dir.path() / "users";
  write_plain(target, "old contents that are longer than the new ones\n");
  FaultyFileSystem faulty(FaultyFileSystem::Step::kNone, 0);
  ASSERT_TRUE(atomic_write(faulty, target, "new\n"));
  EXPECT_EQ(*read_file(target), "new\n");
  EXPECT_EQ(faulty.syncs(), 1);
  ASSERT_EQ(faulty.synced_dirs().size(), 1u);
  EXPECT_EQ(faulty.synced_dirs()[0], dir.path());
  EXPECT_TRUE(faulty.removed().empty());
  EXPECT_EQ(dir.names(), std::set<std::string>{"users"});
}

TEST(Files, AtomicWriteChangesInodeSoReadersKeepTheOldFile) {
  TempDir dir;
  fs::path target = dir.path() / "f";
  ASSERT_TRUE(atomic_write(target, "one"));
  auto before = real_file_system().stat(target);
  ASSERT_TRUE(before);
  ASSERT_TRUE(atomic_write(target, "two"));
  auto after = real_file_system().stat(target);
  ASSERT_TRUE(after);
  EXPECT_NE(before->inode, after->inode);
  EXPECT_EQ(after->size, 3u);
  EXPECT_TRUE(after->is_regular());
}

TEST(Files, AtomicWriteWritesEmptyAndBinaryContents) {
  TempDir dir;
  fs::path target = dir.path() / "bin";
  std::string binary("a\0b\r\n\xff", 6);
  ASSERT_TRUE(atomic_write(target, binary));
  EXPECT_EQ(*read_file(target), binary);
  ASSERT_TRUE(atomic_write(target, ""));
  EXPECT_EQ(*read_file(target), "");
}

TEST(Files, AtomicWriteUsesNewFileModeRegardlessOfUmask) {
  ScopedUmask mask(022);
  TempDir dir;
  fs::path target = dir.path() / "secret";
  ASSERT_TRUE(atomic_write(target, "x", AtomicWriteOptions{.new_file_mode = 0600}));
  EXPECT_EQ(mode_of(target), 0600u);
}

TEST(Files, AtomicWriteKeepsModeOfReplacedFile) {
  ScopedUmask mask(077);
  TempDir dir;
  fs::path target = dir.path() / "shared";
  write_plain(target, "old");
  ASSERT_EQ(::chmod(target.c_str(), 0664), 0);
  ASSERT_TRUE(atomic_write(target, "new"));
  EXPECT_EQ(mode_of(target), 0664u);  // neither the umask nor the 0644 default
}

TEST(Files, AtomicWriteRefusesToReplaceADirectory) {
  TempDir dir;
  fs::create_directory(dir.path() / "d");
  auto r = atomic_write(dir.path() / "d", "x");
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, MailError::kBadInput);
  EXPECT_NE(r.error().message.find("not a regular file"), std::string::npos);
}

TEST(Files, AtomicWriteIntoMissingDirectoryNamesThePath) {
  TempDir dir;
  fs::path target = dir.path() / "missing" / "users";
  auto r = atomic_write(target, "x");
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, MailError::kNotFound);
  EXPECT_NE(r.error().message.find((dir.path() / "missing").string()), std::string::npos);
  EXPECT_NE(r.error().message.find("No such file or directory"), std::string::npos);
}

struct FaultCase {
  const char* name;
  FaultyFileSystem::Step step;
  int err;
  MailError code;
  const char* message_part;
};

class AtomicWriteFault : public ::testing::TestWithParam<FaultCase> {};

// Whatever step fails before the rename, the old file is intact and no
// temporary file is left.
TEST_P(AtomicWriteFault, LeavesOldFileAndNoTemp) {
  const FaultCase& c = GetParam();
  TempDir dir;
  fs::path target = dir.path() / "users";
  write_plain(target, "old\n");
  FaultyFileSystem faulty(c.step, c.err);
  auto r = atomic_write(faulty, target, "new contents\n");
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, c.code);
  EXPECT_NE(r.error().message.find(c.message_part), std::string::npos) << r.error().message;
  EXPECT_NE(r.error().message.find(dir.path().string()), std::string::npos) << r.error().message;
  EXPECT_EQ(*read_file(target), "old\n");
  EXPECT_EQ(dir.names(), std::set<std::string>{"users"});
}

INSTANTIATE_TEST_SUITE_P(
    Files, AtomicWriteFault,
    ::testing::Values(FaultCase{"CreateDenied", FaultyFileSystem::Step::kCreate, EACCES,
                                MailError::kNoPermission, "create "},
                      FaultCase{"DiskFull", FaultyFileSystem::Step::kAppend, ENOSPC,
                                MailError::kTemporary, "write "},
                      FaultCase{"QuotaExceeded", FaultyFileSystem::Step::kAppend, EDQUOT,
                                MailError::kOverQuota, "quota"},
                      FaultCase{"FsyncFails", FaultyFileSystem::Step::kSync, EIO,
                                MailError::kTemporary, "fsync "},
                      FaultCase{"CloseFails", FaultyFileSystem::Step::kClose, EIO,
                                MailError::kTemporary, "Input/output error"},
                      FaultCase{"RenameFails", FaultyFileSystem::Step::kRename, EXDEV,
                                MailError::kTemporary, "rename "}),
    [](const auto& info) { return std::string(info.param.name); });

TEST(Files, AtomicWriteDiskFullMessageHasErrnoText) {
  TempDir dir;
  FaultyFileSystem faulty(FaultyFileSystem::Step::kAppend, ENOSPC);
  auto r = atomic_write(faulty, dir.path() / "users", "data");
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message.find("No space left on device"), std::string::npos);
  EXPECT_EQ(faulty.removed().size(), 1u);  // the temp file
  EXPECT_TRUE(dir.names().empty());        // and no target was created
}

TEST(Files, AtomicWriteSetModeFailureKeepsOldFile) {
  TempDir dir;
  fs::path target = dir.path() / "users";
  write_plain(target, "old\n");
  FaultyFileSystem faulty(FaultyFileSystem::Step::kSetMode, EPERM);
  auto r = atomic_write(faulty, target, "new\n");
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, MailError::kNoPermission);
  EXPECT_EQ(*read_file(target), "old\n");
  EXPECT_EQ(dir.names(), std::set<std::string>{"users"});
}

TEST(Files, AtomicWriteDirectorySyncFailureReportsReplacedFile) {
  TempDir dir;
  fs::path target = dir.path() / "users";
  write_plain(target, "old\n");
  FaultyFileSystem faulty(FaultyFileSystem::Step::kSyncDir, EIO);
  auto r = atomic_write(faulty, target, "new\n");
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, MailError::kTemporary);
  EXPECT_NE(r.error().message.find("was replaced but may not survive a crash"), std::string::npos);
  EXPECT_EQ(*read_file(target), "new\n");
}

TEST(Files, ConcurrentAtomicWritesLeaveOneWholeVersion) {
  TempDir dir;
  fs::path target = dir.path() / "f";
  std::vector<std::string> versions;
  for (int i = 0; i < 4; ++i) {
    versions.push_back(std::string(10000 + i, static_cast<char>('a' + i)));
  }
  std::vector<std::thread> threads;
  for (int i = 0; i < 4; ++i) {
    threads.emplace_back([&, i] {
      for (int n = 0; n < 5; ++n) {
        EXPECT_TRUE(atomic_write(target, versions[i]));
      }
    });
  }
  for (auto& t : threads) {
    t.join();
  }
  auto text = read_file(target);
  ASSERT_TRUE(text);
  EXPECT_NE(std::find(versions.begin(), versions.end(), *text), versions.end());
  EXPECT_EQ(dir.names(), std::set<std::string>{"f"});
}

TEST(Files, ReadFileMissingNamesPathAndErrno) {
  TempDir dir;
  auto r = read_file(dir.path() / "nope");
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, MailError::kNotFound);
  EXPECT_EQ(r.error().message,
            "open " + (dir.path() / "nope").string() + ": No such file or directory");
}

TEST(Files, ReadFileOfDirectoryFails) {
  TempDir dir;
  auto r = read_file(dir.path());
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message.find("Is a directory"), std::string::npos);
}

TEST(Files, ReadFileEnforcesMaxBytes) {
  TempDir dir;
  fs::path p = dir.path() / "big";
  write_plain(p, std::string(100, 'x'));
  EXPECT_TRUE(read_file(p, 100));
  auto r = read_file(p, 99);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, MailError::kTooBig);
  EXPECT_NE(r.error().message.find(p.string()), std::string::npos);
}

TEST(Files, ReadFileReadsNonRegularFilesUpToTheBound) {
  // /proc files report size 0 but have contents.
  auto r = read_file("/proc/self/status");
  ASSERT_TRUE(r);
  EXPECT_NE(r->find("Name:"), std::string::npos);
  auto small = read_file("/proc/self/status", 4);
  ASSERT_FALSE(small);
  EXPECT_EQ(small.error().code, MailError::kTooBig);
}

TEST(Files, StatReportsMissingAsNotFound) {
  TempDir dir;
  auto r = real_file_system().stat(dir.path() / "x");
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, MailError::kNotFound);
  auto d = real_file_system().stat(dir.path());
  ASSERT_TRUE(d);
  EXPECT_FALSE(d->is_regular());
}

TEST(Files, CheckReadableFile) {
  TempDir dir;
  fs::path p = dir.path() / "cert.pem";
  write_plain(p, "x");
  EXPECT_TRUE(check_readable_file(p));
  auto missing = check_readable_file(dir.path() / "key.pem");
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.error().code, MailError::kNotFound);
  auto directory = check_readable_file(dir.path());
  ASSERT_FALSE(directory);
  EXPECT_EQ(directory.error().message, "open " + dir.path().string() + ": not a regular file");
  if (::geteuid() != 0) {  // root reads anything
    ASSERT_EQ(::chmod(p.c_str(), 0), 0);
    auto denied = check_readable_file(p);
    ASSERT_FALSE(denied);
    EXPECT_EQ(denied.error().code, MailError::kNoPermission);
  }
}

TEST(Files, ErrnoErrorMapsCodes) {
  struct Case {
    int err;
    MailError code;
  };
  for (const Case& c :
       {Case{ENOENT, MailError::kNotFound}, Case{ENOTDIR, MailError::kNotFound},
        Case{EACCES, MailError::kNoPermission}, Case{EPERM, MailError::kNoPermission},
        Case{EROFS, MailError::kNoPermission}, Case{EEXIST, MailError::kExists},
        Case{EDQUOT, MailError::kOverQuota}, Case{EFBIG, MailError::kTooBig},
        Case{ENOSPC, MailError::kTemporary}, Case{EIO, MailError::kTemporary}}) {
    EXPECT_EQ(errno_error("open", "/x", c.err).code, c.code) << c.err;
  }
  EXPECT_EQ(errno_error("fsync", "/var/users", EIO).message,
            "fsync /var/users: Input/output error");
}

}  // namespace
}  // namespace peregrine::base
