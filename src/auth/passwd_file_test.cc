#include "auth/passwd_file.h"

#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>

#include "test_support/temp_dir.h"

namespace peregrine::auth {
namespace {

namespace fs = std::filesystem;
using base::MailError;
using test_support::TempDir;

TEST(PasswdFile, ParsesAllFields) {
  auto r = parse_passwd(
      "alice:{PLAIN}secret:1000:100:Alice Liddell:/home/alice:/bin/sh:userdb_quota=1G:x=y\n");
  ASSERT_TRUE(r) << r.error().message;
  ASSERT_EQ(r->size(), 1u);
  const PasswdEntry& e = (*r)[0];
  EXPECT_EQ(e.user, "alice");
  EXPECT_EQ(e.password, "{PLAIN}secret");
  EXPECT_EQ(e.uid, 1000u);
  EXPECT_EQ(e.gid, 100u);
  EXPECT_EQ(e.gecos, "Alice Liddell");
  EXPECT_EQ(e.home, "/home/alice");
  EXPECT_EQ(e.shell, "/bin/sh");
  EXPECT_EQ(e.line, 1u);
}

struct LineCase {
  const char* line;
  const char* user;
  const char* password;
  std::optional<std::uint32_t> uid;
  std::optional<std::uint32_t> gid;
  const char* home;
};

TEST(PasswdFile, OptionalFieldsTable) {
  const LineCase cases[] = {
      {"bob:{PLAIN}x", "bob", "{PLAIN}x", std::nullopt, std::nullopt, ""},
      {"bob:{PLAIN}x:", "bob", "{PLAIN}x", std::nullopt, std::nullopt, ""},
      {"bob:{PLAIN}x:5", "bob", "{PLAIN}x", 5u, std::nullopt, ""},
      {"bob:{PLAIN}x:5:6", "bob", "{PLAIN}x", 5u, 6u, ""},
      {"bob:{PLAIN}x:::::", "bob", "{PLAIN}x", std::nullopt, std::nullopt, ""},
      {"bob:{PLAIN}x:1:2::/h::", "bob", "{PLAIN}x", 1u, 2u, "/h"},
      {"bob:{PLAIN}x:::/g:/h", "bob", "{PLAIN}x", std::nullopt, std::nullopt, "/h"},
      {"bob:$6$s$h:0:0::/root::", "bob", "$6$s$h", 0u, 0u, "/root"},
      {"bob::::::", "bob", "", std::nullopt, std::nullopt, ""},
      {"bob:", "bob", "", std::nullopt, std::nullopt, ""},
      {"bob:{PLAIN}x:4294967295:1", "bob", "{PLAIN}x", 4294967295u, 1u, ""},
      {"bob@example.org:{PLAIN}x\r", "bob@example.org", "{PLAIN}x", std::nullopt, std::nullopt, ""},
      {"bob:{PLAIN}x:1:2::/h::extra:fields:with:colons", "bob", "{PLAIN}x", 1u, 2u, "/h"},
  };
  for (const LineCase& c : cases) {
    auto r = parse_passwd(c.line);
    ASSERT_TRUE(r) << c.line << ": " << r.error().message;
    ASSERT_EQ(r->size(), 1u) << c.line;
    const PasswdEntry& e = (*r)[0];
    EXPECT_EQ(e.user, c.user) << c.line;
    EXPECT_EQ(e.password, c.password) << c.line;
    EXPECT_EQ(e.uid, c.uid) << c.line;
    EXPECT_EQ(e.gid, c.gid) << c.line;
    EXPECT_EQ(e.home, c.home) << c.line;
  }
}

TEST(PasswdFile, SkipsCommentsAndBlankLinesAndCountsThem) {
  auto r = parse_passwd(
      "# users\n"
      "\n"
      "   \t\n"
      "  # indented comment\n"
      "alice:{PLAIN}a\r\n"
      "#bob:{PLAIN}b\n"
      "carol:{PLAIN}c");
  ASSERT_TRUE(r) << r.error().message;
  ASSERT_EQ(r->size(), 2u);
  EXPECT_EQ((*r)[0].user, "alice");
  EXPECT_EQ((*r)[0].password, "{PLAIN}a");
  EXPECT_EQ((*r)[0].line, 5u);
  EXPECT_EQ((*r)[1].user, "carol");
  EXPECT_EQ((*r)[1].line, 7u);
  EXPECT_TRUE(parse_passwd("")->empty());
}

TEST(PasswdFile, ErrorsNameTheLine) {
  struct Case {
    const char* text;
    const char* message;
  };
  const Case cases[] = {
      {"# c\nalice\n", "line 2: missing ':' after the user name"},
      {"a:x:abc", "line 1: uid 'abc' is not a number"},
      {"a:x:-1", "line 1: uid '-1' is not a number"},
      {"a:x:1:2x", "line 1: gid '2x' is not a number"},
      {"a:x: 1", "line 1: uid ' 1' is not a number"},
      {"a:x:4294967296", "line 1: uid 4294967296 out of range"},
      {"a:x:1:99999999999999999999", "line 1: gid 99999999999999999999 out of range"},
      {":x", "line 1: bad user name: empty user name"},
      {"a\tb:x", "line 1: bad user name: user name contains a control character"},
      {" alice:x", "line 1: bad user name: user name starts or ends with a space"},
      {"a:x\nb:y\n\na:z\n", "line 4: duplicate user a (first on line 1)"},
  };
  for (const Case& c : cases) {
    auto r = parse_passwd(c.text);
    ASSERT_FALSE(r) << c.text;
    EXPECT_EQ(r.error().code, MailError::kBadInput);
    EXPECT_EQ(r.error().message, c.message) << c.text;
  }
}

TEST(PasswdFile, CheckUserName) {
  EXPECT_TRUE(check_user_name("alice"));
  EXPECT_TRUE(check_user_name("alice@example.org"));
  EXPECT_TRUE(check_user_name("J\xC3\xBCrgen M\xC3\xBCller"));
  EXPECT_TRUE(check_user_name(std::string(255, 'a')));
  struct Case {
    std::string name;
    const char* message;
  };
  const Case cases[] = {
      {"", "empty user name"},
      {std::string(256, 'a'), "user name longer than 255 bytes"},
      {"a:b", "user name contains ':'"},
      {"a\nb", "user name contains a control character"},
      {std::string("a\0b", 3), "user name contains a control character"},
      {"a\x7f", "user name contains a control character"},
      {"#a", "user name starts with '#'"},
      {"a ", "user name starts or ends with a space"},
      {"\ta", "user name contains a control character"},
  };
  for (const Case& c : cases) {
    auto r = check_user_name(c.name);
    ASSERT_FALSE(r) << c.name;
    EXPECT_EQ(r.error().message, c.message);
  }
}

constexpr const char* kFile =
    "# Peregrine users\r\n"
    "alice:{PLAIN}a:1000:1000::/home/alice::quota=1G\r\n"
    "\n"
    "bob:$6$salt$hash\n"
    "   # a comment  with  spacing \n"
    "carol:{PLAIN}c:::Carol::";  // no final newline

TEST(PasswdFile, UntouchedFileRoundTripsByteForByte) {
  auto file = PasswdFile::parse(kFile);
  ASSERT_TRUE(file) << file.error().message;
  EXPECT_EQ(file->text(), kFile);
  ASSERT_EQ(file->entries().size(), 3u);
  ASSERT_NE(file->find("bob"), nullptr);
  EXPECT_EQ(file->find("bob")->line, 4u);
  EXPECT_EQ(file->find("Bob"), nullptr);  // case-sensitive
}

TEST(PasswdFile, AddAppendsAndKeepsEverythingElse) {
  auto file = PasswdFile::parse(kFile);
  ASSERT_TRUE(file);
  ASSERT_TRUE(file->add(
      {.name = "dave", .password = "{PLAIN}d", .uid = 1001, .gid = 100, .home = "/home/dave"}));
  EXPECT_EQ(file->text(), std::string(kFile) + "\ndave:{PLAIN}d:1001:100::/home/dave::\n");
  ASSERT_TRUE(file->add({.name = "erin", .password = "{PLAIN}e"}));
  EXPECT_EQ(file->text(),
            std::string(kFile) + "\ndave:{PLAIN}d:1001:100::/home/dave::\nerin:{PLAIN}e::::::\n");
  ASSERT_EQ(file->entries().size(), 5u);
  EXPECT_EQ(file->find("erin")->line, 8u);
  EXPECT_EQ(file->find("dave")->home, "/home/dave");
}

TEST(PasswdFile, AddToEmptyFile) {
  auto file = PasswdFile::parse("");
  ASSERT_TRUE(file);
  ASSERT_TRUE(file->add({.name = "demo", .password = "{PLAIN}demo"}));
  EXPECT_EQ(file->text(), "demo:{PLAIN}demo::::::\n");
}

TEST(PasswdFile, AddRefusesDuplicatesAndBadInput) {
  auto file = PasswdFile::parse(kFile);
  ASSERT_TRUE(file);
  struct Case {
    NewUser user;
    MailError code;
    const char* message;
  };
  const Case cases[] = {
      {{.name = "bob", .password = "{PLAIN}x"}, MailError::kExists, "user bob already exists"},
      {{.name = "a:b", .password = "{PLAIN}x"}, MailError::kBadInput, "user name contains ':'"},
      {{.name = "a\r", .password = "{PLAIN}x"},
       MailError::kBadInput,
       "user name contains a control character"},
      {{.name = "#x", .password = "{PLAIN}x"}, MailError::kBadInput, "user name starts with '#'"},
      {{.name = "", .password = "{PLAIN}x"}, MailError::kBadInput, "empty user name"},
      {{.name = "x", .password = "{PLAIN}a:b"},
       MailError::kBadInput,
       "password field contains ':' or a control character"},
      {{.name = "x", .password = "{PLAIN}a\nb"},
       MailError::kBadInput,
       "password field contains ':' or a control character"},
      {{.name = "x", .password = "{PLAIN}a", .home = "/a:b"},
       MailError::kBadInput,
       "home contains ':' or a control character"},
  };
  for (const Case& c : cases) {
    auto r = file->add(c.user);
    ASSERT_FALSE(r) << c.user.name;
    EXPECT_EQ(r.error().code, c.code);
    EXPECT_EQ(r.error().message, c.message);
  }
  EXPECT_EQ(file->text(), kFile);  // nothing changed
}

TEST(PasswdFile, SetPasswordChangesOnlyThatField) {
  auto file = PasswdFile::parse(kFile);
  ASSERT_TRUE(file);
  ASSERT_TRUE(file->set_password("alice", "{SHA512-CRYPT}$6$new$hash"));
  ASSERT_TRUE(file->set_password("bob", "{PLAIN}b2"));
  ASSERT_TRUE(file->set_password("carol", ""));
  EXPECT_EQ(file->text(),
            "# Peregrine users\r\n"
            "alice:{SHA512-CRYPT}$6$new$hash:1000:1000::/home/alice::quota=1G\r\n"
            "\n"
            "bob:{PLAIN}b2\n"
            "   # a comment  with  spacing \n"
            "carol::::Carol::");
  EXPECT_EQ(file->find("alice")->password, "{SHA512-CRYPT}$6$new$hash");
  EXPECT_EQ(file->find("alice")->uid, 1000u);
}

TEST(PasswdFile, SetPasswordOnLineWithoutPasswordField) {
  auto file = PasswdFile::parse("x:\ny:");
  ASSERT_TRUE(file);
  ASSERT_TRUE(file->set_password("x", "{PLAIN}1"));
  ASSERT_TRUE(file->set_password("y", "{PLAIN}2"));
  EXPECT_EQ(file->text(), "x:{PLAIN}1\ny:{PLAIN}2");
}

TEST(PasswdFile, SetPasswordErrors) {
  auto file = PasswdFile::parse(kFile);
  ASSERT_TRUE(file);
  auto missing = file->set_password("zed", "{PLAIN}z");
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.error().code, MailError::kNotFound);
  EXPECT_EQ(missing.error().message, "no user zed");
  auto bad = file->set_password("bob", "{PLAIN}a:b");
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().code, MailError::kBadInput);
  EXPECT_EQ(file->text(), kFile);
}

