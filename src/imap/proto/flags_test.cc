#include "imap/proto/flags.h"

#include <gtest/gtest.h>

namespace peregrine::imap {
namespace {

TEST(Flags, SystemFlagsAreCanonicalised) {
  EXPECT_EQ(canonical_flag("\\seen"), "\\Seen");
  EXPECT_EQ(canonical_flag("\\ANSWERED"), "\\Answered");
  EXPECT_EQ(canonical_flag("\\Recent"), "\\Recent");
  EXPECT_EQ(canonical_flag("\\Junk"), "\\Junk");
  EXPECT_EQ(canonical_flag("$junk"), "$junk");
  EXPECT_TRUE(is_system_flag("\\dRaFt"));
  EXPECT_FALSE(is_system_flag("Seen"));
}

TEST(Flags, Syntax) {
  EXPECT_TRUE(is_valid_flag("\\Seen"));
  EXPECT_TRUE(is_valid_flag("$Forwarded"));
  EXPECT_TRUE(is_valid_flag("NonJunk"));
  EXPECT_FALSE(is_valid_flag(""));
  EXPECT_FALSE(is_valid_flag("\\"));
  EXPECT_FALSE(is_valid_flag("\\*"));
  EXPECT_FALSE(is_valid_flag("a b"));
  EXPECT_FALSE(is_valid_flag("a]"));
  EXPECT_FALSE(is_valid_flag("\xc3\xa4"));
}

}  // namespace
}  // namespace peregrine::imap
