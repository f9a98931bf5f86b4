#include "imap/proto/cursor.h"

#include <gtest/gtest.h>

#include <string>

namespace peregrine::imap {
namespace {

FramedCommand framed(std::vector<std::string_view> lines, std::vector<Literal> literals = {}) {
  FramedCommand c;
  c.lines = std::move(lines);
  c.literals = std::move(literals);
  return c;
}

TEST(Cursor, AtomsSpacesAndEnd) {
  FramedCommand f = framed({"abc  def)"});
  Cursor c(f);
  EXPECT_FALSE(c.at_end());
  EXPECT_EQ(c.atom(), "abc");
  EXPECT_FALSE(c.space() && c.space());  // the second call finds none
  EXPECT_TRUE(c.keyword("DEF"));
  EXPECT_EQ(c.peek(), ')');
  EXPECT_FALSE(c.finish());
  EXPECT_TRUE(c.consume(')'));
  EXPECT_TRUE(c.finish());
  EXPECT_EQ(c.peek(), -1);
}

TEST(Cursor, KeywordNeedsAWholeAtom) {
  FramedCommand f = framed({"NILS NIL"});
  Cursor c(f);
  EXPECT_FALSE(c.keyword("NIL"));
  EXPECT_EQ(c.atom(), "NILS");
  c.space();
  EXPECT_TRUE(c.keyword("nil"));
}

TEST(Cursor, Astrings) {
  FramedCommand f = framed({"a]b \"q \\\" \\\\ x\" ", " \"\""}, {Literal{"lit\r\n"}});
  Cursor c(f);
  EXPECT_EQ(*c.astring("x"), "a]b");
  c.space();
  EXPECT_EQ(*c.astring("x"), "q \" \\ x");
  c.space();
  EXPECT_TRUE(c.at_literal());
  EXPECT_EQ(c.peek(), -1);
  EXPECT_EQ(*c.astring("x"), "lit\r\n");
  c.space();
  EXPECT_EQ(*c.astring("x"), "");
  EXPECT_TRUE(c.at_end());
  EXPECT_EQ(c.astring("thing").error().message, "missing thing");
}

TEST(Cursor, StringsAndNstrings) {
  FramedCommand f = framed({"atom NIL \"x\""});
  Cursor c(f);
  EXPECT_EQ(c.string("name").error().message, "invalid name");
  EXPECT_EQ(c.atom(), "atom");
  c.space();
  EXPECT_EQ(*c.nstring("v"), std::nullopt);
  c.space();
  EXPECT_EQ(*c.nstring("v"), std::optional<std::string>("x"));
}

TEST(Cursor, QuotedErrors) {
  for (std::string_view line : {"\"abc", "\"a\\b\"", "\"a\rb\"", "\"a\\"}) {
    FramedCommand f = framed({line});
    Cursor c(f);
    EXPECT_FALSE(c.astring("s").ok()) << line;
  }
}

TEST(Cursor, Literals) {
  FramedCommand f = framed({"", " ", ""}, {Literal{std::string_view("bin\0x", 5), true, true},
                                           Literal{std::string_view("a\0b", 3)}});
  Cursor c(f);
  EXPECT_EQ(c.astring("s").error().message, "literal8 not allowed for s");
  Parsed<Literal> l = c.literal("m", true);
  ASSERT_TRUE(l.ok());
  EXPECT_TRUE(l->binary);
  c.space();
  EXPECT_EQ(c.astring("s").error().message, "NUL in s");
}

TEST(Cursor, Numbers) {
  FramedCommand f =
      framed({"0 4294967295 4294967296 12x 9223372036854775807 20000000000000000000"});
  Cursor c(f);
  EXPECT_EQ(c.number("n", 1).error().message, "invalid n 0");
  EXPECT_EQ(*c.number("n"), 0u);
  c.space();
  EXPECT_EQ(*c.number("n"), 4294967295u);
  c.space();
  EXPECT_EQ(c.number("n").error().message, "invalid n 4294967296");
  EXPECT_EQ(*c.number("n", 0, 1ull << 40), 4294967296u);
  c.space();
  EXPECT_EQ(*c.number("n"), 12u);
  EXPECT_EQ(c.peek(), 'x');
  c.atom();
  c.space();
  EXPECT_EQ(*c.number("n", 0, 0x7fffffffffffffffull), 0x7fffffffffffffffull);
  c.space();
  // Twenty digits: larger than any number64, not a value wrapped round 2^64.
  EXPECT_EQ(c.number("n", 0, 0x7fffffffffffffffull).error().message,
            "invalid n 20000000000000000000");
}

TEST(Cursor, MalformedCommandsAreEmpty) {
  FramedCommand none;
  Cursor a(none);
  EXPECT_TRUE(a.at_end());
  FramedCommand mismatched = framed({"a", "b"});
  Cursor b(mismatched);
  EXPECT_TRUE(b.at_end());
  EXPECT_FALSE(b.at_literal());
}

}  // namespace
}  // namespace peregrine::imap
