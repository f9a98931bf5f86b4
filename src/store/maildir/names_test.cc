#include "store/maildir/names.h"

#include <gtest/gtest.h>

#include <optional>
#include <string>

namespace peregrine::store::maildir {
namespace {

TEST(MaildirNamesTest, NormalizeMailboxName) {
  struct Case {
    std::string in;
    std::optional<std::string> out;
  };
  const Case cases[] = {
      {"INBOX", "INBOX"},
      {"inbox", "INBOX"},
      {"InBox/Sub", "INBOX/Sub"},
      {"Inboxes", "Inboxes"},
      {"Sent", "Sent"},
      {"A/B/", "A/B"},
      {"A/B/C", "A/B/C"},
      {"v1.2", "v1.2"},
      {"&ZeVnLIqe-", "&ZeVnLIqe-"},
      {"", std::nullopt},
      {"/", std::nullopt},
      {"/A", std::nullopt},
      {"A//B", std::nullopt},
      {"A//", std::nullopt},
      {"tab\there", std::nullopt},
      {"..", std::nullopt},
      {"../../etc", std::nullopt},
      {"A/./B", std::nullopt},
      {"A/..", std::nullopt},
      {"...", "..."},
      {"A/.hidden", "A/.hidden"},
      {"caf\xc3\xa9", std::nullopt},
      {std::string(254, 'a'), std::string(254, 'a')},
      {std::string(255, 'a'), std::nullopt},
  };
  for (const Case& c : cases) {
    auto got = normalize_mailbox_name(c.in);
    if (c.out) {
      ASSERT_TRUE(got) << c.in;
      EXPECT_EQ(*got, *c.out);
    } else {
      EXPECT_FALSE(got) << c.in;
      if (!got) {
        EXPECT_EQ(got.error().code, base::MailError::kBadInput);
      }
    }
  }
}

TEST(MaildirNamesTest, FolderDirs) {
  struct Case {
    std::string name;
    std::string dir;
  };
  const Case cases[] = {
      {"INBOX", ""},
      {"Sent", ".Sent"},
      {"A/B/C", ".A.B.C"},
      {"INBOX/Sub", ".INBOX.Sub"},
      {"v1.2", ".v1%2E2"},
      {"50%", ".50%25"},
      {"a.b/c%d", ".a%2Eb.c%25d"},
      {"...", ".%2E%2E%2E"},
      {"&ZeVnLIqe-", ".&ZeVnLIqe-"},
  };
  for (const Case& c : cases) {
    EXPECT_EQ(folder_dir(c.name), c.dir) << c.name;
    if (!c.dir.empty()) {
      EXPECT_EQ(mailbox_name_from_dir(c.dir), c.name) << c.dir;
    }
  }
}

TEST(MaildirNamesTest, DirsThatAreNotMailboxes) {
  for (std::string_view dir :
       {"", ".", "..", "..deleted.4.1", "cur", "Maildir", ".A..B", ".A.", ".INBOX", ".inbox.x",
        ".a%zz", ".a%2e", ".a%", ".a/b", ".%2E%2E", ".A.%2E"}) {
    EXPECT_EQ(mailbox_name_from_dir(dir), std::nullopt) << dir;
  }
}

TEST(MaildirNamesTest, SameOrBelow) {
  EXPECT_TRUE(is_same_or_below("A", "A"));
  EXPECT_TRUE(is_same_or_below("A/B", "A"));
  EXPECT_TRUE(is_same_or_below("A/B/C", "A/B"));
  EXPECT_FALSE(is_same_or_below("AB", "A"));
  EXPECT_FALSE(is_same_or_below("A", "A/B"));
}

TEST(MaildirNamesTest, UserNames) {
  EXPECT_TRUE(check_user_name("alice"));
  EXPECT_TRUE(check_user_name("alice@example.com"));
  const std::string_view bad_names[] = {"", ".", "..", "a/b", "a\nb", std::string_view("a\0b", 3)};
  for (std::string_view bad : bad_names) {
    EXPECT_FALSE(check_user_name(bad)) << bad;
  }
  EXPECT_FALSE(check_user_name(std::string(256, 'u')));
}

TEST(MaildirNamesTest, SplitFileName) {
  FileName f = split_file_name("123.M4P5Q6.host,S=10:2,FS");
  EXPECT_EQ(f.base, "123.M4P5Q6.host,S=10");
  EXPECT_EQ(f.letters, "FS");
  f = split_file_name("123.host");
  EXPECT_EQ(f.base, "123.host");
  EXPECT_EQ(f.letters, "");
  f = split_file_name("123.host:1,xyz");
  EXPECT_EQ(f.base, "123.host");
  EXPECT_EQ(f.letters, "");
}

TEST(MaildirNamesTest, FlagLetters) {
  EXPECT_EQ(flags_from_letters(""), 0);
  EXPECT_EQ(flags_from_letters("DFPRST"),
            kFlagDraft | kFlagFlagged | kFlagAnswered | kFlagSeen | kFlagDeleted);
  EXPECT_EQ(flags_from_letters("Sa"), kFlagSeen);
  EXPECT_EQ(file_name_with_flags("b", "", 0), "b:2,");
  EXPECT_EQ(file_name_with_flags("b", "", kFlagSeen | kFlagDraft | kFlagDeleted), "b:2,DST");
  EXPECT_EQ(file_name_with_flags("b", "PSa", kFlagFlagged), "b:2,FPa");
  EXPECT_EQ(file_name_with_flags("b", "FS", kAllSystemFlags), "b:2,DFRST");
}

TEST(MaildirNamesTest, BaseNames) {
  std::string base = make_base_name(1700000000123456, 42, 7, "mail/host:1", 1234);
  EXPECT_EQ(base, "1700000000.M123456P42Q7.mail\\057host\\0721,S=1234");
  EXPECT_EQ(size_from_base_name(base), 1234u);
  EXPECT_EQ(size_from_base_name("1.host"), std::nullopt);
  EXPECT_EQ(base_name_with_size("1.host,S=10,W=12", 12), "1.host,S=12");
  EXPECT_EQ(base_name_with_size("1.host,S=10", 99), "1.host,S=99");
  EXPECT_EQ(base_name_with_size("1.host", 99), "1.host");
}

TEST(MaildirNamesTest, Crlf) {
  struct Case {
    std::string in;
    std::string out;
    bool bare;
  };
  const Case cases[] = {
      {"", "", false},
      {"a\r\nb\r\n", "a\r\nb\r\n", false},
      {"a\nb\n", "a\r\nb\r\n", true},
      {"\n", "\r\n", true},
      {"a\r\nb\nc", "a\r\nb\r\nc", true},
      {"lone\rcr", "lone\rcr", false},
      {"\n\n", "\r\n\r\n", true},
  };
  for (const Case& c : cases) {
    EXPECT_EQ(has_bare_lf(c.in), c.bare) << c.in;
    EXPECT_EQ(to_crlf(c.in), c.out);
  }
}

}  // namespace
}  // namespace peregrine::store::maildir
