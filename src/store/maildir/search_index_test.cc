// The full-text index of the Maildir backend: written in the transaction of
// each change, answering candidates, and rebuilt when missing or damaged.

#include <gtest/gtest.h>
#include <sqlite3.h>
#include <zlib.h>
#include <zstd.h>

#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "mime/cache_record.h"
#include "mime/case_fold.h"
#include "mime/search_text.h"
#include "store/maildir/index.h"
#include "store/maildir/prepared_message.h"
#include "store/maildir/term_record.h"
#include "store/maildir/test_util.h"
#include "store/maildir/text_tokens.h"

namespace peregrine::store::maildir {
namespace {

using testing::blob;
using testing::blob_literal;
using testing::exec;
using testing::message;
using testing::open_index;
using testing::scalar;

// Before schema 10 a mailbox had no expunged_floor.
constexpr std::string_view kSchema9Mailboxes = "ALTER TABLE mailboxes DROP COLUMN expunged_floor; ";

// Makes the index at `db_path` one of schema 12 as far as the upgrade
// cares: no word index file beside it, and the word index, the vocabulary
// and the conditional delete trigger of schema 12 in the store's file
// (empty stand-ins: the upgrade drops them; the records stay). The store
// must be closed.
void as_schema12(const std::filesystem::path& db_path) {
  for (const char* suffix : {"", "-wal", "-shm"}) {
    std::filesystem::remove(db_path.parent_path() / (std::string("search.sqlite") + suffix));
  }
  exec(db_path,
       "CREATE VIRTUAL TABLE search_fts USING fts5(addr_from, addr_to, addr_cc, addr_bcc, "
       "subject, hdr, body, content='', detail=column, tokenize='ascii'); "
       "CREATE TABLE search_terms (id INTEGER PRIMARY KEY, term TEXT NOT NULL); "
       "CREATE VIRTUAL TABLE search_terms_fts USING fts5(term, content='search_terms', "
       "content_rowid='id', detail=none, columnsize=0, tokenize='trigram case_sensitive 1'); "
       "CREATE TABLE search_term_hashes (hash INTEGER NOT NULL, id INTEGER NOT NULL, "
       "PRIMARY KEY (hash, id)) WITHOUT ROWID; "
       "CREATE TABLE search_term_hashes_recent (hash INTEGER NOT NULL, id INTEGER NOT NULL, "
       "PRIMARY KEY (hash, id)) WITHOUT ROWID; "
       "CREATE TABLE search_term_hashes_cursor (next INTEGER NOT NULL); "
       "INSERT INTO search_term_hashes_cursor VALUES (0); "
       "CREATE TABLE search_terms_indexed (upto INTEGER NOT NULL); "
       "INSERT INTO search_terms_indexed VALUES (0); "
       "CREATE TABLE search_docs_indexed (upto INTEGER NOT NULL); "
       "INSERT INTO search_docs_indexed SELECT coalesce(max(id), 0) FROM search_docs; "
       "DROP TRIGGER search_docs_delete; "
       "CREATE TRIGGER search_docs_delete AFTER DELETE ON search_docs WHEN old.id <= "
       "(SELECT upto FROM search_docs_indexed) BEGIN INSERT INTO search_purge (id, terms) "
       "VALUES (old.id, old.terms); END; "
       "PRAGMA user_version = 12;");
}

// Leaves the index as a build of schema `version` (before 5) would have
// left it: search_docs and search_purge keep texts (here one placeholder
// text for every message) and the delete trigger moves them, the vocabulary
// has its UNIQUE index.
void set_old_schema(const std::filesystem::path& db_path, int version) {
  exec(db_path,
       std::string(kSchema9Mailboxes) +
           "DROP TRIGGER IF EXISTS search_docs_insert; DROP TRIGGER search_docs_delete; "
           "DROP TABLE search_terms_fts; DROP TABLE search_terms; "
           "DROP TABLE search_term_hashes; DROP TABLE search_term_hashes_recent; "
           "DROP TABLE search_term_hashes_cursor; "
           "CREATE TABLE search_terms (id INTEGER PRIMARY KEY, term TEXT NOT NULL UNIQUE); "
           "CREATE TABLE old_docs AS SELECT id, mailbox_id, uid, x'0001' AS text FROM search_docs; "
           "DROP TABLE search_docs; DROP TABLE search_purge; "
           "CREATE TABLE search_docs (id INTEGER PRIMARY KEY, mailbox_id INTEGER NOT NULL, "
           "uid INTEGER NOT NULL, text BLOB NOT NULL, UNIQUE (mailbox_id, uid), "
           "FOREIGN KEY (mailbox_id, uid) REFERENCES messages(mailbox_id, uid) "
           "ON DELETE CASCADE ON UPDATE CASCADE); "
           "INSERT INTO search_docs SELECT * FROM old_docs; DROP TABLE old_docs; "
           "CREATE TABLE search_purge (id INTEGER PRIMARY KEY, text BLOB NOT NULL); "
           "CREATE TRIGGER search_docs_delete AFTER DELETE ON search_docs BEGIN "
           "INSERT INTO search_purge (id, text) VALUES (old.id, old.text); END; "
           "INSERT INTO search_purge (id, text) VALUES (99, x'00'); "
           "PRAGMA user_version = " +
           std::to_string(version));
}

// Replaces the term record of every message with `packed` (the triggers
// need the server's SQL function: they are dropped; the open restores them).
void set_records(const std::filesystem::path& db_path, const std::string& packed) {
  exec(db_path, "DROP TRIGGER IF EXISTS search_docs_insert; DROP TRIGGER search_docs_delete;");
  sqlite3* db = open_index(db_path);
  sqlite3_stmt* stmt = nullptr;
  ASSERT_EQ(sqlite3_prepare_v2(db, "UPDATE search_docs SET terms = ?1", -1, &stmt, nullptr),
            SQLITE_OK);
  sqlite3_bind_blob(stmt, 1, packed.data(), static_cast<int>(packed.size()), SQLITE_TRANSIENT);
  EXPECT_EQ(sqlite3_step(stmt), SQLITE_DONE);
  sqlite3_finalize(stmt);
  sqlite3_close(db);
}

// The term record of (mailbox, uid), unpacked; empty when missing or corrupt.
std::vector<IndexedTerm> stored_terms(const std::filesystem::path& db_path, Uid uid,
                                      std::string_view mailbox = "INBOX") {
  sqlite3* db = open_index(db_path);
  sqlite3_stmt* stmt = nullptr;
  std::vector<IndexedTerm> out;
  if (sqlite3_prepare_v2(db,
                         "SELECT d.terms FROM search_docs d JOIN mailboxes b ON b.id = "
                         "d.mailbox_id WHERE b.name = ?2 AND d.uid = ?1",
                         -1, &stmt, nullptr) == SQLITE_OK) {
    sqlite3_bind_int64(stmt, 1, uid);
    sqlite3_bind_text(stmt, 2, mailbox.data(), static_cast<int>(mailbox.size()), SQLITE_STATIC);
    if (sqlite3_step(stmt) == SQLITE_ROW) {
      std::string_view packed(static_cast<const char*>(sqlite3_column_blob(stmt, 0)),
                              static_cast<std::size_t>(sqlite3_column_bytes(stmt, 0)));
      out = unpack_terms(packed).value_or(std::vector<IndexedTerm>());
    }
  }
  sqlite3_finalize(stmt);
  sqlite3_close(db);
  return out;
}

// The columns (a mask) in which `terms` holds `term`; 0 when it does not.
int columns_of(const std::vector<IndexedTerm>& terms, std::string_view term) {
  for (const IndexedTerm& t : terms) {
    if (t.text == term) {
      return t.columns;
    }
  }
  return 0;
}

class SearchIndexTest : public testing::StoreTest {
 protected:
  std::filesystem::path db() const { return tmp_.path() / "data" / "alice" / "index.sqlite"; }

  // Alice's store opened afresh with the fixture's options as changed by
  // `change` (the fixture's own store is closed first).
  template <typename Change>
  std::unique_ptr<UserStore> open_with(Change change) {
    user_.reset();
    MaildirOptions options;
    options.data_dir = tmp_.path() / "data";
    options.host_name = "test.host";
    change(options);
    other_store_ = std::make_unique<MaildirStore>(options);
    auto opened = other_store_->open_user("alice");
    EXPECT_TRUE(opened);
    return opened ? std::move(*opened) : nullptr;
  }
  std::unique_ptr<MaildirStore> other_store_;

  // Runs the batch of the records waiting for it (an open leaves fewer than
  // Index::kWaitingDocs waiting), on a connection of its own; the store is
  // opened again after.
  void index_waiting() {
    user_.reset();
    {
      auto index = Index::open(db(), 1000);
      ASSERT_TRUE(index);
      auto tx = (*index)->begin();
      ASSERT_TRUE(tx);
      ASSERT_TRUE((*index)->index_waiting_docs());
      ASSERT_TRUE(tx->commit());
    }
    reopen();
  }

  // Messages and term records must always be equal; the word index holds
  // the records but those waiting for their batch (fewer than
  // Index::kWaitingDocs), and the deleted ones it held and has not yet
  // unindexed.
  void expect_in_step(std::int64_t messages) {
    EXPECT_EQ(scalar(db(), "SELECT count(*) FROM messages"), messages);
    EXPECT_EQ(scalar(db(), "SELECT count(*) FROM search_docs"), messages);
    const std::int64_t waiting = scalar(
        db(), "SELECT count(*) FROM search_docs WHERE id > (SELECT upto FROM search_docs_indexed)");
    EXPECT_LT(waiting, static_cast<std::int64_t>(Index::kWaitingDocs));
    EXPECT_EQ(scalar(db(), "SELECT count(*) FROM search_fts_docsize"),
              messages - waiting + unpurged());
  }

  // The deleted records the word index still holds.
  std::int64_t unpurged() {
    return scalar(db(),
                  "SELECT count(*) FROM search_purge WHERE id <= (SELECT upto FROM "
                  "search_docs_indexed) AND id NOT IN (SELECT id FROM search_purged)");
  }

  // Flags `uids` \Deleted and expunges them.
  void expunge(std::string_view mailbox, const UidSet& uids) {
    FlagUpdate deleted;
    deleted.flags = kFlagDeleted;
    ASSERT_TRUE(user_->update_flags(mailbox, uids, deleted));
    ASSERT_TRUE(user_->expunge(mailbox));
  }

  std::optional<TextCandidates> answer(std::string_view mailbox, TextColumns columns,
                                       std::vector<std::string> needles) {
    TextQuery q;
    q.columns = columns;
    q.needles = std::move(needles);
    auto r = user_->text_candidates(mailbox, q);
    EXPECT_TRUE(r) << r.error().message;
    return r ? *r : std::nullopt;
  }

  std::optional<std::vector<Uid>> candidates(std::string_view mailbox, TextColumns columns,
                                             std::vector<std::string> needles) {
    auto r = answer(mailbox, columns, std::move(needles));
    return r ? std::optional(r->uids) : std::nullopt;
  }

