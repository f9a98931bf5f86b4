// The exact test on folded text and the index query each text key makes.

#include "search/text_match.h"

#include <gtest/gtest.h>

#include "mime/case_fold.h"
#include "mime/part.h"

namespace peregrine::search {
namespace {

mime::SearchText folded(std::string_view message) {
  mime::Part root = mime::parse_message(message);
  mime::SearchText t = mime::build_search_text(message, root);
  mime::fold_search_text(t);
  return t;
}

TextKey key(TextTarget target, std::string_view needle, std::string_view field = "") {
  return TextKey{target, std::string(field), mime::fold_case(needle)};
}

TEST(TextMatch, SubstringsAnywhere) {
  auto t = folded(
      "From: Alice Example <alice@example.com>\r\nSubject: Performance review\r\n\r\n"
      "The quarterly numbers.\r\n");
  EXPECT_TRUE(text_matches(t, key(TextTarget::kSubject, "perf")));        // prefix
  EXPECT_TRUE(text_matches(t, key(TextTarget::kSubject, "ormanc")));      // infix
  EXPECT_TRUE(text_matches(t, key(TextTarget::kSubject, "REVIEW")));      // case
  EXPECT_FALSE(text_matches(t, key(TextTarget::kSubject, "quarterly")));  // elsewhere
  EXPECT_TRUE(text_matches(t, key(TextTarget::kBody, "quarterly")));
  EXPECT_TRUE(text_matches(t, key(TextTarget::kText, "quarterly")));
  EXPECT_TRUE(text_matches(t, key(TextTarget::kText, "subject: perf")));
  EXPECT_TRUE(text_matches(t, key(TextTarget::kFrom, "ice@exa")));
  EXPECT_FALSE(text_matches(t, key(TextTarget::kTo, "alice")));
}

TEST(TextMatch, EncodedWordBoundary) {
  // "Cafe" + "teria" in two encoded words: decoded and joined, one word.
  auto t = folded("Subject: =?utf-8?q?Caf=C3=A9?= =?utf-8?q?teria?= news\r\n\r\nx\r\n");
  EXPECT_TRUE(text_matches(t, key(TextTarget::kSubject, "caféteria")));
  EXPECT_TRUE(text_matches(t, key(TextTarget::kSubject, "ÉTER")));
}

TEST(TextMatch, QuotedPrintableSoftBreakAndBase64) {
  auto qp = folded(
      "Content-Type: text/plain; charset=utf-8\r\nContent-Transfer-Encoding: "
      "quoted-printable\r\n\r\nsupercali=\r\nfragilistic\r\n");
  EXPECT_TRUE(text_matches(qp, key(TextTarget::kBody, "califragil")));
  auto b64 = folded(
      "Content-Type: text/plain; charset=utf-8\r\nContent-Transfer-Encoding: base64\r\n\r\n"
      "SGlkZGVuIHRyZWFzdXJlIG1hcA==\r\n");  // "Hidden treasure map"
  EXPECT_TRUE(text_matches(b64, key(TextTarget::kBody, "treasure m")));
  EXPECT_FALSE(text_matches(b64, key(TextTarget::kBody, "SGlkZGVu")));
}

TEST(TextMatch, UnicodeFolding) {
  auto t = folded(
      "Subject: =?utf-8?q?=C3=A9cole?= Stra=?utf-8?q?=C3=9F?=e\r\n"
      "Content-Type: text/plain; charset=utf-8\r\n\r\n\xC3\x89"
      "COLE normale\r\n");
  EXPECT_TRUE(text_matches(t, key(TextTarget::kSubject, "ÉCOLE")));
  EXPECT_TRUE(text_matches(t, key(TextTarget::kBody, "école")));
  // i;unicode-casemap (RFC 5051): ß has no titlecase mapping, so it is not "ss".
  EXPECT_TRUE(text_matches(t, key(TextTarget::kSubject, "STRAßE")));
  EXPECT_FALSE(text_matches(t, key(TextTarget::kSubject, "strasse")));
}

TEST(TextMatch, HeaderField) {
  auto t = folded("X-Priority: 1 (High)\r\nSubject: hi\r\n\r\nbody\r\n");
  EXPECT_TRUE(text_matches(t, key(TextTarget::kHeader, "high", "x-priority")));
  EXPECT_TRUE(text_matches(t, key(TextTarget::kHeader, "", "X-PRIORITY")));  // present
  EXPECT_FALSE(text_matches(t, key(TextTarget::kHeader, "", "X-Mailer")));
  EXPECT_FALSE(text_matches(t, key(TextTarget::kHeader, "low", "X-Priority")));
}

TEST(TextMatch, IndexQueries) {
  auto q = index_query(key(TextTarget::kFrom, "Alice"));
  EXPECT_EQ(q.columns, store::kTextFrom);
  EXPECT_EQ(q.needles, std::vector<std::string>{"alice"});
  q = index_query(key(TextTarget::kText, "x"));
  EXPECT_EQ(q.columns, store::kTextHeaders | store::kTextBody);
  q = index_query(key(TextTarget::kHeader, "", "X-Priority"));
  EXPECT_EQ(q.columns, store::kTextHeaders);
  EXPECT_EQ(q.needles, std::vector<std::string>{"x-priority:"});
}

}  // namespace
}  // namespace peregrine::search
