#include "store/maildir/index.h"

#include <algorithm>
#include <cstring>
#include <utility>

#include "base/log.h"
#include "store/maildir/sql_util.h"

namespace peregrine::store::maildir {
namespace {

using base::Result;

// Migrations: kMigrations[i] takes the schema from version i to i + 1. A new
// version appends a script here; released scripts never change.
constexpr std::string_view kMigrations[] = {
    // 0 -> 1
    R"sql(
CREATE TABLE meta (
  key TEXT PRIMARY KEY,
  value INTEGER NOT NULL
) WITHOUT ROWID;

CREATE TABLE mailboxes (
  id INTEGER PRIMARY KEY,
  name TEXT NOT NULL UNIQUE,
  uidvalidity INTEGER NOT NULL,
  uidnext INTEGER NOT NULL,
  highest_modseq INTEGER NOT NULL,
  first_unclaimed_uid INTEGER NOT NULL,
  special_use TEXT NOT NULL DEFAULT 'none',
  cur_mtime_ns INTEGER NOT NULL DEFAULT 0,
  new_mtime_ns INTEGER NOT NULL DEFAULT 0
);

CREATE TABLE subscriptions (
  name TEXT PRIMARY KEY
) WITHOUT ROWID;

CREATE TABLE messages (
  mailbox_id INTEGER NOT NULL REFERENCES mailboxes(id) ON DELETE CASCADE,
  uid INTEGER NOT NULL,
  base_name TEXT NOT NULL,
  file_name TEXT NOT NULL,
  flags INTEGER NOT NULL,
  keywords TEXT NOT NULL,
  modseq INTEGER NOT NULL,
  internal_date INTEGER NOT NULL,
  tz_minutes INTEGER NOT NULL,
  size INTEGER NOT NULL,
  PRIMARY KEY (mailbox_id, uid)
) WITHOUT ROWID;
CREATE UNIQUE INDEX messages_by_base_name ON messages(mailbox_id, base_name);
CREATE INDEX messages_by_modseq ON messages(mailbox_id, modseq);

CREATE TABLE cache_records (
  mailbox_id INTEGER NOT NULL,
  uid INTEGER NOT NULL,
  record BLOB NOT NULL,
  PRIMARY KEY (mailbox_id, uid),
  FOREIGN KEY (mailbox_id, uid) REFERENCES messages(mailbox_id, uid)
    ON DELETE CASCADE ON UPDATE CASCADE
);

CREATE TABLE expunged (
  mailbox_id INTEGER NOT NULL REFERENCES mailboxes(id) ON DELETE CASCADE,
  uid INTEGER NOT NULL,
  modseq INTEGER NOT NULL,
  PRIMARY KEY (mailbox_id, uid)
) WITHOUT ROWID;
CREATE INDEX expunged_by_modseq ON expunged(mailbox_id, modseq);

CREATE TABLE pending_renames (
  id INTEGER PRIMARY KEY,
  from_path TEXT NOT NULL,
  to_path TEXT NOT NULL
);
)sql",
    // 1 -> 2: the full-text index (docs/formats/maildir-store.md, "Full-text
    // index"). search_docs keeps each message's folded search text,
    // compressed; search_fts indexes its trigrams without a copy of the text
    // (contentless), kept in step by the triggers, which unpack the text
    // with peregrine_search_column (registered by Index::open).
    R"sql(
CREATE TABLE search_docs (
  id INTEGER PRIMARY KEY,
  mailbox_id INTEGER NOT NULL,
  uid INTEGER NOT NULL,
  text BLOB NOT NULL,
  UNIQUE (mailbox_id, uid),
  FOREIGN KEY (mailbox_id, uid) REFERENCES messages(mailbox_id, uid)
    ON DELETE CASCADE ON UPDATE CASCADE
);
)sql",
    // 2 -> 3: deferred removal from the trigram index. Deleting a text no
    // longer unindexes it in the deleting transaction: the delete trigger
    // (search_index.cc) moves the text here, and Index::purge_search_fts
    // unindexes it later, in bounded batches.
    R"sql(
CREATE TABLE search_purge (
  id INTEGER PRIMARY KEY,
  text BLOB NOT NULL
);
DROP TRIGGER IF EXISTS search_docs_delete;
)sql",
    // 3 -> 4: the word index, and texts folded anew. The stored texts were
    // folded by full case folding and lacked the parts' MIME headers; the
    // new ones are folded by i;unicode-casemap (RFC 5051) and hold them. Old
    // texts cannot be refolded (full folding lost what it merged), so they
    // and the trigram index go. The triggers go first, so the delete moves
    // nothing to search_purge. Index::create_search_fts then creates the
    // word index (search_fts, new columns), the vocabulary and their
    // triggers, and the open indexes every message again from its file
    // (MaildirUserStore::index_missing_texts).
    R"sql(
DROP TRIGGER IF EXISTS search_docs_insert;
DROP TRIGGER IF EXISTS search_docs_delete;
DROP TABLE IF EXISTS search_fts;
DELETE FROM search_purge;
DELETE FROM search_docs;
)sql",
    // 4 -> 5: term records instead of texts. search_docs keeps each
    // message's distinct terms with their columns (term_record.h), not its
    // text; answers the index cannot give exactly are confirmed from the
    // message files. The word index and the vocabulary go with the texts
    // (each table takes its triggers along); Index::create_search_fts
    // creates them again, empty, and the open indexes every message again
    // from its file (MaildirUserStore::index_missing_texts).
    R"sql(