TEST(PasswdFile, RemoveDeletesOnlyThatLine) {
  auto file = PasswdFile::parse(kFile);
  ASSERT_TRUE(file);
  ASSERT_TRUE(file->remove("bob"));
  EXPECT_EQ(file->text(),
            "# Peregrine users\r\n"
            "alice:{PLAIN}a:1000:1000::/home/alice::quota=1G\r\n"
            "\n"
            "   # a comment  with  spacing \n"
            "carol:{PLAIN}c:::Carol::");
  EXPECT_EQ(file->find("carol")->line, 5u);
  ASSERT_TRUE(file->remove("carol"));
  ASSERT_TRUE(file->remove("alice"));
  EXPECT_EQ(file->text(), "# Peregrine users\r\n\n   # a comment  with  spacing \n");
  EXPECT_TRUE(file->entries().empty());
  auto missing = file->remove("alice");
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.error().code, MailError::kNotFound);
}

TEST(PasswdFile, ReadWriteThroughFileSystem) {
  TempDir dir;
  fs::path path = dir.path() / "users";
  auto& real = base::real_file_system();

  auto missing = PasswdFile::read(real, path);
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.error().code, MailError::kNotFound);

  auto file = PasswdFile::read(real, path, MissingFile::kEmpty);
  ASSERT_TRUE(file) << file.error().message;
  ASSERT_TRUE(file->add({.name = "demo", .password = "{PLAIN}demo"}));
  ASSERT_TRUE(file->write(real, path));
  struct stat st;
  ASSERT_EQ(::stat(path.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);  // a new passwd-file is private

  auto again = PasswdFile::read(real, path);
  ASSERT_TRUE(again) << again.error().message;
  EXPECT_EQ(again->text(), "demo:{PLAIN}demo::::::\n");
  ASSERT_EQ(::chmod(path.c_str(), 0640), 0);
  ASSERT_TRUE(again->remove("demo"));
  ASSERT_TRUE(again->write(real, path));
  ASSERT_EQ(::stat(path.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0640u);  // an existing file keeps its mode
  EXPECT_EQ(*base::read_file(path), "");
}

TEST(PasswdFile, ReadReportsPathAndLine) {
  TempDir dir;
  fs::path path = dir.path() / "users";
  std::ofstream(path) << "ok:{PLAIN}x\nbad:x:nope\n";
  auto r = PasswdFile::read(base::real_file_system(), path);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, MailError::kBadInput);
  EXPECT_EQ(r.error().message, path.string() + ": line 2: uid 'nope' is not a number");
}

}  // namespace
}  // namespace peregrine::auth
