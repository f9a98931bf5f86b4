#pragma once

// The Maildir backend's UserStore (internal to store/maildir; use
// MaildirStore::open_user). Its code is split by responsibility:
//   maildir_user_store.cc   opening, initialization, shared helpers
//   mailboxes.cc            list, create, delete, rename, subscribe, status
//   messages.cc             append, flags, expunge, copy, move, bodies, changes
//   sync.cc                 folding in what other programs did
//   settle.cc               files whose bytes wait in the index
//
// Every write follows the order in docs/formats/maildir-store.md: the files
// are made durable first, the index commits last, and only then do the call
// return success and the listeners hear of it. An append with
// MaildirOptions::settle_files_later reverses the first two: the index
// commits the message's bytes with its row, and its file is fsynced later.

#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "store/api/listener.h"
#include "store/api/user_store.h"
#include "store/maildir/index.h"
#include "store/maildir/maildir_fs.h"
#include "store/maildir/maildir_store.h"
#include "store/maildir/removal_queue.h"

namespace peregrine::store::maildir {

class MaildirUserStore final : public UserStore {
 public:
  // Opens the user's Maildir and index under `root`, creating them and the
  // default mailboxes on first use, and finishes any work a crash left
  // undone (the journal's renames and removals, half-deleted folders).
  static base::Result<std::unique_ptr<MaildirUserStore>> open(std::string user,
                                                              std::filesystem::path root,
                                                              const MaildirOptions& options);

  // Waits for the removals of expunged messages' files still running, and
  // deletes their journal entries.
  ~MaildirUserStore() override;

  const std::string& user() const override { return user_; }

  using UserStore::append;
  using UserStore::create_mailbox;
  using UserStore::expunge;

  base::Result<std::vector<MailboxEntry>> list_mailboxes() override;
  base::Result<std::vector<std::string>> list_subscriptions() override;
  base::Result<void> create_mailbox(std::string_view name, SpecialUse use) override;
  base::Result<void> delete_mailbox(std::string_view name) override;
  base::Result<void> rename_mailbox(std::string_view from, std::string_view to) override;
  base::Result<void> subscribe(std::string_view name) override;
  base::Result<void> unsubscribe(std::string_view name) override;
  base::Result<MailboxInfo> status(std::string_view mailbox) override;
  base::Result<MailboxSnapshot> open_mailbox(std::string_view mailbox) override;
  base::Result<std::vector<Uid>> claim_recent(std::string_view mailbox) override;
  base::Result<Watch> watch(std::string_view mailbox, MailboxListener& listener) override;

  base::Result<AppendResult> append(std::string_view mailbox,
                                    std::span<const AppendMessage> messages) override;
  // Reads only options_, which is fixed once the store is open
  // (prepared_message.h).
  std::vector<std::unique_ptr<PreparedMessage>> prepare_messages(
      std::span<const std::string_view> messages) const override;
  base::Result<FlagUpdateResult> update_flags(std::string_view mailbox, const UidSet& uids,
                                              const FlagUpdate& update) override;
  base::Result<std::vector<Uid>> expunge(std::string_view mailbox, const UidSet& uids) override;
  base::Result<std::vector<Uid>> remove_messages(std::string_view mailbox,
                                                 const UidSet& uids) override;
  base::Result<CopyResult> copy(std::string_view source, const UidSet& uids,
                                std::string_view dest) override;
  base::Result<CopyResult> move(std::string_view source, const UidSet& uids,
                                std::string_view dest) override;
  base::Result<std::unique_ptr<Body>> open_body(std::string_view mailbox, Uid uid) override;
  // The files' paths in cur/ as the index has them now. Valid as long as
  // the store's filesystem seam (MaildirOptions::fs) lives; it may outlive
  // the store.
  base::Result<std::shared_ptr<const BodySource>> body_source(std::string_view mailbox) override;
  base::Result<std::vector<CacheEntry>> cache_records(std::string_view mailbox,
                                                      const UidSet& uids) override;
  base::Result<ChangeSet> changes_since(std::string_view mailbox, ModSeq since) override;
  base::Result<void> sync() override;
  base::Result<void> sync_mailbox(std::string_view mailbox) override;