  // Whether the index says its answer is exact.
  bool exact(std::string_view mailbox, TextColumns columns, std::vector<std::string> needles) {
    auto r = answer(mailbox, columns, std::move(needles));
    return r && r->exact;
  }
};

TEST_F(SearchIndexTest, EveryChangeKeepsTheIndexInStep) {
  append("INBOX", message("one", "The performance review.\r\n"));
  append("INBOX", message("two", "Nothing here.\r\n"));
  Uid three = append("INBOX", message("three", "Performance again.\r\n"));
  expect_in_step(3);

  ASSERT_TRUE(user_->copy("INBOX", UidSet{1, 2}, "Archive"));
  expect_in_step(5);
  ASSERT_TRUE(user_->move("INBOX", UidSet{three}, "Trash"));
  expect_in_step(5);
  EXPECT_EQ(candidates("Trash", kTextBody, {"performanc"}), std::vector<Uid>{1});
  EXPECT_EQ(candidates("INBOX", kTextBody, {"performanc"}), std::vector<Uid>{1});
  EXPECT_EQ(candidates("Archive", kTextBody, {"performanc"}), std::vector<Uid>{1});

  FlagUpdate deleted;
  deleted.flags = kFlagDeleted;
  ASSERT_TRUE(user_->update_flags("INBOX", UidSet{1}, deleted));
  ASSERT_TRUE(user_->expunge("INBOX"));
  expect_in_step(4);
  EXPECT_EQ(candidates("INBOX", kTextBody, {"performanc"}), std::vector<Uid>{});

  ASSERT_TRUE(user_->delete_mailbox("Archive"));
  expect_in_step(2);
  ASSERT_TRUE(user_->rename_mailbox("INBOX", "Old"));
  expect_in_step(2);
  EXPECT_EQ(candidates("Old", kTextSubject, {"two"}), std::vector<Uid>{2});
}

TEST_F(SearchIndexTest, CandidatesByColumnAndNeedleLength) {
  append("INBOX", message("Quarterly report", "Body mentions widgets.\r\n"));
  append("INBOX", message("Lunch", "About the quarterly numbers.\r\n"));
  EXPECT_EQ(candidates("INBOX", kTextSubject, {"quarterly"}), std::vector<Uid>{1});
  EXPECT_EQ(candidates("INBOX", kTextFrom | kTextTo, {"quarterly"}), std::vector<Uid>{});
  EXPECT_EQ(candidates("INBOX", kTextBody, {"quarterly"}), std::vector<Uid>{2});
  EXPECT_EQ(candidates("INBOX", kTextHeaders | kTextBody, {"quarterly"}), (std::vector<Uid>{1, 2}));
  // Every needle must be there.
  EXPECT_EQ(candidates("INBOX", kTextHeaders, {"subject:", "lunch"}), std::vector<Uid>{2});
  // Shorter than a trigram: the vocabulary is scanned.
  EXPECT_EQ(candidates("INBOX", kTextBody, {"qu"}), std::vector<Uid>{2});
  // Quotes in a needle are data, not query syntax.
  EXPECT_EQ(candidates("INBOX", kTextBody, {"\"x\" OR y"}), std::vector<Uid>{});
  EXPECT_EQ(candidates("INBOX", kTextBody, {"\"quarterly"}), std::vector<Uid>{2});
}

TEST_F(SearchIndexTest, OneWordFragmentIsAnsweredExactly) {
  append("INBOX", message("Quarterly report", "Body mentions widgets, reports.\r\n"));
  append("INBOX", message("Lunch", "About the quarterly numbers.\r\n"));
  append("INBOX", message("Widget", "widgetry and more\r\n"));
  // A fragment inside a word: the terms holding it, their documents.
  EXPECT_EQ(candidates("INBOX", kTextBody, {"idget"}), (std::vector<Uid>{1, 3}));
  EXPECT_TRUE(exact("INBOX", kTextBody, {"idget"}));
  EXPECT_EQ(candidates("INBOX", kTextBody, {"eport"}), std::vector<Uid>{1});
  EXPECT_EQ(candidates("INBOX", kTextBody, {"nothere"}), std::vector<Uid>{});
  EXPECT_TRUE(exact("INBOX", kTextBody, {"nothere"}));
  EXPECT_TRUE(exact("INBOX", kTextBody, {"qu"}));
  // A separator makes the answer candidates to confirm: "s, r" lies across
  // two tokens (a term ending in "s", then one starting with "r").
  EXPECT_EQ(candidates("INBOX", kTextBody, {"s, r"}), std::vector<Uid>{1});
  EXPECT_FALSE(exact("INBOX", kTextBody, {"s, r"}));
  EXPECT_EQ(candidates("INBOX", kTextBody, {"ets, rep"}), std::vector<Uid>{1});
  EXPECT_EQ(candidates("INBOX", kTextBody, {"the quarterl"}), std::vector<Uid>{2});
  EXPECT_EQ(candidates("INBOX", kTextBody, {"he quarterly numbers"}), std::vector<Uid>{2});
  EXPECT_EQ(candidates("INBOX", kTextBody, {"quarterly report"}), std::vector<Uid>{});
  // Two needles (HEADER): never exact.
  EXPECT_FALSE(exact("INBOX", kTextHeaders, {"subject:", "lunch"}));
  // The indexed texts are folded to lower case: a needle with a capital
  // (which the fold would never give) finds nothing, exactly.
  EXPECT_EQ(candidates("INBOX", kTextBody, {"Widget"}), std::vector<Uid>{});
  EXPECT_TRUE(exact("INBOX", kTextBody, {"Widget"}));
  // Only separators: nothing to narrow with.
  EXPECT_EQ(candidates("INBOX", kTextBody, {", "}), std::nullopt);
}

TEST_F(SearchIndexTest, VocabularyHoldsEveryIndexedTerm) {
  append("INBOX", message("Quarterly report", "Body mentions widgets, Reports.\r\n"));
  append("INBOX", message("Caf\xc3\xa9 =?utf-8?q?=C3=89COLE?=", "na\xc3\xafve x_y 42\r\n"));
  ASSERT_TRUE(user_->copy("INBOX", UidSet{1}, "Archive"));
  index_waiting();  // the records waiting for their batch go into the word index
  // Every term of the word index, as FTS5 tokenized the texts, is in the
  // vocabulary the store filled with its own tokenizer.
  sqlite3* db = open_index(this->db());
  ASSERT_EQ(sqlite3_exec(db, "CREATE VIRTUAL TABLE temp.v USING fts5vocab(search, search_fts, row)",
                         nullptr, nullptr, nullptr),
            SQLITE_OK);
  auto count = [&](const char* sql) {
    sqlite3_stmt* stmt = nullptr;
    std::int64_t n = -1;
    if (sqlite3_prepare_v2(db, sql, -1, &stmt, nullptr) == SQLITE_OK &&
        sqlite3_step(stmt) == SQLITE_ROW) {
      n = sqlite3_column_int64(stmt, 0);
    }
    sqlite3_finalize(stmt);
    return n;
  };
  EXPECT_GT(count("SELECT count(*) FROM temp.v"), 10);
  EXPECT_EQ(count("SELECT count(*) FROM (SELECT term FROM temp.v EXCEPT "
                  "SELECT term FROM search_terms)"),
            0);
  // Each term once, each with its hash (the newest in the small table).
  EXPECT_EQ(count("SELECT count(*) - count(DISTINCT term) FROM search_terms"), 0);
  EXPECT_EQ(count("SELECT (SELECT count(*) FROM search_term_hashes) + "
                  "(SELECT count(*) FROM search_term_hashes_recent)"),
            count("SELECT count(*) FROM search_terms"));
  // "naïve" as i;unicode-casemap folds it: "i" and the combining diaeresis.
  EXPECT_EQ(count("SELECT count(*) FROM search_terms WHERE term = 'nai\xcc\x88ve'"), 1);
  sqlite3_close(db);
}

TEST_F(SearchIndexTest, StoredTermsAreFolded) {
  Uid uid = append("INBOX", message("=?utf-8?q?=C3=89COLE?=", "Straße\r\n"));
  auto terms = stored_terms(db(), uid);
  ASSERT_FALSE(terms.empty());
  // i;unicode-casemap (mime/case_fold.h): decomposed, ß kept. "école" is in
  // the subject and in the headers, "straße" in the body only.
  EXPECT_EQ(columns_of(terms,
                       "e\xCC\x81"
                       "cole"),
            kTextSubject | kTextHeaders);
  EXPECT_EQ(columns_of(terms, "straße"), kTextBody);
  EXPECT_EQ(columns_of(terms, "Straße"), 0);
  EXPECT_EQ(candidates("INBOX", kTextSubject,
                       {"e\xCC\x81"
                        "col"}),
            std::vector<Uid>{uid});
}

// A message whose text folds differently under i;unicode-casemap than under
// full case folding, with a string only in a part's MIME header.
const std::string kFoldedMessage =
    "From: a@example.org\r\nSubject: old\r\nMIME-Version: 1.0\r\n"
    "Content-Type: multipart/mixed; boundary=b\r\n\r\n"
    "--b\r\nContent-Type: text/plain; charset=utf-8\r\n"
    "Content-ID: <part-7f3a@example.org>\r\n\r\n"
    "Stra\xC3\x9F"
    "e bei Chlo\xC3\xA9\r\n--b--\r\n";

// Before schema 9 every term's hash was in search_term_hashes: this moves
// the small table's there and drops it, and the trigger fills the large one.
constexpr std::string_view kSchema8Hashes =
    "INSERT INTO search_term_hashes (hash, id) SELECT hash, id FROM search_term_hashes_recent; "
    "DROP TABLE search_term_hashes_recent; "
    "DROP TABLE search_term_hashes_cursor; "
    "CREATE TRIGGER search_terms_insert AFTER INSERT ON search_terms BEGIN "
    "INSERT INTO search_term_hashes (hash, id) VALUES (peregrine_term_hash(new.term), new.id); "
    "END; ";

// A schema 12 index (the word index and the vocabulary in the store's own
// file) keeps its records; the upgrade drops those tables there and the
// open builds them in search.sqlite from the records; every deleted record
// then goes to search_purge, and new records and terms wait for their
// batches as before.
TEST_F(SearchIndexTest, Schema12WordIndexMovesToAFileOfItsOwn) {
  Uid first = append("INBOX", message("Quarterly zyxwvut", "budget\r\n"));
  Uid gone = append("INBOX", message("Other", "budget\r\n"));
  user_.reset();
  as_schema12(db());
  reopen();
  EXPECT_EQ(scalar(db(), "PRAGMA user_version"), kIndexSchemaVersion);
  EXPECT_TRUE(std::filesystem::exists(db().parent_path() / "search.sqlite"));
  EXPECT_EQ(scalar(db(),
                   "SELECT count(*) FROM main.sqlite_schema WHERE name IN ('search_fts', "
                   "'search_terms', 'search_terms_fts', 'search_term_hashes', "
                   "'search_term_hashes_recent', 'search_term_hashes_cursor', "
                   "'search_terms_indexed', 'search_docs_indexed')"),
            0);
  EXPECT_EQ(scalar(db(),
                   "SELECT count(*) FROM main.sqlite_schema WHERE name = "
                   "'search_docs_delete' AND sql LIKE '%WHEN%'"),
            0);
  expect_in_step(2);  // fewer than a batch: they wait, and are found
  EXPECT_EQ(candidates("INBOX", kTextSubject, {"yxwv"}), std::vector<Uid>{first});
  Uid second = append("INBOX", message("Plan qponmlk", "budget\r\n"));
  EXPECT_EQ(candidates("INBOX", kTextSubject, {"ponml"}), std::vector<Uid>{second});
  EXPECT_EQ(candidates("INBOX", kTextBody, {"udge"}), (std::vector<Uid>{first, gone, second}));
  expunge("INBOX", UidSet{gone});
  EXPECT_EQ(scalar(db(), "SELECT count(*) FROM search_purge"), 1);
  expect_in_step(2);
  reopen();
  EXPECT_EQ(scalar(db(), "SELECT count(*) FROM search_purge"), 0);
  expect_in_step(2);
  EXPECT_EQ(candidates("INBOX", kTextBody, {"udge"}), (std::vector<Uid>{first, second}));
}

// CJK text, written without spaces, is indexed by bigrams: a needle of CJK
// characters finds the messages that hold it wherever it starts, exactly
// when it is one or two characters long.
TEST_F(SearchIndexTest, CjkTextIsFoundByItsBigrams) {
  const std::string kaigi = "\xe4\xbc\x9a\xe8\xad\xb0";                // 会議
  const std::string shiryo = "\xe8\xb3\x87\xe6\x96\x99";               // 資料
  const std::string kakunin = "\xe3\x82\x92\xe7\xa2\xba\xe8\xaa\x8d";  // を確認
  const std::string ashita = "\xe6\x98\x8e\xe6\x97\xa5";               // 明日
  const std::string maru = "\xe3\x80\x82";                             // 。
  Uid first = append("INBOX", message("Plan", kaigi + shiryo + kakunin + maru + ashita + "\r\n"));
  Uid second = append("INBOX", message("Other", shiryo + "\r\n"));
  for (int pass = 0; pass < 2; ++pass) {
    SCOPED_TRACE(pass == 0 ? "records waiting for their batch" : "records in the word index");
    EXPECT_EQ(candidates("INBOX", kTextBody, {kaigi}), std::vector<Uid>{first});
    EXPECT_TRUE(exact("INBOX", kTextBody, {kaigi}));
    EXPECT_EQ(candidates("INBOX", kTextBody, {shiryo}), (std::vector<Uid>{first, second}));
    EXPECT_EQ(candidates("INBOX", kTextBody, {kaigi.substr(3)}), std::vector<Uid>{first});
    EXPECT_TRUE(exact("INBOX", kTextBody, {kaigi.substr(3)}));
    EXPECT_EQ(candidates("INBOX", kTextBody, {kaigi.substr(3) + shiryo + kakunin.substr(0, 3)}),
              std::vector<Uid>{first});
    EXPECT_FALSE(exact("INBOX", kTextBody, {kaigi + shiryo + kakunin}));  // bigrams, not order
    EXPECT_EQ(candidates("INBOX", kTextBody, {shiryo + kaigi}), std::vector<Uid>{});
    EXPECT_EQ(candidates("INBOX", kTextBody, {kakunin.substr(6) + maru + ashita}),
              std::vector<Uid>{first});
    EXPECT_EQ(candidates("INBOX", kTextSubject, {shiryo}), std::vector<Uid>{});
    index_waiting();  // the records waiting for their batch go into the word index
  }
  expect_in_step(2);
  EXPECT_EQ(scalar(db(), "SELECT count(*) FROM search_terms WHERE instr(term, '" + maru + "')"), 0);
  EXPECT_EQ(scalar(db(), "SELECT count(*) FROM search_terms WHERE term = '" + kaigi + "'"), 1);
}

// A schema 10 index holds each run of CJK text as one term. The upgrade
// cuts its records' terms into bigrams and indexes them again; a record
// whose CJK run FTS5 had cut (kMaxTokenBytes) is made again from its
// message file.
TEST_F(SearchIndexTest, Schema10CjkRunsBecomeBigramsOnUpgrade) {
  const std::string kaigi = "\xe4\xbc\x9a\xe8\xad\xb0";   // 会議
  const std::string shiryo = "\xe8\xb3\x87\xe6\x96\x99";  // 資料
  const std::string sentence = kaigi + shiryo + "\xe3\x80\x82" + shiryo;
  std::string long_run;
  while (long_run.size() < kMaxTokenBytes + 100) {
    long_run += kaigi;
  }
  Uid first = append("INBOX", message("Plan", "Budget " + sentence + "\r\n"));
  Uid second = append("INBOX", message("Long", long_run + "\r\n"));
  reopen();
  user_.reset();
  const auto record = [&](Uid uid) {
    return blob(db(), "SELECT terms FROM search_docs WHERE uid = " + std::to_string(uid));
  };
  const std::string first_record = record(first);
  const std::string second_record = record(second);
  // The records as schema 10 wrote them: the runs whole, cut after
  // kMaxTokenBytes.
  const auto old_record = [&](const std::string& packed, const std::string& run) {
    auto terms = unpack_terms(packed);
    EXPECT_TRUE(terms.has_value());
    std::vector<IndexedTerm> out;
    for (IndexedTerm& t : *terms) {
      if (static_cast<unsigned char>(t.text[0]) < 0xe0) {
        out.push_back(std::move(t));
      }
    }
    out.push_back(IndexedTerm{run.substr(0, kMaxTokenBytes), kTextBody});
    std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.text < b.text; });
    return pack_terms(out);
  };
  exec(db(), std::string(kSchema9Mailboxes) + "ALTER TABLE mailboxes ADD COLUMN expunged_floor " +
                 "INTEGER NOT NULL DEFAULT 0; UPDATE search_docs SET terms = " +
                 blob_literal(old_record(first_record, sentence)) +
                 " WHERE uid = " + std::to_string(first) + "; UPDATE search_docs SET terms = " +
                 blob_literal(old_record(second_record, long_run)) +
                 " WHERE uid = " + std::to_string(second) + "; PRAGMA user_version = 10;");
  ASSERT_NE(record(first), first_record);
  reopen();
  EXPECT_EQ(scalar(db(), "PRAGMA user_version"), kIndexSchemaVersion);
  EXPECT_EQ(unpack_terms(record(first)), unpack_terms(first_record));
  EXPECT_EQ(unpack_terms(record(second)), unpack_terms(second_record));
  expect_in_step(2);
  // No term of the vocabulary holds more than two CJK characters.
  EXPECT_EQ(scalar(db(),
                   "SELECT count(*) FROM search_terms WHERE length(term) > 2 AND "
                   "CAST(term AS BLOB) >= x'e0'"),
            0);
  EXPECT_EQ(candidates("INBOX", kTextBody, {kaigi}), (std::vector<Uid>{first, second}));
  EXPECT_EQ(candidates("INBOX", kTextBody, {shiryo + shiryo}), std::vector<Uid>{});
  EXPECT_EQ(candidates("INBOX", kTextBody, {"budget"}), std::vector<Uid>{first});
}

