// The full-text index of the Maildir backend: each message's term record
// (term_record.h: its distinct terms, with the columns each occurs in; no
// text) in search_docs, in the store's index file; and, in a file of their
// own beside it (search.sqlite), a contentless FTS5 word index over the
// records (search_fts, tokenize='ascii', one column per part of the text)
// and the vocabulary (search_terms: every term ever indexed), with a
// trigram index over it (search_terms_fts), so that a word fragment
// resolves to the terms holding it and the documents holding those terms
// are exactly the documents holding the fragment: no text is read. The
// newest terms (fewer than Index::kUnindexedTerms) wait outside the
// trigram index, and queries read them from the vocabulary itself.
//
// A record is stored in the transaction of the change that adds its
// message. The vocabulary and the word index take the records a batch at a
// time (the newest ids, above search_docs_indexed.upto): FTS5 writes a
// segment, and merges older ones, whenever a statement that fed it ends,
// and a term shared by the batch's records is probed once. The batches are
// written by a connection of their own, the search writer, which has
// search.sqlite as its main file and the store's attached read-only (the
// store's connection has search.sqlite attached read-only): each file has
// one writer, so a batch never holds the lock an append needs. The server
// runs them on the writer's thread at idle priority (request_batch), where
// they take CPU time the sessions leave; tools run them in line. Queries
// read the waiting records themselves (RecordFilter), so every answer holds
// the newest messages. A deleted record (expunge, mailbox deletion) is
// moved by a trigger to search_purge in the deleting transaction; the
// writer unindexes it later, from the same record, if the word index held
// it, notes it in search_purged, and the store then forgets it
// (forget_purged): until then its terms may still match, but every hit is
// joined to a live search_docs row, and a document id is never given
// again while its terms are in the index. Terms of deleted records stay
// in the vocabulary (they find nothing) until a rebuild. The format is in
// docs/formats/maildir-store.md, "Full-text index".

#include <sched.h>
#include <sqlite3.h>

#include <algorithm>
#include <condition_variable>
#include <cstring>
#include <iterator>
#include <map>
#include <mutex>
#include <thread>
#include <unordered_set>

#include "base/log.h"
#include "store/maildir/index.h"
#include "store/maildir/sql_util.h"
#include "store/maildir/term_set.h"
#include "store/maildir/text_tokens.h"
#include "store/maildir/word_query.h"

namespace peregrine::store::maildir {

using base::Result;

namespace {

static_assert(kTermColumns == kColumnCount);

// One unpacked record, kept between the calls a statement makes for the
// columns of the same row, so the record is decoded once per row.
struct UnpackCache {
  std::string packed;
  std::vector<IndexedTerm> terms;
};
thread_local UnpackCache unpack_cache;

// The terms of `packed`, through the cache; nullptr when corrupt.
const std::vector<IndexedTerm>* unpacked(std::string_view packed) {
  UnpackCache& cache = unpack_cache;
  if (cache.packed != packed) {
    auto terms = unpack_terms(packed);
    if (!terms) {
      cache.packed.clear();
      return nullptr;
    }
    cache.packed.assign(packed);
    cache.terms = std::move(*terms);
  }
  return &cache.terms;
}

void search_column_fn(sqlite3_context* ctx, int, sqlite3_value** argv) {
  const void* data = sqlite3_value_blob(argv[0]);
  int size = sqlite3_value_bytes(argv[0]);
  int column = sqlite3_value_int(argv[1]);
  std::string_view packed(static_cast<const char*>(data), data == nullptr ? 0 : size);
  if (column < 0 || column >= kTermColumns) {
    sqlite3_result_error(ctx, "corrupt term record", -1);
    return;
  }
  const std::vector<IndexedTerm>* terms = unpacked(packed);
  if (terms == nullptr) {
    sqlite3_result_error(ctx, "corrupt term record", -1);
    return;
  }
  std::string out = column_terms(*terms, column);
  sqlite3_result_text64(ctx, out.data(), out.size(), SQLITE_TRANSIENT, SQLITE_UTF8);
}

// FNV-1a over the term's bytes, folded to 31 bits (SQLite stores it in 4
// bytes). Stored: it must never change.
std::int64_t term_hash(std::string_view term) {
  std::uint64_t h = 0xcbf29ce484222325ULL;
  for (char c : term) {
    h ^= static_cast<unsigned char>(c);
    h *= 0x100000001b3ULL;
  }
  return static_cast<std::int64_t>((h ^ (h >> 31) ^ (h >> 62)) & 0x7fffffffULL);
}

void term_hash_fn(sqlite3_context* ctx, int, sqlite3_value** argv) {
  const auto* data = static_cast<const char*>(sqlite3_value_blob(argv[0]));
  const int size = sqlite3_value_bytes(argv[0]);
  sqlite3_result_int64(ctx, term_hash(std::string_view(data, data == nullptr ? 0 : size)));
}

// "addr_from, addr_to, ..., body", each name prefixed by `prefix`.
std::string column_list(std::string_view prefix = {}) {
  std::string out;
  for (std::string_view name : kColumnNames) {
    if (!out.empty()) {
      out += ", ";
    }
    out += prefix;
    out += name;
  }
  return out;
}

// "peregrine_search_column(<text>, 0), ..." for every column.
std::string column_values(std::string_view text) {
  std::string out;
  for (int n = 0; n < kColumnCount; ++n) {
    if (n > 0) {
      out += ", ";
    }
    out += "peregrine_search_column(";
    out += text;
    out += ", ";
    out += std::to_string(n);
    out += ")";
  }
  return out;
}

std::string create_fts_sql() {
  std::string out =
      "CREATE VIRTUAL TABLE IF NOT EXISTS search_fts USING fts5(" + column_list() +
      ", content='', detail=column, tokenize='ascii');\n"
      "CREATE TABLE IF NOT EXISTS search_terms (id INTEGER PRIMARY KEY, term TEXT NOT NULL);\n"
      // The terms FTS5 cut (kMaxTokenBytes): a fragment may lie past the cut.
      "CREATE INDEX IF NOT EXISTS search_terms_long ON search_terms(id) WHERE "
      "length(CAST(term AS BLOB)) >= 32768;\n"
      "CREATE VIRTUAL TABLE IF NOT EXISTS search_terms_fts USING fts5(term, "
      "content='search_terms', content_rowid='id', detail=none, columnsize=0, "
      "tokenize='trigram case_sensitive 1');\n"
      // The records of ids up to `upto` are in search_fts; newer ones wait
      // to be indexed a batch at a time (index_waiting_docs), and queries
      // read them from search_docs. Created with none indexed.
      "CREATE TABLE IF NOT EXISTS search_docs_indexed (upto INTEGER NOT NULL);\n"
      "INSERT INTO search_docs_indexed (upto) SELECT 0 WHERE NOT EXISTS "
      "(SELECT 1 FROM search_docs_indexed);\n"
      // The deleted records (search_purge, in the store's file) this file
      // is done with: unindexed, or never indexed. The store deletes their
      // rows of search_purge (Index::forget_purged), the batch then these.
      "CREATE TABLE IF NOT EXISTS search_purged (id INTEGER PRIMARY KEY);\n"
      // Terms by a 31-bit hash of their bytes (peregrine_term_hash): what
      // tells Index::add_terms whether a term is new, at a fraction of the
      // size of an index on the terms themselves. In two tables: new
      // terms' hashes go to the small one, and whenever it holds
      // Index::kRecentTermHashes or more, the hashes of one slice of the
      // hash range move to the large one (the slices in turn, from
      // search_term_hashes_cursor.next). A new term's hash lands on a
      // random page of its table: in the large one a batch of 5,000 new
      // terms dirtied 4,000 of them, 17 MB of WAL, where the small one has
      // a few hundred pages in all, and a slice rewrites one sixteenth of
      // the large one's (docs/benchmarks.md, "New terms' hashes in a small
      // table").
      "CREATE TABLE IF NOT EXISTS search_term_hashes (hash INTEGER NOT NULL, id INTEGER NOT "
      "NULL, PRIMARY KEY (hash, id)) WITHOUT ROWID;\n"
      "CREATE TABLE IF NOT EXISTS search_term_hashes_recent (hash INTEGER NOT NULL, id INTEGER "
      "NOT NULL, PRIMARY KEY (hash, id)) WITHOUT ROWID;\n"
      "CREATE TABLE IF NOT EXISTS search_term_hashes_cursor (next INTEGER NOT NULL);\n"
      "INSERT INTO search_term_hashes_cursor (next) SELECT 0 WHERE NOT EXISTS (SELECT 1 FROM "
      "search_term_hashes_cursor);\n"
      // The terms of ids up to `upto` are in search_terms_fts; newer ones
      // wait to be indexed a batch at a time (index_unindexed_terms), and
      // queries read them from search_terms. Created with every term
      // indexed: a schema 5 trigger indexed each term as it came.
      "CREATE TABLE IF NOT EXISTS search_terms_indexed (upto INTEGER NOT NULL);\n"
      "INSERT INTO search_terms_indexed (upto) SELECT (SELECT coalesce(max(id), 0) FROM "
      "search_terms) WHERE NOT EXISTS (SELECT 1 FROM search_terms_indexed);\n";
  return out;
}

// The store's own part of the full-text index, in its file: the index from
// a hit's document id to its mailbox's UID, and the trigger that keeps
// every deleted record until the search writer is done with it.
constexpr std::string_view kCreateStoreSql = R"sql(
CREATE INDEX IF NOT EXISTS search_docs_by_mailbox ON search_docs(mailbox_id, id, uid);
CREATE TRIGGER IF NOT EXISTS search_docs_delete AFTER DELETE ON search_docs BEGIN
  INSERT INTO search_purge (id, terms) VALUES (old.id, old.terms);
END;
)sql";

// The search writer's file, emptied (`main.`: the store's file is attached
// to that connection too).
constexpr std::string_view kDropFts = R"sql(
DROP TABLE IF EXISTS main.search_docs_indexed;
DROP TABLE IF EXISTS main.search_purged;
DROP TABLE IF EXISTS main.search_fts;
DROP TABLE IF EXISTS main.search_terms_fts;
DROP TABLE IF EXISTS main.search_terms;
DROP TABLE IF EXISTS main.search_term_hashes;
DROP TABLE IF EXISTS main.search_term_hashes_recent;
DROP TABLE IF EXISTS main.search_term_hashes_cursor;
DROP TABLE IF EXISTS main.search_terms_indexed;
)sql";

}  // namespace

