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

TEST(Ascii, HexValueTakesEitherCase) {
  EXPECT_EQ(hex_value('0'), 0);
  EXPECT_EQ(hex_value('9'), 9);
  EXPECT_EQ(hex_value('a'), 10);
  EXPECT_EQ(hex_value('F'), 15);
  EXPECT_EQ(hex_value('g'), -1);
  EXPECT_EQ(hex_value('G'), -1);
  EXPECT_EQ(hex_value(' '), -1);
  EXPECT_EQ(hex_value('\xc1'), -1);
}

TEST(Ascii, Base64ValueUsesTheGivenLastTwoDigits) {
  EXPECT_EQ(base64_value('A'), 0);
  EXPECT_EQ(base64_value('z'), 51);
  EXPECT_EQ(base64_value('0'), 52);
  EXPECT_EQ(base64_value('+'), 62);
  EXPECT_EQ(base64_value('/'), 63);
  EXPECT_EQ(base64_value(','), -1);
  EXPECT_EQ(base64_value('='), -1);
  EXPECT_EQ(base64_value('\xff'), -1);
  EXPECT_EQ(base64_value(',', '+', ','), 63);
  EXPECT_EQ(base64_value('/', '+', ','), -1);
}

}  // namespace
}  // namespace peregrine::base
