#include "imap/proto/sequence_set.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace peregrine::imap {
namespace {

TEST(SequenceSet, ParseTable) {
  struct Case {
    std::string text;
    std::vector<SeqRange> ranges;
  };
  const std::vector<Case> cases = {
      {"1", {{1, 1}}},
      {"*", {{kStar, kStar}}},
      {"1:5", {{1, 5}}},
      {"5:1", {{5, 1}}},
      {"1:*", {{1, kStar}}},
      {"*:3", {{kStar, 3}}},
      {"1,3:4,*", {{1, 1}, {3, 4}, {kStar, kStar}}},
      {"4294967295", {{4294967295u, 4294967295u}}},
      {"2,2,2", {{2, 2}, {2, 2}, {2, 2}}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.text);
    Parsed<SequenceSet> set = parse_sequence_set(c.text);
    ASSERT_TRUE(set.ok()) << set.error().message;
    EXPECT_FALSE(set->saved);
    EXPECT_EQ(set->ranges, c.ranges);
    EXPECT_EQ(to_string(*set), c.text);
  }
}

TEST(SequenceSet, Saved) {
  Parsed<SequenceSet> set = parse_sequence_set("$");
  ASSERT_TRUE(set.ok());
  EXPECT_TRUE(set->saved);
  EXPECT_TRUE(set->ranges.empty());
  EXPECT_EQ(to_string(*set), "$");
}

TEST(SequenceSet, BadInputs) {
  for (std::string_view text : {"",
                                "0",
                                "0:5",
                                "5:0",
                                "01",
                                "1,",
                                ",1",
                                "1,,2",
                                "1:",
                                ":1",
                                "1:2:3",
                                "a",
                                "1 2",
                                "-1",
                                "+1",
                                "4294967296",
                                "99999999999999999999",
                                "$,1",
                                "1,$",
                                "$$",
                                "1:$",
                                "**",
                                "1.5"}) {
    SCOPED_TRACE(text);
    Parsed<SequenceSet> set = parse_sequence_set(text);
    ASSERT_FALSE(set.ok());
    EXPECT_EQ(set.error().message.rfind("invalid sequence set", 0), 0u) << set.error().message;
  }
}

TEST(SequenceSet, TooLong) {
  std::string text = "1";
  for (size_t i = 0; i < kMaxSequenceRanges; ++i) {
    text += ",1";
  }
  Parsed<SequenceSet> set = parse_sequence_set(text);
  ASSERT_FALSE(set.ok());
  EXPECT_EQ(set.error().message, "sequence set too long");
}

TEST(SequenceSet, Normalized) {
  SequenceSet set = *parse_sequence_set("9:7,1,2,*,3:4,20:*");
  EXPECT_EQ(set.normalized(30), (std::vector<SeqRange>{{1, 4}, {7, 9}, {20, 30}}));
  // "559:*" includes the largest even when 559 is above it (RFC 3501 §6.4.8).
  EXPECT_EQ(parse_sequence_set("559:*")->normalized(100), (std::vector<SeqRange>{{100, 559}}));
  EXPECT_EQ(parse_sequence_set("1:*")->normalized(0), std::vector<SeqRange>{});
  EXPECT_EQ(parse_sequence_set("4294967295,4294967294")->normalized(5),
            (std::vector<SeqRange>{{4294967294u, 4294967295u}}));
}

TEST(SequenceSet, Contains) {
  SequenceSet set = *parse_sequence_set("5:3,10:*");
  EXPECT_TRUE(set.contains(4, 12));
  EXPECT_FALSE(set.contains(6, 12));
  EXPECT_TRUE(set.contains(11, 12));
  EXPECT_FALSE(set.contains(13, 12));
  EXPECT_TRUE(set.has_star());
  EXPECT_FALSE(parse_sequence_set("1:2")->has_star());
}

TEST(SequenceSet, FromSorted) {
  std::vector<uint32_t> uids = {1, 2, 3, 5, 7, 8, 8, 10};
  EXPECT_EQ(to_string(SequenceSet::from_sorted(uids)), "1:3,5,7:8,10");
  EXPECT_EQ(to_string(SequenceSet::from_sorted({})), "");
  std::vector<uint32_t> top = {4294967294u, 4294967295u};
  EXPECT_EQ(to_string(SequenceSet::from_sorted(top)), "4294967294:4294967295");
  // Another order is kept, ascending runs as ranges (ESORT's ALL).
  std::vector<uint32_t> sort_order = {4, 1, 2, 3, 9, 8};
  EXPECT_EQ(to_string(SequenceSet::from_sorted(sort_order)), "4,1:3,9,8");
}

}  // namespace
}  // namespace peregrine::imap