// Both FTS5 tables merge their segments at Index::kAutomerge, set on a new
// index and again, when the search writer opens, on one whose setting
// differs (an older build's).
TEST_F(SearchIndexTest, SegmentsMergeAtTheIndexsOwnSetting) {
  append("INBOX", message("Plan", "budget\r\n"));
  for (const char* table : {"search_fts", "search_terms_fts"}) {
    EXPECT_EQ(scalar(db(), std::string("SELECT v FROM ") + table + "_config WHERE k = 'automerge'"),
              Index::kAutomerge);
  }
  user_.reset();
  exec(db(),
       "INSERT INTO search_fts (search_fts, rank) VALUES ('automerge', 4); "
       "DELETE FROM search_terms_fts_config WHERE k = 'automerge';");
  // Set when the search writer opens: for a batch, here.
  index_waiting();
  for (const char* table : {"search_fts", "search_terms_fts"}) {
    EXPECT_EQ(scalar(db(), std::string("SELECT v FROM ") + table + "_config WHERE k = 'automerge'"),
              Index::kAutomerge);
  }
  EXPECT_EQ(candidates("INBOX", kTextBody, {"udge"}), std::vector<Uid>{1});
}

// A search.sqlite that is no database (its header overwritten) is made
// anew at the open, and the word index rebuilt from the records.
TEST_F(SearchIndexTest, UnreadableWordIndexFileIsMadeAnew) {
  std::vector<Uid> all;
  for (int i = 0; i < 40; ++i) {
    all.push_back(append("INBOX", message("m" + std::to_string(i), "budget zyxwvut\r\n")));
  }
  user_.reset();
  const std::filesystem::path file = db().parent_path() / "search.sqlite";
  for (const char* suffix : {"-wal", "-shm"}) {
    std::filesystem::remove(file.string() + suffix);
  }
  {
    std::ofstream out(file, std::ios::binary | std::ios::trunc);
    out << std::string(8192, 'x');
  }
  reopen();
  expect_in_step(40);
  EXPECT_EQ(candidates("INBOX", kTextBody, {"yxwv"}), all);
}

// A schema 5 index (the insert trigger indexed each vocabulary term by
// trigram) keeps its records; the upgrade cuts them again (CJK bigrams),
// drops the old vocabulary and its trigger, and the records and new terms
// then wait for their batches in the word index's own file.
TEST_F(SearchIndexTest, Schema5RecordsAreKeptOnUpgrade) {
  Uid first = append("INBOX", message("Quarterly zyxwvut", "budget\r\n"));
  user_.reset();
  as_schema12(db());
  exec(db(), std::string(kSchema9Mailboxes) + std::string(kSchema8Hashes) +
                 "DROP TABLE search_terms_indexed; DROP TRIGGER search_terms_insert; "
                 "CREATE TRIGGER search_terms_insert AFTER INSERT ON search_terms BEGIN "
                 "INSERT INTO search_terms_fts (rowid, term) VALUES (new.id, new.term); "
                 "INSERT INTO search_term_hashes (hash, id) VALUES (peregrine_term_hash(new.term), "
                 "new.id); "
                 "END; PRAGMA user_version = 5;");
  reopen();
  EXPECT_EQ(scalar(db(), "PRAGMA user_version"), kIndexSchemaVersion);
  EXPECT_EQ(scalar(db(),
                   "SELECT count(*) FROM sqlite_schema WHERE name = 'search_terms_insert' AND "
                   "sql LIKE '%search_terms_fts%'"),
            0);
  expect_in_step(1);
  EXPECT_EQ(candidates("INBOX", kTextSubject, {"yxwv"}), std::vector<Uid>{first});
  Uid second = append("INBOX", message("Plan qponmlk", "budget\r\n"));
  EXPECT_EQ(scalar(db(),
                   "SELECT count(*) FROM search_terms_fts WHERE search_terms_fts MATCH "
                   "'\"pon\"'"),
            0);  // waiting for its batch
  EXPECT_EQ(candidates("INBOX", kTextSubject, {"ponml"}), std::vector<Uid>{second});
  EXPECT_EQ(candidates("INBOX", kTextBody, {"udge"}), (std::vector<Uid>{first, second}));
}

// A schema 6 index (the insert trigger indexed each record as it came)
// keeps its records, which then wait for their batch in the word index's
// own file, as new ones do.
TEST_F(SearchIndexTest, Schema6RecordsAreKeptOnUpgrade) {
  Uid first = append("INBOX", message("Quarterly", "budget zyxwvut\r\n"));
  Uid gone = append("INBOX", message("Other", "budget\r\n"));
  index_waiting();  // the records waiting for their batch go into the word index
  user_.reset();
  as_schema12(db());
  exec(db(), std::string(kSchema9Mailboxes) +
                 "DROP TABLE search_docs_indexed; DROP TRIGGER search_docs_delete; "
                 "CREATE TRIGGER search_docs_delete AFTER DELETE ON search_docs BEGIN "
                 "INSERT INTO search_purge (id, terms) VALUES (old.id, old.terms); END; "
                 "PRAGMA user_version = 6;");
  const std::int64_t docs = scalar(db(), "SELECT max(id) FROM search_docs");
  reopen();
  EXPECT_EQ(scalar(db(), "PRAGMA user_version"), kIndexSchemaVersion);
  expect_in_step(2);
  EXPECT_EQ(candidates("INBOX", kTextBody, {"yxwv"}), std::vector<Uid>{first});
  Uid second = append("INBOX", message("Plan", "budget qponmlk\r\n"));
  EXPECT_EQ(scalar(db(), "SELECT count(*) FROM search_docs WHERE id > " + std::to_string(docs)),
            1);  // waiting for its batch
  EXPECT_EQ(candidates("INBOX", kTextBody, {"ponml"}), std::vector<Uid>{second});
  EXPECT_EQ(candidates("INBOX", kTextBody, {"udge"}), (std::vector<Uid>{first, gone, second}));
  expunge("INBOX", UidSet{gone});
  EXPECT_EQ(scalar(db(), "SELECT count(*) FROM search_purge"), 1);
  expect_in_step(2);
}

TEST_F(SearchIndexTest, Schema4TextsBecomeTermRecordsFromTheFilesOnUpgrade) {
  Uid uid = append("INBOX", kFoldedMessage);
  user_.reset();
  set_old_schema(db(), 4);
  reopen();
  EXPECT_EQ(scalar(db(), "PRAGMA user_version"), kIndexSchemaVersion);
  EXPECT_EQ(scalar(db(), "SELECT count(*) FROM search_purge"), 0);
  expect_in_step(1);
  // No UNIQUE index on the vocabulary any more.
  EXPECT_EQ(scalar(db(),
                   "SELECT count(*) FROM sqlite_schema WHERE tbl_name = 'search_terms' "
                   "AND type = 'index' AND name LIKE 'sqlite_autoindex%'"),
            0);
  const auto terms = stored_terms(db(), uid);
  EXPECT_EQ(columns_of(terms, mime::fold_case("Stra\xC3\x9F"
                                              "e")),
            kTextBody);
  EXPECT_NE(columns_of(terms, "part"), 0);
  EXPECT_EQ(candidates("INBOX", kTextBody, {mime::fold_case("STRASSE")}), std::vector<Uid>{});
  EXPECT_EQ(candidates("INBOX", kTextBody, {mime::fold_case("stra\xC3\x9F")}),
            std::vector<Uid>{uid});
  EXPECT_EQ(candidates("INBOX", kTextBody, {mime::fold_case("CHLOE")}), std::vector<Uid>{uid});
  EXPECT_EQ(candidates("INBOX", kTextBody, {"part-7f3a"}), std::vector<Uid>{uid});
}

TEST_F(SearchIndexTest, RecordsOfTheCurrentSchemaAreKeptAtOpen) {
  // The control for the test above: an odd record under the current version
  // is not extracted again (the word index, which no longer agrees with it,
  // is rebuilt from it), so it is the upgrade that went to the files.
  Uid uid = append("INBOX", kFoldedMessage);
  user_.reset();
  set_records(db(), pack_terms({IndexedTerm{"zzold", kTextBody}}));
  reopen();
  expect_in_step(1);
  EXPECT_EQ(candidates("INBOX", kTextBody, {"zzol"}), std::vector<Uid>{uid});
  EXPECT_EQ(candidates("INBOX", kTextBody, {"chlo"}), std::vector<Uid>{});
}

