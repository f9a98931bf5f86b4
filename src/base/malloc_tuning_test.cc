#include "base/malloc_tuning.h"

#include <gtest/gtest.h>

namespace peregrine::base {
namespace {

TEST(MallocTuning, AddsBothTunablesToAnEmptyEnvironment) {
  EXPECT_EQ(tuned_glibc_tunables(""), "glibc.malloc.hugetlb=1:glibc.malloc.arena_max=1");
}

TEST(MallocTuning, KeepsTheOperatorsOtherTunables) {
  EXPECT_EQ(tuned_glibc_tunables("glibc.malloc.tcache_count=0"),
            "glibc.malloc.tcache_count=0:glibc.malloc.hugetlb=1:glibc.malloc.arena_max=1");
}

TEST(MallocTuning, AnOperatorsValueWins) {
  EXPECT_EQ(tuned_glibc_tunables("glibc.malloc.arena_max=4"),
            "glibc.malloc.arena_max=4:glibc.malloc.hugetlb=1");
  EXPECT_EQ(tuned_glibc_tunables("glibc.malloc.hugetlb=0:x=1"),
            "glibc.malloc.hugetlb=0:x=1:glibc.malloc.arena_max=1");
}

TEST(MallocTuning, NothingToAddOnceBothAreSet) {
  // What the program sees after it ran itself again: no second exec.
  const std::string tuned = tuned_glibc_tunables("");
  EXPECT_EQ(tuned_glibc_tunables(tuned), tuned);
  EXPECT_EQ(tuned_glibc_tunables("glibc.malloc.arena_max=2:glibc.malloc.hugetlb=0"),
            "glibc.malloc.arena_max=2:glibc.malloc.hugetlb=0");
}

TEST(MallocTuning, MatchesWholeNamesOnly) {
  // A longer name that starts with one of ours does not count as it.
  EXPECT_EQ(tuned_glibc_tunables("glibc.malloc.hugetlbx=1"),
            "glibc.malloc.hugetlbx=1:glibc.malloc.hugetlb=1:glibc.malloc.arena_max=1");
}

}  // namespace
}  // namespace peregrine::base
