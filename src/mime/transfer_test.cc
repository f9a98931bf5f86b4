#include "mime/transfer.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace peregrine::mime {
namespace {

TEST(TransferEncoding, Parse) {
  EXPECT_EQ(parse_encoding(""), Encoding::k7Bit);
  EXPECT_EQ(parse_encoding("7bit"), Encoding::k7Bit);
  EXPECT_EQ(parse_encoding(" 7BIT "), Encoding::k7Bit);
  EXPECT_EQ(parse_encoding("8bit"), Encoding::k8Bit);
  EXPECT_EQ(parse_encoding("Binary"), Encoding::kBinary);
  EXPECT_EQ(parse_encoding("BASE64"), Encoding::kBase64);
  EXPECT_EQ(parse_encoding("base64 (comment)"), Encoding::kBase64);
  EXPECT_EQ(parse_encoding("base64;"), Encoding::kBase64);
  EXPECT_EQ(parse_encoding("Quoted-Printable"), Encoding::kQuotedPrintable);
  EXPECT_EQ(parse_encoding("x-uuencode"), Encoding::kUnknown);
  EXPECT_EQ(parse_encoding("base6"), Encoding::kUnknown);
  EXPECT_EQ(parse_encoding("base64x"), Encoding::kUnknown);
}

struct DecodeCase {
  std::string in;
  std::string out;
};

TEST(TransferBase64, Table) {
  const std::vector<DecodeCase> cases = {
      {"", ""},
      {"QQ==", "A"},
      {"QUI=", "AB"},
      {"QUJD", "ABC"},
      {"aGVsbG8gd29ybGQ=", "hello world"},
      // Line ends, spaces and junk are skipped.
      {"aGVs\r\nbG8g\r\nd29y\r\nbGQ=\r\n", "hello world"},
      {"aGVs bG8\tgd2\n9ybGQ=", "hello world"},
      {"aGVs*bG8!gd29ybGQ", "hello world"},
      // Missing padding: the partial group still carries whole bytes.
      {"QQ", "A"},
      {"QUI", "AB"},
      // A lone trailing character carries no whole byte.
      {"QUJDR", "ABC"},
      // Stops at the first pad.
      {"QQ==QUJD", "A"},
      {"QUJD=QUJD", "ABC"},
      {"====", ""},
      // Every byte value.
      {"AAECAwQFBgcICQ==", std::string("\x00\x01\x02\x03\x04\x05\x06\x07\x08\x09", 10)},
      {"/+/+", "\xff\xef\xfe"},
  };
  for (const DecodeCase& c : cases) {
    EXPECT_EQ(decode_base64(c.in), c.out) << c.in;
  }
}

TEST(TransferBase64, RoundTripAllBytes) {
  std::string raw;
  for (int i = 0; i < 256 * 3; ++i) {
    raw.push_back(static_cast<char>(i * 7 + 3));
  }
  // A small independent encoder.
  static const char* kAlphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  for (size_t len = 0; len < 40; ++len) {
    std::string in = raw.substr(0, len * 19);
    std::string enc;
    size_t i = 0;
    for (; i + 3 <= in.size(); i += 3) {
      uint32_t v = (static_cast<uint8_t>(in[i]) << 16) | (static_cast<uint8_t>(in[i + 1]) << 8) |
                   static_cast<uint8_t>(in[i + 2]);
      enc += kAlphabet[v >> 18];
      enc += kAlphabet[(v >> 12) & 63];
      enc += kAlphabet[(v >> 6) & 63];
      enc += kAlphabet[v & 63];
      if (enc.size() % 78 == 76) {
        enc += "\r\n";
      }
    }
    if (in.size() - i == 1) {
      uint32_t v = static_cast<uint8_t>(in[i]) << 16;
      enc += std::string{kAlphabet[v >> 18], kAlphabet[(v >> 12) & 63], '=', '='};
    } else if (in.size() - i == 2) {
      uint32_t v = (static_cast<uint8_t>(in[i]) << 16) | (static_cast<uint8_t>(in[i + 1]) << 8);
      enc +=
          std::string{kAlphabet[v >> 18], kAlphabet[(v >> 12) & 63], kAlphabet[(v >> 6) & 63], '='};
    }
    EXPECT_EQ(decode_base64(enc), in) << len;
  }
}

TEST(TransferQuotedPrintable, Table) {
  const std::vector<DecodeCase> cases = {
      {"", ""},
      {"plain text", "plain text"},
      {"caf=C3=A9", "caf\xc3\xa9"},
      {"caf=c3=a9", "caf\xc3\xa9"},
      {"a=3Db", "a=b"},
      // Soft line breaks, CRLF and LF, with transport whitespace after '='.
      {"long=\r\nline", "longline"},
      {"long=\nline", "longline"},
      {"long= \t\r\nline", "longline"},
      {"end=", "end"},
      {"end=  ", "end"},
      // Whitespace before the '=' of a soft line break is data.
      {"two =\r\nwords", "two words"},
      {"tab\t=\nx", "tab\tx"},
      {"end =", "end "},
      // Hard line breaks kept as written.
      {"a\r\nb\nc", "a\r\nb\nc"},
      // Trailing whitespace on a line is removed, encoded whitespace kept.
      {"a  \r\nb\t\nc ", "a\r\nb\nc"},
      {"a=20\r\nb=09\n", "a \r\nb\t\n"},
      {"a =20 \r\n", "a  \r\n"},
      // Malformed '=' is kept.
      {"a=zz", "a=zz"},
      {"a=4", "a=4"},
      {"100% = fine", "100% = fine"},
      {"=", ""},
      {"==41", "=A"},
      // A bare CR inside a line is data.
      {"a\rb", "a\rb"},
      {"=0D=0A", "\r\n"},
      {"x=0D\n", "x\r\n"},
  };
  for (const DecodeCase& c : cases) {
    EXPECT_EQ(decode_quoted_printable(c.in), c.out) << c.in;
  }
}

TEST(TransferDecodeBody, ByEncoding) {
  EXPECT_EQ(decode_body("QUJD", Encoding::kBase64), "ABC");
  EXPECT_EQ(decode_body("a=3Db", Encoding::kQuotedPrintable), "a=b");
  EXPECT_EQ(decode_body("a=3Db", Encoding::k7Bit), "a=3Db");
  EXPECT_EQ(decode_body("QUJD", Encoding::k8Bit), "QUJD");
  EXPECT_EQ(decode_body("QUJD", Encoding::kBinary), "QUJD");
  EXPECT_EQ(decode_body("QUJD", Encoding::kUnknown), "QUJD");
}

TEST(TransferRobustness, EveryPrefixOfHostileInput) {
  const std::string in("=\r\n=4=\n=41 \t=\r=ZZ=a=A\r\n\r\n==QQ=Q\xff\x00==\r", 36);
  for (size_t n = 0; n <= in.size(); ++n) {
    std::string_view prefix(in.data(), n);
    EXPECT_LE(decode_quoted_printable(prefix).size(), n);
    EXPECT_LE(decode_base64(prefix).size(), n);
  }
}

}  // namespace
}  // namespace peregrine::mime