// The Index alone, on a fresh file: mailboxes, messages with a body text,
// and queries of the body column.
class IndexTest : public testing::IndexTest {
 protected:
  void SetUp() override {
    testing::IndexTest::SetUp();
    inbox_ = mailbox("INBOX");
  }

  // Stores message `uid` of `box` with `body` as its (folded) body text.
  bool add(std::int64_t box, Uid uid, const std::string& body) {
    return add_through(*index_, box, uid, body);
  }
  // The same through `index` (another connection to the file).
  static bool add_through(Index& index, std::int64_t box, Uid uid, const std::string& body) {
    MessageRow row;
    row.meta.uid = uid;
    row.base_name = "m" + std::to_string(uid);
    row.file_name = row.base_name + ":2,";
    mime::SearchText text;
    text.body = body;
    TermRecord record;
    record.terms = index_terms(text);
    record.packed = pack_terms(record.terms);
    return index.insert_message(box, row, std::nullopt) &&
           index.insert_search_text(box, uid, record);
  }

  // The INBOX messages whose body holds `needle`, which must be exact.
  std::vector<Uid> ask(const std::string& needle) { return ask_in(inbox_, needle); }
  std::vector<Uid> ask_in(std::int64_t box, const std::string& needle) {
    TextQuery q;
    q.columns = kTextBody;
    q.needles = {needle};
    auto r = index_->text_candidates(box, q);
    EXPECT_TRUE(r && *r && (*r)->exact) << needle << (r ? "" : r.error().message);
    return r && *r ? (*r)->uids : std::vector<Uid>{0};
  }

  std::int64_t inbox_ = 0;
};

// A fold may give ASCII capitals (FTS5's tokenizer would fold them away):
// the index keeps them apart, so the answer stays exact and case-exact.
TEST_F(IndexTest, CapitalsInFoldedTextStayDistinct) {
  const std::vector<std::string> bodies = {"MiGRATION plan", "migration plan", "Migration plan"};
  for (std::size_t i = 0; i < bodies.size(); ++i) {
    ASSERT_TRUE(add(inbox_, static_cast<Uid>(i + 1), bodies[i]));
  }
  EXPECT_EQ(ask("GRATIO"), std::vector<Uid>{1});
  EXPECT_EQ(ask("gratio"), (std::vector<Uid>{2, 3}));
  EXPECT_EQ(ask("Migr"), std::vector<Uid>{3});
  EXPECT_EQ(ask("igr"), (std::vector<Uid>{2, 3}));
  EXPECT_EQ(ask("MIGRATION"), std::vector<Uid>{});
  EXPECT_EQ(ask("plan"), (std::vector<Uid>{1, 2, 3}));
  // Rebuilt from the term records (the vocabulary then comes from FTS5's
  // own terms), the answers are the same.
  ASSERT_TRUE(index_->rebuild_search_fts());
  EXPECT_EQ(ask("GRATIO"), std::vector<Uid>{1});
  EXPECT_EQ(ask("Migr"), std::vector<Uid>{3});
  auto healthy = index_->search_fts_healthy();
  EXPECT_TRUE(healthy && *healthy);
}

// New vocabulary terms are indexed by trigram a batch at a time: a fragment
// finds its terms whether they wait outside the trigram index or are in it,
// across the batch's boundary, after a rebuild and after a reopen.
TEST_F(IndexTest, TermsAreFoundBeforeAndAfterTheirTrigramBatch) {
  // Message n holds the terms "kw<n>x<k>" (k < 100) and "shared".
  auto body = [](Uid n) {
    std::string out = "shared";
    for (int k = 0; k < 100; ++k) {
      out += " kw" + std::to_string(n) + "x" + std::to_string(k);
    }
    return out;
  };
  const Uid messages = static_cast<Uid>(Index::kUnindexedTerms / 100 * 2 + 3);
  for (Uid n = 1; n <= messages; ++n) {
    ASSERT_TRUE(add(inbox_, n, body(n)));
    // Each record's batch at once, so its terms join the vocabulary now:
    // the vocabulary's own trigram batches are what this follows.
    ASSERT_TRUE(index_->index_waiting_docs());
    // The first term of the first message, this message's, and one of a
    // message at least one batch back.
    EXPECT_EQ(ask("w1x0"), (std::vector<Uid>{1}));
    EXPECT_EQ(ask("w" + std::to_string(n) + "x99"), (std::vector<Uid>{n}));
    EXPECT_EQ(ask("w" + std::to_string((n + 1) / 2) + "x5"), (std::vector<Uid>{(n + 1) / 2}));
  }
  std::vector<Uid> all(messages);
  for (Uid n = 1; n <= messages; ++n) {
    all[n - 1] = n;
  }
  EXPECT_EQ(ask("hare"), all);
  // The batches went into the trigram index, the rest waits.
  // Read by a connection of its own (the index's commits are visible to it).
  auto count = [&](const char* text) {
    sqlite3* db = open_index(tmp_.path() / "index.sqlite");
    std::int64_t n = -1;
    sqlite3_stmt* stmt = nullptr;
    if (sqlite3_prepare_v2(db, text, -1, &stmt, nullptr) == SQLITE_OK &&
        sqlite3_step(stmt) == SQLITE_ROW) {
      n = sqlite3_column_int64(stmt, 0);
    }
    sqlite3_finalize(stmt);
    sqlite3_close(db);
    return n;
  };
  const std::int64_t terms = count("SELECT count(*) FROM search_terms");
  const std::int64_t upto = count("SELECT upto FROM search_terms_indexed");
  EXPECT_EQ(terms, static_cast<std::int64_t>(messages) * 100 + 1);
  EXPECT_GE(upto, static_cast<std::int64_t>(Index::kUnindexedTerms));
  EXPECT_LT(terms - upto, static_cast<std::int64_t>(Index::kUnindexedTerms));
  ASSERT_TRUE(index_->rebuild_search_fts());
  EXPECT_EQ(count("SELECT upto FROM search_terms_indexed"),
            count("SELECT max(id) FROM search_terms"));
  EXPECT_EQ(ask("w" + std::to_string(messages) + "x42"), (std::vector<Uid>{messages}));
  EXPECT_EQ(ask("w1x0"), (std::vector<Uid>{1}));
  auto healthy = index_->search_fts_healthy();
  EXPECT_TRUE(healthy && *healthy);
}

// Term records join the word index a batch at a time (Index::kWaitingDocs):
// every answer holds the waiting ones too, exact where the index's is,
// across the batch's boundary and in their own mailbox only; a waiting
// record that is deleted leaves nothing to purge.
TEST_F(IndexTest, RecordsAreFoundBeforeAndAfterTheirBatch) {
  auto count = [&](const std::string& text) {
    sqlite3* db = open_index(tmp_.path() / "index.sqlite");
    std::int64_t n = -1;
    sqlite3_stmt* stmt = nullptr;
    if (sqlite3_prepare_v2(db, text.c_str(), -1, &stmt, nullptr) == SQLITE_OK &&
        sqlite3_step(stmt) == SQLITE_ROW) {
      n = sqlite3_column_int64(stmt, 0);
    }
    sqlite3_finalize(stmt);
    sqlite3_close(db);
    return n;
  };
  const std::string waiting_sql =
      "SELECT count(*) FROM search_docs WHERE id > (SELECT upto FROM search_docs_indexed)";
  const std::int64_t other = mailbox("Other");
  const Uid messages = static_cast<Uid>(Index::kWaitingDocs * 2 + 5);
  std::vector<Uid> all;
  for (Uid n = 1; n <= messages; ++n) {
    const std::string own = "kw" + std::to_string(n) + "z";
    ASSERT_TRUE(add(inbox_, n, "shared " + own));
    if (n % 3 == 0) {
      ASSERT_TRUE(add(other, n, "elsewhere shared"));
    }
    all.push_back(n);
    EXPECT_EQ(ask("hare"), all);
    EXPECT_EQ(ask(own), std::vector<Uid>{n});
    EXPECT_EQ(ask("w1z"), std::vector<Uid>{1});
    EXPECT_EQ(ask_in(other, "lsewher").size(), n / 3);
    // Two tokens: not exact; the records narrow the candidates of both.
    TextQuery q;
    q.columns = kTextBody;
    q.needles = {"shared " + own};
    auto r = index_->text_candidates(inbox_, q);
    ASSERT_TRUE(r && *r);
    EXPECT_EQ((*r)->uids, std::vector<Uid>{n});
    EXPECT_LT(count(waiting_sql), static_cast<std::int64_t>(Index::kWaitingDocs));
  }
  EXPECT_GT(count(waiting_sql), 0);
  EXPECT_GE(count("SELECT upto FROM search_docs_indexed"),
            static_cast<std::int64_t>(Index::kWaitingDocs));

  // Deleted: the newest record waits (nothing to unindex), the first is
  // indexed (unindexed later). Both wait in search_purge for the writer.
  ASSERT_TRUE(index_->expunge_message(inbox_, messages, 2));
  ASSERT_TRUE(index_->expunge_message(inbox_, 1, 2));
  EXPECT_EQ(count("SELECT count(*) FROM search_purge"), 2);
  EXPECT_EQ(count("SELECT count(*) FROM search_purge WHERE id <= (SELECT upto FROM "
                  "search_docs_indexed)"),
            1);
  all.erase(all.begin());
  all.pop_back();
  EXPECT_EQ(ask("hare"), all);
  EXPECT_EQ(ask("w1z"), std::vector<Uid>{});
  EXPECT_EQ(ask("kw" + std::to_string(messages) + "z"), std::vector<Uid>{});

  // The rest goes in, after the batch has unindexed the deleted one: the
  // word index then holds exactly the live records. The store forgets the
  // deleted ones after (here a purge; an append does too).
  ASSERT_TRUE(index_->index_waiting_docs());
  EXPECT_EQ(count(waiting_sql), 0);
  EXPECT_EQ(count("SELECT count(*) FROM search_fts_docsize"),
            count("SELECT count(*) FROM search_docs"));
  EXPECT_EQ(count("SELECT count(*) FROM search_purged"), 2);
  ASSERT_TRUE(index_->purge_search_fts(100));
  ASSERT_TRUE(index_->forget_purged());
  EXPECT_EQ(count("SELECT count(*) FROM search_purge"), 0);
  EXPECT_EQ(count("SELECT count(*) FROM search_fts_docsize"),
            count("SELECT count(*) FROM search_docs"));
  EXPECT_EQ(ask("hare"), all);
  // A new record never takes an id the word index counts as indexed.
  ASSERT_TRUE(add(inbox_, messages + 1, "shared late"));
  EXPECT_EQ(count(waiting_sql), 1);
  EXPECT_EQ(ask("late"), std::vector<Uid>{messages + 1});
  auto healthy = index_->search_fts_healthy();
  EXPECT_TRUE(healthy && *healthy);
}

// Many hits are mapped to UIDs by a scan of the mailbox's documents merged
// with the hits, few by a lookup each: both give the mailbox's live ones.
TEST_F(IndexTest, ManyAndFewHitsMapToTheMailboxsUids) {
  const std::int64_t other = mailbox("Other");
  // Documents of the two mailboxes interleave; all say "common", every third
  // "rare", every fiftieth "seldom".
  std::vector<Uid> inbox_all;
  std::vector<Uid> inbox_rare;
  std::vector<Uid> inbox_seldom;
  {
    auto tx = index_->begin();
    ASSERT_TRUE(tx);
    for (Uid uid = 1; uid <= 5000; ++uid) {
      std::string body = uid % 3 == 0 ? "common rare" : "common";
      if (uid % 50 == 0) {
        body += " seldom";
      }
      ASSERT_TRUE(add(inbox_, uid, body));
      if (uid % 2 == 1) {
        ASSERT_TRUE(add(other, uid, body));
      }
      inbox_all.push_back(uid);
      if (uid % 3 == 0) {
        inbox_rare.push_back(uid);
      }
      if (uid % 50 == 0) {
        inbox_seldom.push_back(uid);
      }
    }
    ASSERT_TRUE(index_->expunge_message(inbox_, 3, 2));
    ASSERT_TRUE(tx->commit());
  }
  inbox_all.erase(std::find(inbox_all.begin(), inbox_all.end(), 3));
  inbox_rare.erase(inbox_rare.begin());
  EXPECT_EQ(ask("ommo"), inbox_all);     // 7,499 hits, 4,999 in INBOX: the scan
  EXPECT_EQ(ask("rar"), inbox_rare);     // 2,499 hits: the scan
  EXPECT_EQ(ask("eldo"), inbox_seldom);  // 150 hits: a lookup each
}

