// The full-text index of the Maildir backend's SQLite index: each message's
// case-folded search text, compressed, in search_docs, and a contentless
// FTS5 table with the trigram tokenizer over it (search_fts). A trigger
// indexes every inserted text in the inserting transaction. A deleted text
// (expunge, mailbox deletion) is moved by another trigger to search_purge in
// the deleting transaction and unindexed later, in bounded batches
// (purge_search_fts): until then its trigrams may still match, but every
// candidate is joined to a live search_docs row, and a document id is never
// given again while its trigrams are in the index. The format is in
// docs/formats/maildir-store.md, "Full-text index".

#include <sqlite3.h>

#include <algorithm>
#include <cstring>

#include "store/maildir/index.h"
#include "store/maildir/sql_util.h"

namespace peregrine::store::maildir {

using base::Result;

namespace {

// A needle gives at most this many trigrams to the query: enough to make
// candidates rare, few enough to keep the query cheap. Candidates are
// confirmed anyway.
constexpr std::size_t kMaxQueryTrigrams = 12;

// Column n of the FTS table from an unpacked text.
std::string fts_column(const mime::SearchText& t, int n) {
  switch (n) {
    case 0: {
      std::string out;
      out.reserve(t.from.size() + t.to.size() + t.cc.size() + t.bcc.size() + t.subject.size() + 4);
      for (const std::string* s : {&t.from, &t.to, &t.cc, &t.bcc, &t.subject}) {
        out += *s;
        out += '\n';
      }
      return out;
    }
    case 1:
      return t.headers;
    default:
      return t.body;
  }
}

// One unpacked text, kept between the calls a trigger makes for its three
// columns of the same row, so the text is decompressed once per row.
struct UnpackCache {
  std::string packed;
  mime::SearchText text;
};
thread_local UnpackCache unpack_cache;

void search_column_fn(sqlite3_context* ctx, int, sqlite3_value** argv) {
  const void* data = sqlite3_value_blob(argv[0]);
  int size = sqlite3_value_bytes(argv[0]);
  int column = sqlite3_value_int(argv[1]);
  std::string_view packed(static_cast<const char*>(data), data == nullptr ? 0 : size);
  UnpackCache& cache = unpack_cache;
  if (cache.packed != packed) {
    auto bytes = unpack_search_text(packed);
    auto text = bytes ? mime::deserialize_search_text(*bytes) : std::nullopt;
    if (!text) {
      sqlite3_result_error(ctx, "corrupt search text", -1);
      return;
    }
    cache.packed.assign(packed);
    cache.text = std::move(*text);
  }
  std::string out = fts_column(cache.text, column);
  sqlite3_result_text64(ctx, out.data(), out.size(), SQLITE_TRANSIENT, SQLITE_UTF8);
}

constexpr std::string_view kCreateFts = R"sql(
CREATE VIRTUAL TABLE IF NOT EXISTS search_fts USING fts5(
  addr, hdr, body, content='', detail=column, tokenize='trigram case_sensitive 1');
CREATE TRIGGER IF NOT EXISTS search_docs_insert AFTER INSERT ON search_docs BEGIN
  INSERT INTO search_fts (rowid, addr, hdr, body) VALUES (new.id,
    peregrine_search_column(new.text, 0), peregrine_search_column(new.text, 1),
    peregrine_search_column(new.text, 2));
END;
CREATE TRIGGER IF NOT EXISTS search_docs_delete AFTER DELETE ON search_docs BEGIN
  INSERT INTO search_purge (id, text) VALUES (old.id, old.text);
END;
)sql";

constexpr std::string_view kDropFts = R"sql(
DROP TRIGGER IF EXISTS search_docs_insert;
DROP TRIGGER IF EXISTS search_docs_delete;
DROP TABLE IF EXISTS search_fts;
)sql";

// The UTF-8 characters of `s` (each a view of its bytes).
std::vector<std::string_view> characters(std::string_view s) {
  std::vector<std::string_view> out;
  std::size_t i = 0;
  while (i < s.size()) {
    auto c = static_cast<unsigned char>(s[i]);
    std::size_t n = c < 0x80 ? 1 : c < 0xE0 ? 2 : c < 0xF0 ? 3 : 4;
    n = std::min(n, s.size() - i);
    out.push_back(s.substr(i, n));
    i += n;
  }
  return out;
}