DROP TABLE IF EXISTS search_fts;
DROP TABLE IF EXISTS search_terms_fts;
DROP TABLE IF EXISTS search_terms;
DROP TABLE IF EXISTS search_term_hashes;
DROP TABLE search_docs;
DROP TABLE search_purge;
CREATE TABLE search_docs (
  id INTEGER PRIMARY KEY,
  mailbox_id INTEGER NOT NULL,
  uid INTEGER NOT NULL,
  terms BLOB NOT NULL,
  UNIQUE (mailbox_id, uid),
  FOREIGN KEY (mailbox_id, uid) REFERENCES messages(mailbox_id, uid)
    ON DELETE CASCADE ON UPDATE CASCADE
);
CREATE TABLE search_purge (
  id INTEGER PRIMARY KEY,
  terms BLOB NOT NULL
);
)sql",
    // 5 -> 6: new vocabulary terms are indexed by trigram a batch at a time
    // instead of each by the insert trigger. The trigger goes;
    // Index::create_search_fts creates the new one (hashes only) and
    // search_terms_indexed, which records every present term as indexed.
    R"sql(
DROP TRIGGER IF EXISTS search_terms_insert;
)sql",
    // 6 -> 7: records are indexed in the word index a batch at a time
    // instead of each by the insert trigger. The triggers go;
    // Index::create_search_fts creates the delete trigger anew (it moves
    // only indexed records to search_purge) and search_docs_indexed, which
    // records every present record as indexed.
    R"sql(
DROP TRIGGER IF EXISTS search_docs_insert;
DROP TRIGGER IF EXISTS search_docs_delete;
)sql",
    // 7 -> 8: files settled after the reply. An append whose file is not
    // yet fsynced keeps the message's bytes here, committed with its row,
    // until its file and cur/ are (MaildirUserStore::settle_files); the
    // open writes back the file of every row left here by a crash. The
    // rows follow their message (a cascade), and go with it.
    R"sql(
CREATE TABLE IF NOT EXISTS unsettled_files (
  mailbox_id INTEGER NOT NULL,
  uid INTEGER NOT NULL,
  bytes BLOB NOT NULL,
  PRIMARY KEY (mailbox_id, uid),
  FOREIGN KEY (mailbox_id, uid) REFERENCES messages(mailbox_id, uid)
    ON DELETE CASCADE ON UPDATE CASCADE
);
)sql",
    // 8 -> 9: new terms' hashes go to search_term_hashes_recent, moved
    // into search_term_hashes a slice of the hash range at a time. The
    // trigger goes; Index::create_search_fts creates the new one, the
    // small table (empty: the old trigger put every hash in the large
    // one) and search_term_hashes_cursor.
    R"sql(
DROP TRIGGER IF EXISTS search_terms_insert;
)sql",
    // 9 -> 10: expunged UIDs are bounded (Index::kKeptExpunges); the
    // highest MODSEQ of an expunge a mailbox forgot.
    R"sql(
ALTER TABLE mailboxes ADD COLUMN expunged_floor INTEGER NOT NULL DEFAULT 0;
)sql",
    // 10 -> 11: CJK text is indexed by bigrams (text_tokens.h). Nothing in
    // SQL: Index::migrate cuts the records' terms anew (split_cjk_terms)
    // and rebuilds the word index and the vocabulary from them.
    "",
    // 11 -> 12: Index::add_terms puts new terms' hashes in
    // search_term_hashes_recent with one statement a batch; the insert
    // trigger that did it a term at a time goes.
    R"sql(
DROP TRIGGER IF EXISTS search_terms_insert;
)sql",
    // 12 -> 13: the word index and the vocabulary move to a file of their
    // own (search.sqlite), written by a connection of its own, so that their
    // batches no longer hold this file's write lock. Dropped here; the open
    // builds them there from the term records, which stay. Every deleted
    // record now goes to search_purge (Index::create_search_fts: the new
    // trigger).
    R"sql(
DROP TRIGGER IF EXISTS search_docs_insert;
DROP TRIGGER IF EXISTS search_docs_delete;
DROP TRIGGER IF EXISTS search_terms_insert;
DROP TABLE IF EXISTS search_docs_indexed;
DROP TABLE IF EXISTS search_fts;
DROP TABLE IF EXISTS search_terms_fts;
DROP TABLE IF EXISTS search_terms;
DROP TABLE IF EXISTS search_term_hashes;
DROP TABLE IF EXISTS search_term_hashes_recent;
DROP TABLE IF EXISTS search_term_hashes_cursor;
DROP TABLE IF EXISTS search_terms_indexed;
DELETE FROM search_purge;
)sql",
};
static_assert(std::size(kMigrations) == kIndexSchemaVersion);

constexpr std::string_view kMailboxColumns =
    "id, name, uidvalidity, uidnext, highest_modseq, first_unclaimed_uid, special_use, "
    "cur_mtime_ns, new_mtime_ns";

MailboxRow read_mailbox(const Statement& s) {
  MailboxRow row;
  row.id = s.column_int(0);
  row.name = std::string(s.column_text(1));
  row.uidvalidity = static_cast<std::uint32_t>(s.column_int(2));
  row.uidnext = static_cast<Uid>(s.column_int(3));
  row.highest_modseq = static_cast<ModSeq>(s.column_int(4));
  row.first_unclaimed_uid = static_cast<Uid>(s.column_int(5));
  row.special_use = special_use_from_string(s.column_text(6)).value_or(SpecialUse::kNone);
  row.cur_mtime_ns = s.column_int(7);
  row.new_mtime_ns = s.column_int(8);
  return row;
}