  base::Result<std::optional<TextCandidates>> text_candidates(std::string_view mailbox,
                                                              const TextQuery& query) override;
  base::Result<SearchIndexStats> search_index_stats() override;
  base::Result<SearchIndexStats> rebuild_search_index() override;
  // The index's batch when one is due, then settle_files() when enough
  // files wait.
  void upkeep() override;
  bool upkeep_due() override;
  // Returns once the full-text index's background batches are done (for
  // tests: upkeep and appends only ask for them; Index::request_batch).
  void wait_for_index_batches() { index_->wait_for_batches(); }
  // Makes every file whose bytes wait in the index durable (the files, then
  // their cur/ directories), then lets the index forget the bytes. A file
  // found missing keeps its bytes (a sync expunges its message, or the next
  // open writes it back). Also run at close, and before anything renames or
  // links a message file (flags, copy, move, folder renames and deletes).
  // Reads nothing when none of this store's appends left a file waiting.
  base::Result<void> settle_files();
  // Files whose bytes wait in the index (for tests and tools).
  std::size_t unsettled_files() const { return unsettled_count_; }

  // The Maildir directory (for tests and tools).
  const std::filesystem::path& maildir() const { return maildir_; }
  // Returns once the files of every expunge so far have been removed (or
  // failed to be): an expunge returns before that (RemovalQueue). For tests
  // and tools that look at the files.
  void wait_for_removals() { removals_.wait(); }

 private:
  MaildirUserStore(std::string user, std::filesystem::path root, const MaildirOptions& options,
                   std::unique_ptr<Index> index);

  // ---- maildir_user_store.cc ----
  base::Result<void> initialize();
  // The directory of a canonical mailbox name.
  std::filesystem::path mailbox_dir(std::string_view name) const;
  // The canonical name's row; kNotFound "no such mailbox".
  base::Result<MailboxRow> require_mailbox(std::string_view name);
  // Creates dir, cur/, new/, tmp/ (and maildirfolder for a folder) as far as
  // they are missing, and makes them durable; dir's own entry in its parent
  // only with sync_parent (else the caller fsyncs the parent once for many).
  base::Result<void> make_folder(const std::filesystem::path& dir, bool is_inbox,
                                 bool sync_parent = true);
  // Removes a directory tree; best effort, returns the first error.
  base::Result<void> remove_tree(const std::filesystem::path& dir);
  // Does the renames the journal lists and deletes their entries; the
  // removals are left to the RemovalQueue (or, after a crash, to the open).
  base::Result<void> replay_pending_renames() { return replay_journal(false); }
  // Does what the journal lists, in order: its renames, and with `removals`
  // its removals too (a missing file counts as done); then fsyncs the
  // directories touched and deletes the entries done.
  base::Result<void> replay_journal(bool removals);
  // Before a folder is renamed or deleted, which would move files the
  // journal names: settles the files that wait (settle_files), waits for
  // the running removals and does the rest.
  base::Result<void> finish_removals();
  // A new UIDVALIDITY (Index::take_uidvalidity), inside the caller's
  // transaction, recorded in the Maildir before the caller commits.
  base::Result<std::uint32_t> take_uidvalidity();
  // Writes the Maildir's record of the last UIDVALIDITY given out, so that an
  // index rebuilt from the Maildir never gives one out again.
  base::Result<void> record_uidvalidity(std::uint32_t value);
  // A base name no other file of this process or host has.
  std::string new_base_name(std::uint64_t size);
  // Writes `bytes` to tmp/ of `dir`, dates it, fsyncs it, and renames it to
  // `cur_path` (replacing a file of that name). Nothing is left behind on
  // failure.
  base::Result<void> write_message_file(const std::filesystem::path& dir,
                                        std::string_view base_name,
                                        const std::filesystem::path& cur_path,
                                        std::string_view bytes, std::int64_t mtime_seconds);
  // Writes `bytes` to tmp/`base_name` of `dir`, dated, fsynced only with
  // `sync`; returns its path. Nothing is left behind on failure.
  base::Result<std::filesystem::path> write_tmp_file(const std::filesystem::path& dir,
                                                     std::string_view base_name,
                                                     std::string_view bytes,
                                                     std::int64_t mtime_seconds, bool sync);
  // The same for a name no file has yet (a new message's): an unnamed file
  // linked in place (MaildirFs::write_unnamed) where the filesystem has
  // them, else write_message_file().
  base::Result<void> create_message_file(const std::filesystem::path& dir,
                                         std::string_view base_name,
                                         const std::filesystem::path& cur_path,
                                         std::string_view bytes, std::int64_t mtime_seconds);