// The FTS5 query that finds the rows holding every trigram of every needle
// (each trigram a quoted one-token string), or nullopt when no needle is as
// long as a trigram.
std::optional<std::string> trigram_query(const TextQuery& query) {
  std::vector<std::string> trigrams;
  for (const std::string& needle : query.needles) {
    if (needle.find('\0') != std::string::npos) {
      return std::nullopt;
    }
    auto chars = characters(needle);
    if (chars.size() < 3) {
      continue;  // no trigram: it cannot narrow, the others still do
    }
    std::vector<std::string> all;
    for (std::size_t i = 0; i + 3 <= chars.size(); ++i) {
      std::string t;
      for (std::size_t k = 0; k < 3; ++k) {
        t += chars[i + k];
      }
      all.push_back(std::move(t));
    }
    // Spread the chosen trigrams over the needle, first and last included.
    std::size_t take = std::min(all.size(), kMaxQueryTrigrams);
    for (std::size_t k = 0; k < take; ++k) {
      std::size_t at = take == 1 ? 0 : k * (all.size() - 1) / (take - 1);
      trigrams.push_back(all[at]);
    }
  }
  std::sort(trigrams.begin(), trigrams.end());
  trigrams.erase(std::unique(trigrams.begin(), trigrams.end()), trigrams.end());
  if (trigrams.empty()) {
    return std::nullopt;
  }
  std::string out = "{";
  if (query.columns & kTextAddresses) {
    out += " addr";
  }
  if (query.columns & kTextHeaders) {
    out += " hdr";
  }
  if (query.columns & kTextBody) {
    out += " body";
  }
  out += " } : (";
  for (std::size_t i = 0; i < trigrams.size(); ++i) {
    if (i > 0) {
      out += " AND ";
    }
    out += '"';
    for (char c : trigrams[i]) {
      out += c;
      if (c == '"') {
        out += '"';
      }
    }
    out += '"';
  }
  out += ")";
  return out;
}

}  // namespace

Result<void> register_search_functions(Database& db) {
  return db.create_function("peregrine_search_column", 2, search_column_fn);
}

Result<void> Index::create_search_fts() { return db_->exec(kCreateFts); }

namespace {

// The id of a new search_docs row: above every id still in the trigram
// index, pending purges included, so that no new text shares a rowid with
// an old one's trigrams.
constexpr std::string_view kNextDocId =
    "(SELECT max((SELECT coalesce(max(id), 0) FROM search_docs), "
    "(SELECT coalesce(max(id), 0) FROM search_purge)) + 1)";

// Deletes the text of (mailbox, uid) through the delete trigger (a REPLACE
// would not fire it), so its trigrams are purged.
Result<void> delete_search_text(Database& db, std::int64_t mailbox_id, Uid uid) {
  return run(db, "DELETE FROM search_docs WHERE mailbox_id = ?1 AND uid = ?2",
             [&](Statement& s) { s.bind(1, mailbox_id).bind(2, uid); });
}

}  // namespace

Result<void> Index::insert_search_text(std::int64_t mailbox_id, Uid uid, std::string_view packed) {
  if (auto r = delete_search_text(*db_, mailbox_id, uid); !r) {
    return r;
  }
  return run(*db_,
             sql("INSERT INTO search_docs (id, mailbox_id, uid, text) VALUES (", kNextDocId,
                 ", ?1, ?2, ?3)"),
             [&](Statement& s) { s.bind(1, mailbox_id).bind(2, uid).bind_blob(3, packed); });
}

Result<void> Index::copy_search_text(std::int64_t from_mailbox, Uid from_uid,
                                     std::int64_t to_mailbox, Uid to_uid) {
  if (auto r = delete_search_text(*db_, to_mailbox, to_uid); !r) {
    return r;
  }
  return run(*db_,
             sql("INSERT INTO search_docs (id, mailbox_id, uid, text) SELECT ", kNextDocId,
                 ", ?3, ?4, text FROM search_docs WHERE mailbox_id = ?1 AND uid = ?2"),
             [&](Statement& s) {
               s.bind(1, from_mailbox).bind(2, from_uid).bind(3, to_mailbox).bind(4, to_uid);
             });
}