Result<void> register_search_functions(Database& db) {
  if (auto r = db.create_function("peregrine_search_column", 2, search_column_fn); !r) {
    return r;
  }
  return db.create_function("peregrine_term_hash", 1, term_hash_fn);
}

struct Index::Worker {
  std::mutex mutex;
  std::condition_variable wake;
  std::condition_variable idle;  // told when a batch ends with none pending
  bool pending = false;
  bool running = false;
  bool stop = false;
  std::thread thread;
};

Result<Index*> Index::writer() {
  if (writer_ == nullptr) {
    auto opened = open_search_writer(path_, pragmas_);
    if (!opened) {
      return std::unexpected(opened.error());
    }
    writer_ = std::move(*opened);
  }
  return writer_.get();
}

template <typename Step>
Result<void> Index::with_writer(Step step) {
  auto w = writer();
  if (!w) {
    return std::unexpected(w.error());
  }
  std::lock_guard lock(writer_mutex_);
  return in_transaction(**w, [&] { return step(**w); });
}

Result<void> Index::create_search_fts() {
  if (!is_writer_) {
    return db_->exec(kCreateStoreSql);
  }
  if (auto r = db_->exec(create_fts_sql()); !r) {
    return r;
  }
  // Kept in each table's own configuration (its _config table): set once,
  // and again on a store an older build made or changed.
  for (std::string_view table : {"search_fts", "search_terms_fts"}) {
    const std::string name(table);
    auto automerge = query_int(
        *db_, "SELECT coalesce((SELECT v FROM " + name + "_config WHERE k = 'automerge'), 0)");
    if (!automerge) {
      return std::unexpected(automerge.error());
    }
    if (*automerge != kAutomerge) {
      if (auto r = db_->exec("INSERT INTO " + name + " (" + name + ", rank) VALUES ('automerge', " +
                             std::to_string(kAutomerge) + ")");
          !r) {
        return r;
      }
    }
  }
  return {};
}