constexpr std::string_view kMessageColumns =
    "uid, modseq, flags, keywords, internal_date, tz_minutes, size, base_name, file_name";

MessageRow read_message(const Statement& s) {
  MessageRow row;
  row.meta.uid = static_cast<Uid>(s.column_int(0));
  row.meta.modseq = static_cast<ModSeq>(s.column_int(1));
  row.meta.flags = static_cast<SystemFlags>(s.column_int(2) & kAllSystemFlags);
  row.meta.keywords = split_keywords(s.column_text(3));
  row.meta.internal_date.seconds = s.column_int(4);
  row.meta.internal_date.tz_minutes = static_cast<std::int16_t>(s.column_int(5));
  row.meta.size = static_cast<std::uint64_t>(s.column_int(6));
  row.base_name = std::string(s.column_text(7));
  row.file_name = std::string(s.column_text(8));
  return row;
}

}  // namespace

std::string join_keywords(const std::vector<std::string>& keywords) {
  std::string out;
  for (const std::string& k : keywords) {
    if (!out.empty()) {
      out += ' ';
    }
    out += k;
  }
  return out;
}

std::vector<std::string> split_keywords(std::string_view text) {
  std::vector<std::string> out;
  while (!text.empty()) {
    std::size_t space = text.find(' ');
    std::string_view k = text.substr(0, space);
    if (!k.empty()) {
      out.emplace_back(k);
    }
    if (space == std::string_view::npos) {
      break;
    }
    text.remove_prefix(space + 1);
  }
  return out;
}

Result<std::unique_ptr<Index>> Index::open(const std::filesystem::path& path, int busy_timeout_ms) {
  auto db = Database::open(path);
  if (!db) {
    return std::unexpected(db.error());
  }
  // synchronous=FULL: in WAL mode NORMAL may lose the last commits on power
  // loss, and a commit is what lets the server answer OK, so every commit
  // must be on disk when it returns.
  // wal_autocheckpoint: a checkpoint every 4,000 WAL pages (16 MB), not
  // SQLite's 1,000. An APPEND with the full-text index writes about 60
  // pages, many of them the same few pages again (the tables' and indexes'
  // last pages, FTS5's segment index): a longer WAL copies each of those
  // to the database once per checkpoint instead of four times. Measured
  // (bench/search/append_cpu.py, 300 new messages into a store of 10,000):
  // bytes the server writes per APPEND 1.7 MB -> 0.9 MB, its instructions
  // unchanged. The WAL is removed when the user's store closes.
  // cache_size: pages are read with pread into SQLite's own cache, 16 MiB
  // a connection (SQLite's default is 2 MiB), not through a memory map. A
  // store is opened at a user's first session, and every page a fresh map
  // is read through costs a page fault at its first touch: about 15 us on
  // the VMs this runs on, against 2.3 us for a pread (docs/benchmarks.md,
  // "Reading the index with pread"). Measured against the map on copies of
  // the 100,000-message store, interleaved (bench/search/append_ab.py):
  // APPEND with the index 68% -> 75-79% of APPEND without it (the term
  // probes read leaves this connection has not read yet), LOGIN of the
  // only session 33 -> 12 ms, its first SEARCH TEXT 40 -> 27 ms, warm
  // SEARCH alike. 64 MiB of cache did no better than 16. The cost: pages
  // a connection reads are held twice (the kernel's page cache and this
  // one), up to 16 MiB for each file a connection reads (attach_search):
  // 32 MiB an open store, 50 while its search writer is open (16 for its
  // file, SQLite's 2 for the store's, read once a batch). A read
  // error of the disk now fails
  // one statement, where under a map it ended the process (SIGBUS).
  std::string pragmas = "PRAGMA busy_timeout = " + std::to_string(busy_timeout_ms) +
                        "; PRAGMA journal_mode = WAL; PRAGMA synchronous = FULL;"
                        " PRAGMA foreign_keys = ON; PRAGMA wal_autocheckpoint = 4000;"
                        " PRAGMA cache_size = -16384;";
  if (auto r = (*db)->exec(pragmas); !r) {
    return std::unexpected(r.error());
  }
  std::unique_ptr<Index> index(new Index(std::move(*db)));
  if (auto r = register_search_functions(*index->db_); !r) {
    return std::unexpected(r.error());
  }
  index->db_->set_rollback_hook(
      [](void* self) {
        auto* index = static_cast<Index*>(self);
        index->forget_known_terms();
        index->doc_uids_.invalidate();
      },
      index.get());
  index->db_->set_update_hook(
      [](void* self, const char* table, std::int64_t rowid) {
        if (std::strcmp(table, "search_docs") == 0) {
          static_cast<Index*>(self)->doc_uids_.changed(rowid);
        }
      },
      index.get());
  if (auto r = index->migrate(); !r) {
    return std::unexpected(r.error());
  }
  // The search writer attaches this file read-only, and this connection
  // its file: each writes only its own, so that BEGIN IMMEDIATE (a write
  // transaction on every attached file but a read-only one) takes one
  // file's write lock, and a batch never waits for an append, nor an
  // append for a batch. The writer makes the file when there is none.
  index->path_ = path;
  index->pragmas_ = pragmas;
  if (auto r = index->attach_search(); !r) {
    return std::unexpected(r.error());
  }
  return index;
}

