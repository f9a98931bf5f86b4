#include "mime/charset.h"

#include <gtest/gtest.h>

#include <string>
#include <thread>
#include <vector>

namespace peregrine::mime {
namespace {

struct ConvertCase {
  std::string charset;
  std::string bytes;
  std::string expected;
};

TEST(ConvertToUtf8, Table) {
  const std::vector<ConvertCase> cases = {
      {"utf-8", "\xe2\x82\xac", "\xe2\x82\xac"},
      {"UTF8", "a", "a"},
      {"utf-8",
       "a\xff"
       "b",
       "a\xef\xbf\xbd"
       "b"},
      // One U+FFFD per maximal ill-formed subpart.
      {"utf-8", "\xe2\x82x", "\xef\xbf\xbdx"},
      {"utf-8", "\xed\xa0\x80", "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd"},
      {"utf-8", "\xc0\xaf", "\xef\xbf\xbd\xef\xbf\xbd"},
      {"us-ascii", "plain", "plain"},
      {"US-ASCII", "caf\xe9", "caf\xc3\xa9"},
      {"ascii", "\xc3\xa9", "\xc3\xa9"},
      {"iso-8859-1", "caf\xe9", "caf\xc3\xa9"},
      {"ISO_8859-1", "\x80", "\xe2\x82\xac"},
      {"latin1", "\xff", "\xc3\xbf"},
      {"windows-1252", "\x93q\x94", "\xe2\x80\x9cq\xe2\x80\x9d"},
      {"cp1252", "\x81", "\xc2\x81"},
      {"x-unknown", "\xe9", "\xc3\xa9"},
      {"unknown-8bit", "\xe9", "\xc3\xa9"},
      {"\"utf-8\"", "a", "a"},
      {" utf-8 ", "a", "a"},
      {"iso-8859-15", "\xa4", "\xe2\x82\xac"},
      {"iso-8859-2", "\xb1", "\xc4\x85"},
      {"iso-8859-7", "\xe1", "\xce\xb1"},
      {"windows-1251", "\xcf\xf0\xe8", "\xd0\x9f\xd1\x80\xd0\xb8"},
      {"koi8-r", "\xf0\xd2\xc9", "\xd0\x9f\xd1\x80\xd0\xb8"},
      {"ks_c_5601-1987", "\xc7\xd1", "\xed\x95\x9c"},
      {"euc-kr", "\xc7\xd1", "\xed\x95\x9c"},
      {"gb2312", "\xc4\xe3\xba\xc3", "\xe4\xbd\xa0\xe5\xa5\xbd"},
      {"gbk", "\x81\x40", "\xe4\xb8\x82"},
      {"gb18030", "\xc4\xe3", "\xe4\xbd\xa0"},
      {"big5", "\xa4\xa4", "\xe4\xb8\xad"},
      {"shift_jis", "\x82\xa0", "\xe3\x81\x82"},
      {"x-sjis", "\x82\xa0", "\xe3\x81\x82"},
      {"euc-jp", "\xa4\xa2", "\xe3\x81\x82"},
      {"iso-2022-jp", "\x1b$B$F$9\x1b(B", "\xe3\x81\xa6\xe3\x81\x99"},
      {"utf-16be",
       std::string("\x00"
                   "A",
                   2),
       "A"},
      {"utf-16le", std::string("A\x00", 2), "A"},
      {"utf-16be", std::string("\xd8\x3d\xde\x00", 4), "\xf0\x9f\x98\x80"},
      {"utf-7", "+ZeVnLIqe-", "\xe6\x97\xa5\xe6\x9c\xac\xe8\xaa\x9e"},
      {"iso-8859-8-i", "\xe0", "\xd7\x90"},
      {"tis-620", "\xa1", "\xe0\xb8\x81"},
      {"windows-1255", "\xe0", "\xd7\x90"},
      // Truncated and illegal input: U+FFFD, never ICU's U+001A.
      {"shift_jis", "a\x82", "a\xef\xbf\xbd"},
      {"utf-16be", std::string("\x00", 1), "\xef\xbf\xbd"},
      {"euc-jp", "\xa4", "\xef\xbf\xbd"},
      {"utf-8", "", ""},
      {"iso-2022-jp", "", ""},
  };
  for (const ConvertCase& c : cases) {
    SCOPED_TRACE(c.charset + " / " + c.bytes);
    std::optional<std::string> out = convert_to_utf8(c.bytes, c.charset);
    ASSERT_TRUE(out.has_value());
    EXPECT_EQ(*out, c.expected);
  }
}

TEST(ConvertToUtf8, UnknownCharsets) {
  const std::vector<std::string> names = {
      "",   "x-no-such", "utf-8\x01", "../../etc/passwd", "a,b", std::string(200, 'a'),
      "  ", "\"\"",      "---"};
  for (const std::string& name : names) {
    SCOPED_TRACE(name);
    EXPECT_FALSE(convert_to_utf8("abc", name).has_value());
    EXPECT_FALSE(is_known_charset(name));
  }
  EXPECT_TRUE(is_known_charset("UTF-8"));
  EXPECT_TRUE(is_known_charset("iso-8859-5"));
  EXPECT_TRUE(is_known_charset("x-user-defined"));
}

TEST(ConvertToUtf8, StatefulConverterIsResetBetweenCalls) {
  // A conversion left in the middle of an ISO-2022-JP shift must not leak into
  // the next one on the same cached converter.
  EXPECT_TRUE(convert_to_utf8("\x1b$B$F", "iso-2022-jp").has_value());
  EXPECT_EQ(*convert_to_utf8("$F", "iso-2022-jp"), "$F");
}

TEST(ConvertToUtf8, LargeInputGrowsOutput) {
  std::string input;
  for (int i = 0; i < 20000; ++i) {
    input += "+ZeVnLIqe-";
  }
  std::optional<std::string> out = convert_to_utf8(input, "utf-7");
  ASSERT_TRUE(out.has_value());
  EXPECT_EQ(out->size(), 20000u * 9);
}

TEST(ConvertToUtf8, ManyCharsetNamesStayBounded) {
  // Every name is cached, known or not; the cache must not grow without end.
  for (int i = 0; i < 2000; ++i) {
    EXPECT_FALSE(convert_to_utf8("a", "x-bogus-" + std::to_string(i)).has_value());
  }
  EXPECT_EQ(*convert_to_utf8("\xe1", "iso-8859-7"), "\xce\xb1");
}

TEST(ConvertToUtf8, PerThreadConverters) {
  std::vector<std::thread> threads;
  std::vector<int> ok(4, 0);
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([t, &ok] {
      for (int i = 0; i < 200; ++i) {
        if (convert_to_utf8("\x1b$B$F$9\x1b(B", "iso-2022-jp") == "\xe3\x81\xa6\xe3\x81\x99" &&
            convert_to_utf8("\xcf", "windows-1251") == "\xd0\x9f") {
          ++ok[t];
        }
      }
    });
  }
  for (std::thread& thread : threads) {
    thread.join();
  }
  EXPECT_EQ(ok, std::vector<int>(4, 200));
}

TEST(IsValidUtf8, Table) {
  EXPECT_TRUE(is_valid_utf8(""));
  EXPECT_TRUE(is_valid_utf8("plain ascii text that is longer than eight bytes"));
  EXPECT_TRUE(is_valid_utf8("\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80"));
  EXPECT_TRUE(is_valid_utf8("\xf4\x8f\xbf\xbf"));
  EXPECT_TRUE(is_valid_utf8(std::string("a\0b", 3)));
  EXPECT_FALSE(is_valid_utf8("\xe9"));
  EXPECT_FALSE(is_valid_utf8("abcdefgh\x80"));
  EXPECT_FALSE(is_valid_utf8("\xc0\x80"));          // overlong
  EXPECT_FALSE(is_valid_utf8("\xe0\x80\x80"));      // overlong
  EXPECT_FALSE(is_valid_utf8("\xed\xa0\x80"));      // surrogate
  EXPECT_FALSE(is_valid_utf8("\xf4\x90\x80\x80"));  // past U+10FFFF
  EXPECT_FALSE(is_valid_utf8("\xf5\x80\x80\x80"));
  EXPECT_FALSE(is_valid_utf8("\xe2\x82"));  // truncated
  EXPECT_FALSE(is_valid_utf8("\xff"));
}

TEST(EnsureUtf8, Table) {
  EXPECT_EQ(ensure_utf8("abc"), "abc");
  EXPECT_EQ(ensure_utf8("\xc3\xa9"), "\xc3\xa9");
  EXPECT_EQ(ensure_utf8("caf\xe9"), "caf\xc3\xa9");
  EXPECT_EQ(ensure_utf8("\x80\x9f"), "\xe2\x82\xac\xc5\xb8");
  EXPECT_EQ(ensure_utf8("\x8d"), "\xc2\x8d");
  // Mixed: not valid UTF-8 as a whole, so every byte is read as Windows-1252.
  EXPECT_EQ(ensure_utf8("\xc3\xa9\xe9"), "\xc3\x83\xc2\xa9\xc3\xa9");
  for (int b = 0; b < 256; ++b) {
    EXPECT_TRUE(is_valid_utf8(ensure_utf8(std::string(1, static_cast<char>(b)))));
  }
}

}  // namespace
}  // namespace peregrine::mime