Result<std::size_t> Index::purge_search_fts(std::size_t limit) {
  auto ids = collect<std::int64_t>(
      *db_, "SELECT id FROM search_purge ORDER BY id LIMIT ?1",
      [&](Statement& s) { s.bind(1, static_cast<std::int64_t>(limit)); },
      [](const Statement& s) { return s.column_int(0); });
  if (!ids) {
    return std::unexpected(ids.error());
  }
  if (ids->empty()) {
    return std::size_t{0};
  }
  const std::int64_t last = ids->back();
  if (auto r = run(*db_,
                   "INSERT INTO search_fts (search_fts, rowid, addr, hdr, body) SELECT 'delete', "
                   "id, peregrine_search_column(text, 0), peregrine_search_column(text, 1), "
                   "peregrine_search_column(text, 2) FROM search_purge WHERE id <= ?1",
                   [&](Statement& s) { s.bind(1, last); });
      !r) {
    return std::unexpected(r.error());
  }
  if (auto r = run(*db_, "DELETE FROM search_purge WHERE id <= ?1",
                   [&](Statement& s) { s.bind(1, last); });
      !r) {
    return std::unexpected(r.error());
  }
  return ids->size();
}

Result<void> Index::move_search_text(std::int64_t from_mailbox, Uid from_uid,
                                     std::int64_t to_mailbox, Uid to_uid) {
  return run(*db_,
             "UPDATE search_docs SET mailbox_id = ?3, uid = ?4 WHERE mailbox_id = ?1 AND uid = ?2",
             [&](Statement& s) {
               s.bind(1, from_mailbox).bind(2, from_uid).bind(3, to_mailbox).bind(4, to_uid);
             });
}

Result<std::optional<std::vector<Uid>>> Index::text_candidates(std::int64_t mailbox_id,
                                                               const TextQuery& query) {
  auto match = trigram_query(query);
  if (!match || query.columns == 0) {
    return std::optional<std::vector<Uid>>();
  }
  auto uids = collect<Uid>(
      *db_,
      // CROSS JOIN keeps this order: one full-text query, then a lookup per
      // hit (the other order would run the full-text query once per row).
      "SELECT d.uid FROM search_fts CROSS JOIN search_docs d ON d.id = search_fts.rowid "
      "WHERE search_fts MATCH ?1 AND d.mailbox_id = ?2",
      [&](Statement& s) { s.bind_text(1, *match).bind(2, mailbox_id); },
      [](const Statement& s) { return static_cast<Uid>(s.column_int(0)); });
  if (!uids) {
    return std::unexpected(uids.error());
  }
  std::sort(uids->begin(), uids->end());
  return std::optional<std::vector<Uid>>(std::move(*uids));
}

Result<std::vector<SearchTextEntry>> Index::search_texts(std::int64_t mailbox_id,
                                                         const UidSet& uids) {
  std::vector<SearchTextEntry> out;
  for (const UidRange& range : uids.ranges()) {
    auto s = db_->prepare(
        "SELECT uid, text FROM search_docs WHERE mailbox_id = ?1 AND uid BETWEEN ?2 AND ?3 "
        "ORDER BY uid");
    if (!s) {
      return std::unexpected(s.error());
    }
    s->bind(1, mailbox_id).bind(2, range.first).bind(3, range.last);
    for (;;) {
      auto row = s->step();
      if (!row) {
        return std::unexpected(row.error());
      }
      if (!*row) {
        break;
      }
      auto text = unpack_search_text(s->column_blob(1));
      if (!text) {
        return base::fail(base::MailError::kInternal, "index: corrupt search text");
      }
      out.push_back(SearchTextEntry{static_cast<Uid>(s->column_int(0)), std::move(*text)});
    }
  }
  return out;
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
  auto indexed = collect<std::int64_t>(
      *db_, "SELECT count(*) FROM search_docs", [](Statement&) {},
      [](const Statement& s) { return s.column_int(0); });
  if (!indexed) {
    return std::unexpected(indexed.error());
  }
  stats.indexed = static_cast<std::uint64_t>(indexed->front());
  auto pending = collect<std::int64_t>(
      *db_, "SELECT count(*) FROM search_purge", [](Statement&) {},
      [](const Statement& s) { return s.column_int(0); });
  if (!pending) {
    return std::unexpected(pending.error());
  }
  stats.pending_purge = static_cast<std::uint64_t>(pending->front());
  auto bytes = collect<std::int64_t>(
      *db_,
      "SELECT coalesce(sum(pgsize), 0) FROM dbstat WHERE name LIKE 'search_%' "
      "OR name = 'sqlite_autoindex_search_docs_1'",
      [](Statement&) {}, [](const Statement& s) { return s.column_int(0); });
  if (!bytes) {
    return std::unexpected(bytes.error());
  }
  stats.index_bytes = static_cast<std::uint64_t>(bytes->front());
  return stats;
}