Result<void> Index::attach_search() {
  const std::filesystem::path file = search_path(path_);
  std::error_code ec;
  if (!std::filesystem::exists(file, ec)) {
    if (auto r = writer(); !r) {
      return std::unexpected(r.error());
    }
  }
  // The word index's pages get a cache of their own as large as the
  // store's file's (cache_size is per file; an attached one has SQLite's
  // 2 MiB): SEARCH reads its doclists and vocabulary there.
  const std::string attach =
      "ATTACH " + read_only_uri(file) + " AS search; PRAGMA search.cache_size = -16384;";
  if (db_->exec(attach) && query_int(*db_, "SELECT count(*) FROM search.sqlite_schema")) {
    return {};
  }
  // Not a database (its header damaged, or another file): it holds nothing
  // the term records cannot give again. A new one takes its place, and the
  // open rebuilds the word index (MaildirUserStore::check_search_index).
  base::log(base::LogLevel::kWarn, "search_index_rebuild",
            {{"file", file.string()}, {"reason", "unreadable"}});
  (void)db_->exec("DETACH search");
  writer_.reset();
  for (const char* suffix : {"", "-wal", "-shm"}) {
    std::filesystem::remove(file.string() + suffix, ec);
  }
  if (auto r = writer(); !r) {
    return std::unexpected(r.error());
  }
  return db_->exec(attach);
}

std::filesystem::path Index::search_path(const std::filesystem::path& path) {
  return path.parent_path() / "search.sqlite";
}

Result<void> Index::migrate() {
  auto tx = db_->begin();
  if (!tx) {
    return std::unexpected(tx.error());
  }
  std::int64_t version = 0;
  {
    auto s = db_->prepare("PRAGMA user_version");
    if (!s) {
      return std::unexpected(s.error());
    }
    auto row = s->step();
    if (!row) {
      return std::unexpected(row.error());
    }
    version = *row ? s->column_int(0) : 0;
  }  // the statement is reset here, before any DDL runs
  if (version > kIndexSchemaVersion) {
    return base::fail(base::MailError::kInternal, "index schema version " +
                                                      std::to_string(version) +
                                                      " is newer than this build reads (" +
                                                      std::to_string(kIndexSchemaVersion) + ")");
  }
  if (version == kIndexSchemaVersion) {
    if (auto r = create_search_fts(); !r) {
      return r;
    }
    return tx->commit();
  }
  for (auto v = version; v < kIndexSchemaVersion; ++v) {
    if (auto r = db_->exec(kMigrations[v]); !r) {
      return r;
    }
  }
  // Term records came with schema 5; those before 11 hold CJK runs whole.
  // (The word index and the vocabulary are built again from them by the
  // open: MaildirUserStore::check_search_index.)
  if (version >= 5 && version < 11) {
    if (auto r = split_cjk_terms(); !r) {
      return r;
    }
  }
  if (auto r = create_search_fts(); !r) {
    return r;
  }
  if (auto r = db_->exec("PRAGMA user_version = " + std::to_string(kIndexSchemaVersion)); !r) {
    return r;
  }
  return tx->commit();
}

Result<void> Index::set_durable_commits(bool durable) {
  return db_->exec(durable ? "PRAGMA synchronous = FULL" : "PRAGMA synchronous = NORMAL");
}

// ---- Meta ----

Result<bool> Index::initialized() {
  auto value = query_int(*db_, "SELECT value FROM meta WHERE key = 'initialized'");
  if (!value) {
    return std::unexpected(value.error());
  }
  return *value != 0;
}

Result<void> Index::set_initialized() {
  return run(*db_, "INSERT OR REPLACE INTO meta (key, value) VALUES ('initialized', 1)",
             [](Statement&) {});
}

Result<std::uint32_t> Index::take_uidvalidity(std::int64_t now_seconds) {
  auto last = query_int(*db_, "SELECT value FROM meta WHERE key = 'last_uidvalidity'");
  if (!last) {
    return std::unexpected(last.error());
  }
  std::int64_t next = std::max<std::int64_t>(now_seconds, *last + 1);
  if (next > 0xffffffffLL) {
    return base::fail(base::MailError::kInternal, "UIDVALIDITY exhausted");
  }
  auto r = run(*db_, "INSERT OR REPLACE INTO meta (key, value) VALUES ('last_uidvalidity', ?1)",
               [&](Statement& s) { s.bind(1, next); });
  if (!r) {
    return std::unexpected(r.error());
  }
  return static_cast<std::uint32_t>(next);
}

Result<void> Index::raise_uidvalidity_floor(std::uint32_t value) {
  return run(*db_,
             "INSERT INTO meta (key, value) VALUES ('last_uidvalidity', ?1) "
             "ON CONFLICT (key) DO UPDATE SET value = max(value, excluded.value)",
             [&](Statement& s) { s.bind(1, value); });
}

// ---- Mailboxes ----

Result<std::optional<MailboxRow>> Index::find_mailbox(std::string_view name) {
  auto rows = collect<MailboxRow>(
      *db_, sql("SELECT ", kMailboxColumns, " FROM mailboxes WHERE name = ?1"),
      [&](Statement& s) { s.bind_text(1, name); }, read_mailbox);
  if (!rows) {
    return std::unexpected(rows.error());
  }
  if (rows->empty()) {
    return std::optional<MailboxRow>();
  }
  return std::optional<MailboxRow>(std::move(rows->front()));
}

Result<std::vector<MailboxRow>> Index::all_mailboxes() {
  return collect<MailboxRow>(
      *db_, sql("SELECT ", kMailboxColumns, " FROM mailboxes ORDER BY name"), [](Statement&) {},
      read_mailbox);
}