namespace {

// The id of a new search_docs row: above every id still in the word index,
// pending purges included, so that no new text shares a rowid with an old
// one's tokens, and above every id the word index counts as indexed.
constexpr std::string_view kNextDocId =
    "(SELECT max((SELECT coalesce(max(id), 0) FROM search_docs), "
    "(SELECT coalesce(max(id), 0) FROM search_purge), "
    "(SELECT upto FROM search_docs_indexed)) + 1)";

// Deletes the text of (mailbox, uid) through the delete trigger (a REPLACE
// would not fire it), so its tokens are purged.
Result<void> delete_search_text(Database& db, std::int64_t mailbox_id, Uid uid) {
  return run(db, "DELETE FROM search_docs WHERE mailbox_id = ?1 AND uid = ?2",
             [&](Statement& s) { s.bind(1, mailbox_id).bind(2, uid); });
}

// Terms added to the vocabulary by one statement at most.
constexpr std::size_t kTermsPerInsert = 64;

// The smallest power of two >= n (n >= 1): statements that take a batch of
// terms take this many parameters, so that a connection prepares a few
// shapes rather than one per batch size.
std::size_t batch_slots(std::size_t n) {
  std::size_t slots = 1;
  while (slots < n) {
    slots *= 2;
  }
  return slots;
}

// The highest id of the vocabulary (0 when empty).
Result<std::int64_t> last_term_id(Database& db) {
  return query_int(db, "SELECT coalesce(max(id), 0) FROM search_terms");
}

// Puts the hashes of the vocabulary's terms above `after` in the small
// table of hashes. One statement for a batch's new terms: an insert
// trigger ran a program of its own for every term (15-20% of a fresh
// user's batch).
Result<void> add_term_hashes(Database& db, std::int64_t after) {
  return run(db,
             "INSERT INTO search_term_hashes_recent (hash, id) SELECT peregrine_term_hash(term), "
             "id FROM search_terms WHERE id > ?1",
             [&](Statement& s) { s.bind(1, after); });
}

// Adds `terms` to the vocabulary, up to kTermsPerInsert a statement (the
// parameters past the terms stay NULL and are left out), and their hashes.
// Each statement ends with FTS5 writing what it was fed, so a statement
// per term would cost far more than the inserts.
Result<void> insert_terms(Database& db, const std::vector<std::string>& terms) {
  if (terms.empty()) {
    return {};
  }
  auto before = last_term_id(db);
  if (!before) {
    return std::unexpected(before.error());
  }
  for (std::size_t at = 0; at < terms.size(); at += kTermsPerInsert) {
    const std::size_t n = std::min(kTermsPerInsert, terms.size() - at);
    const std::size_t slots = batch_slots(n);
    std::string text = "INSERT INTO search_terms (term) SELECT column1 FROM (VALUES (?1)";
    for (std::size_t i = 2; i <= slots; ++i) {
      text += ", (?" + std::to_string(i) + ")";
    }
    text += ") WHERE column1 IS NOT NULL";
    if (auto r = run(db, text,
                     [&](Statement& s) {
                       for (std::size_t i = 0; i < n; ++i) {
                         s.bind_text(static_cast<int>(i + 1), terms[at + i]);
                       }
                     });
        !r) {
      return r;
    }
  }
  return add_term_hashes(db, *before);
}

// The vocabulary's terms whose hashes are among n parameters (in the large
// table of hashes, and in the small one too when `with_recent`).
std::string probe_sql(std::size_t n, bool with_recent) {
  std::string hashes = "?1";
  for (std::size_t i = 2; i <= n; ++i) {
    hashes += ", ?" + std::to_string(i);
  }
  std::string out =
      "SELECT term FROM search_terms WHERE id IN (SELECT id FROM search_term_hashes WHERE "
      "hash IN (" +
      hashes + ")";
  if (with_recent) {
    out += " UNION ALL SELECT id FROM search_term_hashes_recent WHERE hash IN (" + hashes + ")";
  }
  return out + ")";
}

// Term hashes are 31 bits; a slice is a sixteenth of them.
constexpr std::int64_t kHashSpace = std::int64_t{1} << 31;
constexpr std::int64_t kHashSlice = kHashSpace / 16;

// While search_term_hashes_recent holds `at_least` hashes or more, moves
// those of the next slice of the hash range into search_term_hashes (in
// hash order, each of its pages written once). Sixteen moves empty it (so
// `at_least` 0 moves every hash). True when it moved any.
Result<bool> move_term_hash_slices(Database& db, std::size_t at_least) {
  for (int moves = 0; moves < kHashSpace / kHashSlice; ++moves) {
    auto recent = query_int(db, "SELECT count(*) FROM search_term_hashes_recent");
    if (!recent) {
      return std::unexpected(recent.error());
    }
    if (*recent < static_cast<std::int64_t>(at_least)) {
      return moves > 0;
    }
    auto next = query_int(db, "SELECT next FROM search_term_hashes_cursor");
    if (!next) {
      return std::unexpected(next.error());
    }
    const std::int64_t first = *next % kHashSpace;
    const std::int64_t end = first + kHashSlice;
    auto bind = [&](Statement& s) { s.bind(1, first).bind(2, end); };
    if (auto r = run(db,
                     "INSERT INTO search_term_hashes (hash, id) SELECT hash, id FROM "
                     "search_term_hashes_recent WHERE hash >= ?1 AND hash < ?2",
                     bind);
        !r) {
      return std::unexpected(r.error());
    }
    if (auto r =
            run(db, "DELETE FROM search_term_hashes_recent WHERE hash >= ?1 AND hash < ?2", bind);
        !r) {
      return std::unexpected(r.error());
    }
    if (auto r = run(db, "UPDATE search_term_hashes_cursor SET next = ?1",
                     [&](Statement& s) { s.bind(1, end % kHashSpace); });
        !r) {
      return std::unexpected(r.error());
    }
  }
  return true;
}

// Indexes by trigram the vocabulary's terms search_terms_fts lacks, in one
// statement: FTS5 writes them as one segment when it ends.
Result<void> index_unindexed_terms(Database& db) {
  if (auto r = run(db,
                   "INSERT INTO search_terms_fts (rowid, term) SELECT id, term FROM search_terms "
                   "WHERE id > (SELECT upto FROM search_terms_indexed)",
                   [](Statement&) {});
      !r) {
    return r;
  }
  return run(db,
             "UPDATE search_terms_indexed SET upto = (SELECT coalesce(max(id), 0) FROM "
             "search_terms)",
             [](Statement&) {});
}

// Indexes in the word index the records search_fts lacks, in one statement
// (FTS5 writes them as one segment when it ends), and counts them as
// indexed: both or neither (a savepoint), so no record is ever indexed twice.
Result<void> index_waiting_docs(Database& db) {
  if (auto r = db.exec("SAVEPOINT search_docs_batch"); !r) {
    return r;
  }
  Result<void> r = run(db,
                       "INSERT INTO search_fts (rowid, " + column_list() + ") SELECT id, " +
                           column_values("terms") +
                           " FROM search_docs WHERE id > (SELECT upto FROM "
                           "search_docs_indexed) ORDER BY id",
                       [](Statement&) {});
  // The deleted records above `upto` were never indexed, and are none of
  // the word index's business once `upto` passes them: done with, all of
  // them (a purge that reached only some would otherwise unindex the rest
  // from a word index that never held them).
  if (r) {
    r = run(db,
            "INSERT INTO search_purged (id) SELECT id FROM search_purge WHERE id > (SELECT upto "
            "FROM search_docs_indexed) AND id NOT IN (SELECT id FROM search_purged)",
            [](Statement&) {});
  }
  if (r) {
    r = run(db,
            "UPDATE search_docs_indexed SET upto = max(upto, (SELECT coalesce(max(id), 0) FROM "
            "search_docs))",
            [](Statement&) {});
  }
  if (!r) {
    (void)db.exec("ROLLBACK TO search_docs_batch");
  }
  (void)db.exec("RELEASE search_docs_batch");
  return r;
}

// How many records wait at most (ids are given in order: the newest id
// less `upto`).
Result<std::int64_t> waiting_docs(Database& db) {
  return query_int(db,
                   "SELECT (SELECT coalesce(max(id), 0) FROM search_docs) - upto FROM "
                   "search_docs_indexed");
}

// Calls fn(packed) for the term record of every record waiting for its
// batch, until it returns false.
template <class Fn>
Result<void> each_waiting_record(Database& db, Fn&& fn) {
  return each_row(
      db, "SELECT terms FROM search_docs WHERE id > (SELECT upto FROM search_docs_indexed)",
      [](Statement&) {}, [&](const Statement& s) { return fn(s.column_blob(0)); });
}

// Fills the vocabulary with every term of the word index (after a rebuild).
Result<void> fill_terms(Database& db) {
  auto before = last_term_id(db);
  if (!before) {
    return std::unexpected(before.error());
  }
  if (auto r = db.exec(
          "CREATE VIRTUAL TABLE temp.search_fts_vocab USING fts5vocab(main, search_fts, row);\n"
          "INSERT INTO search_terms (term) SELECT term FROM temp.search_fts_vocab;\n"
          "DROP TABLE temp.search_fts_vocab;");
      !r) {
    return r;
  }
  if (auto r = add_term_hashes(db, *before); !r) {
    return r;
  }
  if (auto r = move_term_hash_slices(db, 0); !r) {
    return std::unexpected(r.error());
  }
  return index_unindexed_terms(db);
}

}  // namespace

