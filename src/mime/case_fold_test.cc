#include "mime/case_fold.h"

#include <gtest/gtest.h>
#include <unicode/utf8.h>

#include <string>

namespace peregrine::mime {
namespace {

std::string utf8(char32_t c) {
  char buf[U8_MAX_LENGTH];
  int32_t n = 0;
  U8_APPEND_UNSAFE(buf, n, static_cast<UChar32>(c));
  return std::string(buf, static_cast<size_t>(n));
}

bool same(std::string_view a, std::string_view b) { return fold_case(a) == fold_case(b); }
bool finds(std::string_view text, std::string_view needle) {
  return fold_case(text).find(fold_case(needle)) != std::string::npos;
}

TEST(FoldCase, AsciiIsLowerCased) {
  EXPECT_EQ(fold_case("Hello, WORLD 42!"), "hello, world 42!");
  EXPECT_EQ(fold_case(""), "");
  EXPECT_EQ(fold_case(std::string("a\0B", 3)), std::string("a\0b", 3));
}

TEST(FoldCase, TitlecaseThenDecomposition) {
  // The output form: decomposed, ASCII letters in lower case, other letters
  // in their titlecase form.
  const std::string e_acute = "e\xCC\x81";  // e U+0301
  EXPECT_EQ(fold_case("\xC3\x89"
                      "COLE"),
            e_acute + "cole");  // ÉCOLE
  EXPECT_EQ(fold_case("\xC3\xA9"
                      "cole"),
            e_acute + "cole");  // école, precomposed
  EXPECT_EQ(fold_case("e\xCC\x81"
                      "cole"),
            e_acute + "cole");  // école, decomposed
  EXPECT_EQ(fold_case("E\xCC\x81"
                      "COLE"),
            e_acute + "cole");
  // Greek: σ, final ς and Σ are one letter, Σ.
  EXPECT_EQ(fold_case("\xCF\x83"), "\xCE\xA3");
  EXPECT_EQ(fold_case("\xCF\x82"), "\xCE\xA3");
  EXPECT_TRUE(
      same("\xCE\x9F\xCE\x94\xCE\x9F\xCE\xA3", "\xCE\xBF\xCE\xB4\xCE\xBF\xCF\x82"));  // ΟΔΟΣ οδος
  // Cyrillic.
  EXPECT_TRUE(same("\xD0\x9F\xD0\xA0\xD0\x98\xD0\x92\xD0\x95\xD0\xA2",
                   "\xD0\xBF\xD1\x80\xD0\xB8\xD0\xB2\xD0\xB5\xD1\x82"));  // ПРИВЕТ привет
}

TEST(FoldCase, SharpSHasNoTitlecase) {
  // RFC 5051 uses the one-to-one titlecase property: ß has none, so it stays
  // ß and is not "ss" (full case folding would make it so).
  EXPECT_EQ(fold_case("Stra\xC3\x9F"
                      "e"),
            "stra\xC3\x9F"
            "e");
  EXPECT_FALSE(
      same("Stra\xC3\x9F"
           "e",
           "STRASSE"));
  EXPECT_FALSE(
      finds("Stra\xC3\x9F"
            "e",
            "strasse"));
  EXPECT_TRUE(
      finds("Stra\xC3\x9F"
            "e",
            "STRA\xC3\x9F"));
}

TEST(FoldCase, NonAsciiThatEndsInAscii) {
  EXPECT_EQ(fold_case("\xC5\xBF"), "s");  // U+017F LONG S: titlecase S
  EXPECT_TRUE(
      same("\xC5\xBF"
           "tar",
           "STAR"));
  EXPECT_EQ(fold_case("\xE2\x84\xAA"), "k");  // U+212A KELVIN SIGN: decomposes to K
  EXPECT_TRUE(
      same("\xE2\x84\xAA"
           "elvin",
           "kelvin"));
  EXPECT_EQ(fold_case("\xEF\xAC\x81"
                      "le"),
            "file");  // U+FB01 ﬁ: <compat> f i
  EXPECT_TRUE(
      same("\xEF\xAC\x81"
           "LE",
           "File"));
  EXPECT_EQ(fold_case("\xEF\xBC\xA1\xEF\xBD\x82"), "ab");  // fullwidth Ａｂ
  EXPECT_EQ(fold_case("x\xC2\xB2"), "x2");                 // superscript two
  EXPECT_EQ(fold_case("\xC4\xB1"), "i");                   // U+0131 dotless i: titlecase I
  EXPECT_EQ(fold_case("\xC4\xB0"), "i\xCC\x87");           // U+0130: I U+0307
}

TEST(FoldCase, TitlecaseDigraphs) {
  // U+01C4 Ǆ, U+01C5 ǅ, U+01C6 ǆ and "DŽ" are one sequence: D, Z, U+030C.
  const std::string want = "dz\xCC\x8C";
  for (std::string_view s : {"\xC7\x84", "\xC7\x85", "\xC7\x86", "D\xC5\xBD", "d\xC5\xBE"}) {
    EXPECT_EQ(fold_case(s), want) << s;
  }
}

TEST(FoldCase, CombiningMarksAreSubstrings) {
  // Decomposed text holds the base letter: "chloe" is in "Chloé" (RFC 5051
  // §1: it "collates characters with diacriticals with the non-diacritical
  // character forms"), but "é" is not in "e".
  EXPECT_TRUE(finds("Chlo\xC3\xA9", "chloe"));
  EXPECT_TRUE(finds("CHLOE\xCC\x81", "chloe"));
  EXPECT_TRUE(finds("CHLOE\xCC\x81", "chlo\xC3\xA9"));
  EXPECT_FALSE(finds("chloe", "chlo\xC3\xA9"));
  EXPECT_FALSE(
      finds("\xC3\xA9"
            "cole",
            "ecole"));
}

TEST(FoldCase, HangulDecomposes) {
  // U+D55C 한 is U+1112 U+1161 U+11AB (Unicode §3.12).
  const std::string jamo = "\xE1\x84\x92\xE1\x85\xA1\xE1\x86\xAB";
  EXPECT_EQ(fold_case("\xED\x95\x9C"), jamo);
  EXPECT_TRUE(same("\xED\x95\x9C\xEA\xB5\xAD", jamo + "\xE1\x84\x80\xE1\x85\xAE\xE1\x86\xA8"));
  // A syllable without a final consonant: U+D558 하 = U+1112 U+1161.
  EXPECT_EQ(fold_case("\xED\x95\x98"), "\xE1\x84\x92\xE1\x85\xA1");
}

TEST(FoldCase, InvalidUtf8BecomesReplacementCharacter) {
  const std::string fffd = "\xEF\xBF\xBD";
  EXPECT_EQ(fold_case("\xFF"), fffd);
  EXPECT_EQ(fold_case("A\xC3"), "a" + fffd);
  EXPECT_EQ(fold_case("\xE2\x82Z"), fffd + "z");  // truncated sequence, then Z
  EXPECT_EQ(fold_case("\xC0\xAF"), fffd + fffd);  // overlong: two bad bytes
  EXPECT_EQ(fold_case("\xF4\x90\x80\x80").find("\xF4"), std::string::npos);  // > U+10FFFF
  EXPECT_EQ(fold_case(fffd), fffd);
}

TEST(FoldCase, EveryCodePointFoldsToAFixedPoint) {
  // The output is its own fold, holds no ASCII capital, and every code
  // point goes through the same path whether alone or inside other text.
  for (char32_t c = 1; c <= 0x10FFFF; ++c) {
    if (c >= 0xD800 && c <= 0xDFFF) {
      continue;
    }
    const std::string in = utf8(c);
    const std::string once = fold_case(in);
    ASSERT_EQ(fold_case(once), once) << "U+" << std::hex << static_cast<uint32_t>(c);
    for (char b : once) {
      ASSERT_FALSE(b >= 'A' && b <= 'Z') << "U+" << std::hex << static_cast<uint32_t>(c);
    }
    if (c % 97 == 0) {
      ASSERT_EQ(fold_case("\xC3\xA9" + in + "X"), "e\xCC\x81" + once + "x")
          << "U+" << std::hex << static_cast<uint32_t>(c);
    }
  }
}

TEST(FoldCase, MixedTextFoldsPieceByPiece) {
  // ASCII runs of every length up to past two words, between characters of
  // two, three and four bytes and a bad byte: the fold of the whole is the
  // folds of its pieces, one after the other.
  const std::string pieces[] = {"\xC3\x89",     "\xE4\xB8\xAD", "\xF0\x9F\x98\x80",
                                "\xED\x95\x9C", "\xFF",         "\xE2\x84\xAA"};
  const std::string ascii = "The QUICK brown Fox";
  for (std::size_t len = 0; len <= ascii.size(); ++len) {
    std::string text;
    std::string want;
    for (const std::string& p : pieces) {
      text += ascii.substr(0, len) + p;
      want += fold_case(ascii.substr(0, len)) + fold_case(p);
    }
    EXPECT_EQ(fold_case(text), want) << len;
  }
}

TEST(FoldCase, SearchTextFieldsAreFolded) {
  SearchText t;
  t.from = "\xC3\x89mile <EMILE@EXAMPLE.ORG>";
  t.subject = "R\xC3\xA9UNION";
  t.body = "Body";
  fold_search_text(t);
  EXPECT_EQ(t.from, "e\xCC\x81mile <emile@example.org>");
  EXPECT_EQ(t.subject, "re\xCC\x81union");
  EXPECT_EQ(t.body, "body");
}

}  // namespace
}  // namespace peregrine::mime