Result<std::int64_t> Index::insert_mailbox(const MailboxRow& row) {
  auto r = run(*db_,
               "INSERT INTO mailboxes (name, uidvalidity, uidnext, highest_modseq, "
               "first_unclaimed_uid, special_use, cur_mtime_ns, new_mtime_ns) "
               "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
               [&](Statement& s) {
                 s.bind_text(1, row.name)
                     .bind(2, row.uidvalidity)
                     .bind(3, row.uidnext)
                     .bind(4, static_cast<std::int64_t>(row.highest_modseq))
                     .bind(5, row.first_unclaimed_uid)
                     .bind_text(6, to_string(row.special_use))
                     .bind(7, row.cur_mtime_ns)
                     .bind(8, row.new_mtime_ns);
               });
  if (!r) {
    return std::unexpected(r.error());
  }
  return db_->last_insert_rowid();
}

Result<void> Index::delete_mailbox(std::int64_t id) {
  return run(*db_, "DELETE FROM mailboxes WHERE id = ?1", [&](Statement& s) { s.bind(1, id); });
}

Result<void> Index::rename_mailbox(std::int64_t id, std::string_view name) {
  return run(*db_, "UPDATE mailboxes SET name = ?2 WHERE id = ?1",
             [&](Statement& s) { s.bind(1, id).bind_text(2, name); });
}

Result<void> Index::set_counters(std::int64_t id, Uid uidnext, ModSeq highest_modseq) {
  return run(*db_, "UPDATE mailboxes SET uidnext = ?2, highest_modseq = ?3 WHERE id = ?1",
             [&](Statement& s) {
               s.bind(1, id).bind(2, uidnext).bind(3, static_cast<std::int64_t>(highest_modseq));
             });
}

Result<void> Index::set_first_unclaimed_uid(std::int64_t id, Uid uid) {
  return run(*db_, "UPDATE mailboxes SET first_unclaimed_uid = ?2 WHERE id = ?1",
             [&](Statement& s) { s.bind(1, id).bind(2, uid); });
}

Result<void> Index::set_scan_mtimes(std::int64_t id, std::int64_t cur_ns, std::int64_t new_ns) {
  return run(*db_, "UPDATE mailboxes SET cur_mtime_ns = ?2, new_mtime_ns = ?3 WHERE id = ?1",
             [&](Statement& s) { s.bind(1, id).bind(2, cur_ns).bind(3, new_ns); });
}

Result<void> Index::set_special_use(std::int64_t id, SpecialUse use) {
  return run(*db_, "UPDATE mailboxes SET special_use = ?2 WHERE id = ?1",
             [&](Statement& s) { s.bind(1, id).bind_text(2, to_string(use)); });
}

Result<MailboxCounts> Index::counts(const MailboxRow& mailbox) {
  auto rows = collect<MailboxCounts>(
      *db_,
      "SELECT count(*), coalesce(sum((flags & ?3) = 0), 0), coalesce(sum(uid >= ?2), 0), "
      "coalesce(sum(size), 0) FROM messages WHERE mailbox_id = ?1",
      [&](Statement& s) {
        s.bind(1, mailbox.id).bind(2, mailbox.first_unclaimed_uid).bind(3, kFlagSeen);
      },
      [](const Statement& s) {
        MailboxCounts c;
        c.messages = static_cast<std::uint32_t>(s.column_int(0));
        c.unseen = static_cast<std::uint32_t>(s.column_int(1));
        c.recent = static_cast<std::uint32_t>(s.column_int(2));
        c.size = static_cast<std::uint64_t>(s.column_int(3));
        return c;
      });
  if (!rows) {
    return std::unexpected(rows.error());
  }
  return rows->empty() ? MailboxCounts{} : rows->front();
}

// ---- Subscriptions ----

Result<std::vector<std::string>> Index::subscriptions() {
  return collect<std::string>(
      *db_, "SELECT name FROM subscriptions ORDER BY name", [](Statement&) {},
      [](const Statement& s) { return std::string(s.column_text(0)); });
}

Result<bool> Index::is_subscribed(std::string_view name) {
  auto rows = collect<int>(
      *db_, "SELECT 1 FROM subscriptions WHERE name = ?1",
      [&](Statement& s) { s.bind_text(1, name); }, [](const Statement&) { return 1; });
  if (!rows) {
    return std::unexpected(rows.error());
  }
  return !rows->empty();
}

Result<bool> Index::add_subscription(std::string_view name) {
  auto r = run(*db_, "INSERT OR IGNORE INTO subscriptions (name) VALUES (?1)",
               [&](Statement& s) { s.bind_text(1, name); });
  if (!r) {
    return std::unexpected(r.error());
  }
  return db_->changes() > 0;
}

Result<bool> Index::remove_subscription(std::string_view name) {
  auto r = run(*db_, "DELETE FROM subscriptions WHERE name = ?1",
               [&](Statement& s) { s.bind_text(1, name); });
  if (!r) {
    return std::unexpected(r.error());
  }
  return db_->changes() > 0;
}

// ---- Messages ----

Result<std::vector<MessageRow>> Index::messages(std::int64_t mailbox_id, const UidSet& uids) {
  std::vector<MessageRow> out;
  const std::string text = sql("SELECT ", kMessageColumns,
                               " FROM messages WHERE mailbox_id = ?1 AND uid BETWEEN ?2 AND ?3 "
                               "ORDER BY uid");
  for (const UidRange& range : uids.ranges()) {
    auto rows = collect<MessageRow>(
        *db_, text,
        [&](Statement& s) { s.bind(1, mailbox_id).bind(2, range.first).bind(3, range.last); },
        read_message);
    if (!rows) {
      return std::unexpected(rows.error());
    }
    std::move(rows->begin(), rows->end(), std::back_inserter(out));
  }
  return out;
}

