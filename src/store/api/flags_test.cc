#include "store/api/flags.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace peregrine::store {
namespace {

using Keywords = std::vector<std::string>;

TEST(FlagsTest, CheckKeyword) {
  EXPECT_TRUE(check_keyword("$Forwarded"));
  EXPECT_TRUE(check_keyword("NonJunk"));
  EXPECT_FALSE(check_keyword(""));
  EXPECT_FALSE(check_keyword("two words"));
  EXPECT_FALSE(check_keyword("tab\there"));
  EXPECT_FALSE(check_keyword("caf\xc3\xa9"));
  EXPECT_FALSE(check_keyword(std::string(kMaxKeywordLength + 1, 'a')));
  EXPECT_TRUE(check_keyword(std::string(kMaxKeywordLength, 'a')));
}

TEST(FlagsTest, NormalizeDropsCaseInsensitiveDuplicates) {
  Keywords in = {"Work", "$Junk", "work", "WORK", "Later"};
  auto out = normalize_keywords(in);
  ASSERT_TRUE(out);
  EXPECT_EQ(*out, (Keywords{"Work", "$Junk", "Later"}));
}

TEST(FlagsTest, NormalizeRejectsInvalidAndTooMany) {
  Keywords bad = {"ok", "not ok"};
  auto out = normalize_keywords(bad);
  ASSERT_FALSE(out);
  EXPECT_EQ(out.error().code, base::MailError::kBadInput);

  Keywords many;
  for (std::size_t i = 0; i <= kMaxKeywordsPerMessage; ++i) {
    many.push_back("k" + std::to_string(i));
  }
  out = normalize_keywords(many);
  ASSERT_FALSE(out);
  EXPECT_EQ(out.error().code, base::MailError::kTooBig);
}

struct ApplyCase {
  FlagOp op;
  SystemFlags given_flags;
  Keywords given_keywords;
  SystemFlags before_flags;
  Keywords before_keywords;
  bool changed;
  SystemFlags after_flags;
  Keywords after_keywords;
};

TEST(FlagsTest, ApplyFlagUpdateTable) {
  const ApplyCase cases[] = {
      {FlagOp::kAdd, kFlagSeen, {}, 0, {}, true, kFlagSeen, {}},
      {FlagOp::kAdd, kFlagSeen, {}, kFlagSeen, {}, false, kFlagSeen, {}},
      {FlagOp::kAdd, 0, {"a"}, 0, {"A"}, false, 0, {"A"}},
      {FlagOp::kAdd, 0, {"b"}, 0, {"a"}, true, 0, {"a", "b"}},
      {FlagOp::kRemove, kFlagSeen, {}, kFlagSeen | kFlagDeleted, {}, true, kFlagDeleted, {}},
      {FlagOp::kRemove, kFlagDraft, {}, kFlagSeen, {}, false, kFlagSeen, {}},
      {FlagOp::kRemove, 0, {"A"}, 0, {"a", "b"}, true, 0, {"b"}},
      {FlagOp::kReplace, kFlagFlagged, {"x"}, kFlagSeen, {"y"}, true, kFlagFlagged, {"x"}},
      {FlagOp::kReplace,
       kFlagSeen,
       {"X", "y"},
       kFlagSeen,
       {"y", "x"},
       false,
       kFlagSeen,
       {"y", "x"}},
      {FlagOp::kReplace, 0, {}, kFlagSeen, {"y"}, true, 0, {}},
      // Bits outside the system flags are ignored.
      {FlagOp::kAdd, 0xe0, {}, 0, {}, false, 0, {}},
  };
  for (const ApplyCase& c : cases) {
    FlagUpdate update;
    update.op = c.op;
    update.flags = c.given_flags;
    update.keywords = c.given_keywords;
    SystemFlags flags = c.before_flags;
    Keywords keywords = c.before_keywords;
    EXPECT_EQ(apply_flag_update(update, flags, keywords), c.changed);
    EXPECT_EQ(flags, c.after_flags);
    EXPECT_EQ(keywords, c.after_keywords);
  }
}

TEST(FlagsTest, AddStopsAtKeywordLimit) {
  Keywords keywords;
  for (std::size_t i = 0; i < kMaxKeywordsPerMessage; ++i) {
    keywords.push_back("k" + std::to_string(i));
  }
  FlagUpdate update;
  update.op = FlagOp::kAdd;
  update.keywords = {"extra"};
  SystemFlags flags = 0;
  EXPECT_FALSE(apply_flag_update(update, flags, keywords));
  EXPECT_EQ(keywords.size(), kMaxKeywordsPerMessage);
}

TEST(FlagsTest, SpecialUseNamesRoundTrip) {
  for (SpecialUse use :
       {SpecialUse::kNone, SpecialUse::kAll, SpecialUse::kArchive, SpecialUse::kDrafts,
        SpecialUse::kFlagged, SpecialUse::kJunk, SpecialUse::kSent, SpecialUse::kTrash}) {
    EXPECT_EQ(special_use_from_string(to_string(use)), use);
  }
  EXPECT_EQ(special_use_from_string("Sent"), std::nullopt);
}

}  // namespace
}  // namespace peregrine::store
