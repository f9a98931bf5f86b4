#include "base/ascii.h"

#include <gtest/gtest.h>

namespace peregrine::base {
namespace {

TEST(Ascii, IequalsIgnoresAsciiCaseOnly) {
  EXPECT_TRUE(iequals("Content-Type", "content-TYPE"));
  EXPECT_FALSE(iequals("Content-Type", "Content-Typ"));
  EXPECT_FALSE(iequals("\xC9", "\xE9"));  // Latin-1 É/é are not folded
}

TEST(Ascii, IcompareOrdersLikeLowercase) {
  EXPECT_EQ(icompare("abc", "ABC"), 0);
  EXPECT_LT(icompare("abc", "abd"), 0);
  EXPECT_GT(icompare("abcd", "ABC"), 0);
  EXPECT_LT(icompare("", "a"), 0);
}

TEST(Ascii, TrimRemovesWhitespaceAndLineEnds) {
  EXPECT_EQ(trim(" \t x y \r\n"), "x y");
  EXPECT_EQ(trim("\r\n"), "");
  EXPECT_TRUE(istarts_with("Multipart/Mixed", "multipart/"));
}

}  // namespace
}  // namespace peregrine::base