// The (document id, UID) pairs a SEARCH with many hits keeps follow every
// change of the term records: an append, an expunge, a move (each read
// again by id), many changes at once, a rollback, another connection's
// commit (all read again).
TEST_F(IndexTest, KeptUidPairsFollowEveryChange) {
  const std::int64_t other = mailbox("Other");
  std::vector<Uid> inbox;
  for (Uid uid = 1; uid <= 400; ++uid) {
    ASSERT_TRUE(add(inbox_, uid, "common"));
    inbox.push_back(uid);
  }
  EXPECT_EQ(ask("ommo"), inbox);  // more hits than lookups: the pairs are kept
  EXPECT_EQ(ask("ommo"), inbox);  // from the kept pairs

  ASSERT_TRUE(add(inbox_, 401, "common"));
  inbox.push_back(401);
  EXPECT_EQ(ask("ommo"), inbox);

  // Expunged: its record goes (its terms stay in the word index until the
  // purge), so it must leave the pairs.
  ASSERT_TRUE(index_->expunge_message(inbox_, 5, 2));
  inbox.erase(std::find(inbox.begin(), inbox.end(), 5));
  EXPECT_EQ(ask("ommo"), inbox);

  // Moved: the same document id now belongs to another mailbox's UID.
  MessageRow row;
  row.meta.uid = 1;
  row.base_name = "moved";
  row.file_name = "moved:2,";
  ASSERT_TRUE(index_->insert_message(other, row, std::nullopt));
  ASSERT_TRUE(index_->move_search_text(inbox_, 7, other, 1));
  inbox.erase(std::find(inbox.begin(), inbox.end(), 7));
  EXPECT_EQ(ask("ommo"), inbox);
  EXPECT_EQ(ask_in(other, "ommo"), std::vector<Uid>{1});

  // Read inside a transaction that then rolls back.
  {
    auto tx = index_->begin();
    ASSERT_TRUE(tx);
    ASSERT_TRUE(add(inbox_, 402, "common"));
    std::vector<Uid> with = inbox;
    with.push_back(402);
    EXPECT_EQ(ask("ommo"), with);
  }
  EXPECT_EQ(ask("ommo"), inbox);

  // More changes than are read again one by one: every pair is read again.
  {
    auto tx = index_->begin();
    ASSERT_TRUE(tx);
    for (Uid uid = 500; uid < 600; ++uid) {
      ASSERT_TRUE(add(inbox_, uid, "common"));
      inbox.push_back(uid);
    }
    ASSERT_TRUE(index_->expunge_message(inbox_, 11, 3));
    inbox.erase(std::find(inbox.begin(), inbox.end(), 11));
    ASSERT_TRUE(tx->commit());
  }
  EXPECT_EQ(ask("ommo"), inbox);

  // Another connection's commit.
  {
    auto second = Index::open(tmp_.path() / "index.sqlite", 1000);
    ASSERT_TRUE(second) << second.error().message;
    ASSERT_TRUE((*second)->expunge_message(inbox_, 9, 4));
  }
  inbox.erase(std::find(inbox.begin(), inbox.end(), 9));
  EXPECT_EQ(ask("ommo"), inbox);
}

// A fragment in more terms than a query can list (a two-letter one, say) is
// answered from the documents' term records, exactly; so is a needle across
// separators narrowed by them before any file is read.
TEST_F(IndexTest, FragmentsInTooManyTermsAreAnsweredFromTheRecords) {
  std::vector<Uid> with_zq;
  {
    auto tx = index_->begin();
    ASSERT_TRUE(tx);
    for (Uid uid = 1; uid <= 4200; ++uid) {
      // 4,100 distinct terms hold "zq"; a cut term holds it only past the cut.
      std::string body = "w" + std::to_string(uid) + (uid <= 4100 ? "zq" : "qz") + " tail";
      if (uid == 4200) {
        body = std::string(kMaxTokenBytes, 'y') + "zq";
      }
      ASSERT_TRUE(add(inbox_, uid, body));
      if (uid <= 4100) {
        with_zq.push_back(uid);
      }
    }
    ASSERT_TRUE(tx->commit());
  }
  TextQuery q;
  q.columns = kTextBody;
  // The cut term may hold any fragment past the cut: its document is a
  // candidate, and the answers are to be confirmed.
  q.needles = {"3zq"};  // few terms: the word index narrows
  auto few = index_->text_candidates(inbox_, q);
  ASSERT_TRUE(few && *few);
  EXPECT_FALSE((*few)->exact);
  EXPECT_EQ((*few)->uids.size(), 410u + 1u);  // w3zq, w13zq, ..., w4093zq; 4200
  EXPECT_EQ((*few)->uids.back(), 4200u);
  q.needles = {"zq"};  // too many terms: the records answer
  auto many = index_->text_candidates(inbox_, q);
  ASSERT_TRUE(many && *many);
  with_zq.push_back(4200);
  EXPECT_EQ((*many)->uids, with_zq);
  EXPECT_FALSE((*many)->exact);
  // Without the cut term's document, the records make both answers exact
  // (the cut term is still in the vocabulary).
  ASSERT_TRUE(index_->expunge_message(inbox_, 4200, 2));
  with_zq.pop_back();
  auto exact = index_->text_candidates(inbox_, q);
  ASSERT_TRUE(exact && *exact);
  EXPECT_EQ((*exact)->uids, with_zq);
  EXPECT_TRUE((*exact)->exact);
  q.needles = {"3zq"};
  few = index_->text_candidates(inbox_, q);
  ASSERT_TRUE(few && *few);
  EXPECT_TRUE((*few)->exact);
  EXPECT_EQ((*few)->uids.size(), 410u);
  // Across a separator: terms ending in "zq" and the term "tail" after them.
  q.needles = {"5zq tai"};
  auto across = index_->text_candidates(inbox_, q);
  ASSERT_TRUE(across && *across);
  EXPECT_FALSE((*across)->exact);
  EXPECT_EQ((*across)->uids.size(), 410u);  // w5zq, w15zq, ..., w4095zq
  EXPECT_EQ((*across)->uids.front(), 5u);
}

// The index remembers terms it put in the vocabulary; a rolled-back
// transaction takes its terms away, so the next text must add them again.
TEST_F(IndexTest, RolledBackTermsAreAddedAgain) {
  {
    auto tx = index_->begin();
    ASSERT_TRUE(tx);
    ASSERT_TRUE(add(inbox_, 1, "zebra crossing"));
  }  // rolled back
  ASSERT_TRUE(add(inbox_, 2, "zebra"));
  EXPECT_EQ(ask("ebr"), std::vector<Uid>{2});
}

// A text's new terms go to the vocabulary several to a statement: a text
// with more of them than one statement takes, some already known, leaves
// every term there once and each findable by a fragment.
TEST_F(IndexTest, ManyNewTermsReachTheVocabularyOnceEach) {
  ASSERT_TRUE(add(inbox_, 1, "known0 known1 known2"));
  std::string body = "known1";
  for (int i = 0; i < 150; ++i) {
    body += " term" + std::to_string(i) + "x";
  }
  body += " known2 term7x";
  ASSERT_TRUE(add(inbox_, 2, body));
  // Found while their records wait for their batch, which adds the terms to
  // the vocabulary.
  for (int i : {0, 64, 149}) {
    EXPECT_EQ(ask("erm" + std::to_string(i) + "x"), std::vector<Uid>{2}) << i;
  }
  const auto path = tmp_.path() / "index.sqlite";
  EXPECT_EQ(scalar(path, "SELECT count(*) FROM search_terms"), 0);
  ASSERT_TRUE(index_->index_waiting_docs());
  EXPECT_EQ(scalar(path, "SELECT count(*) FROM search_terms"), 3 + 150);
  EXPECT_EQ(scalar(path, "SELECT count(DISTINCT term) FROM search_terms"), 3 + 150);
  for (int i : {0, 63, 64, 65, 127, 128, 149}) {
    EXPECT_EQ(ask("erm" + std::to_string(i) + "x"), std::vector<Uid>{2}) << i;
  }
  EXPECT_EQ(ask("nown1"), (std::vector<Uid>{1, 2}));
  EXPECT_EQ(ask("nown0"), std::vector<Uid>{1});
}

// A connection keeps its copy of the small table of new terms' hashes from
// one batch to the next, adding the hashes of the terms it adds. Terms
// another connection added meanwhile (their hashes in that table, the terms
// unknown here) are found there all the same, not added a second time.
TEST_F(IndexTest, TermsAnotherConnectionAddedAreNotAddedAgain) {
  const auto path = tmp_.path() / "index.sqlite";
  ASSERT_TRUE(add(inbox_, 1, "alpha beta"));
  ASSERT_TRUE(index_->index_waiting_docs());  // reads the small table, adds two
  ASSERT_TRUE(add(inbox_, 2, "gamma"));
  ASSERT_TRUE(index_->index_waiting_docs());  // adds one to its copy
  {
    auto other = Index::open(path, 1000);
    ASSERT_TRUE(other);
    ASSERT_TRUE(add_through(**other, inbox_, 3, "delta epsilon alpha"));
    ASSERT_TRUE((*other)->index_waiting_docs());
  }
  EXPECT_EQ(scalar(path, "SELECT count(*) FROM search_term_hashes_recent"), 5);
  ASSERT_TRUE(add(inbox_, 4, "delta epsilon gamma zeta"));
  ASSERT_TRUE(index_->index_waiting_docs());
  EXPECT_EQ(scalar(path, "SELECT count(*) FROM search_terms"), 6);
  EXPECT_EQ(scalar(path, "SELECT count(DISTINCT term) FROM search_terms"), 6);
  EXPECT_EQ(scalar(path, "SELECT count(*) FROM search_term_hashes_recent"), 6);
  EXPECT_EQ(ask("psilo"), (std::vector<Uid>{3, 4}));
  EXPECT_EQ(ask("amm"), (std::vector<Uid>{2, 4}));
  EXPECT_EQ(ask("lph"), (std::vector<Uid>{1, 3}));
}

// New terms' hashes wait in a small table; once it holds
// Index::kRecentTermHashes, a batch moves those of one slice of the hash
// range (a sixteenth, the slices in turn) to the large one. A term is
// known (and not added again) on either side, every term is found by a
// fragment, and a rebuild leaves every hash in the large table.
TEST_F(IndexTest, NewTermHashesMoveToTheLargeTableASliceAtATime) {
  const auto path = tmp_.path() / "index.sqlite";
  auto words = [](char tag, std::size_t n) {
    std::string out = "known";
    for (std::size_t k = 0; k < n; ++k) {
      out += std::string(" ") + tag + std::to_string(k) + "q";
    }
    return out;
  };
  ASSERT_TRUE(add(inbox_, 1, words('a', 100)));
  ASSERT_TRUE(index_->index_waiting_docs());
  EXPECT_EQ(scalar(path, "SELECT count(*) FROM search_term_hashes_recent"), 101);
  EXPECT_EQ(scalar(path, "SELECT count(*) FROM search_term_hashes"), 0);
  EXPECT_EQ(scalar(path, "SELECT next FROM search_term_hashes_cursor"), 0);
  // Enough new terms to fill the small table: the batch that adds them
  // moves the first slice, and then holds fewer than the bound.
  ASSERT_TRUE(add(inbox_, 2, words('b', Index::kRecentTermHashes) + " a7q"));
  ASSERT_TRUE(index_->index_waiting_docs());
  constexpr std::int64_t kSlice = std::int64_t{1} << 27;
  const std::int64_t terms = scalar(path, "SELECT count(*) FROM search_terms");
  EXPECT_EQ(terms, 101 + static_cast<std::int64_t>(Index::kRecentTermHashes));
  const std::int64_t recent = scalar(path, "SELECT count(*) FROM search_term_hashes_recent");
  EXPECT_LT(recent, static_cast<std::int64_t>(Index::kRecentTermHashes));
  EXPECT_EQ(scalar(path, "SELECT count(*) FROM search_term_hashes"), terms - recent);
  EXPECT_EQ(scalar(path, "SELECT count(*) FROM search_term_hashes_recent WHERE hash < " +
                             std::to_string(kSlice)),
            0);
  EXPECT_EQ(scalar(path, "SELECT count(*) FROM search_term_hashes WHERE hash >= " +
                             std::to_string(kSlice)),
            0);
  EXPECT_EQ(scalar(path, "SELECT next FROM search_term_hashes_cursor"), kSlice);
  // Known terms of both tables, and two new ones.
  ASSERT_TRUE(add(inbox_, 3, "a99q b65535q known c1q c2q"));
  ASSERT_TRUE(index_->index_waiting_docs());
  EXPECT_EQ(scalar(path, "SELECT count(*) - count(DISTINCT term) FROM search_terms"), 0);
  EXPECT_EQ(scalar(path, "SELECT count(*) FROM search_term_hashes_recent"), recent + 2);
  EXPECT_EQ(ask("a7q"), (std::vector<Uid>{1, 2}));
  EXPECT_EQ(ask("b4242"), std::vector<Uid>{2});
  EXPECT_EQ(ask("b65535"), (std::vector<Uid>{2, 3}));
  EXPECT_EQ(ask("2q"), (std::vector<Uid>{1, 2, 3}));
  EXPECT_EQ(ask("nown"), (std::vector<Uid>{1, 2, 3}));
  ASSERT_TRUE(index_->rebuild_search_fts());
  EXPECT_EQ(scalar(path, "SELECT count(*) FROM search_term_hashes_recent"), 0);
  EXPECT_EQ(scalar(path, "SELECT count(*) FROM search_term_hashes"), terms + 2);
  EXPECT_EQ(ask("c1q"), std::vector<Uid>{3});
  auto healthy = index_->search_fts_healthy();
  EXPECT_TRUE(healthy && *healthy);
}