// Bytes of terms Index::known_ holds at most (then it starts again).
constexpr std::size_t kKnownTermsBytes = 4 * 1024 * 1024;

void Index::forget_known_terms() {
  known_.terms.clear();
  known_.bytes = 0;
  known_.recent.clear();
  known_.recent_read = false;
}

Result<void> Index::add_terms(const std::vector<IndexedTerm>& terms) {
  auto version = db_->data_version();
  if (!version) {
    return std::unexpected(version.error());
  }
  if (*version != known_.data_version || known_.bytes > kKnownTermsBytes) {
    forget_known_terms();
    known_.data_version = *version;
  }
  // The terms not in known_, probed (and the new ones added) in the order
  // of their hashes: a batch's probes then walk the hash index from one
  // end to the other, each of its pages read once, instead of at random
  // (a batch of 9,000 terms in a vocabulary of 2.7 million: probes 17%
  // faster, the new terms' inserts 23%).
  std::vector<std::pair<std::int64_t, const std::string*>> unknown;
  for (const IndexedTerm& indexed : terms) {
    if (!known_.terms.contains(indexed.text)) {
      unknown.emplace_back(term_hash(indexed.text), &indexed.text);
    }
  }
  std::sort(unknown.begin(), unknown.end());
  // The small table of hashes is read whole (at most a few hundred pages),
  // once while this connection's copy stays valid (known_): a term whose
  // hash it lacks is looked up in the large table alone, and not at all
  // while that is empty (a new user's vocabulary, where nearly every term
  // is new).
  std::vector<std::uint32_t>& recent = known_.recent;  // ascending
  if (!unknown.empty() && !known_.recent_read) {
    recent.clear();
    if (auto r = each_row(
            *db_, "SELECT hash FROM search_term_hashes_recent ORDER BY hash", [](Statement&) {},
            [&](const Statement& s) {
              recent.push_back(static_cast<std::uint32_t>(s.column_int(0)));
              return true;
            });
        !r) {
      forget_known_terms();
      return r;
    }
    known_.recent_read = true;
  }
  auto large = unknown.empty()
                   ? Result<std::int64_t>(0)
                   : query_int(*db_, "SELECT EXISTS (SELECT 1 FROM search_term_hashes)");
  if (!large) {
    return std::unexpected(large.error());
  }
  std::vector<std::string> fresh;  // terms the vocabulary lacks
  std::vector<std::pair<std::int64_t, const std::string*>> in_recent;
  std::vector<std::pair<std::int64_t, const std::string*>> in_large;
  for (const auto& hashed : unknown) {
    if (std::binary_search(recent.begin(), recent.end(),
                           static_cast<std::uint32_t>(hashed.first))) {
      in_recent.push_back(hashed);
    } else if (*large != 0) {
      in_large.push_back(hashed);
    } else {
      fresh.push_back(*hashed.second);
    }
  }
  std::unordered_set<std::string> present;
  // Looks `terms` up kTermsPerInsert at a time, in the small table too or
  // not: a known term joins known_, a new one `fresh`.
  auto look_up = [&](const std::vector<std::pair<std::int64_t, const std::string*>>& terms,
                     bool with_recent) {
    for (std::size_t at = 0; at < terms.size(); at += kTermsPerInsert) {
      const std::size_t n = std::min(kTermsPerInsert, terms.size() - at);
      // The vocabulary's terms with the hashes of these (rarely more than
      // one a hash), compared in full below. The statement's parameters
      // past the batch repeat its last hash.
      const std::size_t slots = batch_slots(n);
      present.clear();
      if (auto r = each_row(
              *db_, probe_sql(slots, with_recent),
              [&](Statement& s) {
                for (std::size_t i = 0; i < slots; ++i) {
                  s.bind(static_cast<int>(i + 1), terms[at + std::min(i, n - 1)].first);
                }
              },
              [&](const Statement& s) {
                present.emplace(s.column_text(0));
                return true;
              });
          !r) {
        return r;
      }
      for (std::size_t i = at; i < at + n; ++i) {
        const std::string& term = *terms[i].second;
        if (present.contains(term)) {
          known_.bytes += term.size() + 32;
          known_.terms.insert(term);
        } else {
          fresh.push_back(term);
        }
      }
    }
    return Result<void>();
  };
  if (auto r = look_up(in_recent, true); !r) {
    return r;
  }
  if (auto r = look_up(in_large, false); !r) {
    return r;
  }
  if (auto r = insert_terms(*db_, fresh); !r) {
    forget_known_terms();
    return r;
  }
  if (!fresh.empty() && known_.recent_read) {
    // insert_terms put their hashes in the small table: so in the copy.
    std::vector<std::uint32_t> added;
    added.reserve(fresh.size());
    for (const std::string& term : fresh) {
      added.push_back(static_cast<std::uint32_t>(term_hash(term)));
    }
    std::sort(added.begin(), added.end());
    const auto middle = static_cast<std::ptrdiff_t>(recent.size());
    recent.insert(recent.end(), added.begin(), added.end());
    std::inplace_merge(recent.begin(), recent.begin() + middle, recent.end());
  }
  if (!fresh.empty()) {
    // FTS5 writes a segment (and merges older ones) whenever a statement
    // that fed it ends: indexing the new terms by trigram a batch at a time
    // costs a fraction of doing it in every append.
    auto waiting = query_int(*db_,
                             "SELECT (SELECT coalesce(max(id), 0) FROM search_terms) - upto "
                             "FROM search_terms_indexed");
    if (!waiting) {
      return std::unexpected(waiting.error());
    }
    if (*waiting >= static_cast<std::int64_t>(kUnindexedTerms)) {
      if (auto r = index_unindexed_terms(*db_); !r) {
        return r;
      }
    }
    auto moved = move_term_hash_slices(*db_, kRecentTermHashes);
    if (!moved) {
      forget_known_terms();
      return std::unexpected(moved.error());
    }
    if (*moved) {
      known_.recent.clear();  // read again at the next batch
      known_.recent_read = false;
    }
  }
  for (std::string& term : fresh) {
    known_.bytes += term.size() + 32;
    known_.terms.insert(std::move(term));
  }
  return {};
}

Result<void> Index::insert_search_text(std::int64_t mailbox_id, Uid uid, const TermRecord& record,
                                       bool batch) {
  if (auto r = delete_search_text(*db_, mailbox_id, uid); !r) {
    return r;
  }
  if (auto r = run(
          *db_,
          sql("INSERT INTO search_docs (id, mailbox_id, uid, terms) VALUES (", kNextDocId,
              ", ?1, ?2, ?3)"),
          [&](Statement& s) { s.bind(1, mailbox_id).bind(2, uid).bind_blob(3, record.packed); });
      !r) {
    return r;
  }
  if (batch) {
    index_waiting_docs_if_due();
  }
  return {};
}

Result<void> Index::copy_search_text(std::int64_t from_mailbox, Uid from_uid,
                                     std::int64_t to_mailbox, Uid to_uid) {
  if (auto r = delete_search_text(*db_, to_mailbox, to_uid); !r) {
    return r;
  }
  // The copied record's terms are in the vocabulary already.
  if (auto r = run(*db_,
                   sql("INSERT INTO search_docs (id, mailbox_id, uid, terms) SELECT ", kNextDocId,
                       ", ?3, ?4, terms FROM search_docs WHERE mailbox_id = ?1 AND uid = ?2"),
                   [&](Statement& s) {
                     s.bind(1, from_mailbox).bind(2, from_uid).bind(3, to_mailbox).bind(4, to_uid);
                   });
      !r) {
    return r;
  }
  index_waiting_docs_if_due();
  return {};
}

