#pragma once

// The per-user SQLite index of the Maildir backend: mailboxes, messages with
// their flags, keywords, MODSEQ and cache record, expunged UIDs for the
// change feed, subscriptions, and a journal of file operations still to do
// on disk (renames, and removals of expunged messages' files). The schema
// and its versions are in docs/formats/maildir-store.md.
//
// Typed queries only; the caller (MaildirUserStore) decides what goes in
// one transaction. Not thread-safe.

#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "base/result.h"
#include "mime/search_text.h"
#include "store/api/types.h"
#include "store/api/uid_set.h"
#include "store/maildir/doc_uids.h"
#include "store/maildir/sqlite.h"
#include "store/maildir/term_record.h"

namespace peregrine::store::maildir {

inline constexpr int kIndexSchemaVersion = 13;

struct MailboxRow {
  std::int64_t id = 0;
  std::string name;
  std::uint32_t uidvalidity = 0;
  Uid uidnext = 1;
  ModSeq highest_modseq = 1;
  Uid first_unclaimed_uid = 1;  // messages from this UID on are not yet \Recent anywhere
  SpecialUse special_use = SpecialUse::kNone;
  // Directory mtimes (ns) seen by the last full scan of cur/ and new/; 0 when
  // a rescan is needed (docs/formats/maildir-store.md, "Sync").
  std::int64_t cur_mtime_ns = 0;
  std::int64_t new_mtime_ns = 0;
};

struct MessageRow {
  MessageMeta meta;
  std::string base_name;  // the file's name up to ':'; unique in its mailbox
  std::string file_name;  // the file's current name in cur/
};

// A message whose file is not yet settled (fsynced, and cur/ with it): its
// bytes wait in the index (Index::unsettled_bytes) until it is.
struct UnsettledFile {
  std::int64_t mailbox_id = 0;
  Uid uid = 0;
  std::string mailbox;  // its canonical name now
  std::string base_name;
  std::string file_name;           // its name in cur/ now
  std::int64_t internal_date = 0;  // seconds: the file's date
};

// An entry of the journal: a rename of `from` to `to`, or, when `to` is
// empty, the removal of `from` (the file of an expunged message).
struct JournalEntry {
  std::int64_t id = 0;
  std::string from;  // relative to the Maildir
  std::string to;
  bool is_removal() const { return to.empty(); }
};

struct MailboxCounts {
  std::uint32_t messages = 0;
  std::uint32_t unseen = 0;
  std::uint32_t recent = 0;
  std::uint64_t size = 0;
};

class Index {
 public:
  // Opens (creating) the index: WAL, synchronous=FULL, foreign keys on, a
  // busy timeout, and the schema migrated to kIndexSchemaVersion. kInternal
  // when the file is of a newer schema than this build knows. The
  // full-text index's word index and vocabulary are in a file of their own
  // beside it (search_path), which a second connection writes (the
  // search writer, below) and this one reads, attached as `search`.
  static base::Result<std::unique_ptr<Index>> open(const std::filesystem::path& path,
                                                   int busy_timeout_ms);
  // The file of the word index and the vocabulary for the index at `path`.
  static std::filesystem::path search_path(const std::filesystem::path& path);
  ~Index();

  base::Result<Transaction> begin() { return db_->begin(); }
  // One read transaction for the reads that follow while it lives
  // (sqlite.h). Only around code that writes nothing.
  ReadScope read_scope() { return ReadScope(*db_); }
  // Whether a commit returns only once it is on disk (synchronous = FULL,
  // the default) or may return before (NORMAL: the WAL is not fsynced at
  // that commit; the next durable commit, or a checkpoint, makes it durable
  // with everything before it). Only for a commit whose loss a crash may
  // cost: a sync that only records directory mtimes (a lost record means
  // one more scan).
  base::Result<void> set_durable_commits(bool durable);
  // set_durable_commits(false) for as long as it lives (when the switch
  // succeeds), then durable again. Outside a transaction.
  class QuickCommits {
   public:
    explicit QuickCommits(Index& index) {
      if (index.set_durable_commits(false)) {
        index_ = &index;
      }
    }
    ~QuickCommits() {
      if (index_ != nullptr) {
        (void)index_->set_durable_commits(true);
      }
    }
    QuickCommits(const QuickCommits&) = delete;
    QuickCommits& operator=(const QuickCommits&) = delete;

   private:
    Index* index_ = nullptr;
  };