Result<void> Index::each_file_name(std::int64_t mailbox_id,
                                   const std::function<bool(std::string_view)>& each) {
  return each_row(
      *db_, "SELECT file_name FROM messages WHERE mailbox_id = ?1",
      [&](Statement& s) { s.bind(1, mailbox_id); },
      [&](const Statement& s) { return each(s.column_text(0)); });
}

Result<std::optional<MessageRow>> Index::message(std::int64_t mailbox_id, Uid uid) {
  auto rows = messages(mailbox_id, UidSet{uid});
  if (!rows) {
    return std::unexpected(rows.error());
  }
  if (rows->empty()) {
    return std::optional<MessageRow>();
  }
  return std::optional<MessageRow>(std::move(rows->front()));
}

Result<void> Index::insert_message(std::int64_t mailbox_id, const MessageRow& row,
                                   std::optional<std::string_view> cache_record) {
  auto r = run(*db_,
               "INSERT INTO messages (mailbox_id, uid, base_name, file_name, flags, keywords, "
               "modseq, internal_date, tz_minutes, size) "
               "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)",
               [&](Statement& s) {
                 s.bind(1, mailbox_id)
                     .bind(2, row.meta.uid)
                     .bind_text(3, row.base_name)
                     .bind_text(4, row.file_name)
                     .bind(5, row.meta.flags)
                     .bind_text(6, join_keywords(row.meta.keywords))
                     .bind(7, static_cast<std::int64_t>(row.meta.modseq))
                     .bind(8, row.meta.internal_date.seconds)
                     .bind(9, row.meta.internal_date.tz_minutes)
                     .bind(10, static_cast<std::int64_t>(row.meta.size));
               });
  if (!r || !cache_record) {
    return r;
  }
  return run(*db_, "INSERT INTO cache_records (mailbox_id, uid, record) VALUES (?1, ?2, ?3)",
             [&](Statement& s) {
               s.bind(1, mailbox_id).bind(2, row.meta.uid).bind_blob(3, *cache_record);
             });
}

Result<void> Index::insert_unsettled(std::int64_t mailbox_id, Uid uid, std::string_view bytes) {
  return run(*db_, "INSERT INTO unsettled_files (mailbox_id, uid, bytes) VALUES (?1, ?2, ?3)",
             [&](Statement& s) { s.bind(1, mailbox_id).bind(2, uid).bind_blob(3, bytes); });
}

Result<std::vector<UnsettledFile>> Index::unsettled_files() {
  return collect<UnsettledFile>(
      *db_,
      "SELECT u.mailbox_id, u.uid, b.name, m.base_name, m.file_name, m.internal_date "
      "FROM unsettled_files u JOIN messages m USING (mailbox_id, uid) "
      "JOIN mailboxes b ON b.id = u.mailbox_id ORDER BY u.rowid",
      [](Statement&) {},
      [](const Statement& s) {
        UnsettledFile f;
        f.mailbox_id = s.column_int(0);
        f.uid = static_cast<Uid>(s.column_int(1));
        f.mailbox = std::string(s.column_text(2));
        f.base_name = std::string(s.column_text(3));
        f.file_name = std::string(s.column_text(4));
        f.internal_date = s.column_int(5);
        return f;
      });
}

Result<std::string> Index::unsettled_bytes(std::int64_t mailbox_id, Uid uid) {
  std::optional<std::string> bytes;
  auto r = each_row(
      *db_, "SELECT bytes FROM unsettled_files WHERE mailbox_id = ?1 AND uid = ?2",
      [&](Statement& s) { s.bind(1, mailbox_id).bind(2, uid); },
      [&](const Statement& s) {
        bytes = std::string(s.column_blob(0));
        return false;
      });
  if (!r) {
    return std::unexpected(r.error());
  }
  if (!bytes) {
    return base::fail(base::MailError::kNotFound,
                      "no unsettled file for UID " + std::to_string(uid));
  }
  return std::move(*bytes);
}

Result<void> Index::forget_unsettled(std::int64_t mailbox_id, Uid uid) {
  return run(*db_, "DELETE FROM unsettled_files WHERE mailbox_id = ?1 AND uid = ?2",
             [&](Statement& s) { s.bind(1, mailbox_id).bind(2, uid); });
}

Result<void> Index::copy_cache_record(std::int64_t from_mailbox, Uid from_uid,
                                      std::int64_t to_mailbox, Uid to_uid) {
  return run(*db_,
             "INSERT INTO cache_records (mailbox_id, uid, record) "
             "SELECT ?3, ?4, record FROM cache_records WHERE mailbox_id = ?1 AND uid = ?2",
             [&](Statement& s) {
               s.bind(1, from_mailbox).bind(2, from_uid).bind(3, to_mailbox).bind(4, to_uid);
             });
}

Result<void> Index::update_message(std::int64_t mailbox_id, const MessageRow& row) {
  return run(*db_,
             "UPDATE messages SET flags = ?3, keywords = ?4, modseq = ?5, file_name = ?6 "
             "WHERE mailbox_id = ?1 AND uid = ?2",
             [&](Statement& s) {
               s.bind(1, mailbox_id)
                   .bind(2, row.meta.uid)
                   .bind(3, row.meta.flags)
                   .bind_text(4, join_keywords(row.meta.keywords))
                   .bind(5, static_cast<std::int64_t>(row.meta.modseq))
                   .bind_text(6, row.file_name);
             });
}