TEST_F(SearchIndexTest, SchemaThreeIsMigratedToTheWordIndex) {
  append("INBOX", message("alpha", "findme please\r\n"));
  append("INBOX", message("beta", "nothing to find\r\n"));
  user_.reset();
  // The index as schema 3 left it: the trigram table and its triggers, a
  // pending purge, no word index, vocabulary or hit index.
  set_old_schema(db(), 3);
  exec(db(),
       "DROP TABLE search_terms; DROP TABLE search_fts; "
       "CREATE VIRTUAL TABLE search_fts USING fts5(addr, hdr, body, content='', "
       "detail=column, tokenize='trigram case_sensitive 1');");
  reopen();
  EXPECT_EQ(scalar(db(), "PRAGMA user_version"), kIndexSchemaVersion);
  EXPECT_EQ(scalar(db(), "SELECT count(*) FROM search_purge"), 0);
  expect_in_step(2);
  EXPECT_EQ(candidates("INBOX", kTextBody, {"indm"}), std::vector<Uid>{1});
  EXPECT_TRUE(exact("INBOX", kTextBody, {"indm"}));
  EXPECT_EQ(candidates("INBOX", kTextSubject, {"bet"}), std::vector<Uid>{2});
  // The records made again from the files wait for their batch, which
  // brings their terms to the vocabulary.
  EXPECT_EQ(scalar(db(), "SELECT count(*) FROM search_docs"), 2);
}

TEST_F(SearchIndexTest, MissingIndexIsRebuiltAtOpen) {
  append("INBOX", message("alpha", "findme please\r\n"));
  append("INBOX", message("beta", "nothing\r\n"));
  user_.reset();
  exec(db(),
       "DROP TRIGGER IF EXISTS search_docs_insert; DROP TRIGGER search_docs_delete; "
       "DROP TABLE search_fts;");
  reopen();
  expect_in_step(2);
  EXPECT_EQ(candidates("INBOX", kTextBody, {"findme"}), std::vector<Uid>{1});
}

TEST_F(SearchIndexTest, DamagedIndexIsRebuiltAtOpen) {
  append("INBOX", message("alpha", "findme please\r\n"));
  user_.reset();
  exec(db(), "UPDATE search_fts_data SET block = x'ffffffff'");
  reopen();
  expect_in_step(1);
  EXPECT_EQ(candidates("INBOX", kTextBody, {"findme"}), std::vector<Uid>{1});
}

TEST_F(SearchIndexTest, IndexMissingADocumentIsRebuiltAtOpen) {
  append("INBOX", message("alpha", "first\r\n"));
  append("INBOX", message("beta", "findme please\r\n"));
  append("INBOX", message("gamma", "last\r\n"));
  index_waiting();  // the waiting records go into the word index
  user_.reset();
  ASSERT_EQ(scalar(db(), "SELECT count(*) FROM search_fts_docsize"), 3);
  // The middle document goes from the word index's counts alone: the first
  // and the last are still found, so only the count can tell.
  exec(db(),
       "DELETE FROM search_fts_docsize WHERE id = (SELECT id FROM search_docs ORDER BY id "
       "LIMIT 1 OFFSET 1)");
  reopen();
  expect_in_step(3);
  EXPECT_EQ(candidates("INBOX", kTextBody, {"findme"}), std::vector<Uid>{2});
}

// An open batches the records left waiting only when a batch's worth
// wait: a store opened for each delivery (`peregrine deliver`, an LMTP
// connection a message) would otherwise write a word-index segment for
// every message. It reads the ones it leaves, so a damaged one still calls
// for the rebuild.
TEST_F(SearchIndexTest, AnOpenBatchesOnlyABatchsWorthOfWaitingRecords) {
  const std::string waiting_sql =
      "SELECT count(*) FROM search_docs WHERE id > (SELECT upto FROM search_docs_indexed)";
  for (int i = 0; i < 3; ++i) {
    append("INBOX", message("m" + std::to_string(i), "alpha words\r\n"));
  }
  reopen();
  EXPECT_EQ(scalar(db(), waiting_sql), 3);
  EXPECT_EQ(scalar(db(), "SELECT count(*) FROM search_fts_docsize"), 0);
  EXPECT_EQ(candidates("INBOX", kTextBody, {"lph"}), (std::vector<Uid>{1, 2, 3}));
  // With the batches left to upkeep, more than a batch waits; the next
  // open takes them all.
  constexpr int kMessages = static_cast<int>(Index::kWaitingDocs) + 8;
  {
    std::unique_ptr<UserStore> user =
        open_with([](MaildirOptions& o) { o.upkeep_after_reply = true; });
    ASSERT_TRUE(user);
    for (int i = 3; i < kMessages; ++i) {
      ASSERT_TRUE(user->append(
          "INBOX", testing::append_of(message("m" + std::to_string(i), "beta words\r\n"))));
    }
  }
  EXPECT_EQ(scalar(db(), waiting_sql), kMessages);
  reopen();
  EXPECT_EQ(scalar(db(), waiting_sql), 0);
  expect_in_step(kMessages);
  // A damaged record among those left waiting: the word index is rebuilt,
  // and the record made again from its message file.
  const Uid last = append("INBOX", message("last", "gamma words\r\n"));
  user_.reset();
  exec(db(),
       "UPDATE search_docs SET terms = x'02ffffffff00' WHERE id = (SELECT max(id) FROM "
       "search_docs)");
  reopen();
  expect_in_step(kMessages + 1);
  EXPECT_EQ(candidates("INBOX", kTextBody, {"amm"}), std::vector<Uid>{last});
  EXPECT_EQ(candidates("INBOX", kTextBody, {"eta"}).value_or(std::vector<Uid>{}).size(),
            static_cast<std::size_t>(kMessages - 3));
}

TEST_F(SearchIndexTest, LostTextsAreIndexedFromTheFilesAtOpen) {
  append("INBOX", message("alpha", "findme please\r\n"));
  append("INBOX", message("beta", "nothing\r\n"));
  user_.reset();
  // (The triggers need the server's SQL function: drop them; the open restores them.)
  exec(db(), "DROP TRIGGER search_docs_delete; DELETE FROM search_docs");
  reopen();
  expect_in_step(2);
  EXPECT_EQ(candidates("INBOX", kTextBody, {"findme"}), std::vector<Uid>{1});
}

TEST_F(SearchIndexTest, RebuildAndStats) {
  append("INBOX", message("alpha", "findme please\r\n"));
  append("Sent", message("beta", "nothing\r\n"));
  auto stats = user_->rebuild_search_index();
  ASSERT_TRUE(stats) << stats.error().message;
  EXPECT_TRUE(stats->enabled);
  EXPECT_EQ(stats->messages, 2u);
  EXPECT_EQ(stats->indexed, 2u);
  EXPECT_GT(stats->index_bytes, 0u);
  EXPECT_GT(stats->mail_bytes, 0u);
  expect_in_step(2);
  EXPECT_EQ(candidates("INBOX", kTextBody, {"findme"}), std::vector<Uid>{1});
}

class SearchIndexOffTest : public SearchIndexTest {};

TEST_F(SearchIndexOffTest, OffStoresNothingAndTurningItOnFillsIn) {
  {
    auto user = open_with([](MaildirOptions& o) { o.full_text_index = false; });
    ASSERT_TRUE(user);
    ASSERT_TRUE(user->append("INBOX", testing::append_of(message("a", "findme\r\n"))));
    TextQuery q;
    q.columns = kTextBody;
    q.needles = {"findme"};
    auto none = user->text_candidates("INBOX", q);
    ASSERT_TRUE(none);
    EXPECT_EQ(*none, std::nullopt);
  }
  EXPECT_EQ(scalar(db(), "SELECT count(*) FROM search_docs"), 0);
  reopen();
  expect_in_step(1);
  EXPECT_EQ(candidates("INBOX", kTextBody, {"findme"}), std::vector<Uid>{1});
}

// With upkeep_after_reply the records wait for UserStore::upkeep
// (their terms too: the vocabulary takes them with their batch), queries
// answer from them meanwhile, and an append runs the batch itself only once
// Index::kMostWaitingDocs wait.
TEST_F(SearchIndexTest, RecordsWaitForUpkeepAndAreFoundMeanwhile) {
  std::unique_ptr<UserStore> user =
      open_with([](MaildirOptions& o) { o.upkeep_after_reply = true; });
  ASSERT_TRUE(user);
  auto add = [&](Uid n) {
    return user
        ->append("INBOX", testing::append_of(message("m" + std::to_string(n),
                                                     "uniq" + std::to_string(n) + "z\r\n")))
        .has_value();
  };
  auto find = [&](const std::string& needle) {
    TextQuery q;
    q.columns = kTextBody;
    q.needles = {needle};
    auto r = user->text_candidates("INBOX", q);
    EXPECT_TRUE(r && *r);
    EXPECT_TRUE(r && *r && (*r)->exact) << needle;
    return r && *r ? (*r)->uids : std::vector<Uid>{};
  };
  auto waiting = [&] {
    return scalar(db(),
                  "SELECT count(*) FROM search_docs WHERE id > (SELECT upto FROM "
                  "search_docs_indexed)");
  };
  auto* maildir_user = dynamic_cast<MaildirUserStore*>(user.get());
  ASSERT_NE(maildir_user, nullptr);
  // Fewer than a background batch: nothing asks for one, and the records
  // are found all the same.
  const Uid before = static_cast<Uid>(Index::kBackgroundBatch) - 1;
  for (Uid n = 1; n <= before; ++n) {
    ASSERT_TRUE(add(n));
  }
  // Upkeep says when it has a batch to run, so that the server need not
  // post it after every reply.
  EXPECT_FALSE(user->upkeep_due());
  user->upkeep();
  maildir_user->wait_for_index_batches();
  EXPECT_EQ(waiting(), before);
  EXPECT_EQ(scalar(db(), "SELECT count(*) FROM search_terms"), 0);
  EXPECT_EQ(find("niq7z"), std::vector<Uid>{7});
  EXPECT_EQ(find("niq4"), (std::vector<Uid>{4, 40, 41, 42, 43, 44, 45, 46, 47, 48, 49}));
  // The append that makes a background batch's worth asks the search
  // writer's thread for one; the records it had committed join the index.
  const Uid first = before + 9;
  for (Uid n = before + 1; n <= first; ++n) {
    ASSERT_TRUE(add(n));
  }
  maildir_user->wait_for_index_batches();
  EXPECT_LE(waiting(), static_cast<std::int64_t>(first - before));
  EXPECT_GE(scalar(db(), "SELECT count(*) FROM search_fts_docsize"),
            static_cast<std::int64_t>(before));
  EXPECT_GT(scalar(db(), "SELECT count(*) FROM search_terms"), static_cast<std::int64_t>(before));
  EXPECT_EQ(find("niq7z"), std::vector<Uid>{7});
  EXPECT_EQ(find("niq" + std::to_string(first) + "z"), std::vector<Uid>{first});
  // Whenever the writer's thread is idle, fewer than a background batch
  // wait: it takes them as they come.
  const Uid last = first + 2 * static_cast<Uid>(Index::kMostWaitingDocs);
  for (Uid n = first + 1; n <= last; ++n) {
    ASSERT_TRUE(add(n));
    maildir_user->wait_for_index_batches();
    ASSERT_LT(waiting(), static_cast<std::int64_t>(Index::kBackgroundBatch));
  }
  EXPECT_EQ(find("niq" + std::to_string(last) + "z"), std::vector<Uid>{last});
  EXPECT_EQ(find("niq" + std::to_string(first + 1) + "z"), std::vector<Uid>{first + 1});
  // Files other programs drop in are adopted by a sync, which has no reply
  // to run upkeep after: it runs the batch itself.
  for (int n = 0; n < static_cast<int>(Index::kWaitingDocs) + 3; ++n) {
    testing::write_file(maildir() / "new" / ("1700000000.d" + std::to_string(n) + ".host"),
                        message("dropped", "dropin" + std::to_string(n) + "z\r\n"));
  }
  ASSERT_TRUE(user->sync());
  EXPECT_EQ(waiting(), 0);
  const std::vector<Uid> dropped = find("ropin7z");  // UIDs go by file name
  ASSERT_EQ(dropped.size(), 1u);
  EXPECT_GT(dropped[0], last);
}

