#include "imap/proto/wire_string.h"

#include <gtest/gtest.h>

#include <string>

namespace peregrine::imap {
namespace {

std::string astring(std::string_view s) {
  std::string out;
  append_astring(out, s);
  return out;
}

TEST(WireString, Astring) {
  EXPECT_EQ(astring("INBOX"), "INBOX");
  EXPECT_EQ(astring("a]b"), "a]b");
  EXPECT_EQ(astring(""), "\"\"");
  EXPECT_EQ(astring("a b"), "\"a b\"");
  EXPECT_EQ(astring("nil"), "\"nil\"");
  EXPECT_EQ(astring("a%"), "\"a%\"");
  EXPECT_EQ(astring("q\""), "\"q\\\"\"");
  EXPECT_EQ(astring("a\r\nb"), "{4}\r\na\r\nb");
}

TEST(WireString, StringsNstringsNumbers) {
  std::string out;
  append_string(out, "x");
  out += ' ';
  append_nstring(out, std::nullopt);
  out += ' ';
  append_nstring(out, std::string("y"));
  out += ' ';
  append_number(out, 18446744073709551615ull);
  EXPECT_EQ(out, "\"x\" NIL \"y\" 18446744073709551615");
}

}  // namespace
}  // namespace peregrine::imap