  // ---- Meta ----
  base::Result<bool> initialized();
  base::Result<void> set_initialized();
  // A UIDVALIDITY greater than every one given before for this user (the
  // current time if it is greater), recorded. Call inside a transaction.
  base::Result<std::uint32_t> take_uidvalidity(std::int64_t now_seconds);
  // Makes every later take_uidvalidity return more than `value`.
  base::Result<void> raise_uidvalidity_floor(std::uint32_t value);

  // ---- Mailboxes ----
  base::Result<std::optional<MailboxRow>> find_mailbox(std::string_view name);
  base::Result<std::vector<MailboxRow>> all_mailboxes();  // sorted by name
  // Returns the new row's id.
  base::Result<std::int64_t> insert_mailbox(const MailboxRow& row);
  base::Result<void> delete_mailbox(std::int64_t id);
  base::Result<void> rename_mailbox(std::int64_t id, std::string_view name);
  base::Result<void> set_counters(std::int64_t id, Uid uidnext, ModSeq highest_modseq);
  base::Result<void> set_first_unclaimed_uid(std::int64_t id, Uid uid);
  base::Result<void> set_scan_mtimes(std::int64_t id, std::int64_t cur_ns, std::int64_t new_ns);
  base::Result<void> set_special_use(std::int64_t id, SpecialUse use);
  base::Result<MailboxCounts> counts(const MailboxRow& mailbox);

  // ---- Subscriptions ----
  base::Result<std::vector<std::string>> subscriptions();  // sorted
  base::Result<bool> is_subscribed(std::string_view name);
  // Whether the set changed.
  base::Result<bool> add_subscription(std::string_view name);
  base::Result<bool> remove_subscription(std::string_view name);

  // ---- Messages ----
  // The messages in `uids`, ascending.
  base::Result<std::vector<MessageRow>> messages(std::int64_t mailbox_id, const UidSet& uids);
  base::Result<std::optional<MessageRow>> message(std::int64_t mailbox_id, Uid uid);
  // Calls each(file_name) for every message of the mailbox, in no set order,
  // until it returns false. The view lasts for the call only. Reads one
  // column: what a scan of cur/ compares first.
  base::Result<void> each_file_name(std::int64_t mailbox_id,
                                    const std::function<bool(std::string_view)>& each);
  // Inserts a message and, when given, its cache record (copy and move
  // take the source's with copy_cache_record instead).
  base::Result<void> insert_message(std::int64_t mailbox_id, const MessageRow& row,
                                    std::optional<std::string_view> cache_record);
  // Keeps a message's bytes until its file is settled (forget_unsettled).
  base::Result<void> insert_unsettled(std::int64_t mailbox_id, Uid uid, std::string_view bytes);
  // The messages whose bytes wait, oldest first, without the bytes.
  base::Result<std::vector<UnsettledFile>> unsettled_files();
  // One waiting message's bytes; kNotFound when none wait for it.
  base::Result<std::string> unsettled_bytes(std::int64_t mailbox_id, Uid uid);
  base::Result<void> forget_unsettled(std::int64_t mailbox_id, Uid uid);
  // Copies the cache record of one message to another (copy/move).
  base::Result<void> copy_cache_record(std::int64_t from_mailbox, Uid from_uid,
                                       std::int64_t to_mailbox, Uid to_uid);
  // Sets flags, keywords, modseq and file name from `row.meta` / `row`.
  base::Result<void> update_message(std::int64_t mailbox_id, const MessageRow& row);
  // Deletes a message (and its cache record) and records it as expunged at `modseq`.
  base::Result<void> expunge_message(std::int64_t mailbox_id, Uid uid, ModSeq modseq);
  // The same for several messages: one statement for each run of
  // consecutive UIDs in `uids`, so a large expunge costs a few statements
  // (each with its cascades and triggers) rather than one per message.
  base::Result<void> expunge_messages(std::int64_t mailbox_id, std::span<const Uid> uids,
                                      ModSeq modseq);
  // Moves every message of one mailbox to another keeping UIDs, recording
  // them expunged from the first at `modseq` (RENAME INBOX). Returns the UIDs.
  base::Result<std::vector<Uid>> move_all_messages(std::int64_t from_mailbox,
                                                   std::int64_t to_mailbox, ModSeq modseq);
  base::Result<std::vector<CacheEntry>> cache_records(std::int64_t mailbox_id, const UidSet& uids);
  base::Result<std::vector<MessageRow>> changed_since(std::int64_t mailbox_id, ModSeq since);
  base::Result<std::vector<ExpungedUid>> expunged_since(std::int64_t mailbox_id, ModSeq since);
  // The highest MODSEQ of an expunge the mailbox no longer records (0 when
  // it records every one): expunged_since lists every expunge after
  // `since` only when `since` is at least this.
  base::Result<ModSeq> expunged_floor(std::int64_t mailbox_id);
  // Expunged UIDs a mailbox records at least (its newest, by MODSEQ then
  // UID); once it records twice as many, the older ones are forgotten and
  // its floor raised. Nothing reads them before QRESYNC; a client that
  // resynchronizes from further back than the history goes is told of
  // every UID it knows that is not current.
  static constexpr std::size_t kKeptExpunges = 10000;
  base::Result<std::vector<Uid>> uids_from(std::int64_t mailbox_id, Uid first);