  // ---- messages.cc ----
  // After an append committed but its directory fsync failed: removes its
  // files, then expunges its rows (`uids`) in a transaction of their own.
  // Best effort; what is left, the next sync settles.
  void undo_committed_append(const MailboxRow& mailbox, std::span<const Uid> uids,
                             std::span<const std::filesystem::path> files);
  // The messages of `uids` (only those with \Deleted when `deleted_only`)
  // removed: expunge() and remove_messages().
  base::Result<std::vector<Uid>> remove_where(std::string_view mailbox, const UidSet& uids,
                                              bool deleted_only);
  base::Result<FlagUpdateResult> update_flags_once(const MailboxRow& mailbox, const UidSet& uids,
                                                   const FlagUpdate& update);
  // The row of mailbox `name`, read inside the caller's transaction; kOverQuota
  // when `count` more UIDs would take uidnext past 2^32 - 1.
  base::Result<MailboxRow> mailbox_with_room(std::string_view name, std::size_t count);
  // Inserts `copy` (with its new UID) into `dest`, with the cache record and
  // search text of message `source_uid` of `source` (handed over when `move`).
  base::Result<void> insert_copy(const MailboxRow& source, Uid source_uid, const MailboxRow& dest,
                                 const MessageRow& copy, bool move);
  // copy_once or move_once of messages `uids` (none is a success) between the
  // named mailboxes; when a message file vanished under it (kExpunged),
  // resyncs the source and tries once more.
  base::Result<CopyResult> copy_or_move(std::string_view source, const UidSet& uids,
                                        std::string_view dest, bool move);
  // Copy or move `rows` (not empty) of `source` to `dest`.
  base::Result<CopyResult> copy_once(const MailboxRow& source, const std::vector<MessageRow>& rows,
                                     const MailboxRow& dest);
  base::Result<CopyResult> move_once(const MailboxRow& source, const std::vector<MessageRow>& rows,
                                     const MailboxRow& dest);
  // Links (or, across filesystems, copies) a message file to a new name.
  base::Result<void> link_or_copy(const std::filesystem::path& from,
                                  const std::filesystem::path& dest_dir, std::string_view dest_base,
                                  const std::filesystem::path& to, std::uint64_t size);

  // ---- mailboxes.cc ----
  // The canonical form of `name` for a mailbox about to be made: kExists if
  // it is INBOX or a mailbox of that name exists.
  base::Result<std::string> new_mailbox_name(std::string_view name);
  base::Result<void> rename_inbox(std::string_view to);

  // ---- settle.cc ----
  // At open: writes back (tmp/, fsync, rename over) the file of every
  // message whose bytes a crash left waiting in the index, then lets the
  // index forget them.
  base::Result<void> restore_unsettled_files();
  // settle_files() when any file waits; a failure is logged, and leaves
  // the bytes in the index.
  void settle_files_if_any();
  // settle_files() when upkeep has enough to settle (kSettleAt files or
  // kSettleAtBytes), or with `bound` when an append has let too many wait
  // (kMostUnsettled files or kMostUnsettledBytes).
  void settle_files_when_due(bool bound);
  // Whether settle_files_when_due(bound) would settle.
  bool settle_due(bool bound) const;

  // ---- search.cc ----
  // The word index's batch, in a commit without fsync, when at least
  // Index::kWaitingDocs records wait (upkeep).
  void run_due_index_batch();
  // Whether run_due_index_batch() would run a batch (a failed count says
  // yes: the batch logs it).
  bool index_batch_due();
  // At open, with the index on: rebuilds a missing or damaged word index
  // from the term records, then indexes the messages that have no record yet.
  base::Result<void> check_search_index();
  // At open, with the index on or off: unindexes every deleted record still
  // pending (search_purge), in batches of one transaction each; rebuilds the
  // word index if a pending record cannot be read.
  base::Result<void> purge_search_index();
  // Stores and indexes the term record of every message that has none,
  // reading the message files, in batches of one transaction each.
  base::Result<void> index_missing_texts();

