// Message operations of MaildirUserStore: append, flags, expunge, copy,
// move, bodies, cache records and the change feed. Each follows the write
// order of docs/formats/maildir-store.md.

#include <unistd.h>

#include <algorithm>
#include <future>
#include <optional>
#include <unordered_map>
#include <utility>

#include "base/log.h"
#include "store/api/flags.h"
#include "store/maildir/maildir_user_store.h"
#include "store/maildir/names.h"
#include "store/maildir/prepared_message.h"
#include "store/maildir/sync_threads.h"

namespace peregrine::store::maildir {

using base::MailError;
using base::Result;

namespace {

// The error a file operation gives when the message's file has gone (another
// program removed or renamed it): the public calls resync and retry once.
base::Error file_missing(const base::Error& e) {
  return base::Error{MailError::kExpunged, e.message};
}

bool is_missing(const base::Error& e) { return e.code == MailError::kNotFound; }

// Waits for a SyncThreads task when the scope ends, if no one read it.
template <typename T>
struct WaitOnExit {
  std::future<T>& future;
  ~WaitOnExit() {
    if (future.valid()) {
      future.wait();
    }
  }
};

}  // namespace

// ---- Append ----

// How an append overlaps its waits (docs/formats/maildir-store.md, "Writes"):
//
//   sync thread:  write each file (unnamed, or in tmp/), fsync it, name it in
//                 cur/ (link, or rename) -> fsync cur/
//   another:      each message's search text, terms and term record (with
//                 the full-text index on), when more than one message needs
//                 them; a single message's is made on the strand, from the
//                 parse that makes its cache record
//   the strand:   parse, stage the message rows -> wait for the term records,
//                 stage them -> wait for the names -> COMMIT (fdatasync) ->
//                 wait for the fsync of cur/ -> return
//
// A message that comes with a PreparedMessage made from its bytes (an IMAP
// connection prepares each pipelined APPEND it has framed while the one
// before it runs: prepare_messages(), prepared_message.h) has its cache
// record and term record made already, on a sync thread, before this call:
// the strand takes them (waiting, if the work is still running) instead of
// parsing, and no term record task starts for it. What is stored is the
// same either way.
//
// With MaildirOptions::settle_files_later (messages up to kSettleLaterBytes)
// the sync thread only writes each file to tmp/, without an fsync (the
// strand writes a lone message's itself: nothing to overlap); the commit
// also holds the messages' bytes, and the strand renames the files into
// cur/ after it (settle.cc makes them durable later, or writes them
// back after a crash). Otherwise:
//
// The one order kept is each file's fsync before its name in cur/ (link or
// rename), and every name before the commit starts: so a name in cur/ never
// points at lost bytes, and no other reader of the Maildir meets a row whose
// file is not there yet. The directory fsync and the commit run at the same time; the
// call returns (and the caller replies) only when both are done. A crash
// between them leaves either a row whose file's name was lost (the commit
// also marked cur/ for a rescan, which expunges the row; uidnext, committed,
// never gives its UID again) or a file in cur/ the index does not know
// (adopted with a new UID). Neither was acknowledged.
Result<AppendResult> MaildirUserStore::append(std::string_view mailbox,
                                              std::span<const AppendMessage> messages) {
  // The write transaction starts first, so that the mailbox is read inside
  // it: a read of its own would take and let go of SQLite's read locks once
  // more (three fcntl calls an append). It rolls back on every way out
  // before the commit.
  auto begun = index_->begin();
  if (!begun) {
    return std::unexpected(begun.error());
  }
  std::optional<Transaction> tx(std::move(*begun));
  auto row = require_mailbox(mailbox);
  if (!row) {
    return std::unexpected(row.error());
  }
  if (messages.empty()) {
    return AppendResult{row->uidvalidity, {}};
  }

  struct Prepared {
    MessageRow row;
    std::string converted;  // the bytes with CRLF line ends, when the input had bare LF
    std::string_view bytes;
    std::filesystem::path target;
    std::string record;
    TermRecord search_text;                   // empty when the full-text index is off
    MaildirPreparedMessage* ahead = nullptr;  // record and term record made ahead
  };
  // Checks first, so that nothing is written for an append that must fail.
  std::vector<Prepared> prepared(messages.size());
  const std::filesystem::path dir = mailbox_dir(row->name);
  const std::filesystem::path cur = cur_dir(dir);
  const std::int64_t now_seconds = now_micros() / 1'000'000;
  for (std::size_t i = 0; i < messages.size(); ++i) {
    const AppendMessage& m = messages[i];
    Prepared& p = prepared[i];
    if (m.bytes.empty()) {
      return base::fail(MailError::kBadInput, "empty message");
    }
    auto keywords = normalize_keywords(m.keywords);
    if (!keywords) {
      return std::unexpected(keywords.error());
    }
    // Stored with CRLF line ends, so sizes and MIME offsets are what IMAP sends.
    p.bytes = m.bytes;
    if (p.bytes.size() <= options_.max_message_size && has_bare_lf(p.bytes)) {
      p.converted = to_crlf(p.bytes);
      p.bytes = p.converted;
    }
    if (p.bytes.size() > options_.max_message_size) {
      return base::fail(
          MailError::kTooBig,
          "message larger than " + std::to_string(options_.max_message_size) + " bytes");
    }
    p.row.meta.flags = m.flags & kAllSystemFlags;
    p.row.meta.keywords = std::move(*keywords);
    p.row.meta.internal_date = m.internal_date.value_or(InternalDate{now_seconds, 0});
    p.row.meta.size = p.bytes.size();
    p.row.base_name = new_base_name(p.bytes.size());
    p.row.file_name = file_name_with_flags(p.row.base_name, "", p.row.meta.flags);
    p.target = cur / p.row.file_name;
    // Only a handle this backend made, from exactly these bytes.
    auto* ahead = dynamic_cast<MaildirPreparedMessage*>(m.prepared);
    if (ahead != nullptr && ahead->made_from(m.bytes)) {
      p.ahead = ahead;
    }
  }

  // Settled later (MaildirOptions::settle_files_later, settle.cc): each
  // file is written to tmp/ without an fsync, the commit holds its bytes
  // with its row, and only then is it named in cur/.
  const bool later = options_.settle_files_later &&
                     std::all_of(prepared.begin(), prepared.end(), [](const Prepared& p) {
                       return p.bytes.size() <= kSettleLaterBytes;
                     });
  std::vector<std::filesystem::path> in_tmp;  // settled later: written, not yet named
  in_tmp.reserve(prepared.size());
  auto remove_in_tmp = [&](std::size_t from) {
    for (std::size_t i = from; i < in_tmp.size(); ++i) {
      (void)fs_.remove(in_tmp[i]);
    }
  };

  // On a sync thread: tmp/ -> fsync -> cur/ for every message, then tell
  // the strand (`renamed`), then fsync cur/ (the task's result). `written`
  // lists the files in cur/; a failure removes the failed message's file.
  // Settled later, only tmp/ (`in_tmp`), and the task ends there; for a
  // single message the strand runs it itself.
  std::vector<std::filesystem::path> written;
  written.reserve(prepared.size());
  std::promise<Result<void>> renamed_promise;
  std::future<Result<void>> renamed = renamed_promise.get_future();
  auto file_work = [&]() -> Result<void> {
    try {
      for (const Prepared& p : prepared) {
        if (later) {
          auto tmp = write_tmp_file(dir, p.row.base_name, p.bytes, p.row.meta.internal_date.seconds,
                                    /*sync=*/false);
          if (!tmp) {
            renamed_promise.set_value(std::unexpected(tmp.error()));
            return std::unexpected(tmp.error());
          }
          in_tmp.push_back(std::move(*tmp));
          continue;
        }
        if (auto r = create_message_file(dir, p.row.base_name, p.target, p.bytes,
                                         p.row.meta.internal_date.seconds);
            !r) {
          renamed_promise.set_value(r);
          return r;
        }
        written.push_back(p.target);
      }
    } catch (...) {
      renamed_promise.set_exception(std::current_exception());
      throw;
    }
    renamed_promise.set_value({});
    return later ? Result<void>() : fs_.sync_dir(cur);
  };
  // A single file settled later has no fsync to overlap: written here, it
  // spares a thread's wake and the wait for it (about two context switches
  // a delivery: docs/benchmarks.md, "LMTP delivery").
  std::future<Result<void>> files;
  if (later && prepared.size() == 1) {
    std::promise<Result<void>> done;
    done.set_value(file_work());
    files = done.get_future();
  } else {
    files = sync_threads().run(file_work);
  }
  // The task refers to this frame: wait for it on every way out (an
  // exception included), not only where its result is read.
  WaitOnExit wait_files{files};
  // Only after `renamed` is ready: the sync thread fills `written` until then.
  auto remove_written = [&] {
    for (const auto& path : written) {
      (void)fs_.remove(path);
    }
  };

  // Meanwhile the full-text index's share, the larger one (search text,
  // terms, packed record), is made on another thread, while the strand
  // parses each message for its cache record and stages its rows. The two
  // write different members of each Prepared.
  // A message prepared ahead has both made already; one whose work failed
  // is analysed here like the others.
  for (Prepared& p : prepared) {
    if (p.ahead == nullptr) {
      continue;
    }
    if (std::optional<AppendParts> parts = p.ahead->take()) {
      p.record = std::move(parts->record);
      p.search_text = std::move(parts->term_record);
    } else {
      p.ahead = nullptr;
    }
  }
  // For a single message (an LMTP delivery, an APPEND not framed ahead)
  // the strand makes the term record itself, from the parse that makes the
  // cache record: it waits for the file's fsync anyway, and the hand-off
  // cost more than it saved (a thread woken, which on two CPUs often took
  // the strand's own CPU, and a wait for it: docs/benchmarks.md, "LMTP
  // delivery").
  const auto unprepared = std::count_if(prepared.begin(), prepared.end(),
                                        [](const Prepared& p) { return p.ahead == nullptr; });
  const bool texts_here = options_.full_text_index && unprepared == 1;
  std::future<void> texts;
  if (options_.full_text_index && unprepared > 1) {
    texts = sync_threads().run([&prepared] {
      for (Prepared& p : prepared) {
        if (p.ahead == nullptr) {
          p.search_text = message_term_record(p.bytes);
        }
      }
    });
  }
  WaitOnExit wait_texts{texts};
  for (Prepared& p : prepared) {
    if (p.ahead != nullptr) {
      continue;
    }
    AppendParts parts = analyze_for_append(p.bytes, /*full_text_index=*/texts_here);
    p.record = std::move(parts.record);
    if (texts_here) {
      p.search_text = std::move(parts.term_record);
    }
  }
  AppendResult result;
  auto staged = [&]() -> Result<void> {
    auto current = mailbox_with_room(row->name, prepared.size());
    if (!current) {
      return std::unexpected(current.error());
    }
    Uid uid = current->uidnext;
    const ModSeq modseq = current->highest_modseq + 1;
    for (Prepared& p : prepared) {
      p.row.meta.uid = uid++;
      p.row.meta.modseq = modseq;
      if (auto r = index_->insert_message(current->id, p.row, p.record); !r) {
        return r;
      }
      if (later) {
        if (auto r = index_->insert_unsettled(current->id, p.row.meta.uid, p.bytes); !r) {
          return r;
        }
      }
    }
    if (texts.valid()) {
      texts.get();
    }
    for (const Prepared& p : prepared) {
      if (!p.search_text.empty()) {
        if (auto r = index_->insert_search_text(current->id, p.row.meta.uid, p.search_text); !r) {
          return r;
        }
      }
    }
    if (auto r = index_->set_counters(current->id, uid, modseq); !r) {
      return r;
    }
    // The next sync must read cur/ again, even if a crash takes the renames
    // (and with them cur/'s new mtime) while this commit survives: it then
    // expunges the rows whose files are missing.
    if (current->cur_mtime_ns != 0) {
      if (auto r = index_->set_scan_mtimes(current->id, 0, current->new_mtime_ns); !r) {
        return r;
      }
    }
    // The deleted records the search writer has unindexed leave
    // search_purge (a few rows at most). A failure does not fail the
    // append (SQLite undoes just that statement); they go with a later one.
    if (auto r = index_->forget_purged(); !r) {
      base::log(base::LogLevel::kWarn, "search_purge_failed",
                {{"user", user_}, {"reason", r.error().message}});
    }
    result.uidvalidity = current->uidvalidity;
    return {};
  }();
  // Every file is in cur/ (settled later: in tmp/) before the commit starts.
  Result<void> filed = renamed.get();
  if (!staged || !filed) {
    tx.reset();  // rolls back
    (void)files.get();
    remove_written();
    remove_in_tmp(0);
    return std::unexpected(!filed ? filed.error() : staged.error());
  }
  auto undo = [&](const base::Error& error) {
    std::vector<Uid> uids;
    for (const Prepared& p : prepared) {
      uids.push_back(p.row.meta.uid);
    }
    undo_committed_append(*row, uids, written);
    return std::unexpected(error);
  };

  // The strand commits (while, unless the files are settled later, the
  // sync thread fsyncs cur/).
  Result<void> committed = tx->commit();
  tx.reset();
  if (later) {
    (void)files.get();  // it ended with `renamed`
    // Durable with the commit; named now, settled later.
    if (!committed) {
      remove_in_tmp(0);
      return std::unexpected(committed.error());
    }
    for (std::size_t i = 0; i < prepared.size(); ++i) {
      if (auto r = fs_.rename(in_tmp[i], prepared[i].target); !r) {
        remove_in_tmp(i);
        return undo(r.error());
      }
      written.push_back(prepared[i].target);
      unsettled_bytes_ += prepared[i].bytes.size();
    }
    unsettled_count_ += prepared.size();
  } else {
    Result<void> synced = files.get();
    if (!committed) {
      remove_written();
      return std::unexpected(committed.error());
    }
    if (!synced) {
      return undo(synced.error());
    }
  }
  std::vector<MessageMeta> appended;
  appended.reserve(prepared.size());
  for (Prepared& p : prepared) {
    result.uids.push_back(p.row.meta.uid);
    appended.push_back(std::move(p.row.meta));
  }
  listeners_.publish_appended(static_cast<std::uint64_t>(row->id), appended);
  if (later) {
    settle_files_when_due(/*bound=*/true);
  }
  return result;
}

std::vector<std::unique_ptr<PreparedMessage>> MaildirUserStore::prepare_messages(
    std::span<const std::string_view> messages) const {
  // Without the full-text index what is left to prepare (the cache record)
  // is done on the strand while it waits for the file's fsync anyway; a
  // hand-off to another thread would only add to it.
  if (!options_.full_text_index) {
    return {};
  }
  return maildir::prepare_messages(messages,
                                   PrepareOptions{.full_text_index = options_.full_text_index,
                                                  .max_message_size = options_.max_message_size});
}

void MaildirUserStore::undo_committed_append(const MailboxRow& mailbox, std::span<const Uid> uids,
                                             std::span<const std::filesystem::path> files) {
  // The names in cur/ may not be durable, so the append fails, and what it
  // committed goes: the files first, then the rows (as expunge orders it).
  // Their UIDs stay used. If this fails too, the next sync finds rows
  // without files (the commit marked cur/ for a rescan) and expunges them.
  for (const auto& path : files) {
    (void)fs_.remove(path);
  }
  auto fresh = index_->find_mailbox(mailbox.name);
  if (!fresh || !*fresh) {
    return;
  }
  const MailboxRow& now = **fresh;
  const ModSeq modseq = now.highest_modseq + 1;
  auto tx = index_->begin();
  if (!tx) {
    return;
  }
  for (Uid uid : uids) {
    if (!index_->expunge_message(now.id, uid, modseq)) {
      return;
    }
  }
  if (index_->set_counters(now.id, now.uidnext, modseq)) {
    (void)tx->commit();
  }
}

// ---- Flags ----

Result<FlagUpdateResult> MaildirUserStore::update_flags(std::string_view mailbox,
                                                        const UidSet& uids,
                                                        const FlagUpdate& update) {
  auto keywords = normalize_keywords(update.keywords);
  if (!keywords) {
    return std::unexpected(keywords.error());
  }
  FlagUpdate normalized = update;
  normalized.keywords = std::move(*keywords);
  // A file not yet fsynced keeps its one name until it is: the bytes in
  // the index are written back under the name the index has.
  if (auto r = settle_files(); !r) {
    return std::unexpected(r.error());
  }
  for (int attempt = 0;; ++attempt) {
    auto row = require_mailbox(mailbox);
    if (!row) {
      return std::unexpected(row.error());
    }
    auto result = update_flags_once(*row, uids, normalized);
    if (result || result.error().code != MailError::kExpunged || attempt > 0) {
      return result;
    }
    // A file was renamed or removed by another program: fold that in, retry.
    if (auto r = sync_row(*row); !r) {
      return std::unexpected(r.error());
    }
  }
}

Result<FlagUpdateResult> MaildirUserStore::update_flags_once(const MailboxRow& mailbox,
                                                             const UidSet& uids,
                                                             const FlagUpdate& update) {
  auto rows = index_->messages(mailbox.id, uids);
  if (!rows) {
    return std::unexpected(rows.error());
  }
  FlagUpdateResult result;
  struct Change {
    MessageRow row;
    std::string old_file_name;
  };
  std::vector<Change> changes;
  for (MessageRow& r : *rows) {
    if (update.unchanged_since && r.meta.modseq > *update.unchanged_since) {
      result.modified.push_back(r.meta.uid);
      continue;
    }
    Change c;
    c.old_file_name = r.file_name;
    c.row = std::move(r);
    if (!apply_flag_update(update, c.row.meta.flags, c.row.meta.keywords)) {
      continue;
    }
    c.row.file_name = file_name_with_flags(
        c.row.base_name, split_file_name(c.old_file_name).letters, c.row.meta.flags);
    changes.push_back(std::move(c));
  }
  if (changes.empty()) {
    return result;
  }

  // The files first (flags live in their names, so other programs see them),
  // fsync cur/, then the index. A crash between leaves a file whose name
  // says more than the index: the next sync reads the flags from the name,
  // which is the change that was asked for. The other order could lose it.
  const std::filesystem::path cur = cur_dir(mailbox_dir(mailbox.name));
  std::vector<const Change*> renamed;
  auto undo = [&] {
    for (const Change* c : renamed) {
      (void)fs_.rename(cur / c->row.file_name, cur / c->old_file_name);
    }
  };
  for (const Change& c : changes) {
    if (c.row.file_name == c.old_file_name) {
      continue;
    }
    if (auto r = fs_.rename(cur / c.old_file_name, cur / c.row.file_name); !r) {
      undo();
      return std::unexpected(is_missing(r.error()) ? file_missing(r.error()) : r.error());
    }
    renamed.push_back(&c);
  }
  if (!renamed.empty()) {
    if (auto r = fs_.sync_dir(cur); !r) {
      undo();
      return std::unexpected(r.error());
    }
  }
  const ModSeq modseq = mailbox.highest_modseq + 1;
  auto committed = [&]() -> Result<void> {
    auto tx = index_->begin();
    if (!tx) {
      return std::unexpected(tx.error());
    }
    for (Change& c : changes) {
      c.row.meta.modseq = modseq;
      if (auto r = index_->update_message(mailbox.id, c.row); !r) {
        return r;
      }
    }
    if (auto r = index_->set_counters(mailbox.id, mailbox.uidnext, modseq); !r) {
      return r;
    }
    return tx->commit();
  }();
  if (!committed) {
    undo();
    return std::unexpected(committed.error());
  }
  result.changed.reserve(changes.size());
  for (Change& c : changes) {
    result.changed.push_back(std::move(c.row.meta));
  }
  listeners_.publish_flags_changed(static_cast<std::uint64_t>(mailbox.id), result.changed);
  return result;
}

// ---- Expunge ----

Result<std::vector<Uid>> MaildirUserStore::expunge(std::string_view mailbox, const UidSet& uids) {
  return remove_where(mailbox, uids, /*deleted_only=*/true);
}

Result<std::vector<Uid>> MaildirUserStore::remove_messages(std::string_view mailbox,
                                                           const UidSet& uids) {
  return remove_where(mailbox, uids, /*deleted_only=*/false);
}

Result<std::vector<Uid>> MaildirUserStore::remove_where(std::string_view mailbox,
                                                        const UidSet& uids, bool deleted_only) {
  // A removal is journaled only behind no pending rename: a rename replayed
  // after the removal could otherwise bring a removed file back.
  if (auto r = replay_pending_renames(); !r) {
    return std::unexpected(r.error());
  }
  auto row = require_mailbox(mailbox);
  if (!row) {
    return std::unexpected(row.error());
  }
  auto rows = index_->messages(row->id, uids);
  if (!rows) {
    return std::unexpected(rows.error());
  }
  std::vector<const MessageRow*> doomed;
  for (const MessageRow& m : *rows) {
    if (!deleted_only || (m.meta.flags & kFlagDeleted)) {
      doomed.push_back(&m);
    }
  }
  std::vector<Uid> removed;
  if (doomed.empty()) {
    return removed;
  }
  // The commit decides: it deletes the rows and journals the removal of
  // their files, in one transaction. The files go afterwards, on a sync
  // thread (RemovalQueue); until they are gone the scan treats them as
  // gone, and an open after a crash removes them. So the caller replies
  // after one commit, without waiting for the device to unlink anything
  // (docs/formats/maildir-store.md, "Expunge").
  const std::string folder = folder_dir(row->name);
  const std::filesystem::path cur = cur_dir(mailbox_dir(row->name));
  removed.reserve(doomed.size());
  for (const MessageRow* m : doomed) {
    removed.push_back(m->meta.uid);
  }
  std::vector<RemovalQueue::Item> files;
  files.reserve(doomed.size());
  const ModSeq modseq = row->highest_modseq + 1;
  {
    auto tx = index_->begin();
    if (!tx) {
      return std::unexpected(tx.error());
    }
    // The entries of earlier removals that are done go in the same commit.
    if (auto r = index_->clear_journal_entries(removals_.take_done()); !r) {
      return std::unexpected(r.error());
    }
    if (auto r = index_->expunge_messages(row->id, removed, modseq); !r) {
      return std::unexpected(r.error());
    }
    for (const MessageRow* m : doomed) {
      auto id = index_->add_pending_removal(journal_path(folder, m->file_name));
      if (!id) {
        return std::unexpected(id.error());
      }
      files.push_back(RemovalQueue::Item{*id, cur / m->file_name});
    }
    if (auto r = index_->set_counters(row->id, row->uidnext, modseq); !r) {
      return std::unexpected(r.error());
    }
    if (auto r = tx->commit(); !r) {
      return std::unexpected(r.error());
    }
  }
  listeners_.publish_expunged(static_cast<std::uint64_t>(row->id), removed, modseq);
  removals_.start(std::move(files));
  return removed;
}

// ---- Copy and move ----

Result<void> MaildirUserStore::link_or_copy(const std::filesystem::path& from,
                                            const std::filesystem::path& dest_dir,
                                            std::string_view dest_base,
                                            const std::filesystem::path& to, std::uint64_t size) {
  auto linked = fs_.link(from, to);
  if (linked || is_missing(linked.error()) || linked.error().code == MailError::kExists) {
    return linked;
  }
  // Hard links may not be possible (another filesystem, a link limit): copy.
  auto bytes = fs_.read_file(from, std::max<std::uint64_t>(size, options_.max_message_size));
  if (!bytes) {
    return std::unexpected(bytes.error());
  }
  auto info = fs_.stat(from);
  std::int64_t mtime = info ? info->mtime_ns / 1'000'000'000 : now_micros() / 1'000'000;
  return write_message_file(dest_dir, dest_base, to, *bytes, mtime);
}

Result<MailboxRow> MaildirUserStore::mailbox_with_room(std::string_view name, std::size_t count) {
  auto row = require_mailbox(name);
  if (!row) {
    return std::unexpected(row.error());
  }
  if (static_cast<std::uint64_t>(row->uidnext) + count > 0xffffffffULL) {
    return base::fail(MailError::kOverQuota, "mailbox has run out of UIDs");
  }
  return row;
}

Result<void> MaildirUserStore::insert_copy(const MailboxRow& source, Uid source_uid,
                                           const MailboxRow& dest, const MessageRow& copy,
                                           bool move) {
  if (auto r = index_->insert_message(dest.id, copy, std::nullopt); !r) {
    return r;
  }
  if (auto r = index_->copy_cache_record(source.id, source_uid, dest.id, copy.meta.uid); !r) {
    return r;
  }
  // A moved message keeps its indexed text; a copy indexes it again.
  return move ? index_->move_search_text(source.id, source_uid, dest.id, copy.meta.uid)
              : index_->copy_search_text(source.id, source_uid, dest.id, copy.meta.uid);
}

Result<CopyResult> MaildirUserStore::copy(std::string_view source, const UidSet& uids,
                                          std::string_view dest) {
  return copy_or_move(source, uids, dest, /*move=*/false);
}

Result<CopyResult> MaildirUserStore::copy_once(const MailboxRow& source,
                                               const std::vector<MessageRow>& rows,
                                               const MailboxRow& dest) {
  CopyResult result;
  result.uidvalidity = dest.uidvalidity;
  // New links in the destination's cur/, fsync it, then the index. A crash
  // before the commit leaves files the next sync adopts: a copy that was
  // not acknowledged, but nothing lost.
  const std::filesystem::path src_cur = cur_dir(mailbox_dir(source.name));
  const std::filesystem::path dest_dir = mailbox_dir(dest.name);
  std::vector<MessageRow> copies;
  std::vector<std::filesystem::path> created;
  auto undo = [&] {
    for (const auto& path : created) {
      (void)fs_.remove(path);
    }
  };
  for (const MessageRow& m : rows) {
    MessageRow c = m;
    c.base_name = new_base_name(m.meta.size);
    c.file_name =
        file_name_with_flags(c.base_name, split_file_name(m.file_name).letters, m.meta.flags);
    std::filesystem::path to = cur_dir(dest_dir) / c.file_name;
    if (auto r = link_or_copy(src_cur / m.file_name, dest_dir, c.base_name, to, m.meta.size); !r) {
      undo();
      return std::unexpected(is_missing(r.error()) ? file_missing(r.error()) : r.error());
    }
    created.push_back(std::move(to));
    copies.push_back(std::move(c));
  }
  if (auto r = fs_.sync_dir(cur_dir(dest_dir)); !r) {
    undo();
    return std::unexpected(r.error());
  }
  auto committed = [&]() -> Result<void> {
    auto tx = index_->begin();
    if (!tx) {
      return std::unexpected(tx.error());
    }
    auto current = mailbox_with_room(dest.name, copies.size());
    if (!current) {
      return std::unexpected(current.error());
    }
    result.uidvalidity = current->uidvalidity;
    Uid uid = current->uidnext;
    const ModSeq modseq = current->highest_modseq + 1;
    for (std::size_t i = 0; i < copies.size(); ++i) {
      MessageRow& c = copies[i];
      const Uid source_uid = c.meta.uid;
      c.meta.uid = uid++;
      c.meta.modseq = modseq;
      if (auto r = insert_copy(source, source_uid, *current, c, /*move=*/false); !r) {
        return r;
      }
      result.mapping.push_back(UidMapping{source_uid, c.meta.uid});
    }
    if (auto r = index_->set_counters(current->id, uid, modseq); !r) {
      return r;
    }
    return tx->commit();
  }();
  if (!committed) {
    undo();
    return std::unexpected(committed.error());
  }
  std::vector<MessageMeta> appended;
  appended.reserve(copies.size());
  for (MessageRow& c : copies) {
    appended.push_back(std::move(c.meta));
  }
  listeners_.publish_appended(static_cast<std::uint64_t>(dest.id), appended);
  return result;
}

Result<CopyResult> MaildirUserStore::move(std::string_view source, const UidSet& uids,
                                          std::string_view dest) {
  return copy_or_move(source, uids, dest, /*move=*/true);
}

Result<CopyResult> MaildirUserStore::copy_or_move(std::string_view source, const UidSet& uids,
                                                  std::string_view dest, bool move) {
  // A link to a file not yet fsynced would outlive its bytes in a crash.
  if (auto r = settle_files(); !r) {
    return std::unexpected(r.error());
  }
  for (int attempt = 0;; ++attempt) {
    auto src = require_mailbox(source);
    if (!src) {
      return std::unexpected(src.error());
    }
    auto dst = require_mailbox(dest);
    if (!dst) {
      return std::unexpected(dst.error());
    }
    if (move && src->id == dst->id) {
      return base::fail(MailError::kBadInput, "source and destination are the same mailbox");
    }
    auto rows = index_->messages(src->id, uids);
    if (!rows) {
      return std::unexpected(rows.error());
    }
    if (rows->empty()) {
      CopyResult result;
      result.uidvalidity = dst->uidvalidity;
      return result;
    }
    auto result = move ? move_once(*src, *rows, *dst) : copy_once(*src, *rows, *dst);
    if (result || result.error().code != MailError::kExpunged || attempt > 0) {
      return result;
    }
    if (auto r = sync_row(*src); !r) {
      return std::unexpected(r.error());
    }
  }
}

Result<CopyResult> MaildirUserStore::move_once(const MailboxRow& source,
                                               const std::vector<MessageRow>& rows,
                                               const MailboxRow& dest) {
  CopyResult result;
  result.uidvalidity = dest.uidvalidity;
  const std::filesystem::path src_cur = cur_dir(mailbox_dir(source.name));
  for (const MessageRow& m : rows) {
    if (auto info = fs_.stat(src_cur / m.file_name); !info) {
      return std::unexpected(is_missing(info.error()) ? file_missing(info.error()) : info.error());
    }
  }
  // The index first, in one transaction that also journals the file renames;
  // then the renames. A crash between is finished by the journal replay at
  // the next open or sync. Renaming first could, after a crash, turn the
  // moved files into new messages and lose their keywords.
  const std::string src_rel = folder_dir(source.name);
  const std::string dest_rel = folder_dir(dest.name);
  std::vector<MessageMeta> appended;
  std::vector<Uid> expunged;
  const ModSeq src_modseq = source.highest_modseq + 1;
  {
    auto tx = index_->begin();
    if (!tx) {
      return std::unexpected(tx.error());
    }
    auto current = mailbox_with_room(dest.name, rows.size());
    if (!current) {
      return std::unexpected(current.error());
    }
    result.uidvalidity = current->uidvalidity;
    Uid uid = current->uidnext;
    const ModSeq modseq = current->highest_modseq + 1;
    for (const MessageRow& m : rows) {
      MessageRow moved = m;
      moved.meta.uid = uid++;
      moved.meta.modseq = modseq;
      if (auto r = insert_copy(source, m.meta.uid, *current, moved, /*move=*/true); !r) {
        return std::unexpected(r.error());
      }
      if (auto r = index_->expunge_message(source.id, m.meta.uid, src_modseq); !r) {
        return std::unexpected(r.error());
      }
      if (auto r = index_->add_pending_rename(journal_path(src_rel, m.file_name),
                                              journal_path(dest_rel, m.file_name));
          !r) {
        return std::unexpected(r.error());
      }
      result.mapping.push_back(UidMapping{m.meta.uid, moved.meta.uid});
      expunged.push_back(m.meta.uid);
      appended.push_back(std::move(moved.meta));
    }
    if (auto r = index_->set_counters(current->id, uid, modseq); !r) {
      return std::unexpected(r.error());
    }
    if (auto r = index_->set_counters(source.id, source.uidnext, src_modseq); !r) {
      return std::unexpected(r.error());
    }
    if (auto r = tx->commit(); !r) {
      return std::unexpected(r.error());
    }
  }
  // Committed: the move has happened. A failed rename stays in the journal
  // and is retried at the next sync; open_body looks there too.
  (void)replay_pending_renames();
  listeners_.publish_expunged(static_cast<std::uint64_t>(source.id), expunged, src_modseq);
  listeners_.publish_appended(static_cast<std::uint64_t>(dest.id), appended);
  return result;
}

// ---- Reading ----

Result<std::unique_ptr<Body>> MaildirUserStore::open_body(std::string_view mailbox, Uid uid) {
  // The mailbox and the message: two reads, one snapshot.
  auto found = [&]() -> Result<std::pair<MailboxRow, std::optional<MessageRow>>> {
    ReadScope read = index_->read_scope();
    auto row = require_mailbox(mailbox);
    if (!row) {
      return std::unexpected(row.error());
    }
    auto m = index_->message(row->id, uid);
    if (!m) {
      return std::unexpected(m.error());
    }
    return std::pair{std::move(*row), std::move(*m)};
  }();
  if (!found) {
    return std::unexpected(found.error());
  }
  const MailboxRow& row = found->first;
  const std::optional<MessageRow>& m = found->second;
  if (!m) {
    if (uid == 0 || uid >= row.uidnext) {
      return base::fail(MailError::kNotFound, "no message with UID " + std::to_string(uid));
    }
    return base::fail(MailError::kExpunged, "message " + std::to_string(uid) + " was expunged");
  }
  const std::filesystem::path dir = mailbox_dir(row.name);
  auto body = fs_.open_body(cur_dir(dir) / m->file_name);
  if (body || !is_missing(body.error())) {
    return body;
  }
  // Not where the index says: a rename still in the journal, or another
  // program renamed it (flags) or moved it back to new/. Look by base name.
  (void)replay_pending_renames();
  for (const auto& sub : {cur_dir(dir), new_dir(dir)}) {
    auto entries = fs_.list_dir(sub);
    if (!entries) {
      continue;
    }
    for (const DirEntry& e : *entries) {
      if (split_file_name(e.name).base == m->base_name) {
        auto opened = fs_.open_body(sub / e.name);
        if (opened) {
          return opened;
        }
      }
    }
  }
  return base::fail(MailError::kExpunged,
                    "message " + std::to_string(uid) + " was removed from the Maildir");
}

namespace {

// A snapshot of where each message's file is: opening one reads no index.
class MaildirBodySource final : public BodySource {
 public:
  MaildirBodySource(MaildirFs& fs, std::unordered_map<Uid, std::filesystem::path> paths)
      : fs_(fs), paths_(std::move(paths)) {}

