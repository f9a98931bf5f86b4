#include "mime/encoded_word.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "mime/charset.h"
#include "mime/header.h"

namespace peregrine::mime {
namespace {

struct Case {
  std::string input;
  std::string expected;
};

TEST(DecodeEncodedWords, Table) {
  const std::vector<Case> cases = {
      {"", ""},
      {"plain text", "plain text"},
      // RFC 2047 §8 examples.
      {"=?ISO-8859-1?Q?a?=", "a"},
      {"=?ISO-8859-1?Q?a?= b", "a b"},
      {"=?ISO-8859-1?Q?a?= =?ISO-8859-1?Q?b?=", "ab"},
      {"=?ISO-8859-1?Q?a?=  =?ISO-8859-1?Q?b?=", "ab"},
      {"=?ISO-8859-1?Q?a?=\t =?ISO-8859-1?Q?b?=", "ab"},
      {"=?ISO-8859-1?Q?a_b?=", "a b"},
      {"=?ISO-8859-1?Q?a?= =?ISO-8859-2?Q?_b?=", "a b"},
      {"(=?ISO-8859-1?Q?a?=)", "(a)"},
      {"=?US-ASCII?Q?Keith_Moore?= <moore@cs.utk.edu>", "Keith Moore <moore@cs.utk.edu>"},
      {"=?ISO-8859-1?Q?Andr=E9?= Pirard", "Andr\xc3\xa9 Pirard"},
      {"=?ISO-8859-1?B?SWYgeW91IGNhbiByZWFkIHRoaXMgeW8=?= "
       "=?ISO-8859-2?B?dSB1bmRlcnN0YW5kIHRoZSBleGFtcGxlLg==?=",
       "If you can read this you understand the example."},
      // B and Q, case of the encoding letter, hex case.
      {"=?utf-8?b?4oKs?=", "\xe2\x82\xac"},
      {"=?UTF-8?B?4oKs?=", "\xe2\x82\xac"},
      {"=?utf-8?q?=e2=82=ac?=", "\xe2\x82\xac"},
      {"=?utf-8?Q?=E2=82=AC?=", "\xe2\x82\xac"},
      // Missing padding, whitespace inside B.
      {"=?utf-8?B?SGVsbG8?=", "Hello"},
      {"=?utf-8?B?SGVs bG8=?=", "Hello"},
      // RFC 2231 language suffix.
      {"=?utf-8*en?q?hi?=", "hi"},
      {"=?US-ASCII*EN?Q?a?= =?us-ascii?q?b?=", "ab"},
      // Whitespace next to ordinary text is kept.
      {"x =?utf-8?q?a?= y", "x a y"},
      {"x  =?utf-8?q?a?=  y", "x  a  y"},
      // Encoded words glued to text are decoded anyway.
      {"foo=?utf-8?q?bar?=", "foobar"},
      {"=?utf-8?q?foo?=bar", "foobar"},
      {"a=?utf-8?q?b?=c=?utf-8?q?d?=e", "abcde"},
      // '?' and spaces inside Q text.
      {"=?utf-8?q?what? yes?=", "what? yes"},
      {"=?utf-8?q?a b?= c", "a b c"},
      // '=' not followed by hex stays.
      {"=?utf-8?q?a=zz=?=", "a=zz="},
      // A character split across two words (and across B/Q) survives.
      {"=?utf-8?q?=E2=82?= =?utf-8?q?=AC?=", "\xe2\x82\xac"},
      {"=?utf-8?B?4o==?= =?UTF-8?Q?=82=AC?=", "\xe2\x82\xac"},
      {"=?utf-8?q?=E2?==?utf-8?q?=82=AC?=", "\xe2\x82\xac"},
      {"=?shift_jis?B?gg==?= =?shift_jis?B?oA==?=", "\xe3\x81\x82"},
      // Split across different charsets is not joined.
      {"=?utf-8?q?=E2=82?= =?iso-8859-1?q?=AC?=", "\xef\xbf\xbd\xc2\xac"},
      // Unknown charset, bad encoding, broken B: left as written.
      {"=?x-nope?q?a?=", "=?x-nope?q?a?="},
      {"=?x-nope?q?a?= =?x-nope?q?b?=", "=?x-nope?q?a?= =?x-nope?q?b?="},
      {"=?x-nope?q?a?= =?utf-8?q?b?=", "=?x-nope?q?a?= b"},
      {"=?utf-8?x?a?=", "=?utf-8?x?a?="},
      {"=?utf-8?b?!!!?=", "=?utf-8?b?!!!?="},
      {"=??q?a?=", "=??q?a?="},
      {"=?utf-8?q?unterminated", "=?utf-8?q?unterminated"},
      {"=?utf-8?q?open and =?utf-8?q?x?=", "=?utf-8?q?open and x"},
      {"=?utf 8?q?a?=", "=?utf 8?q?a?="},
      {"=?utf-8?q?", "=?utf-8?q?"},
      {"a =?utf-8?b?!?= =?utf-8?q?b?=", "a =?utf-8?b?!?= b"},
      // Empty payload.
      {"=?utf-8?q?"
       "?=x",
       "x"},
      // Charset aliases and misspellings.
      {"=?utf8?q?=C3=A9?=", "\xc3\xa9"},
      {"=?ks_c_5601-1987?B?x9Gx2w==?=", "\xed\x95\x9c\xea\xb8\x80"},
      {"=?x-unknown?q?=E9?=", "\xc3\xa9"},
      {"=?windows-1252?q?=80?=", "\xe2\x82\xac"},
      {"=?koi8-r?b?8NLJ18XU?=", "\xd0\x9f\xd1\x80\xd0\xb8\xd0\xb2\xd0\xb5\xd1\x82"},
      {"=?iso-2022-jp?B?GyRCJEYkORsoQg==?=", "\xe3\x81\xa6\xe3\x81\x99"},
      // Two ISO-2022-JP words, each back in ASCII at its end: joined with
      // nothing between them (no U+FFFD where the shifts meet).
      {"=?iso-2022-jp?B?GyRCJEYbKEI=?=\r\n\t=?iso-2022-jp?B?GyRCJDkbKEI=?=",
       "\xe3\x81\xa6\xe3\x81\x99"},
      // Invalid UTF-8 inside a utf-8 word becomes U+FFFD.
      {"=?utf-8?q?a=FFb?=",
       "a\xef\xbf\xbd"
       "b"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.input);
    EXPECT_EQ(decode_encoded_words(c.input), c.expected);
  }
}

TEST(DecodeEncodedWords, TextOutsideWordsPassesThrough) {
  // decode_encoded_words leaves 8-bit text alone; the _utf8 variant converts
  // it, and only it.
  const std::string input = "caf\xe9 =?utf-8?q?=E2=82=AC?= na\xefve";
  EXPECT_EQ(decode_encoded_words(input), "caf\xe9 \xe2\x82\xac na\xefve");
  EXPECT_EQ(decode_encoded_words_utf8(input), "caf\xc3\xa9 \xe2\x82\xac na\xc3\xafve");
  // Raw UTF-8 (RFC 6532) stays as it is.
  EXPECT_EQ(decode_encoded_words_utf8("\xc3\xa9t\xc3\xa9 =?utf-8?q?x?="), "\xc3\xa9t\xc3\xa9 x");
  // An undecodable word is text too, and gets the same treatment.
  EXPECT_EQ(decode_encoded_words_utf8("=?x-nope?q?\xe9?="), "=?x-nope?q?\xc3\xa9?=");
}

TEST(HasEncodedWords, Detects) {
  EXPECT_TRUE(has_encoded_words("x =?utf-8?q?a?= y"));
  EXPECT_TRUE(has_encoded_words("=?x-nope?q?a?="));
  EXPECT_FALSE(has_encoded_words("plain"));
  EXPECT_FALSE(has_encoded_words("=?utf-8?q?open"));
  EXPECT_FALSE(has_encoded_words("a=?b"));
  EXPECT_FALSE(has_encoded_words("=?utf-8?z?a?="));
}

TEST(DecodeHeaderValue, Table) {
  const std::vector<Case> cases = {
      {" Hello", "Hello"},
      {" =?utf-8?q?a?=\r\n =?utf-8?q?b?=", "ab"},
      {" =?utf-8?q?=E2=82?=\r\n\t=?utf-8?q?=AC?= ok", "\xe2\x82\xac ok"},
      {" Re: =?ISO-8859-1?Q?Andr=E9?=\r\n Pirard", "Re: Andr\xc3\xa9 Pirard"},
      {" \xc3\xa9t\xc3\xa9", "\xc3\xa9t\xc3\xa9"},
      {" caf\xe9", "caf\xc3\xa9"},
      {" price \x80 5", "price \xe2\x82\xac 5"},
      {" caf\xe9 =?utf-8?b?4oKs?=", "caf\xc3\xa9 \xe2\x82\xac"},
      {" a\r\n b", "a b"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.input);
    EXPECT_EQ(decode_header_value(c.input), c.expected);
  }
}

// Every prefix of hostile inputs decodes without crashing and gives UTF-8.
TEST(DecodeEncodedWords, EveryPrefix) {
  const std::vector<std::string> inputs = {
      "=?utf-8?q?=E2=82?= =?utf-8?B?4oKs?= x=?iso-2022-jp?B?GyRCJEYkOSsoQg==?=\xff",
      "=?=?=?utf-8?q?=?=?=?"
      "?=?"
      "?==?b?=?=",
      "=?shift_jis?B?gqCCoA==?==?utf-16?b?2D3eAA==?= =?utf-7?q?+ZeVnLIqe-?=",
      "=?utf-8*?q?a?= =?*?q?b?= =?utf-8*en-US?Q?c_d?=",
  };
  for (const std::string& input : inputs) {
    for (size_t n = 0; n <= input.size(); ++n) {
      std::string out = decode_encoded_words_utf8(input.substr(0, n));
      ASSERT_TRUE(is_valid_utf8(out)) << input.substr(0, n);
      (void)decode_encoded_words(input.substr(0, n));
      (void)has_encoded_words(input.substr(0, n));
    }
  }
}

TEST(DecodeEncodedWords, ManyWordStartsStayLinear) {
  // Each "=?" could start a word; there is no "?=" anywhere.
  std::string input;
  for (int i = 0; i < 100000; ++i) {
    input += "=?a?q?x";
  }
  EXPECT_EQ(decode_encoded_words(input), input);
  // Many real words.
  std::string words;
  std::string expected;
  for (int i = 0; i < 10000; ++i) {
    words += "=?utf-8?q?ab?= ";
    expected += "ab";
  }
  EXPECT_EQ(decode_encoded_words(words), expected + " ");
}

}  // namespace
}  // namespace peregrine::mime