Result<std::size_t> Index::purge_search_fts(std::size_t limit) {
  // Asked of this connection first: the writer is opened only for work.
  auto pending = unpurged_exist();
  if (!pending) {
    return std::unexpected(pending.error());
  }
  if (!*pending) {
    return std::size_t{0};
  }
  std::size_t purged = 0;
  if (auto r = with_writer([&](Index& w) {
        auto n = w.purge_here(limit);
        if (!n) {
          return Result<void>(std::unexpected(n.error()));
        }
        purged = *n;
        return Result<void>();
      });
      !r) {
    return std::unexpected(r.error());
  }
  return purged;
}

Result<void> Index::forget_purged() {
  return db_->exec("DELETE FROM search_purge WHERE id IN (SELECT id FROM search_purged)");
}

// On the search writer: the deleted records it has not yet dealt with, up
// to `limit`, leave the word index (those it holds: ids up to `upto`; a
// record deleted before any batch took it never got there) and go to
// search_purged; then the ids the store has since forgotten leave it.
// Before a batch raises `upto`, in its transaction: the writer's snapshot
// of the store's file then has every record deleted before the batch in
// search_purge, so a record the batch indexes is never one it counted
// as never indexed.
Result<std::size_t> Index::purge_here(std::size_t limit) {
  auto last = collect<std::int64_t>(
      *db_,
      "SELECT id FROM search_purge WHERE id NOT IN (SELECT id FROM search_purged) ORDER BY id "
      "LIMIT ?1",
      [&](Statement& s) { s.bind(1, static_cast<std::int64_t>(limit)); },
      [](const Statement& s) { return s.column_int(0); });
  if (!last) {
    return std::unexpected(last.error());
  }
  if (!last->empty()) {
    const std::int64_t upto = last->back();
    if (auto r = run(*db_,
                     "INSERT INTO search_fts (search_fts, rowid, " + column_list() +
                         ") SELECT 'delete', id, " + column_values("terms") +
                         " FROM search_purge WHERE id <= ?1 AND id <= (SELECT upto FROM "
                         "search_docs_indexed) AND id NOT IN (SELECT id FROM search_purged)",
                     [&](Statement& s) { s.bind(1, upto); });
        !r) {
      return std::unexpected(r.error());
    }
    if (auto r = run(*db_,
                     "INSERT INTO search_purged (id) SELECT id FROM search_purge WHERE id <= ?1 "
                     "AND id NOT IN (SELECT id FROM search_purged)",
                     [&](Statement& s) { s.bind(1, upto); });
        !r) {
      return std::unexpected(r.error());
    }
  }
  if (auto r = db_->exec("DELETE FROM search_purged WHERE id NOT IN (SELECT id FROM search_purge)");
      !r) {
    return std::unexpected(r.error());
  }
  return last->size();
}

Result<void> Index::move_search_text(std::int64_t from_mailbox, Uid from_uid,
                                     std::int64_t to_mailbox, Uid to_uid) {
  return run(*db_,
             "UPDATE search_docs SET mailbox_id = ?3, uid = ?4 WHERE mailbox_id = ?1 AND uid = ?2",
             [&](Statement& s) {
               s.bind(1, from_mailbox).bind(2, from_uid).bind(3, to_mailbox).bind(4, to_uid);
             });
}