Result<void> Index::expunge_message(std::int64_t mailbox_id, Uid uid, ModSeq modseq) {
  auto r = run(*db_, "DELETE FROM messages WHERE mailbox_id = ?1 AND uid = ?2",
               [&](Statement& s) { s.bind(1, mailbox_id).bind(2, uid); });
  if (!r) {
    return r;
  }
  r = run(*db_, "INSERT OR REPLACE INTO expunged (mailbox_id, uid, modseq) VALUES (?1, ?2, ?3)",
          [&](Statement& s) {
            s.bind(1, mailbox_id).bind(2, uid).bind(3, static_cast<std::int64_t>(modseq));
          });
  if (!r) {
    return r;
  }
  return count_expunges(mailbox_id, 1);
}

Result<void> Index::expunge_messages(std::int64_t mailbox_id, std::span<const Uid> uids,
                                     ModSeq modseq) {
  std::size_t i = 0;
  while (i < uids.size()) {
    std::size_t j = i + 1;
    while (j < uids.size() && uids[j] == uids[j - 1] + 1) {
      ++j;
    }
    const Uid first = uids[i];
    const Uid last = uids[j - 1];
    auto r = run(*db_, "DELETE FROM messages WHERE mailbox_id = ?1 AND uid BETWEEN ?2 AND ?3",
                 [&](Statement& s) { s.bind(1, mailbox_id).bind(2, first).bind(3, last); });
    if (!r) {
      return r;
    }
    r = run(*db_,
            "WITH RECURSIVE run(uid) AS (SELECT ?2 UNION ALL SELECT uid + 1 FROM run "
            "WHERE uid < ?3) "
            "INSERT OR REPLACE INTO expunged (mailbox_id, uid, modseq) "
            "SELECT ?1, uid, ?4 FROM run",
            [&](Statement& s) {
              s.bind(1, mailbox_id).bind(2, first).bind(3, last);
              s.bind(4, static_cast<std::int64_t>(modseq));
            });
    if (!r) {
      return r;
    }
    i = j;
  }
  return count_expunges(mailbox_id, uids.size());
}

Result<std::vector<Uid>> Index::move_all_messages(std::int64_t from_mailbox,
                                                  std::int64_t to_mailbox, ModSeq modseq) {
  auto uids = uids_from(from_mailbox, 1);
  if (!uids) {
    return uids;
  }
  auto r = run(
      *db_,
      "INSERT OR REPLACE INTO expunged (mailbox_id, uid, modseq) "
      "SELECT mailbox_id, uid, ?2 FROM messages WHERE mailbox_id = ?1",
      [&](Statement& s) { s.bind(1, from_mailbox).bind(2, static_cast<std::int64_t>(modseq)); });
  if (!r) {
    return std::unexpected(r.error());
  }
  // The cache records follow through ON UPDATE CASCADE.
  r = run(*db_, "UPDATE messages SET mailbox_id = ?2 WHERE mailbox_id = ?1",
          [&](Statement& s) { s.bind(1, from_mailbox).bind(2, to_mailbox); });
  if (r) {
    r = count_expunges(from_mailbox, uids->size());
  }
  if (!r) {
    return std::unexpected(r.error());
  }
  return uids;
}

Result<std::vector<CacheEntry>> Index::cache_records(std::int64_t mailbox_id, const UidSet& uids) {
  std::vector<CacheEntry> out;
  for (const UidRange& range : uids.ranges()) {
    auto rows = collect<CacheEntry>(
        *db_,
        "SELECT uid, record FROM cache_records WHERE mailbox_id = ?1 AND uid BETWEEN ?2 AND ?3 "
        "ORDER BY uid",
        [&](Statement& s) { s.bind(1, mailbox_id).bind(2, range.first).bind(3, range.last); },
        [](const Statement& s) {
          return CacheEntry{static_cast<Uid>(s.column_int(0)), std::string(s.column_blob(1))};
        });
    if (!rows) {
      return std::unexpected(rows.error());
    }
    std::move(rows->begin(), rows->end(), std::back_inserter(out));
  }
  return out;
}

Result<std::vector<MessageRow>> Index::changed_since(std::int64_t mailbox_id, ModSeq since) {
  auto rows = collect<MessageRow>(
      *db_, sql("SELECT ", kMessageColumns, " FROM messages WHERE mailbox_id = ?1 AND modseq > ?2"),
      [&](Statement& s) { s.bind(1, mailbox_id).bind(2, static_cast<std::int64_t>(since)); },
      read_message);
  if (rows) {
    std::sort(rows->begin(), rows->end(),
              [](const MessageRow& a, const MessageRow& b) { return a.meta.uid < b.meta.uid; });
  }
  return rows;
}

Result<std::vector<ExpungedUid>> Index::expunged_since(std::int64_t mailbox_id, ModSeq since) {
  return collect<ExpungedUid>(
      *db_, "SELECT uid, modseq FROM expunged WHERE mailbox_id = ?1 AND modseq > ?2 ORDER BY uid",
      [&](Statement& s) { s.bind(1, mailbox_id).bind(2, static_cast<std::int64_t>(since)); },
      [](const Statement& s) {
        return ExpungedUid{static_cast<Uid>(s.column_int(0)), static_cast<ModSeq>(s.column_int(1))};
      });
}

