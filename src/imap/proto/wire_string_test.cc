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

TEST(WireString, ParseNumber) {
  struct Case {
    std::string_view digits;
    std::uint64_t max;
    std::optional<std::uint64_t> value;
  };
  for (const Case& c : {
           Case{"0", 0xffffffffu, 0},
           Case{"007", 0xffffffffu, 7},
           Case{"4294967295", 0xffffffffu, 4294967295u},
           Case{"4294967296", 0xffffffffu, std::nullopt},
           Case{"9223372036854775807", 0x7fffffffffffffffull, 0x7fffffffffffffffull},
           Case{"9223372036854775808", 0x7fffffffffffffffull, std::nullopt},
           // 2e19 wraps round 2^64 to less than 2^63 in a careless parser.
           Case{"20000000000000000000", 0x7fffffffffffffffull, std::nullopt},
           Case{"18446744073709551615", ~0ull, ~0ull},
           Case{"18446744073709551616", ~0ull, std::nullopt},
           Case{"9", 5, std::nullopt},
           Case{"", 0xffffffffu, std::nullopt},
           Case{"12x", 0xffffffffu, std::nullopt},
           Case{"-1", 0xffffffffu, std::nullopt},
           Case{"+1", 0xffffffffu, std::nullopt},
       }) {
    EXPECT_EQ(parse_number(c.digits, c.max), c.value) << c.digits;
  }
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