Result<bool> Index::search_fts_healthy() {
  auto exists = collect<std::int64_t>(
      *db_, "SELECT count(*) FROM sqlite_schema WHERE name IN ('search_fts', 'search_fts_docsize')",
      [](Statement&) {}, [](const Statement& s) { return s.column_int(0); });
  if (!exists) {
    return std::unexpected(exists.error());
  }
  if (exists->front() != 2) {
    return false;
  }
  auto same = collect<std::int64_t>(
      *db_,
      "SELECT (SELECT count(*) FROM search_fts_docsize) = "
      "(SELECT count(*) FROM search_docs) + (SELECT count(*) FROM search_purge)",
      [](Statement&) {}, [](const Statement& s) { return s.column_int(0); });
  if (!same) {
    // Unreadable: as good as missing.
    return false;
  }
  if (same->front() == 0) {
    return false;
  }
  // The first and the last document must be found by a trigram of their
  // own text: this catches an index whose pages were damaged or lost, which
  // FTS5 may otherwise read as "no match" without an error.
  for (std::string_view order : {"ASC", "DESC"}) {
    auto docs = collect<std::pair<std::int64_t, std::string>>(
        *db_, sql("SELECT id, text FROM search_docs ORDER BY id ", order, " LIMIT 1"),
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
    auto bytes = unpack_search_text(docs->front().second);
    auto text = bytes ? mime::deserialize_search_text(*bytes) : std::nullopt;
    if (!text) {
      return false;
    }
    for (int column = 0; column < 3; ++column) {
      std::string value = fts_column(*text, column);
      auto chars = characters(value);
      if (chars.size() < 3) {
        continue;
      }
      TextQuery probe;
      probe.columns = static_cast<TextColumns>(1u << column);
      probe.needles = {std::string(chars[0]) + std::string(chars[1]) + std::string(chars[2])};
      auto match = trigram_query(probe);
      if (!match) {
        continue;
      }
      auto found = collect<std::int64_t>(
          *db_, "SELECT count(*) FROM search_fts WHERE search_fts MATCH ?1 AND rowid = ?2",
          [&](Statement& s) { s.bind_text(1, *match).bind(2, docs->front().first); },
          [](const Statement& s) { return s.column_int(0); });
      if (!found || found->front() != 1) {
        return false;
      }
      break;
    }
  }
  return true;
}

Result<void> Index::rebuild_search_fts() {
  if (auto r = db_->exec(kDropFts); !r) {
    return r;
  }
  // The new index holds only live texts: nothing is left to purge.
  if (auto r = db_->exec("DELETE FROM search_purge"); !r) {
    return r;
  }
  if (auto r = create_search_fts(); !r) {
    return r;
  }
  return db_->exec(
      "INSERT INTO search_fts (rowid, addr, hdr, body) SELECT id, "
      "peregrine_search_column(text, 0), peregrine_search_column(text, 1), "
      "peregrine_search_column(text, 2) FROM search_docs");
}

Result<void> Index::clear_search_index() {
  if (auto r = db_->exec(kDropFts); !r) {
    return r;
  }
  if (auto r = db_->exec("DELETE FROM search_docs; DELETE FROM search_purge"); !r) {
    return r;
  }
  return create_search_fts();
}

Result<std::vector<std::pair<std::int64_t, MessageRow>>> Index::messages_without_text(
    std::size_t limit) {
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

}  // namespace peregrine::store::maildir