namespace {

// Up to this many candidates are checked against their term records one
// lookup each; more, by one scan of the mailbox's records.
constexpr std::size_t kLookupRecords = 2000;

// The UIDs of the mailbox's documents (of `among` only, when given) whose
// term records may hold the query.
Result<std::vector<Uid>> filter_records(Database& db, std::int64_t mailbox_id,
                                        const RecordFilter& filter, const std::vector<Uid>* among,
                                        bool& uncertain) {
  std::vector<Uid> out;
  TermScratch scratch;
  if (among != nullptr && among->size() <= kLookupRecords) {
    for (Uid uid : *among) {
      auto record = collect<std::string>(
          db, "SELECT terms FROM search_docs WHERE mailbox_id = ?1 AND uid = ?2",
          [&](Statement& s) { s.bind(1, mailbox_id).bind(2, uid); },
          [](const Statement& s) { return std::string(s.column_blob(0)); });
      if (!record) {
        return std::unexpected(record.error());
      }
      if (!record->empty() && filter.may_match(record->front(), scratch, &uncertain)) {
        out.push_back(uid);
      }
    }
    return out;
  }
  auto r = each_row(
      db, "SELECT uid, terms FROM search_docs WHERE mailbox_id = ?1 ORDER BY uid",
      [&](Statement& s) { s.bind(1, mailbox_id); },
      [&](const Statement& s) {
        const auto uid = static_cast<Uid>(s.column_int(0));
        if ((among == nullptr || std::binary_search(among->begin(), among->end(), uid)) &&
            filter.may_match(s.column_blob(1), scratch, &uncertain)) {
          out.push_back(uid);
        }
        return true;
      });
  if (!r) {
    return std::unexpected(r.error());
  }
  return out;
}

// The mailbox's records the word index does not hold yet (fewer than
// Index::kMostWaitingDocs in all), as (UID, packed terms), by UID.
Result<std::vector<std::pair<Uid, std::string>>> waiting_records(Database& db,
                                                                 std::int64_t mailbox_id) {
  return collect<std::pair<Uid, std::string>>(
      db,
      "SELECT uid, terms FROM search_docs WHERE mailbox_id = ?1 AND id > (SELECT upto FROM "
      "search_docs_indexed) ORDER BY uid",
      [&](Statement& s) { s.bind(1, mailbox_id); },
      [](const Statement& s) {
        return std::pair(static_cast<Uid>(s.column_int(0)), std::string(s.column_blob(1)));
      });
}

// `a` and `b` (each ascending) as one ascending list.
std::vector<Uid> merged(const std::vector<Uid>& a, const std::vector<Uid>& b) {
  std::vector<Uid> out;
  out.reserve(a.size() + b.size());
  std::merge(a.begin(), a.end(), b.begin(), b.end(), std::back_inserter(out));
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

}  // namespace

Result<std::optional<TextCandidates>> Index::text_candidates(std::int64_t mailbox_id,
                                                             const TextQuery& query) {
  if (query.columns == 0 || (query.columns >> kColumnCount) != 0) {
    return std::optional<TextCandidates>();
  }
  for (const std::string& needle : query.needles) {
    if (needle.find('\0') != std::string::npos) {
      return std::optional<TextCandidates>();
    }
  }
  auto words = word_query(*db_, query);
  if (!words) {
    return std::unexpected(words.error());
  }
  TextCandidates out;
  out.exact = words->exact;
  // The records waiting for their batch answer for themselves: their terms
  // join the vocabulary and the word index with it. Those that may match,
  // by UID, and whether that is exact.
  auto waiting_matches = [&](bool& exact) -> Result<std::vector<Uid>> {
    auto waiting = waiting_records(*db_, mailbox_id);
    if (!waiting) {
      return std::unexpected(waiting.error());
    }
    const RecordFilter filter(query);
    TermScratch scratch;
    bool uncertain = false;
    std::vector<Uid> found;
    for (const auto& [uid, terms] : *waiting) {
      if (!filter.narrows() || filter.may_match(terms, scratch, &uncertain)) {
        found.push_back(uid);
      }
    }
    exact = found.empty() || (filter.narrows() && filter.exact() && !uncertain);
    return found;
  };
  if (words->empty) {
    // No indexed term holds a piece of a needle: only waiting records may.
    auto found = waiting_matches(out.exact);
    if (!found) {
      return std::unexpected(found.error());
    }
    out.uids = std::move(*found);
    return std::optional<TextCandidates>(std::move(out));
  }
  std::optional<std::vector<Uid>> hits;
  if (!words->match.empty()) {
    // The hits' document ids, ascending (every mailbox's, and deleted
    // records' not yet purged: the mapping below keeps the live ones of
    // this mailbox).
    auto ids = collect<std::int64_t>(
        *db_, "SELECT rowid FROM search_fts WHERE search_fts MATCH ?1 ORDER BY rowid",
        [&](Statement& s) { s.bind_text(1, words->match); },
        [](const Statement& s) { return s.column_int(0); });
    if (!ids) {
      return std::unexpected(ids.error());
    }
    auto uids = doc_uids_.uids(*db_, mailbox_id, *ids);
    if (!uids) {
      return std::unexpected(uids.error());
    }
    // In document id order, which is UID order unless messages were moved
    // or copied in.
    if (!std::is_sorted(uids->begin(), uids->end())) {
      std::sort(uids->begin(), uids->end());
    }
    if (words->exact) {
      bool exact = true;
      auto found = waiting_matches(exact);
      if (!found) {
        return std::unexpected(found.error());
      }
      if (!found->empty()) {
        out.exact = exact;
        *uids = merged(*uids, *found);
      }
      out.uids = std::move(*uids);
      return std::optional<TextCandidates>(std::move(out));
    }
    auto waiting = waiting_records(*db_, mailbox_id);
    if (!waiting) {
      return std::unexpected(waiting.error());
    }
    std::vector<Uid> all_waiting;
    all_waiting.reserve(waiting->size());
    for (const auto& entry : *waiting) {
      all_waiting.push_back(entry.first);
    }
    hits = merged(*uids, all_waiting);
  }
  // Not exact, or not narrowed at all (a fragment in too many terms): the
  // term records narrow further, and answer exactly a single run of token
  // bytes, so fewer message files (or none) are read to confirm.
  const RecordFilter filter(query);
  if (!filter.narrows()) {
    if (!hits) {
      return std::optional<TextCandidates>();
    }
    out.uids = std::move(*hits);
    return std::optional<TextCandidates>(std::move(out));
  }
  bool uncertain = false;
  auto kept = filter_records(*db_, mailbox_id, filter, hits ? &*hits : nullptr, uncertain);
  if (!kept) {
    return std::unexpected(kept.error());
  }
  out.uids = std::move(*kept);
  out.exact = filter.exact() && !uncertain;
  return std::optional<TextCandidates>(std::move(out));
}

Result<SearchIndexStats> Index::search_stats() {
  SearchIndexStats stats;
  auto counts = collect<std::pair<std::int64_t, std::int64_t>>(
      *db_, "SELECT count(*), coalesce(sum(size), 0) FROM messages", [](Statement&) {},
      [](const Statement& s) { return std::pair(s.column_int(0), s.column_int(1)); });
  if (!counts) {
    return std::unexpected(counts.error());
  }
  stats.messages = static_cast<std::uint64_t>(counts->front().first);
  stats.mail_bytes = static_cast<std::uint64_t>(counts->front().second);
  auto count = [&](std::string_view text) -> Result<std::uint64_t> {
    auto n = query_int(*db_, text);
    if (!n) {
      return std::unexpected(n.error());
    }
    return static_cast<std::uint64_t>(*n);
  };
  auto indexed = count("SELECT count(*) FROM search_docs");
  auto pending = count("SELECT count(*) FROM search_purge");
  auto text = count(
      "SELECT coalesce(sum(pgsize), 0) FROM dbstat WHERE name IN ('search_docs', "
      "'search_purge', 'search_docs_by_mailbox', 'sqlite_autoindex_search_docs_1')");
  auto words =
      count("SELECT coalesce(sum(pgsize), 0) FROM dbstat('search') WHERE name LIKE 'search_fts_%'");
  auto terms =
      count("SELECT coalesce(sum(pgsize), 0) FROM dbstat('search') WHERE name LIKE 'search_term%'");
  for (const auto* r : {&indexed, &pending, &text, &words, &terms}) {
    if (!*r) {
      return std::unexpected(r->error());
    }
  }
  stats.indexed = *indexed;
  stats.pending_purge = *pending;
  stats.records_bytes = *text;
  stats.words_bytes = *words;
  stats.terms_bytes = *terms;
  stats.index_bytes = *text + *words + *terms;
  return stats;
}

Result<bool> Index::search_fts_healthy() {
  auto exists =
      query_int(*db_,
                "SELECT count(*) FROM search.sqlite_schema WHERE name IN ('search_fts', "
                "'search_fts_docsize', 'search_terms', 'search_terms_fts', 'search_term_hashes', "
                "'search_terms_indexed', 'search_docs_indexed', 'search_term_hashes_recent', "
                "'search_term_hashes_cursor', 'search_purged')");
  if (!exists) {
    return std::unexpected(exists.error());
  }
  if (*exists != 10) {
    return false;
  }
  // The records the word index holds: all of them less the few waiting
  // (a range of ids). Counted that way, not as the ids up to `upto`: a
  // count over all rows reads the narrowest index of search_docs, a count
  // over a range of ids reads the table itself, texts and all (at 100,000
  // messages about 1.6 ms against 0.5 s, at every open of the store).
  auto same = query_int(*db_,
                        "SELECT (SELECT count(*) FROM search_fts_docsize) = "
                        "(SELECT count(*) FROM search_docs) - (SELECT count(*) FROM search_docs "
                        "WHERE id > (SELECT upto FROM search_docs_indexed)) + "
                        "(SELECT count(*) FROM search_purge WHERE id <= (SELECT upto FROM "
                        "search_docs_indexed) AND id NOT IN (SELECT id FROM search_purged))");
  if (!same) {
    // Unreadable: as good as missing.
    return false;
  }
  if (*same == 0) {
    return false;
  }
  // The first and the last indexed document must be found by a term of
  // their own record, and that term by a trigram of it in the vocabulary
  // (a waiting record's terms may wait for their batch too): this catches
  // an index whose pages were damaged or lost, which FTS5 may otherwise read
  // as "no match" without an error.
  for (std::string_view order : {"ASC", "DESC"}) {
    auto docs = collect<std::pair<std::int64_t, std::string>>(
        *db_,
        sql("SELECT id, terms FROM search_docs WHERE id <= (SELECT upto FROM search_docs_indexed) "
            "ORDER BY id ",
            order, " LIMIT 1"),
        [](Statement&) {},
        [](const Statement& s) {
          return std::pair(s.column_int(0), std::string(s.column_blob(1)));
        });
    if (!docs) {
      return false;
    }
    if (docs->empty()) {
      return true;
    }
    auto terms = unpack_terms(docs->front().second);
    if (!terms) {
      return false;
    }
    if (!terms->empty()) {
      const IndexedTerm& first_term = terms->front();
      int column = 0;
      while ((first_term.columns & (1u << column)) == 0) {
        ++column;
      }
      const std::string& first = first_term.text;
      auto found = query_int(
          // The rowid as a range, not "rowid = ?2", which FTS5 answers
          // by reading the term's doclist from its start (at 100,000
          // messages 0.8-3.3 ms for a common term against 0.05-0.16 ms).
          *db_,
          "SELECT count(*) FROM search_fts WHERE search_fts MATCH ?1 AND rowid >= ?2 AND "
          "rowid <= ?2",
          [&](Statement& s) {
            s.bind_text(1, sql("{ ", kColumnNames[column], " } : ") + fts5_string(first))
                .bind(2, docs->front().first);
          });
      if (!found || *found != 1) {
        return false;
      }
      if (characters(first).size() >= 3) {
        auto known = matching_terms(*db_, first, TermMatch::kSuffix);
        if (!known ||
            (*known && std::find((*known)->begin(), (*known)->end(), first) == (*known)->end())) {
          return false;
        }
      }
    }
  }
  return true;
}

Result<void> Index::recreate_search_fts(bool keep_texts) {
  forget_known_terms();
  doc_uids_.invalidate();
  if (!is_writer_) {
    // The new index holds only live records: nothing is left to purge.
    if (auto r = db_->exec(keep_texts ? "DELETE FROM search_purge"
                                      : "DELETE FROM search_docs; DELETE FROM search_purge");
        !r) {
      return r;
    }
    return with_writer([&](Index& w) { return w.recreate_search_fts(keep_texts); });
  }
  if (auto r = db_->exec(kDropFts); !r) {
    return r;
  }
  if (auto r = create_search_fts(); !r) {
    return r;
  }
  // The deleted records the store still keeps are none of the new index's
  // business (its transaction and the store's are apart).
  return db_->exec("INSERT INTO search_purged (id) SELECT id FROM search_purge");
}

Result<void> Index::index_waiting_docs(std::int64_t at_least) {
  if (is_writer_) {
    return run_batch(at_least);
  }
  // Asked of this connection first: the writer is opened only for work.
  auto work = batch_has_work(at_least);
  if (!work) {
    return std::unexpected(work.error());
  }
  if (!*work) {
    return {};
  }
  return with_writer([&](Index& w) { return w.run_batch(at_least); });
}

Result<void> Index::run_batch(std::int64_t at_least) {
  if (auto r = purge_here(kPurgeBatch); !r) {
    return std::unexpected(r.error());
  }
  auto waiting = waiting_docs(*db_);
  if (!waiting) {
    return std::unexpected(waiting.error());
  }
  if (*waiting < at_least) {
    return {};
  }
  if (auto r = add_waiting_terms(); !r) {
    return r;
  }
  return maildir::index_waiting_docs(*db_);
}

Result<std::int64_t> Index::waiting_count() { return waiting_docs(*db_); }

Result<bool> Index::waiting_docs_readable() {
  bool readable = true;
  TermScratch scratch;
  auto r = each_waiting_record(*db_, [&](std::string_view packed) {
    readable = for_each_term(packed, scratch, [](std::string_view, std::uint8_t) { return true; });
    return readable;
  });
  if (!r) {
    return std::unexpected(r.error());
  }
  return readable;
}

Result<void> Index::add_waiting_terms() {
  TermSet seen(64 * 1024);
  TermScratch scratch;
  auto r = each_waiting_record(*db_, [&](std::string_view packed) {
    // A damaged record adds the terms before the damage; the batch
    // then fails on it, and the next open rebuilds the word index.
    (void)for_each_term(packed, scratch, [&](std::string_view term, std::uint8_t) {
      seen.add(term, 0);
      return true;
    });
    return true;
  });
  if (!r) {
    return r;
  }
  return add_terms(seen.terms());
}

void Index::set_batch_at(std::size_t waiting) { batch_at_ = std::max<std::size_t>(1, waiting); }

void Index::index_waiting_docs_if_due() {
  auto waiting = waiting_docs(*db_);
  if (!waiting) {
    base::log(base::LogLevel::kWarn, "search_index_batch_failed",
              {{"reason", waiting.error().message}});
    return;
  }
  if (*waiting >= static_cast<std::int64_t>(batch_at_)) {
    if (auto r = run_batch_now(static_cast<std::int64_t>(batch_at_)); !r) {
      base::log(base::LogLevel::kWarn, "search_index_batch_failed",
                {{"reason", r.error().message}});
    }
  } else if (background_ && *waiting >= static_cast<std::int64_t>(kBackgroundBatch)) {
    request_batch();
  }
}

Result<void> Index::rebuild_search_fts() {
  if (!is_writer_) {
    if (auto r = db_->exec("DELETE FROM search_purge"); !r) {
      return r;
    }
    forget_known_terms();
    doc_uids_.invalidate();
    return with_writer([&](Index& w) { return w.rebuild_search_fts(); });
  }
  if (auto r = recreate_search_fts(/*keep_texts=*/true); !r) {
    return r;
  }
  if (auto r = db_->exec("INSERT INTO search_fts (rowid, " + column_list() + ") SELECT id, " +
                         column_values("terms") + " FROM search_docs");
      !r) {
    return r;
  }
  if (auto r = db_->exec(
          "UPDATE search_docs_indexed SET upto = (SELECT coalesce(max(id), 0) FROM search_docs)");
      !r) {
    return r;
  }
  return fill_terms(*db_);
}

Result<void> Index::split_cjk_terms() {
  // A few thousand records at a time: a large mailbox's records need not
  // all be in memory, and no row is updated under the statement reading.
  constexpr std::int64_t kRecordsPerStep = 2000;
  std::int64_t after = 0;
  for (;;) {
    std::vector<std::pair<std::int64_t, std::optional<std::string>>> changes;
    std::int64_t last = after;
    auto r = each_row(
        *db_, "SELECT id, terms FROM search_docs WHERE id > ?1 ORDER BY id LIMIT ?2",
        [&](Statement& s) { s.bind(1, after).bind(2, kRecordsPerStep); },
        [&](const Statement& s) {
          last = s.column_int(0);
          auto terms = unpack_terms(s.column_blob(1));
          if (!terms) {
            changes.emplace_back(last, std::nullopt);  // corrupt: the file decides
            return true;
          }
          std::map<std::string, std::uint8_t, std::less<>> split;
          bool changed = false;
          for (const IndexedTerm& term : *terms) {
            const bool may_hold_cjk = std::any_of(term.text.begin(), term.text.end(), [](char c) {
              return may_start_cjk(static_cast<unsigned char>(c));
            });
            if (may_hold_cjk && term.text.size() >= kMaxTokenBytes) {
              changes.emplace_back(last, std::nullopt);  // FTS5 cut the rest
              return true;
            }
            changed = changed || may_hold_cjk;
            for_each_run_term(term.text, [&](std::string_view t) {
              auto it = split.find(t);
              if (it == split.end()) {
                it = split.emplace(std::string(t), 0).first;
              }
              it->second |= term.columns;
            });
          }
          if (changed) {
            std::vector<IndexedTerm> out;
            out.reserve(split.size());
            for (auto& [text, columns] : split) {
              out.push_back(IndexedTerm{text, columns});
            }
            changes.emplace_back(last, pack_terms(out));
          }
          return true;
        });
    if (!r) {
      return r;
    }
    if (last == after) {
      return {};
    }
    after = last;
    for (const auto& [id, packed] : changes) {
      auto done = packed ? run(*db_, "UPDATE search_docs SET terms = ?2 WHERE id = ?1",
                               [&](Statement& s) { s.bind(1, id).bind_blob(2, *packed); })
                         : run(*db_, "DELETE FROM search_docs WHERE id = ?1",
                               [&](Statement& s) { s.bind(1, id); });
      if (!done) {
        return done;
      }
    }
  }
}

Result<void> Index::clear_search_index() { return recreate_search_fts(/*keep_texts=*/false); }

Result<std::vector<std::pair<std::int64_t, MessageRow>>> Index::messages_without_text(
    std::size_t limit) {
  // Every open asks, and nearly always nothing is missing. A term record
  // belongs to one message (UNIQUE, a foreign key that cascades), so equal
  // counts mean every message has one: two counts over narrow indexes
  // instead of a lookup per message (about 15 ms at 10,000 messages).
  auto complete = query_int(
      *db_, "SELECT (SELECT count(*) FROM messages) = (SELECT count(*) FROM search_docs)");
  if (!complete) {
    return std::unexpected(complete.error());
  }
  if (*complete != 0) {
    return std::vector<std::pair<std::int64_t, MessageRow>>();
  }
  return collect<std::pair<std::int64_t, MessageRow>>(
      *db_,
      "SELECT m.mailbox_id, m.uid, m.base_name, m.file_name, m.size FROM messages m "
      "WHERE NOT EXISTS (SELECT 1 FROM search_docs d WHERE d.mailbox_id = m.mailbox_id "
      "AND d.uid = m.uid) LIMIT ?1",
      [&](Statement& s) { s.bind(1, static_cast<std::int64_t>(limit)); },
      [](const Statement& s) {
        MessageRow row;
        row.meta.uid = static_cast<Uid>(s.column_int(1));
        row.base_name = std::string(s.column_text(2));
        row.file_name = std::string(s.column_text(3));
        row.meta.size = static_cast<std::uint64_t>(s.column_int(4));
        return std::pair(s.column_int(0), std::move(row));
      });
}

// ---- The search writer and its thread ----

Result<std::unique_ptr<Index>> Index::open_search_writer(const std::filesystem::path& path,
                                                         const std::string& pragmas) {
  const std::filesystem::path file = search_path(path);
  auto db = Database::open(file);
  if (!db) {
    return std::unexpected(db.error());
  }
  if (auto r = (*db)->exec(pragmas); !r) {
    return std::unexpected(r.error());
  }
  if (auto r = (*db)->exec("ATTACH " + read_only_uri(path) + " AS docs"); !r) {
    return std::unexpected(r.error());
  }
  std::unique_ptr<Index> writer(new Index(std::move(*db)));
  writer->is_writer_ = true;
  if (auto r = register_search_functions(*writer->db_); !r) {
    return std::unexpected(r.error());
  }
  writer->db_->set_rollback_hook(
      [](void* self) { static_cast<Index*>(self)->forget_known_terms(); }, writer.get());
  if (auto r = in_transaction(*writer, [&] { return writer->create_search_fts(); }); !r) {
    return std::unexpected(r.error());
  }
  return writer;
}

Index::Index(std::unique_ptr<Database> db) : db_(std::move(db)) {}

Index::~Index() {
  stop_worker();
  if (writer_ != nullptr) {
    // Each file's last connection checkpoints its WAL and removes it, which
    // a read-only one cannot: the writer closes while the store's file is
    // still open here, after this connection has let go of the writer's.
    (void)db_->exec("DETACH search");
    writer_.reset();
  }
}

Result<bool> Index::batch_due() {
  return batch_has_work(static_cast<std::int64_t>(background_ ? kBackgroundBatch : kWaitingDocs));
}

Result<bool> Index::batch_has_work(std::int64_t at_least) {
  auto waiting = waiting_docs(*db_);
  if (!waiting) {
    return std::unexpected(waiting.error());
  }
  if (*waiting >= at_least) {
    return true;
  }
  return unpurged_exist();
}

Result<bool> Index::unpurged_exist() {
  auto unpurged = query_int(*db_,
                            "SELECT EXISTS (SELECT 1 FROM search_purge WHERE id NOT IN "
                            "(SELECT id FROM search_purged))");
  if (!unpurged) {
    return std::unexpected(unpurged.error());
  }
  return *unpurged != 0;
}

Result<void> Index::run_batch_now(std::int64_t at_least) {
  if (!background_) {
    return index_waiting_docs(at_least);
  }
  auto w = writer();
  if (!w) {
    return std::unexpected(w.error());
  }
  std::unique_lock lock(writer_mutex_, std::try_to_lock);
  if (!lock.owns_lock()) {
    request_batch();  // its thread is at it: one more after
    return {};
  }
  return in_transaction(**w, [&] { return (*w)->run_batch(at_least); });
}

void Index::request_batch() {
  if (is_writer_) {
    return;
  }
  if (auto w = writer(); !w) {
    base::log(base::LogLevel::kWarn, "search_index_batch_failed", {{"reason", w.error().message}});
    return;
  }
  if (worker_ == nullptr) {
    worker_ = std::make_unique<Worker>();
  }
  Worker& w = *worker_;
  std::lock_guard lock(w.mutex);
  if (!w.thread.joinable()) {
    w.thread = std::thread([this, &w] {
      // At idle priority: the batches take the CPU time the sessions leave
      // (docs/benchmarks.md, "The batch on a thread of its own, at idle
      // priority"). A change never waits for this thread (run_batch_now),
      // so nothing needs it back at normal priority, which an unprivileged
      // process could not give it (sched(7)).
      sched_param idle{};
      (void)sched_setscheduler(0, SCHED_IDLE, &idle);
      std::unique_lock lock(w.mutex);
      for (;;) {
        w.wake.wait(lock, [&] { return w.stop || w.pending; });
        if (w.stop) {
          return;
        }
        w.pending = false;
        w.running = true;
        lock.unlock();
        if (auto r = with_writer([](Index& writer) {
              return writer.run_batch(static_cast<std::int64_t>(kWaitingDocs));
            });
            !r) {
          base::log(base::LogLevel::kWarn, "search_index_batch_failed",
                    {{"reason", r.error().message}});
        }
        lock.lock();
        w.running = false;
        if (!w.pending) {
          w.idle.notify_all();
        }
      }
    });
  }
  w.pending = true;
  w.wake.notify_one();
}

void Index::wait_for_batches() {
  if (worker_ == nullptr) {
    return;
  }
  std::unique_lock lock(worker_->mutex);
  worker_->idle.wait(lock, [&] { return !worker_->pending && !worker_->running; });
}

void Index::stop_worker() {
  if (worker_ == nullptr) {
    return;
  }
  {
    std::lock_guard lock(worker_->mutex);
    worker_->stop = true;
  }
  worker_->wake.notify_one();
  if (worker_->thread.joinable()) {
    worker_->thread.join();
  }
}

}  // namespace peregrine::store::maildir
