// The word index's tokenizer (index_terms, which cuts a text into the
// terms of its record) against SQLite FTS5's own `ascii` tokenizer given the
// same text with its capitals encoded: the vocabulary is only exact if both
// cut a text into the same terms.

#include "store/maildir/text_tokens.h"

#include <gtest/gtest.h>
#include <sqlite3.h>

#include <random>
#include <string>
#include <vector>

#include "store/maildir/term_record.h"

namespace peregrine::store::maildir {
namespace {

// The terms FTS5 (tokenize='ascii') indexes for `text`, sorted.
std::vector<std::string> fts5_terms(const std::string& text) {
  sqlite3* db = nullptr;
  EXPECT_EQ(sqlite3_open(":memory:", &db), SQLITE_OK);
  EXPECT_EQ(sqlite3_exec(db,
                         "CREATE VIRTUAL TABLE t USING fts5(a, content='', detail=column, "
                         "tokenize='ascii');"
                         "CREATE VIRTUAL TABLE v USING fts5vocab(t, row);",
                         nullptr, nullptr, nullptr),
            SQLITE_OK);
  sqlite3_stmt* insert = nullptr;
  EXPECT_EQ(sqlite3_prepare_v2(db, "INSERT INTO t (rowid, a) VALUES (1, ?1)", -1, &insert, nullptr),
            SQLITE_OK);
  sqlite3_bind_text(insert, 1, text.data(), static_cast<int>(text.size()), SQLITE_TRANSIENT);
  EXPECT_EQ(sqlite3_step(insert), SQLITE_DONE);
  sqlite3_finalize(insert);
  std::vector<std::string> out;
  sqlite3_stmt* terms = nullptr;
  // fts5vocab lists terms in byte order (memcmp), as std::sort does.
  EXPECT_EQ(sqlite3_prepare_v2(db, "SELECT term FROM v", -1, &terms, nullptr), SQLITE_OK);
  while (sqlite3_step(terms) == SQLITE_ROW) {
    out.emplace_back(static_cast<const char*>(sqlite3_column_blob(terms, 0)),
                     static_cast<std::size_t>(sqlite3_column_bytes(terms, 0)));
  }
  sqlite3_finalize(terms);
  sqlite3_close(db);
  return out;
}

// The terms index_terms gives for `text` as a body, without their columns.
std::vector<std::string> record_terms(const std::string& text) {
  mime::SearchText t;
  t.body = text;
  std::vector<std::string> out;
  for (IndexedTerm& term : index_terms(t)) {
    EXPECT_EQ(term.columns, 1u << 6);
    out.push_back(std::move(term.text));
  }
  return out;
}

void expect_same_terms(const std::string& text) {
  EXPECT_EQ(record_terms(text), fts5_terms(encode_capitals(text)))
      << "text of " << text.size() << " bytes";
}

TEST(TextTokens, AgreeWithFts5OnKnownTexts) {
  expect_same_terms("");
  expect_same_terms("Hello, World! hello");
  expect_same_terms("a_b-c.d@e x\ty\r\nz");
  expect_same_terms(
      "caf\xc3\xa9 na\xc3\xafve \xe2\x80\x94"
      "dash\xe2\x80\x94 MiXeD123");
  expect_same_terms(std::string("nul\0byte", 8));
  expect_same_terms("\x7f\x01\x1f quote\"s 'apos' [brackets] {braces} ~^`|\\");
  // Invalid UTF-8: every byte >= 0x80 is a token byte, whatever follows.
  expect_same_terms("\xff\xfe lone\x80 \xc3 trail\xe2\x82");
  // A run longer than FTS5 keeps is cut, and the rest dropped.
  expect_same_terms(std::string(kMaxTokenBytes + 100, 'x') + " after " +
                    std::string(kMaxTokenBytes, 'Y') + " " + std::string(kMaxTokenBytes - 1, 'z'));
  // An encoded capital across the cut: its 0xFF is kept, its letter not.
  expect_same_terms(std::string(kMaxTokenBytes - 1, 'a') + "Bc " +
                    std::string(kMaxTokenBytes - 2, 'a') + "Bc");
}

TEST(TextTokens, AgreeWithFts5OnRandomTexts) {
  std::mt19937 rng(20261130);
  // Bytes drawn mostly from the edges of the token classes.
  const std::string edges =
      std::string("09AZaz@[`{/:\x7f\x80\xbf\xc0\xff \n\t\"'_-.", 26) + std::string(1, '\0');
  for (int round = 0; round < 300; ++round) {
    std::string text;
    std::size_t n = rng() % 200;
    for (std::size_t i = 0; i < n; ++i) {
      text += rng() % 3 == 0 ? static_cast<char>(rng() % 256) : edges[rng() % edges.size()];
    }
    expect_same_terms(text);
  }
}

TEST(TextTokens, NeedlePieces) {
  auto p = needle_pieces("migratio");
  ASSERT_EQ(p.size(), 1u);
  EXPECT_EQ(p[0].text, "migratio");
  EXPECT_FALSE(p[0].starts_token);
  EXPECT_FALSE(p[0].ends_token);
  p = needle_pieces("hello big wor");
  ASSERT_EQ(p.size(), 3u);
  EXPECT_FALSE(p[0].starts_token);
  EXPECT_TRUE(p[0].ends_token);
  EXPECT_TRUE(p[1].starts_token && p[1].ends_token);
  EXPECT_TRUE(p[2].starts_token);
  EXPECT_FALSE(p[2].ends_token);
  p = needle_pieces(" -x- ");
  ASSERT_EQ(p.size(), 1u);
  EXPECT_TRUE(p[0].starts_token && p[0].ends_token);
  EXPECT_TRUE(needle_pieces(" ,;").empty());
  EXPECT_TRUE(needle_pieces("").empty());
}

TEST(TextTokens, Fts5StringQuotes) {
  EXPECT_EQ(fts5_string("ab"), "\"ab\"");
  EXPECT_EQ(fts5_string("a\"b"), "\"a\"\"b\"");
}

}  // namespace
}  // namespace peregrine::store::maildir