  // ---- Full-text index (search_index.cc) ----
  // Stores a message's term record (the word index takes it with its batch,
  // kWaitingDocs, and the vocabulary its terms).
  // `batch`: whether it runs (or asks for) the batch when one is due; a
  // caller that stores many in one transaction runs it after the commit
  // instead (the search writer reads committed records only).
  base::Result<void> insert_search_text(std::int64_t mailbox_id, Uid uid, const TermRecord& record,
                                        bool batch = true);
  // Gives message `to` a copy of the term record of message `from` (copy).
  base::Result<void> copy_search_text(std::int64_t from_mailbox, Uid from_uid,
                                      std::int64_t to_mailbox, Uid to_uid);
  // Hands the record of message `from` to message `to` (move): no reindexing.
  base::Result<void> move_search_text(std::int64_t from_mailbox, Uid from_uid,
                                      std::int64_t to_mailbox, Uid to_uid);
  // UserStore::text_candidates for one mailbox. nullopt when no needle
  // narrows the search (too short or too common a fragment).
  base::Result<std::optional<TextCandidates>> text_candidates(std::int64_t mailbox_id,
                                                              const TextQuery& query);
  // Counts and sizes; index_bytes from the pages the tables use.
  base::Result<SearchIndexStats> search_stats();
  // Whether the word index and the vocabulary agree with the term records
  // (same number of documents, and they can be read).
  base::Result<bool> search_fts_healthy();
  // Adds the terms of every record that waits for its batch to the
  // vocabulary, then indexes those records in the word index, when at least
  // `at_least` wait; unindexes the deleted records first. On the search
  // writer's connection, in a transaction of its own: it sees the records
  // committed so far, not those of a transaction this connection has open.
  base::Result<void> index_waiting_docs(std::int64_t at_least = 1);
  // How many records wait for their batch (at most; cheap).
  base::Result<std::int64_t> waiting_count();
  // Whether a batch has work: kWaitingDocs records wait (kBackgroundBatch
  // with background batches), or a deleted record waits to be unindexed.
  base::Result<bool> batch_due();
  // Runs the batch (index_waiting_docs(kWaitingDocs)) on the search
  // writer's thread, at idle priority, and returns at once. A store whose
  // caller runs upkeep after replying sets background batches: the
  // changes that store records then ask for one once kBackgroundBatch wait,
  // and run it themselves only at batch_at (set_batch_at).
  void request_batch();
  void set_background_batches(bool on) { background_ = on; }
  // Returns once no background batch is asked for or running (tests, tools).
  void wait_for_batches();
  // The batch now, on this thread, when at least `at_least` records wait;
  // with background batches, only when the writer's thread is not running
  // one (then it asks for another and returns): a session never waits for
  // a thread at idle priority.
  base::Result<void> run_batch_now(std::int64_t at_least);
  // Whether every record that waits for its batch can be read.
  base::Result<bool> waiting_docs_readable();
  // How many records wait before the change that stores one more runs the
  // batch itself (kWaitingDocs unless set). A store whose caller runs the
  // batch after replying (UserStore::upkeep) sets kMostWaitingDocs, so
  // that a change runs it only when upkeep has fallen behind.
  void set_batch_at(std::size_t waiting);
  // Drops the word index and the vocabulary and indexes every term record
  // again.
  base::Result<void> rebuild_search_fts();
  // Cuts the terms of every record written before schema 11 as
  // text_tokens.h now cuts a text (CJK stretches into bigrams). A record
  // with a term cut at kMaxTokenBytes that may hold CJK is deleted: the
  // open indexes its message again from the file. Leaves the word index
  // and the vocabulary stale (rebuild_search_fts follows).
  base::Result<void> split_cjk_terms();
  // Removes up to `limit` deleted records (search_purge) from the word
  // index, in a transaction of the search writer; returns how many it dealt
  // with (0: nothing is pending). Their rows stay in search_purge until
  // forget_purged.
  base::Result<std::size_t> purge_search_fts(std::size_t limit);
  // Deletes the rows of search_purge the search writer is done with
  // (search_purged, in its file, committed and synced), as this
  // connection's transaction sees that file: one begun after the writer's
  // commit. Each append does, in its transaction: a few rows at most.
  base::Result<void> forget_purged();
  // New vocabulary terms that wait before the append that adds them indexes
  // them all by trigram (search_terms_indexed; queries read the waiting
  // ones from search_terms). Each such batch writes an FTS5 segment that
  // merges then rewrite: 4,096 a batch cut a new-mail APPEND's server CPU
  // at 100,000 messages by 2-8% against 1,024 (docs/benchmarks.md, "Fewer
  // merges of the indexes' segments"); a query reads the waiting terms in
  // well under a millisecond.
  static constexpr std::size_t kUnindexedTerms = 4096;
  // New vocabulary terms' hashes search_term_hashes_recent holds before a
  // batch moves a sixteenth of them (a slice of the hash range) into
  // search_term_hashes. A batch's new hashes dirty at most the small
  // table's pages (about 240 at this size); a move rewrites a sixteenth
  // of the large one's, and comes once every 4,096 new terms or so.
  static constexpr std::size_t kRecentTermHashes = 65536;
  // FTS5 merges a level's segments into one of the next level once the
  // level holds this many (its `automerge`; FTS5's default is 4), in the
  // word index and in the vocabulary's trigram index. Each batch writes a
  // segment, and every posting is written again once per level it climbs:
  // the more segments a level may hold, the fewer levels and the less
  // rewriting, for more segments a query reads (docs/benchmarks.md,
  // "Fewer merges of the indexes' segments").
  static constexpr int kAutomerge = 16;
  // Term records that wait before the change that adds one more indexes
  // them all in the word index (search_docs_indexed; queries read the
  // waiting ones from search_docs).
  static constexpr std::size_t kWaitingDocs = 32;
  // The most that wait while the server runs the batches after its
  // replies (set_batch_at): what a query reads besides the word index
  // (more only while the writer's thread is busy with a batch).
  static constexpr std::size_t kMostWaitingDocs = 256;
  // Records that wait before a change asks for a background batch
  // (request_batch): fewer, larger batches cost less CPU in all (FTS5
  // writes, and merges, a segment per batch); docs/benchmarks.md, "The
  // batch on a thread of its own".
  static constexpr std::size_t kBackgroundBatch = 128;
  // Deleted records a batch, or a step of the open, unindexes at most.
  static constexpr std::size_t kPurgeBatch = 256;
  // Drops every term record, the word index and the vocabulary (before a
  // full rebuild).
  base::Result<void> clear_search_index();
  // Up to `limit` messages (mailbox id, row) that have no term record.
  base::Result<std::vector<std::pair<std::int64_t, MessageRow>>> messages_without_text(
      std::size_t limit);