  // ---- sync.cc ----
  // Adopts folder directories other programs made and forgets mailboxes
  // whose directory is gone. `force` skips the root mtime check.
  base::Result<void> scan_folders(bool force);
  base::Result<void> sync_row(const MailboxRow& mailbox);
  // Whether cur/ and new/ (as `cur` and `incoming` found them) are as the
  // mailbox's last full scan saw them.
  static bool scanned_as(const MailboxRow& row, const base::FileInfo& cur,
                         const base::FileInfo& incoming);
  // scanned_as() with the directories' stat now; false when either cannot
  // be read (sync_row then repairs or forgets the folder).
  bool unchanged_since_scan(const MailboxRow& row);
  // True when new/ holds no file and cur/ exactly the files the index names
  // (the common outcome of a scan), compared by name only.
  base::Result<bool> cur_matches_index(std::int64_t mailbox_id,
                                       const std::vector<DirEntry>& cur_entries,
                                       const std::vector<DirEntry>& new_entries);
  // Stores the mtimes a scan that changed nothing saw, in a commit without
  // fsync, unless the index holds them already.
  base::Result<void> record_scan_marks(const MailboxRow& mailbox, std::int64_t cur_mark,
                                       std::int64_t new_mark);
  // Drops from `names` (file names in cur/ of `mailbox` that the index does
  // not know) those whose removal the journal lists.
  base::Result<void> skip_pending_removals(std::string_view mailbox,
                                           std::vector<std::string>& names);
  // Drops a mailbox whose folder another program removed.
  base::Result<void> forget_mailbox(const MailboxRow& mailbox);
  // Removes "..deleted.*" directories left by an interrupted delete.
  void remove_deleted_leftovers(const std::vector<DirEntry>& root_entries);
  // Removes files older than 36 hours from tmp/, once per mailbox per open.
  void clean_tmp(const MailboxRow& mailbox, const std::filesystem::path& dir);

  std::string user_;
  std::filesystem::path root_;
  std::filesystem::path maildir_;
  MaildirOptions options_;
  MaildirFs& fs_;
  std::unique_ptr<Index> index_;
  // After index_: destroyed (waiting for its removals) before the index.
  RemovalQueue removals_{fs_};
  ListenerRegistry listeners_;
  std::int64_t root_mtime_ns_ = 0;  // of the Maildir at the last folder scan; 0: rescan
  std::set<std::int64_t> tmp_cleaned_;
  // Files appended with settle_files_later not yet settled, and their bytes.
  std::size_t unsettled_count_ = 0;
  std::uint64_t unsettled_bytes_ = 0;
};

// The largest message whose file an append settles later (larger ones are
// fsynced before the commit, as without settle_files_later: their bytes
// would be written three times, to the WAL, the index and the file).
inline constexpr std::size_t kSettleLaterBytes = 1024 * 1024;
// Upkeep settles the waiting files from this many (or bytes) on.
inline constexpr std::size_t kSettleAt = 32;
inline constexpr std::uint64_t kSettleAtBytes = 4 * 1024 * 1024;
// An append settles them itself from this many (or bytes) on.
inline constexpr std::size_t kMostUnsettled = 256;
inline constexpr std::uint64_t kMostUnsettledBytes = 32 * 1024 * 1024;

// ---- Shared by the .cc files ----

// The term record (term_record.h) of a message's case-folded search text.
TermRecord packed_search_text(mime::SearchText text);
// The term record of a message's bytes (no bytes: of an empty text).
TermRecord message_term_record(std::string_view bytes);

// A path relative to the Maildir, as the journal holds it: `file` in cur/ of
// the folder directory `folder` (folder_dir(), empty for INBOX).
std::string journal_path(std::string_view folder, std::string_view file);

// Wall-clock time.
std::int64_t now_micros();
// Whether a directory mtime is too close to now to prove that nothing
// changed after it (timestamps are coarse): such a scan is redone next time.
bool mtime_too_recent(std::int64_t mtime_ns);
// "cur" or "new" below a mailbox directory.
inline std::filesystem::path cur_dir(const std::filesystem::path& dir) { return dir / "cur"; }
inline std::filesystem::path new_dir(const std::filesystem::path& dir) { return dir / "new"; }
inline std::filesystem::path tmp_dir(const std::filesystem::path& dir) { return dir / "tmp"; }

}  // namespace peregrine::store::maildir
