// The word index's tokenizer (index_terms, which cuts a text into the
// terms of its record) against SQLite FTS5's own `ascii` tokenizer given the
// same text with its capitals encoded: both cut it into the same runs of
// token bytes, which index_terms then cuts where they hold CJK text. And
// FTS5, given a record's terms joined by spaces, indexes exactly those
// terms: the vocabulary is only exact if it does.

#include "store/maildir/text_tokens.h"

#include <gtest/gtest.h>
#include <sqlite3.h>

#include <algorithm>
#include <iterator>
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

// FTS5's runs of `text`, each cut as for_each_run_term cuts it, sorted
// and distinct.
std::vector<std::string> split_fts5_terms(const std::string& text) {
  std::vector<std::string> out;
  for (const std::string& run : fts5_terms(encode_capitals(text))) {
    for_each_run_term(run, [&](std::string_view term) { out.emplace_back(term); });
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

void expect_same_terms(const std::string& text) {
  const std::vector<std::string> terms = record_terms(text);
  EXPECT_EQ(terms, split_fts5_terms(text)) << "text of " << text.size() << " bytes";
  std::string joined;
  for (const std::string& t : terms) {
    joined += t + " ";
  }
  EXPECT_EQ(fts5_terms(joined), terms) << "text of " << text.size() << " bytes";
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
  // CJK characters and punctuation, and their neighbours.
  const std::string wide[] = {"\xe4\xbc\x9a", "\xe8\xad\xb0", "\xe3\x80\x82",     "\xe3\x80\x80",
                              "\xea\xb0\x80", "\xef\xbc\x8c", "\xf0\xa0\x80\x80", "\xe2\x80\x94",
                              "\xc3\xa9",     "\xe3\x83\xbb", "\xe1\x84\x80"};
  for (int round = 0; round < 300; ++round) {
    std::string text;
    std::size_t n = rng() % 200;
    for (std::size_t i = 0; i < n; ++i) {
      if (rng() % 4 == 0) {
        text += wide[rng() % std::size(wide)];
      } else {
        text += rng() % 3 == 0 ? static_cast<char>(rng() % 256) : edges[rng() % edges.size()];
      }
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

// Runs of CJK characters give their bigrams, CJK punctuation separates,
// and the rest of a run stays one term.
TEST(TextTokens, CjkTextGivesBigrams) {
  // 会議資料を確認
  EXPECT_EQ(record_terms("\xe4\xbc\x9a\xe8\xad\xb0\xe8\xb3\x87\xe6\x96\x99\xe3\x82\x92"
                         "\xe7\xa2\xba\xe8\xaa\x8d"),
            (std::vector<std::string>{"\xe3\x82\x92\xe7\xa2\xba", "\xe4\xbc\x9a\xe8\xad\xb0",
                                      "\xe6\x96\x99\xe3\x82\x92", "\xe7\xa2\xba\xe8\xaa\x8d",
                                      "\xe8\xad\xb0\xe8\xb3\x87", "\xe8\xb3\x87\xe6\x96\x99"}));
  // 東京。大阪、一
  EXPECT_EQ(record_terms("\xe6\x9d\xb1\xe4\xba\xac\xe3\x80\x82\xe5\xa4\xa7\xe9\x98\xaa"
                         "\xe3\x80\x81\xe4\xb8\x80"),
            (std::vector<std::string>{"\xe4\xb8\x80", "\xe5\xa4\xa7\xe9\x98\xaa",
                                      "\xe6\x9d\xb1\xe4\xba\xac"}));
  // Abc会議déf: Latin stretches stay whole, capitals encoded.
  EXPECT_EQ(record_terms("Abc\xe4\xbc\x9a\xe8\xad\xb0"
                         "d\xc3\xa9"
                         "f"),
            (std::vector<std::string>{"d\xc3\xa9"
                                      "f",
                                      "\xe4\xbc\x9a\xe8\xad\xb0",
                                      "\xff"
                                      "abc"}));
  // 안녕하세요 (Hangul), ｱｲｳ (half-width katakana), 𠀀𠀁 (four bytes each).
  EXPECT_EQ(record_terms("\xec\x95\x88\xeb\x85\x95\xed\x95\x98\xec\x84\xb8\xec\x9a\x94"),
            (std::vector<std::string>{"\xeb\x85\x95\xed\x95\x98", "\xec\x84\xb8\xec\x9a\x94",
                                      "\xec\x95\x88\xeb\x85\x95", "\xed\x95\x98\xec\x84\xb8"}));
  EXPECT_EQ(record_terms("\xef\xbd\xb1\xef\xbd\xb2\xef\xbd\xb3"),
            (std::vector<std::string>{"\xef\xbd\xb1\xef\xbd\xb2", "\xef\xbd\xb2\xef\xbd\xb3"}));
  EXPECT_EQ(record_terms("\xf0\xa0\x80\x80\xf0\xa0\x80\x81"),
            (std::vector<std::string>{"\xf0\xa0\x80\x80\xf0\xa0\x80\x81"}));
  // An em dash and a full-width letter are no CJK: one term with their
  // neighbours.
  EXPECT_EQ(record_terms("a\xe2\x80\x94"
                         "b\xef\xbc\xb8"),
            (std::vector<std::string>{"a\xe2\x80\x94"
                                      "b\xef\xbc\xb8"}));
  // A CJK stretch far longer than FTS5 keeps of a token loses nothing.
  std::string long_run;
  for (int i = 0; i < 20000; ++i) {
    long_run += i % 2 == 0 ? "\xe4\xbc\x9a" : "\xe8\xad\xb0";
  }
  EXPECT_EQ(record_terms(long_run + "x"), (std::vector<std::string>{"x", "\xe4\xbc\x9a\xe8\xad\xb0",
                                                                    "\xe8\xad\xb0\xe4\xbc\x9a"}));
}

TEST(TextTokens, CjkNeedlePieces) {
  // 会議資料: three bigrams, each a whole term.
  const std::string kaigi_shiryo = "\xe4\xbc\x9a\xe8\xad\xb0\xe8\xb3\x87\xe6\x96\x99";
  auto p = needle_pieces(kaigi_shiryo);
  ASSERT_EQ(p.size(), 3u);
  EXPECT_EQ(p[0].text, "\xe4\xbc\x9a\xe8\xad\xb0");
  EXPECT_EQ(p[2].text, "\xe8\xb3\x87\xe6\x96\x99");
  for (const NeedlePiece& piece : p) {
    EXPECT_TRUE(piece.starts_token && piece.ends_token);
  }
  EXPECT_FALSE(pieces_exact(kaigi_shiryo, p));
  // 会議: one bigram, and the needle is exactly that term.
  const std::string kaigi = kaigi_shiryo.substr(0, 6);
  p = needle_pieces(kaigi);
  ASSERT_EQ(p.size(), 1u);
  EXPECT_TRUE(p[0].starts_token && p[0].ends_token);
  EXPECT_TRUE(pieces_exact(kaigi, p));
  // 会: anywhere in a term.
  p = needle_pieces(kaigi.substr(0, 3));
  ASSERT_EQ(p.size(), 1u);
  EXPECT_FALSE(p[0].starts_token || p[0].ends_token);
  EXPECT_TRUE(pieces_exact(kaigi.substr(0, 3), p));
  // x会: x ends a term, 会 starts one.
  p = needle_pieces("x" + kaigi.substr(0, 3));
  ASSERT_EQ(p.size(), 2u);
  EXPECT_EQ(p[0].text, "x");
  EXPECT_TRUE(!p[0].starts_token && p[0].ends_token);
  EXPECT_TRUE(p[1].starts_token && !p[1].ends_token);
  // 会。議: punctuation between two stretches.
  p = needle_pieces(kaigi.substr(0, 3) + "\xe3\x80\x82" + kaigi.substr(3));
  ASSERT_EQ(p.size(), 2u);
  EXPECT_TRUE(!p[0].starts_token && p[0].ends_token);
  EXPECT_TRUE(p[1].starts_token && !p[1].ends_token);
  EXPECT_TRUE(needle_pieces("\xe3\x80\x82\xe3\x80\x81").empty());
  EXPECT_TRUE(pieces_exact("migratio", needle_pieces("migratio")));
  EXPECT_FALSE(pieces_exact("big wor", needle_pieces("big wor")));
}

TEST(TextTokens, Fts5StringQuotes) {
  EXPECT_EQ(fts5_string("ab"), "\"ab\"");
  EXPECT_EQ(fts5_string("a\"b"), "\"a\"\"b\"");
}

}  // namespace
}  // namespace peregrine::store::maildir