// Expunges while the writer's thread runs its batches: whichever way the
// batches and the deletions interleave, the word index ends holding
// exactly the live records, and every answer is exact meanwhile.
TEST_F(SearchIndexTest, ExpungesBesideBackgroundBatchesKeepTheIndexInStep) {
  std::unique_ptr<UserStore> user =
      open_with([](MaildirOptions& o) { o.upkeep_after_reply = true; });
  ASSERT_TRUE(user);
  auto* maildir_user = dynamic_cast<MaildirUserStore*>(user.get());
  ASSERT_NE(maildir_user, nullptr);
  constexpr Uid kMessages = 3 * static_cast<Uid>(Index::kBackgroundBatch);
  std::vector<Uid> live;
  for (Uid n = 1; n <= kMessages; ++n) {
    ASSERT_TRUE(user->append(
        "INBOX", testing::append_of(message("m" + std::to_string(n),
                                            "tick" + std::to_string(n) + "q common\r\n"))));
    if (n % 3 == 0) {
      // A message that may be waiting, or in a batch, or indexed.
      FlagUpdate deleted;
      deleted.flags = kFlagDeleted;
      ASSERT_TRUE(user->update_flags("INBOX", UidSet{n - 1}, deleted));
      ASSERT_TRUE(user->expunge("INBOX"));
      live.erase(std::remove(live.begin(), live.end(), n - 1), live.end());
    }
    if (n % 3 != 2) {
      live.push_back(n);
    }
    if (n % 50 == 0) {
      user->upkeep();
    }
  }
  maildir_user->wait_for_index_batches();
  TextQuery q;
  q.columns = kTextBody;
  q.needles = {"ommo"};
  auto r = user->text_candidates("INBOX", q);
  ASSERT_TRUE(r && *r);
  EXPECT_EQ((*r)->uids, live);
  user.reset();
  reopen();
  expect_in_step(static_cast<std::int64_t>(live.size()));
  EXPECT_EQ(candidates("INBOX", kTextBody, {"ommo"}), live);
  EXPECT_EQ(candidates("INBOX", kTextBody, {"ick2q"}), std::vector<Uid>{});
  EXPECT_EQ(candidates("INBOX", kTextBody, {"ick4q"}), std::vector<Uid>{4});
}

// Expunged texts leave the trigram index later (search_purge), in bounded
// batches; until then they never come back as candidates.
TEST_F(SearchIndexTest, ExpungedMessagesNeverMatchAndArePurgedLater) {
  append("INBOX", message("one", "Unique marker zebra.\r\n"));
  append("INBOX", message("two", "Unique marker zebra.\r\n"));
  index_waiting();  // the records waiting for their batch go into the word index
  expunge("INBOX", UidSet{1, 2});
  EXPECT_EQ(scalar(db(), "SELECT count(*) FROM search_purge"), 2);
  expect_in_step(0);
  EXPECT_EQ(candidates("INBOX", kTextBody, {"zebra"}), std::vector<Uid>{});
  auto stats = user_->search_index_stats();
  ASSERT_TRUE(stats);
  EXPECT_EQ(stats->pending_purge, 2u);

  // A new message with the same text gets a new document id: only it matches.
  Uid three = append("INBOX", message("three", "Unique marker zebra.\r\n"));
  EXPECT_EQ(candidates("INBOX", kTextBody, {"zebra"}), std::vector<Uid>{three});
  expect_in_step(1);
  // The search writer unindexes them (here at the open), the store then
  // forgets them, and the writer's next batch forgets them too.
  reopen();
  EXPECT_EQ(scalar(db(), "SELECT count(*) FROM search_purge"), 0);
  EXPECT_EQ(scalar(db(), "SELECT count(*) FROM search_purged"), 2);
  expect_in_step(1);
  EXPECT_EQ(scalar(db(), "SELECT count(*) FROM search_fts_docsize"), 0);  // three waits
  EXPECT_EQ(candidates("INBOX", kTextBody, {"zebra"}), std::vector<Uid>{three});
  index_waiting();
  EXPECT_EQ(scalar(db(), "SELECT count(*) FROM search_purged"), 0);
  expect_in_step(1);
  EXPECT_EQ(candidates("INBOX", kTextBody, {"zebra"}), std::vector<Uid>{three});
}

TEST_F(SearchIndexTest, PurgeIsTheWritersAndTheOpenFinishesIt) {
  constexpr int kMessages = 40;
  for (int i = 0; i < kMessages; ++i) {
    append("Archive", message("m" + std::to_string(i), "common words here\r\n"));
  }
  index_waiting();  // the records waiting for their batch go into the word index
  ASSERT_TRUE(user_->delete_mailbox("Archive"));
  EXPECT_EQ(scalar(db(), "SELECT count(*) FROM search_purge"), kMessages);
  // An append unindexes nothing itself (that is the search writer's).
  append("Sent", message("x", "something else\r\n"));
  EXPECT_EQ(scalar(db(), "SELECT count(*) FROM search_purge"), kMessages);
  EXPECT_EQ(unpurged(), kMessages);
  expect_in_step(1);
  // Opening the store purges the rest (the new record still waits for its
  // batch).
  reopen();
  EXPECT_EQ(scalar(db(), "SELECT count(*) FROM search_purge"), 0);
  EXPECT_EQ(scalar(db(), "SELECT count(*) FROM search_fts_docsize"), 0);
  expect_in_step(1);
  EXPECT_EQ(candidates("Sent", kTextBody, {"something"}), std::vector<Uid>{1});
}

TEST_F(SearchIndexTest, CrashBetweenExpungeAndPurgeIsHarmless) {
  append("INBOX", message("one", "alpha bravo\r\n"));
  append("INBOX", message("two", "charlie delta\r\n"));
  index_waiting();  // the records waiting for their batch go into the word index
  expunge("INBOX", UidSet{1});
  // The store goes away with the purge pending (as a crash would leave it:
  // the expunge's transaction is committed, the purge never ran).
  user_.reset();
  EXPECT_EQ(scalar(db(), "SELECT count(*) FROM search_purge"), 1);
  reopen();
  EXPECT_EQ(scalar(db(), "SELECT count(*) FROM search_purge"), 0);
  expect_in_step(1);
  EXPECT_EQ(candidates("INBOX", kTextBody, {"alpha"}), std::vector<Uid>{});
  EXPECT_EQ(candidates("INBOX", kTextBody, {"charlie"}), std::vector<Uid>{2});
}

TEST_F(SearchIndexTest, RebuildClearsPendingPurges) {
  append("INBOX", message("one", "alpha bravo\r\n"));
  append("INBOX", message("two", "charlie delta\r\n"));
  index_waiting();  // the records waiting for their batch go into the word index
  expunge("INBOX", UidSet{2});
  EXPECT_EQ(scalar(db(), "SELECT count(*) FROM search_purge"), 1);
  auto stats = user_->rebuild_search_index();
  ASSERT_TRUE(stats) << stats.error().message;
  EXPECT_EQ(stats->pending_purge, 0u);
  EXPECT_EQ(scalar(db(), "SELECT count(*) FROM search_fts_docsize"), 1);
  // Ids after the rebuild are new ones all the same: nothing stale matches.
  Uid three = append("INBOX", message("three", "echo foxtrot\r\n"));
  EXPECT_EQ(candidates("INBOX", kTextBody, {"charlie"}), std::vector<Uid>{});
  EXPECT_EQ(candidates("INBOX", kTextBody, {"foxtrot"}), std::vector<Uid>{three});
  EXPECT_EQ(candidates("INBOX", kTextBody, {"alpha"}), std::vector<Uid>{1});
}

TEST(TermRecord, HoldsEachDistinctTermWithItsColumns) {
  mime::SearchText t;
  t.from = "ann <ann@example.org>";
  t.subject = "Plan B plan";  // capitals: as a fold may leave them
  t.body = "the plan, the budget\n" + std::string(40000, 'x');
  const auto terms = index_terms(t);
  EXPECT_EQ(columns_of(terms, "ann"), kTextFrom);
  EXPECT_EQ(columns_of(terms, "plan"), kTextSubject | kTextBody);
  EXPECT_EQ(columns_of(terms,
                       "\xff"
                       "plan"),
            kTextSubject);
  EXPECT_EQ(columns_of(terms,
                       "\xff"
                       "b"),
            kTextSubject);
  EXPECT_EQ(columns_of(terms, "the"), kTextBody);
  EXPECT_EQ(columns_of(terms, std::string(kMaxTokenBytes, 'x')), kTextBody);  // FTS5's cut
  EXPECT_TRUE(std::is_sorted(terms.begin(), terms.end(),
                             [](const auto& a, const auto& b) { return a.text < b.text; }));
  // A column's terms, tokenized, are that column's distinct tokens.
  std::string scratch;
  std::vector<std::string> body;
  for_each_token(column_terms(terms, 6), scratch,
                 [&](std::string_view token) { body.emplace_back(token); });
  EXPECT_EQ(body, (std::vector<std::string>{"budget", "plan", "the", std::string(32768, 'x')}));
  // Split again as the batch splits a record it stored itself.
  for (int n = 0; n < kTermColumns; ++n) {
    std::vector<std::string> split;
    for_each_column_term(column_terms(terms, n),
                         [&](std::string_view term) { split.emplace_back(term); });
    std::vector<std::string> expected;
    for (const IndexedTerm& term : terms) {
      if (term.columns & (1u << n)) {
        expected.push_back(term.text);
      }
    }
    EXPECT_EQ(split, expected) << n;
  }
}