  // ---- Journal of file operations still to do on disk ----
  // Paths are relative to the Maildir (journal_path()).
  base::Result<void> add_pending_rename(std::string_view from, std::string_view to);
  // Journals the removal of `path`, an expunged message's file; returns the
  // entry's id. In the transaction that expunges the message.
  base::Result<std::int64_t> add_pending_removal(std::string_view path);
  // Every entry, renames and removals, in the order they were added.
  base::Result<std::vector<JournalEntry>> journal();
  // Whether a rename is pending (one SELECT; the journal is usually empty).
  base::Result<bool> has_pending_renames();
  // The paths whose removal is pending.
  base::Result<std::vector<std::string>> pending_removals();
  // Deletes every rename entry (removals stay).
  base::Result<void> clear_pending_renames();
  // Deletes the entries `ids` (sorted or not; unknown ids are ignored).
  base::Result<void> clear_journal_entries(std::vector<std::int64_t> ids);
  // Deletes every entry.
  base::Result<void> clear_journal();

 private:
  explicit Index(std::unique_ptr<Database> db);
  // Opens the search writer for the index at `path` (open; search_index.cc).
  static base::Result<std::unique_ptr<Index>> open_search_writer(const std::filesystem::path& path,
                                                                 const std::string& pragmas);
  base::Result<void> migrate();
  // The search writer's own operations, under writer_mutex_ (run_batch:
  // the purge, then the batch).
  base::Result<void> run_batch(std::int64_t at_least);
  base::Result<std::size_t> purge_here(std::size_t limit);
  // Runs step(writer) in a transaction of the search writer, under its
  // mutex (so the background batch and this connection take turns).
  template <typename Step>
  base::Result<void> with_writer(Step step);
  void stop_worker();
  // Creates the word index, the vocabulary and their triggers when they are
  // missing.
  base::Result<void> create_search_fts();
  // Drops the word index and the vocabulary, and every pending purge (and
  // every term record unless `keep_texts`), then creates them empty.
  base::Result<void> recreate_search_fts(bool keep_texts);