Result<ModSeq> Index::expunged_floor(std::int64_t mailbox_id) {
  auto floor = query_int(*db_, "SELECT expunged_floor FROM mailboxes WHERE id = ?1",
                         [&](Statement& s) { s.bind(1, mailbox_id); });
  if (!floor) {
    return std::unexpected(floor.error());
  }
  return static_cast<ModSeq>(*floor);
}

Result<void> Index::count_expunges(std::int64_t mailbox_id, std::size_t n) {
  auto [unchecked, first] = unchecked_expunges_.try_emplace(mailbox_id, 0);
  unchecked->second += n;
  if (!first && unchecked->second < kKeptExpunges / 8) {
    return {};
  }
  unchecked->second = 0;
  // The expunge `offset` places from the newest (by MODSEQ, then UID:
  // expunged_by_modseq holds the key's UID too); none when fewer are there.
  auto nth = [&](std::size_t offset) {
    return collect<ExpungedUid>(
        *db_,
        "SELECT modseq, uid FROM expunged WHERE mailbox_id = ?1 ORDER BY modseq DESC, uid DESC "
        "LIMIT 1 OFFSET ?2",
        [&](Statement& s) { s.bind(1, mailbox_id).bind(2, static_cast<std::int64_t>(offset)); },
        [](const Statement& s) {
          return ExpungedUid{static_cast<Uid>(s.column_int(1)),
                             static_cast<ModSeq>(s.column_int(0))};
        });
  };
  auto over = nth(2 * kKeptExpunges);
  if (!over) {
    return std::unexpected(over.error());
  }
  if (over->empty()) {
    return {};
  }
  // The newest expunge to forget: it and every older one go.
  auto last = nth(kKeptExpunges);
  if (!last) {
    return std::unexpected(last.error());
  }
  const ExpungedUid forget = last->front();
  if (auto r = run(*db_, "DELETE FROM expunged WHERE mailbox_id = ?1 AND (modseq, uid) <= (?2, ?3)",
                   [&](Statement& s) {
                     s.bind(1, mailbox_id)
                         .bind(2, static_cast<std::int64_t>(forget.modseq))
                         .bind(3, forget.uid);
                   });
      !r) {
    return r;
  }
  return run(*db_, "UPDATE mailboxes SET expunged_floor = max(expunged_floor, ?2) WHERE id = ?1",
             [&](Statement& s) {
               s.bind(1, mailbox_id).bind(2, static_cast<std::int64_t>(forget.modseq));
             });
}

Result<std::vector<Uid>> Index::uids_from(std::int64_t mailbox_id, Uid first) {
  return collect<Uid>(
      *db_, "SELECT uid FROM messages WHERE mailbox_id = ?1 AND uid >= ?2 ORDER BY uid",
      [&](Statement& s) { s.bind(1, mailbox_id).bind(2, first); },
      [](const Statement& s) { return static_cast<Uid>(s.column_int(0)); });
}

// ---- Journal ----
// A removal is an entry with an empty to_path (docs/formats/maildir-store.md,
// "Journal"): the table and the schema stay as they were.

Result<void> Index::add_pending_rename(std::string_view from, std::string_view to) {
  return run(*db_, "INSERT INTO pending_renames (from_path, to_path) VALUES (?1, ?2)",
             [&](Statement& s) { s.bind_text(1, from).bind_text(2, to); });
}

Result<std::int64_t> Index::add_pending_removal(std::string_view path) {
  auto r = run(*db_, "INSERT INTO pending_renames (from_path, to_path) VALUES (?1, '')",
               [&](Statement& s) { s.bind_text(1, path); });
  if (!r) {
    return std::unexpected(r.error());
  }
  return db_->last_insert_rowid();
}

Result<std::vector<JournalEntry>> Index::journal() {
  return collect<JournalEntry>(
      *db_, "SELECT id, from_path, to_path FROM pending_renames ORDER BY id", [](Statement&) {},
      [](const Statement& s) {
        return JournalEntry{s.column_int(0), std::string(s.column_text(1)),
                            std::string(s.column_text(2))};
      });
}

Result<bool> Index::has_pending_renames() {
  auto found = query_int(*db_, "SELECT 1 FROM pending_renames WHERE to_path <> '' LIMIT 1");
  if (!found) {
    return std::unexpected(found.error());
  }
  return *found != 0;
}

Result<std::vector<std::string>> Index::pending_removals() {
  return collect<std::string>(
      *db_, "SELECT from_path FROM pending_renames WHERE to_path = ''", [](Statement&) {},
      [](const Statement& s) { return std::string(s.column_text(0)); });
}

Result<void> Index::clear_pending_renames() {
  return run(*db_, "DELETE FROM pending_renames WHERE to_path <> ''", [](Statement&) {});
}

Result<void> Index::clear_journal_entries(std::vector<std::int64_t> ids) {
  // One statement per run of consecutive ids: the entries of one expunge
  // were added one after another.
  std::sort(ids.begin(), ids.end());
  std::size_t i = 0;
  while (i < ids.size()) {
    std::size_t j = i + 1;
    while (j < ids.size() && ids[j] <= ids[j - 1] + 1) {
      ++j;
    }
    auto r = run(*db_, "DELETE FROM pending_renames WHERE id BETWEEN ?1 AND ?2",
                 [&](Statement& s) { s.bind(1, ids[i]).bind(2, ids[j - 1]); });
    if (!r) {
      return r;
    }
    i = j;
  }
  return {};
}

Result<void> Index::clear_journal() {
  return run(*db_, "DELETE FROM pending_renames", [](Statement&) {});
}

}  // namespace peregrine::store::maildir