TEST(TermRecord, RoundTripsAndRefusesCorruptBytes) {
  mime::SearchText t;
  t.subject = "hello";
  for (int i = 0; i < 500; ++i) {
    t.body += "word" + std::to_string(i) + " ";
  }
  const auto terms = index_terms(t);
  const std::string packed = pack_terms(terms);
  EXPECT_EQ(packed[0], 2);  // compressed (Zstandard)
  EXPECT_LT(packed.size(), 2000u);
  EXPECT_EQ(unpack_terms(packed), terms);
  // Format 1, which older builds wrote: the same length, then zlib.
  {
    std::uint32_t n = 0;
    for (int i = 0; i < 4; ++i) {
      n |= static_cast<std::uint32_t>(static_cast<unsigned char>(packed[1 + i])) << (8 * i);
    }
    // The record itself, from the packing without compression.
    std::string record(n, '\0');
    ASSERT_EQ(ZSTD_decompress(record.data(), n, packed.data() + 5, packed.size() - 5), n);
    uLongf bound = compressBound(n);
    std::string zlib_packed(5 + bound, '\0');
    zlib_packed[0] = 1;
    std::memcpy(zlib_packed.data() + 1, packed.data() + 1, 4);
    ASSERT_EQ(compress2(reinterpret_cast<Bytef*>(zlib_packed.data() + 5), &bound,
                        reinterpret_cast<const Bytef*>(record.data()), n, 1),
              Z_OK);
    zlib_packed.resize(5 + bound);
    EXPECT_EQ(unpack_terms(zlib_packed), terms);
    EXPECT_FALSE(unpack_terms(zlib_packed.substr(0, zlib_packed.size() - 3)));
  }
  const std::string small = pack_terms({IndexedTerm{"ab", 1}, IndexedTerm{"abc", 64}});
  EXPECT_EQ(small, std::string("\x00\x02\x00\x02"
                               "ab\x01\x02\x01"
                               "c\x40",
                               11));
  EXPECT_TRUE(unpack_terms(small));
  EXPECT_EQ(unpack_terms(pack_terms({})), std::vector<IndexedTerm>{});
  EXPECT_FALSE(unpack_terms(packed.substr(0, packed.size() / 2)));
  EXPECT_FALSE(unpack_terms(""));
  EXPECT_FALSE(unpack_terms(std::string("\x03\x03\x00\x00\x00", 5) + "abc"));  // unknown format
  auto raw = [](std::string bytes) { return std::string(1, '\0') + bytes; };
  EXPECT_FALSE(
      unpack_terms(raw(std::string("\x01\x00\x02"
                                   "ab\x00",
                                   6))));  // no column
  EXPECT_FALSE(
      unpack_terms(raw(std::string("\x01\x00\x02"
                                   "ab\x80",
                                   6))));  // column 7
  EXPECT_FALSE(
      unpack_terms(raw(std::string("\x01\x00\x02"
                                   "aB\x01",
                                   6))));  // a capital
  EXPECT_FALSE(
      unpack_terms(raw(std::string("\x01\x00\x02"
                                   "a \x01",
                                   6))));  // a separator
  EXPECT_FALSE(
      unpack_terms(raw(std::string("\x02\x00\x01"
                                   "b\x01\x00\x01"
                                   "a\x01",
                                   9))));
  EXPECT_FALSE(
      unpack_terms(raw(std::string("\x02\x00\x01"
                                   "b\x01\x01\x00\x01",
                                   8))));
  EXPECT_FALSE(
      unpack_terms(raw(std::string("\x01\x03\x01"
                                   "b\x01",
                                   5))));  // shares too much
  EXPECT_FALSE(
      unpack_terms(raw(std::string("\x01\x00\x02"
                                   "ab\x01\x00",
                                   7))));  // trailing
  EXPECT_FALSE(
      unpack_terms(raw(std::string("\x09\x00\x02"
                                   "ab\x01",
                                   6))));  // count too big
  // A term longer than FTS5 keeps: 32769 bytes, as one shared-nothing run.
  std::string long_term = std::string("\x01\x00\x81\x80\x02", 5) + std::string(32769, 'a') + "\x01";
  EXPECT_FALSE(unpack_terms(raw(long_term)));
  // A length no deflate stream of this size reaches is refused before any
  // allocation: 40 MB claimed from 10 bytes; and no Zstandard frame either.
  std::string huge("\x01\x00\x00\x80\x02", 5);
  huge += std::string(10, '\0');
  EXPECT_FALSE(unpack_terms(huge));
  huge[0] = 2;
  EXPECT_FALSE(unpack_terms(huge));
  // A Zstandard frame whose content is not the length before it.
  std::string longer = packed;
  longer[1] = static_cast<char>(static_cast<unsigned char>(longer[1]) + 1);
  EXPECT_FALSE(unpack_terms(longer));
}

// FTS5 with detail=column keeps only which columns of a document hold a
// term, so the record's distinct terms stand for the full text: a document
// indexed from its full text is unindexed by a 'delete' with its distinct
// terms (the index keeps no trace), and the same goes for a document
// indexed from the distinct terms. What differs is the token counts FTS5
// keeps for ranking (docsize, averages), which SEARCH never reads; the store
// indexes and unindexes with the distinct terms, so they stay consistent.
TEST(TermRecord, DistinctTermsUnindexWhatTheFullTextIndexed) {
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(":memory:", &db), SQLITE_OK);
  auto run = [&](const std::string& sql) {
    char* error = nullptr;
    EXPECT_EQ(sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &error), SQLITE_OK)
        << sql << ": " << (error ? error : "");
    sqlite3_free(error);
  };
  auto count = [&](const std::string& sql) {
    sqlite3_stmt* stmt = nullptr;
    std::int64_t n = -1;
    if (sqlite3_prepare_v2(db, sql.c_str(), -1, &stmt, nullptr) == SQLITE_OK &&
        sqlite3_step(stmt) == SQLITE_ROW) {
      n = sqlite3_column_int64(stmt, 0);
    }
    sqlite3_finalize(stmt);
    return n;
  };
  auto quoted = [](std::string_view s) { return "'" + std::string(s) + "'"; };
  run("CREATE VIRTUAL TABLE f USING fts5(a, b, content='', detail=column, tokenize='ascii');"
      "CREATE VIRTUAL TABLE v USING fts5vocab(f, instance);");
  mime::SearchText t;
  t.from = "to be or not to be, that is";
  t.headers = "the question: to be";
  const auto terms = index_terms(t);
  run("INSERT INTO f (rowid, a, b) VALUES (1, " + quoted(t.from) + ", " + quoted(t.headers) + ")");
  run("INSERT INTO f (rowid, a, b) VALUES (2, 'other words', 'be')");
  EXPECT_EQ(count("SELECT count(*) FROM f WHERE f MATCH 'a : be'"), 1);
  run("INSERT INTO f (f, rowid, a, b) VALUES ('delete', 1, " + quoted(column_terms(terms, 0)) +
      ", " + quoted(column_terms(terms, 5)) + ")");
  EXPECT_EQ(count("SELECT count(*) FROM f WHERE f MATCH 'be'"), 1);  // document 2
  EXPECT_EQ(count("SELECT count(*) FROM f WHERE f MATCH 'question OR that OR is'"), 0);
  EXPECT_EQ(count("SELECT count(*) FROM v WHERE doc = 1"), 0);
  run("INSERT INTO f (f, rowid, a, b) VALUES ('delete', 2, 'other words', 'be')");
  EXPECT_EQ(count("SELECT count(*) FROM v"), 0);
  // Indexed from the distinct terms, found the same way, unindexed the same way.
  run("INSERT INTO f (rowid, a, b) VALUES (3, " + quoted(column_terms(terms, 0)) + ", " +
      quoted(column_terms(terms, 5)) + ")");
  EXPECT_EQ(count("SELECT count(*) FROM f WHERE f MATCH 'b : question'"), 1);
  EXPECT_EQ(count("SELECT count(*) FROM f WHERE f MATCH 'a : question'"), 0);
  run("INSERT INTO f (f, rowid, a, b) VALUES ('delete', 3, " + quoted(column_terms(terms, 0)) +
      ", " + quoted(column_terms(terms, 5)) + ")");
  EXPECT_EQ(count("SELECT count(*) FROM v"), 0);
  EXPECT_EQ(count("SELECT count(*) FROM f WHERE f MATCH 'be'"), 0);
  sqlite3_close(db);
}

// Messages of several shapes: bare LF line ends, multipart with a base64
// part, 8-bit text, a header-only message.
std::vector<std::string> varied_messages() {
  return {
      message("plain", "Some words to index, migration included.\r\n"),
      "From: Carol <carol@example.org>\nSubject: bare LF\n\nline one\nline two\n",
      "From: d@example.net\r\nSubject: =?UTF-8?Q?=C3=89cole?=\r\nMIME-Version: 1.0\r\n"
      "Content-Type: multipart/mixed; boundary=b\r\n\r\n--b\r\n"
      "Content-Type: text/plain; charset=utf-8\r\n\r\nCaf\xc3\xa9 au lait\r\n--b\r\n"
      "Content-Type: text/plain\r\nContent-Transfer-Encoding: base64\r\n\r\n"
      "ZnJhZ21lbnRlZCBiYXNlNjQgdGV4dA==\r\n--b--\r\n",
      "Subject: header only\r\n",
  };
}

// An append with handles made ahead (prepare_messages) stores exactly what
// one without them stores: rows, files, cache records, term records.
TEST_F(SearchIndexTest, PreparedAppendStoresTheSameAsAPlainOne) {
  ASSERT_TRUE(user_->create_mailbox("Ahead"));
  const std::vector<std::string> bytes = varied_messages();
  std::vector<std::string_view> views(bytes.begin(), bytes.end());
  auto handles = user_->prepare_messages(views);
  ASSERT_EQ(handles.size(), bytes.size());
  // One at a time, then the last two together (MULTIAPPEND).
  for (std::size_t i = 0; i < bytes.size(); ++i) {
    EXPECT_EQ(handles[i]->source().data(), bytes[i].data());
    append("INBOX", bytes[i]);
  }
  for (std::size_t i = 0; i + 2 < bytes.size(); ++i) {
    AppendMessage m = testing::append_of(bytes[i]);
    m.prepared = handles[i].get();
    ASSERT_TRUE(user_->append("Ahead", m));
  }
  std::vector<AppendMessage> last;
  for (std::size_t i = bytes.size() - 2; i < bytes.size(); ++i) {
    last.push_back(testing::append_of(bytes[i]));
    last.back().prepared = handles[i].get();
  }
  ASSERT_TRUE(user_->append("Ahead", last));

  const auto plain = metas("INBOX");
  const auto ahead = metas("Ahead");
  ASSERT_EQ(plain.size(), bytes.size());
  ASSERT_EQ(ahead.size(), bytes.size());
  const UidSet all = UidSet::all();
  auto plain_records = user_->cache_records("INBOX", all);
  auto ahead_records = user_->cache_records("Ahead", all);
  ASSERT_TRUE(plain_records && ahead_records);
  ASSERT_EQ(plain_records->size(), bytes.size());
  ASSERT_EQ(ahead_records->size(), bytes.size());
  for (std::size_t i = 0; i < bytes.size(); ++i) {
    SCOPED_TRACE(i);
    EXPECT_EQ(ahead[i].uid, plain[i].uid);
    EXPECT_EQ(ahead[i].size, plain[i].size);
    EXPECT_EQ(ahead[i].flags, plain[i].flags);
    EXPECT_EQ((*ahead_records)[i].record, (*plain_records)[i].record);
    EXPECT_FALSE((*ahead_records)[i].record.empty());
    const auto plain_terms = stored_terms(db(), plain[i].uid, "INBOX");
    EXPECT_FALSE(plain_terms.empty());
    EXPECT_EQ(stored_terms(db(), ahead[i].uid, "Ahead"), plain_terms);
    auto plain_body = user_->open_body("INBOX", plain[i].uid);
    auto ahead_body = user_->open_body("Ahead", ahead[i].uid);
    ASSERT_TRUE(plain_body && ahead_body);
    EXPECT_EQ((*ahead_body)->read_all().value(), (*plain_body)->read_all().value());
  }
  // The handles were used up: taken, not left with results.
  for (const auto& h : handles) {
    auto* maildir = dynamic_cast<MaildirPreparedMessage*>(h.get());
    ASSERT_NE(maildir, nullptr);
    EXPECT_FALSE(maildir->take().has_value());
  }
}

// A handle made from other bytes is ignored; one from equal bytes in
// another buffer is as good as the original.
TEST_F(SearchIndexTest, PreparedMessageOfOtherBytesIsIgnored) {
  const std::string first = message("first", "alpha words\r\n");
  const std::string second = message("second", "omega words\r\n");
  std::vector<std::string_view> views{first};
  auto handles = user_->prepare_messages(views);
  ASSERT_EQ(handles.size(), 1u);
  AppendMessage m = testing::append_of(second);
  m.prepared = handles[0].get();
  auto appended = user_->append("INBOX", m);
  ASSERT_TRUE(appended);
  auto records = user_->cache_records("INBOX", UidSet{appended->uid});
  ASSERT_TRUE(records);
  ASSERT_EQ(records->size(), 1u);
  auto record = mime::deserialize((*records)[0].record);
  ASSERT_TRUE(record);
  EXPECT_EQ(record->subject, "second");
  const auto terms = stored_terms(db(), appended->uid);
  EXPECT_NE(columns_of(terms, "omega"), 0);
  EXPECT_EQ(columns_of(terms, "alpha"), 0);
  // Unused, so its results are still there for an append of `first`.
  const std::string copy = first;
  AppendMessage again = testing::append_of(copy);
  again.prepared = handles[0].get();
  auto stored = user_->append("INBOX", again);
  ASSERT_TRUE(stored);
  EXPECT_NE(columns_of(stored_terms(db(), stored->uid), "alpha"), 0);
  EXPECT_FALSE(dynamic_cast<MaildirPreparedMessage*>(handles[0].get())->take().has_value());
}

// Handles dropped unused (a failed APPEND, a closed connection) wait for
// their work and leave nothing behind.
TEST_F(SearchIndexTest, PreparedMessagesDroppedUnusedAreHarmless) {
  std::vector<std::string> bytes;
  for (int i = 0; i < 20; ++i) {
    bytes.push_back(message("dropped" + std::to_string(i)));
  }
  std::vector<std::string_view> views(bytes.begin(), bytes.end());
  for (int round = 0; round < 5; ++round) {
    auto handles = user_->prepare_messages(views);
    EXPECT_EQ(handles.size(), bytes.size());
    handles.resize(static_cast<std::size_t>(round));  // drops the rest while they run
  }
  expect_in_step(0);
}

}  // namespace
}  // namespace peregrine::store::maildir