  // index_waiting_docs once kWaitingDocs records wait. A batch that fails
  // (a damaged record: SQLite undoes just that statement) does not fail the
  // change that called it: the records keep waiting, queries still read
  // them, and the next open rebuilds the word index
  // (MaildirUserStore::check_search_index).
  void index_waiting_docs_if_due();
  // The vocabulary's share of a batch: the terms of the waiting records.
  base::Result<void> add_waiting_terms();

  // Counts `n` expunges recorded in `mailbox_id`, and forgets the oldest of
  // its expunged UIDs when it records more than 2 * kKeptExpunges. Checked
  // at a mailbox's first expunge on this connection and then once every
  // kKeptExpunges / 8, so a loop of single expunges does not walk the
  // index at each.
  base::Result<void> count_expunges(std::int64_t mailbox_id, std::size_t n);

  // Adds the terms the vocabulary lacks, skipping those known_ holds and
  // probing the others a batch a statement.
  base::Result<void> add_terms(const std::vector<IndexedTerm>& terms);
  void forget_known_terms();

  std::unique_ptr<Database> db_;
  // The search writer: an Index of its own connection, with search.sqlite
  // as main (it alone writes it) and this index attached read-only. Opened
  // when first needed (writer()): a store opened for one delivery and
  // closed after (`peregrine deliver`, an MTA's connection a message)
  // seldom runs a batch. Null on the writer itself.
  std::unique_ptr<Index> writer_;
  base::Result<Index*> writer();
  // Attaches search.sqlite read-only as `search`, made by the writer when
  // missing, and made anew when it is no database.
  base::Result<void> attach_search();
  // Whether search_purge holds a row the writer has not dealt with.
  base::Result<bool> unpurged_exist();
  // Whether a batch run now would do anything: `at_least` records wait,
  // or a deleted record waits to be unindexed. Asked of this connection.
  base::Result<bool> batch_has_work(std::int64_t at_least);
  std::filesystem::path path_;  // this index's file (for the writer)
  std::string pragmas_;
  bool is_writer_ = false;  // this is a store's search writer
  std::mutex writer_mutex_;
  // The thread that runs the background batches (request_batch).
  struct Worker;
  std::unique_ptr<Worker> worker_;
  bool background_ = false;
  // Terms this connection knows to be in the vocabulary, so an append does
  // not probe the vocabulary's index for its common words again. Emptied on
  // every rollback (a term inserted by the rolled-back transaction is gone),
  // when another connection has committed (it may have rebuilt the
  // vocabulary), when the vocabulary is rebuilt, and when it grows past its
  // bound.
  struct KnownTerms {
    std::unordered_set<std::string> terms;
    std::size_t bytes = 0;
    std::int64_t data_version = -1;
    // search_term_hashes_recent's hashes, ascending, as this connection
    // last read them and has since added to them; read again when
    // !recent_read. At 100,000 messages the table holds about 65,000, and
    // a batch of 32 appends read them all each time.
    std::vector<std::uint32_t> recent;
    bool recent_read = false;
  };
  KnownTerms known_;
  // The hits' document ids -> UIDs, per mailbox; told of every change of
  // search_docs and of every rollback (hooks set by open).
  DocUidMap doc_uids_;
  std::size_t batch_at_ = kWaitingDocs;  // set_batch_at
  // Expunges recorded per mailbox since its last check (count_expunges).
  std::unordered_map<std::int64_t, std::size_t> unchecked_expunges_;
};

// Registers peregrine_search_column(record, n) on a connection: the terms
// of column n (0 From, 1 To, 2 Cc, 3 Bcc, 4 Subject, 5 headers, 6 body) of a
// packed term record, separated by spaces (column_terms).
base::Result<void> register_search_functions(Database& db);

// Keywords as the index stores them: joined by single spaces (keywords never
// contain one).
std::string join_keywords(const std::vector<std::string>& keywords);
std::vector<std::string> split_keywords(std::string_view text);

// Runs `step` in a transaction of its own: committed when it succeeds,
// rolled back when it fails.
template <typename Step>
base::Result<void> in_transaction(Index& index, Step step) {
  auto tx = index.begin();
  if (!tx) {
    return std::unexpected(tx.error());
  }
  if (auto r = step(); !r) {
    return r;
  }
  return tx->commit();
}

}  // namespace peregrine::store::maildir
