#include "store/api/uid_set.h"

#include <gtest/gtest.h>

#include <limits>
#include <vector>

namespace peregrine::store {
namespace {

std::vector<UidRange> ranges(const UidSet& s) { return s.ranges(); }

TEST(UidSetTest, EmptyByDefault) {
  UidSet s;
  EXPECT_TRUE(s.empty());
  EXPECT_EQ(s.count(), 0u);
  EXPECT_FALSE(s.contains(1));
}

TEST(UidSetTest, AddMergesAdjacentAndOverlapping) {
  struct Case {
    std::vector<std::pair<Uid, Uid>> adds;
    std::vector<UidRange> expected;
  };
  const Case cases[] = {
      {{{1, 1}, {2, 2}, {3, 3}}, {{1, 3}}},
      {{{3, 3}, {1, 1}}, {{1, 1}, {3, 3}}},
      {{{3, 3}, {1, 1}, {2, 2}}, {{1, 3}}},
      {{{5, 1}}, {{1, 5}}},
      {{{10, 20}, {1, 5}, {4, 12}}, {{1, 20}}},
      {{{10, 20}, {30, 40}, {1, 2}, {21, 29}}, {{1, 2}, {10, 40}}},
      {{{0, 0}}, {}},
      {{{0, 3}}, {{1, 3}}},
      {{{7, 9}, {8, 8}}, {{7, 9}}},
      {{{4294967295u, 4294967295u}, {4294967294u, 4294967294u}}, {{4294967294u, 4294967295u}}},
  };
  for (const Case& c : cases) {
    UidSet s;
    for (auto [first, last] : c.adds) {
      s.add(first, last);
    }
    EXPECT_EQ(ranges(s), c.expected);
  }
}

TEST(UidSetTest, AllCoversEveryUid) {
  UidSet s = UidSet::all();
  EXPECT_TRUE(s.contains(1));
  EXPECT_TRUE(s.contains(std::numeric_limits<Uid>::max()));
  EXPECT_FALSE(s.contains(0));
  EXPECT_EQ(s.count(), 4294967295ull);
}

TEST(UidSetTest, OfUnsortedWithDuplicates) {
  std::vector<Uid> uids = {9, 3, 4, 3, 5, 1};
  UidSet s = UidSet::of(uids);
  EXPECT_EQ(ranges(s), (std::vector<UidRange>{{1, 1}, {3, 5}, {9, 9}}));
  EXPECT_EQ(s.count(), 5u);
  EXPECT_TRUE(s.contains(4));
  EXPECT_FALSE(s.contains(2));
  EXPECT_FALSE(s.contains(10));
}

TEST(UidSetTest, InitializerList) {
  UidSet s{2, 4, 3};
  EXPECT_EQ(ranges(s), (std::vector<UidRange>{{2, 4}}));
}

}  // namespace
}  // namespace peregrine::store