  Result<std::unique_ptr<Body>> open(Uid uid) const override {
    auto it = paths_.find(uid);
    if (it == paths_.end()) {
      return base::fail(MailError::kNotFound, "message " + std::to_string(uid) + " is not known");
    }
    return fs_.open_body(it->second);  // ENOENT is kNotFound
  }

 private:
  MaildirFs& fs_;
  const std::unordered_map<Uid, std::filesystem::path> paths_;
};

}  // namespace

Result<std::shared_ptr<const BodySource>> MaildirUserStore::body_source(std::string_view mailbox) {
  auto row = require_mailbox(mailbox);
  if (!row) {
    return std::unexpected(row.error());
  }
  auto rows = index_->messages(row->id, UidSet::all());
  if (!rows) {
    return std::unexpected(rows.error());
  }
  const std::filesystem::path cur = cur_dir(mailbox_dir(row->name));
  std::unordered_map<Uid, std::filesystem::path> paths;
  paths.reserve(rows->size());
  for (const MessageRow& m : *rows) {
    paths.emplace(m.meta.uid, cur / m.file_name);
  }
  return std::make_shared<const MaildirBodySource>(fs_, std::move(paths));
}

Result<std::vector<CacheEntry>> MaildirUserStore::cache_records(std::string_view mailbox,
                                                                const UidSet& uids) {
  ReadScope read = index_->read_scope();
  auto row = require_mailbox(mailbox);
  if (!row) {
    return std::unexpected(row.error());
  }
  return index_->cache_records(row->id, uids);
}

Result<ChangeSet> MaildirUserStore::changes_since(std::string_view mailbox, ModSeq since) {
  auto row = require_mailbox(mailbox);
  if (!row) {
    return std::unexpected(row.error());
  }
  auto changed = index_->changed_since(row->id, since);
  if (!changed) {
    return std::unexpected(changed.error());
  }
  auto expunged = index_->expunged_since(row->id, since);
  if (!expunged) {
    return std::unexpected(expunged.error());
  }
  auto floor = index_->expunged_floor(row->id);
  if (!floor) {
    return std::unexpected(floor.error());
  }
  ChangeSet set;
  set.highest_modseq = row->highest_modseq;
  set.changed.reserve(changed->size());
  for (MessageRow& m : *changed) {
    set.changed.push_back(std::move(m.meta));
  }
  set.expunged = std::move(*expunged);
  set.expunged_complete = since >= *floor;
  return set;
}

}  // namespace peregrine::store::maildir
