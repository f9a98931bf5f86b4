// Folding in what other programs did to the Maildir: folders created or
// removed, files delivered to new/ or cur/, flags changed by renaming,
// files removed. The rules are in docs/formats/maildir-store.md ("Sync").

#include <sys/stat.h>

#include <algorithm>
#include <charconv>
#include <unordered_map>
#include <unordered_set>
#include <utility>

#include "base/log.h"
#include "mime/cache_record.h"
#include "store/maildir/maildir_user_store.h"
#include "store/maildir/names.h"

namespace peregrine::store::maildir {

using base::MailError;
using base::Result;

namespace {

constexpr std::int64_t kTmpMaxAgeNs = 36LL * 3600 * 1'000'000'000;

bool is_plain_file_entry(const DirEntry& e) {
  return !e.name.empty() && e.name.front() != '.' &&
         (e.type == DirEntry::Type::kFile || e.type == DirEntry::Type::kUnknown);
}

// Maildir names start with the delivery time in seconds: order by that
// number, then by name, so new UIDs follow the order of arrival.
bool arrival_order(const std::string& a, const std::string& b) {
  auto leading = [](const std::string& s) {
    std::uint64_t n = UINT64_MAX;
    std::from_chars(s.data(), s.data() + s.size(), n);
    return n;
  };
  auto na = leading(a);
  auto nb = leading(b);
  return na != nb ? na < nb : a < b;
}

std::int64_t seconds_of(std::int64_t ns) {
  std::int64_t s = ns / 1'000'000'000;
  return (ns % 1'000'000'000 < 0) ? s - 1 : s;
}

}  // namespace

Result<void> MaildirUserStore::sync() {
  if (auto r = replay_pending_renames(); !r) {
    return r;
  }
  if (auto r = scan_folders(false); !r) {
    return r;
  }
  auto rows = index_->all_mailboxes();
  if (!rows) {
    return std::unexpected(rows.error());
  }
  // One unreadable folder must not keep the others from syncing.
  Result<void> first_error;
  for (const MailboxRow& row : *rows) {
    auto r = sync_row(row);
    if (!r && first_error) {
      first_error = r;
    }
  }
  return first_error;
}

Result<void> MaildirUserStore::sync_mailbox(std::string_view mailbox) {
  {
    // The usual outcome, nothing to do, found in one read transaction: no
    // rename waits in the journal, and neither of the mailbox's directories
    // changed since a scan that saw everything. (Each check below reads
    // again, in transactions of its own.)
    ReadScope read = index_->read_scope();
    auto pending = index_->has_pending_renames();
    auto row = require_mailbox(mailbox);
    if (pending && !*pending && row && unchanged_since_scan(*row)) {
      return {};
    }
  }
  if (auto r = replay_pending_renames(); !r) {
    return r;
  }
  auto row = require_mailbox(mailbox);
  if (!row) {
    return std::unexpected(row.error());
  }
  return sync_row(*row);
}

void MaildirUserStore::remove_deleted_leftovers(const std::vector<DirEntry>& root_entries) {
  for (const DirEntry& e : root_entries) {
    if (e.name.starts_with("..deleted.")) {
      (void)remove_tree(maildir_ / e.name);
    }
  }
}

Result<void> MaildirUserStore::scan_folders(bool force) {
  auto info = fs_.stat(maildir_);
  if (!info) {
    return std::unexpected(info.error());
  }
  if (!force && root_mtime_ns_ != 0 && info->mtime_ns == root_mtime_ns_) {
    return {};
  }
  auto entries = fs_.list_dir(maildir_);
  if (!entries) {
    return std::unexpected(entries.error());
  }
  remove_deleted_leftovers(*entries);

  std::set<std::string, std::less<>> on_disk;
  for (const DirEntry& e : *entries) {
    if (e.type != DirEntry::Type::kDirectory && e.type != DirEntry::Type::kUnknown) {
      continue;
    }
    auto name = mailbox_name_from_dir(e.name);
    if (!name) {
      continue;
    }
    // A folder is a directory with cur/ in it.
    auto cur = fs_.stat(cur_dir(maildir_ / e.name));
    if (cur && S_ISDIR(cur->mode)) {
      on_disk.insert(std::move(*name));
    }
  }
  auto rows = index_->all_mailboxes();
  if (!rows) {
    return std::unexpected(rows.error());
  }
  std::set<std::string, std::less<>> known;
  bool have_inbox = false;
  for (const MailboxRow& row : *rows) {
    known.insert(row.name);
    have_inbox |= row.name == kInbox;
  }
  std::vector<std::string> adopt;
  for (const std::string& name : on_disk) {
    if (!known.contains(name)) {
      if (auto r = make_folder(mailbox_dir(name), false); !r) {
        return r;
      }
      adopt.push_back(name);
    }
  }
  if (!adopt.empty() || !have_inbox) {
    auto tx = index_->begin();
    if (!tx) {
      return std::unexpected(tx.error());
    }
    if (!have_inbox) {
      adopt.insert(adopt.begin(), std::string(kInbox));
    }
    std::uint32_t last_uidvalidity = 0;
    for (const std::string& name : adopt) {
      auto uidvalidity = index_->take_uidvalidity(now_micros() / 1'000'000);
      if (!uidvalidity) {
        return std::unexpected(uidvalidity.error());
      }
      last_uidvalidity = *uidvalidity;
      MailboxRow row;
      row.name = name;
      row.uidvalidity = *uidvalidity;
      if (auto id = index_->insert_mailbox(row); !id) {
        return std::unexpected(id.error());
      }
    }
    if (auto r = record_uidvalidity(last_uidvalidity); !r) {
      return r;
    }
    if (auto r = tx->commit(); !r) {
      return r;
    }
  }
  for (const MailboxRow& row : *rows) {
    if (row.name == kInbox || on_disk.contains(row.name)) {
      continue;
    }
    auto dir = fs_.stat(mailbox_dir(row.name));
    if (!dir && dir.error().code == MailError::kNotFound) {
      if (auto r = forget_mailbox(row); !r) {
        return r;
      }
    }
  }
  root_mtime_ns_ = mtime_too_recent(info->mtime_ns) ? 0 : info->mtime_ns;
  return {};
}

Result<void> MaildirUserStore::forget_mailbox(const MailboxRow& mailbox) {
  auto tx = index_->begin();
  if (!tx) {
    return std::unexpected(tx.error());
  }
  if (auto r = index_->delete_mailbox(mailbox.id); !r) {
    return r;
  }
  if (auto r = tx->commit(); !r) {
    return r;
  }
  listeners_.publish_mailbox_deleted(static_cast<std::uint64_t>(mailbox.id));
  return {};
}

void MaildirUserStore::clean_tmp(const MailboxRow& mailbox, const std::filesystem::path& dir) {
  if (!tmp_cleaned_.insert(mailbox.id).second) {
    return;
  }
  // Maildir: a file in tmp/ untouched for 36 hours is a dead delivery.
  auto entries = fs_.list_dir(tmp_dir(dir));
  if (!entries) {
    return;
  }
  const std::int64_t cutoff = now_micros() * 1000 - kTmpMaxAgeNs;
  for (const DirEntry& e : *entries) {
    auto info = fs_.stat(tmp_dir(dir) / e.name);
    if (info && info->is_regular() && info->mtime_ns < cutoff) {
      (void)fs_.remove(tmp_dir(dir) / e.name);
    }
  }
}

Result<void> MaildirUserStore::skip_pending_removals(std::string_view mailbox,
                                                     std::vector<std::string>& names) {
  auto pending = index_->pending_removals();
  if (!pending) {
    return std::unexpected(pending.error());
  }
  if (pending->empty()) {
    return {};
  }
  const std::string prefix = journal_path(folder_dir(mailbox), "");
  std::unordered_set<std::string_view> doomed;
  for (const std::string& path : *pending) {
    if (path.starts_with(prefix)) {
      doomed.insert(std::string_view(path).substr(prefix.size()));
    }
  }
  std::erase_if(names, [&](const std::string& name) { return doomed.contains(name); });
  return {};
}

Result<bool> MaildirUserStore::cur_matches_index(std::int64_t mailbox_id,
                                                 const std::vector<DirEntry>& cur_entries,
                                                 const std::vector<DirEntry>& new_entries) {
  if (std::any_of(new_entries.begin(), new_entries.end(), is_plain_file_entry)) {
    return false;
  }
  std::unordered_set<std::string_view> names;
  names.reserve(cur_entries.size());
  for (const DirEntry& e : cur_entries) {
    if (is_plain_file_entry(e)) {
      names.insert(e.name);
    }
  }
  // Index names are distinct (base names are), so as many names, each
  // found, is the same set.
  std::size_t found = 0;
  bool all_found = true;
  auto r = index_->each_file_name(mailbox_id, [&](std::string_view name) {
    all_found = names.contains(name);
    found += all_found ? 1 : 0;
    return all_found;
  });
  if (!r) {
    return std::unexpected(r.error());
  }
  return all_found && found == names.size();
}

Result<void> MaildirUserStore::record_scan_marks(const MailboxRow& row, std::int64_t cur_mark,
                                                 std::int64_t new_mark) {
  if (cur_mark == row.cur_mtime_ns && new_mark == row.new_mtime_ns) {
    return {};
  }
  // A commit that only records the mtimes needs no fsync: lost in a crash,
  // it costs the next sync one more scan (typically the first sync after a
  // delivery, at a POP3 login or an IMAP SELECT).
  Index::QuickCommits quick(*index_);
  auto tx = index_->begin();
  if (!tx) {
    return std::unexpected(tx.error());
  }
  if (auto r = index_->set_scan_mtimes(row.id, cur_mark, new_mark); !r) {
    return r;
  }
  return tx->commit();
}

bool MaildirUserStore::scanned_as(const MailboxRow& row, const base::FileInfo& cur,
                                  const base::FileInfo& incoming) {
  return row.cur_mtime_ns != 0 && row.cur_mtime_ns == cur.mtime_ns &&
         row.new_mtime_ns == incoming.mtime_ns;
}

bool MaildirUserStore::unchanged_since_scan(const MailboxRow& row) {
  const std::filesystem::path dir = mailbox_dir(row.name);
  auto cur = fs_.stat(cur_dir(dir));
  auto incoming = fs_.stat(new_dir(dir));
  return cur && incoming && scanned_as(row, *cur, *incoming);
}

Result<void> MaildirUserStore::sync_row(const MailboxRow& stale) {
  auto found = index_->find_mailbox(stale.name);
  if (!found) {
    return std::unexpected(found.error());
  }
  if (!*found) {
    return {};  // gone meanwhile
  }
  const MailboxRow row = std::move(**found);
  const bool is_inbox = row.name == kInbox;
  const std::filesystem::path dir = mailbox_dir(row.name);
  const std::filesystem::path cur = cur_dir(dir);
  const std::filesystem::path incoming = new_dir(dir);

  auto cur_info = fs_.stat(cur);
  auto new_info = fs_.stat(incoming);
  if (!cur_info || !new_info) {
    const base::Error& e = !cur_info ? cur_info.error() : new_info.error();
    if (e.code != MailError::kNotFound) {
      return std::unexpected(e);
    }
    if (!is_inbox) {
      if (auto d = fs_.stat(dir); !d && d.error().code == MailError::kNotFound) {
        return forget_mailbox(row);
      }
    }
    // A damaged folder: make it whole again; its lost files become expunges.
    if (auto r = make_folder(dir, is_inbox); !r) {
      return r;
    }
    cur_info = fs_.stat(cur);
    new_info = fs_.stat(incoming);
    if (!cur_info || !new_info) {
      return std::unexpected(!cur_info ? cur_info.error() : new_info.error());
    }
  }
  if (scanned_as(row, *cur_info, *new_info)) {
    return {};  // neither directory changed since a scan that saw everything
  }
  clean_tmp(row, dir);

  // Record what a scan saw. A directory we changed ourselves, or whose
  // mtime is too recent to prove nothing followed, is scanned again next
  // time.
  auto mark = [](const Result<base::FileInfo>& info, bool touched) -> std::int64_t {
    return touched || mtime_too_recent(info->mtime_ns) ? 0 : info->mtime_ns;
  };

  // What a scan finds most often: every file in cur/ under the name the
  // index holds, and new/ empty (this store's own changes moved the
  // mtimes). Names alone tell it, at the cost of one listing and one column
  // of the index; the rows and maps of the comparison below cost about
  // three times that in a mailbox of 100,000 messages (docs/benchmarks.md,
  // "A sync after an append").
  auto cur_entries = fs_.list_dir(cur);
  if (!cur_entries) {
    return std::unexpected(cur_entries.error());
  }
  auto new_entries = fs_.list_dir(incoming);
  if (!new_entries) {
    return std::unexpected(new_entries.error());
  }
  auto same = cur_matches_index(row.id, *cur_entries, *new_entries);
  if (!same) {
    return std::unexpected(same.error());
  }
  if (*same) {
    return record_scan_marks(row, mark(cur_info, false), mark(new_info, false));
  }

  auto indexed = index_->messages(row.id, UidSet::all());
  if (!indexed) {
    return std::unexpected(indexed.error());
  }
  std::unordered_map<std::string_view, const MessageRow*> by_base;
  for (const MessageRow& m : *indexed) {
    by_base.emplace(m.base_name, &m);
  }
  // Listed again after the index is read, so that a message another process
  // appends meanwhile is at worst a file to adopt, never a row whose file
  // seems gone.
  cur_entries = fs_.list_dir(cur);
  if (!cur_entries) {
    return std::unexpected(cur_entries.error());
  }
  std::unordered_map<std::string, std::string> cur_by_base;  // base -> file name
  for (const DirEntry& e : *cur_entries) {
    if (is_plain_file_entry(e)) {
      cur_by_base.emplace(std::string(split_file_name(e.name).base), e.name);
    }
  }

  // new/ -> cur/. Maildir readers move what they have seen; the letters come
  // from the index for a file it knows (another program moved it back).
  bool touched_dirs = false;
  new_entries = fs_.list_dir(incoming);
  if (!new_entries) {
    return std::unexpected(new_entries.error());
  }
  for (const DirEntry& e : *new_entries) {
    if (!is_plain_file_entry(e)) {
      continue;
    }
    FileName parts = split_file_name(e.name);
    std::string base(parts.base);
    if (cur_by_base.contains(base)) {
      // Also in cur/: the leftover of a move interrupted by a crash.
      (void)fs_.remove(incoming / e.name);
      touched_dirs = true;
      continue;
    }
    auto known = by_base.find(base);
    std::string target =
        known != by_base.end()
            ? known->second->file_name
            : file_name_with_flags(base, parts.letters, flags_from_letters(parts.letters));
    if (auto r = fs_.rename(incoming / e.name, cur / target); !r) {
      if (r.error().code == MailError::kNotFound) {
        continue;  // taken by another reader meanwhile
      }
      return r;
    }
    cur_by_base.emplace(std::move(base), std::move(target));
    touched_dirs = true;
  }

  // Compare the index with cur/.
  std::vector<Uid> vanished;
  std::vector<MessageRow> flag_changes;
  std::vector<MessageRow> renames;  // same flags, other letters (another program's)
  for (const MessageRow& m : *indexed) {
    auto on_disk = cur_by_base.find(m.base_name);
    if (on_disk == cur_by_base.end()) {
      vanished.push_back(m.meta.uid);
      continue;
    }
    if (on_disk->second == m.file_name) {
      continue;
    }
    MessageRow updated = m;
    updated.file_name = on_disk->second;
    updated.meta.flags = flags_from_letters(split_file_name(on_disk->second).letters);
    (updated.meta.flags != m.meta.flags ? flag_changes : renames).push_back(std::move(updated));
  }

  // Files the index does not know: adopt them, oldest first.
  std::vector<std::string> candidates;
  for (const auto& [base, name] : cur_by_base) {
    if (!by_base.contains(base)) {
      candidates.push_back(name);
    }
  }
  // The files of expunged messages whose removal the journal lists are gone,
  // whatever the directory still shows: an expunge commits before its files
  // are removed (RemovalQueue), and adopting one would bring it back.
  if (!candidates.empty()) {
    if (auto r = skip_pending_removals(row.name, candidates); !r) {
      return r;
    }
  }
  std::sort(candidates.begin(), candidates.end(), arrival_order);
  struct Adopted {
    MessageRow row;
    std::string record;
    TermRecord search_text;  // empty when the full-text index is off
  };
  std::vector<Adopted> adopted;
  for (const std::string& name : candidates) {
    std::filesystem::path path = cur / name;
    auto info = fs_.stat(path);
    if (!info || !info->is_regular() || info->size == 0 || info->size > options_.max_message_size) {
      continue;  // gone, not a file, empty (being written?) or too big to take in
    }
    auto bytes = fs_.read_file(path, options_.max_message_size);
    if (!bytes) {
      if (bytes.error().code == MailError::kNotFound || bytes.error().code == MailError::kTooBig) {
        continue;
      }
      return std::unexpected(bytes.error());
    }
    const std::int64_t mtime = seconds_of(info->mtime_ns);
    FileName parts = split_file_name(name);
    std::string file_name = name;
    // Another program's file with bare LF line ends: rewrite it with CRLF
    // under the same name, atomically (tmp/, fsync, rename over it).
    if (has_bare_lf(*bytes)) {
      std::string crlf = to_crlf(*bytes);
      if (crlf.size() > options_.max_message_size) {
        continue;
      }
      if (auto r = write_message_file(dir, new_base_name(crlf.size()), path, crlf, mtime); !r) {
        return r;
      }
      *bytes = std::move(crlf);
      touched_dirs = true;
    }
    // Keep the base name unless its S= size is now wrong (Maildir readers
    // trust it) or it clashes with a message the index knows.
    std::string base(parts.base);
    if (auto s = size_from_base_name(base); s && *s != bytes->size()) {
      base = base_name_with_size(base, bytes->size());
    }
    if (base != parts.base && (by_base.contains(base) || cur_by_base.contains(base))) {
      base = new_base_name(bytes->size());
    }
    if (base != parts.base) {
      file_name = file_name_with_flags(base, parts.letters, flags_from_letters(parts.letters));
      if (auto r = fs_.rename(path, cur / file_name); !r) {
        return r;
      }
      touched_dirs = true;
    }
    Adopted a;
    mime::AnalyzedMessage analyzed = mime::analyze_message(*bytes, options_.full_text_index);
    a.record = mime::serialize(analyzed.record);
    if (options_.full_text_index) {
      a.search_text = packed_search_text(std::move(analyzed.text));
    }
    a.row.base_name = std::move(base);
    a.row.file_name = std::move(file_name);
    a.row.meta.flags = flags_from_letters(parts.letters);
    a.row.meta.internal_date = InternalDate{mtime, 0};
    a.row.meta.size = bytes->size();
    adopted.push_back(std::move(a));
  }
  if (touched_dirs) {
    if (auto r = fs_.sync_dir(cur); !r) {
      return r;
    }
    if (auto r = fs_.sync_dir(incoming); !r) {
      return r;
    }
  }

  const std::int64_t cur_mark = mark(cur_info, touched_dirs);
  const std::int64_t new_mark = mark(new_info, touched_dirs);
  const bool changes = !vanished.empty() || !flag_changes.empty() || !adopted.empty();
  if (!changes && renames.empty()) {
    return record_scan_marks(row, cur_mark, new_mark);
  }
  const ModSeq modseq = changes ? row.highest_modseq + 1 : row.highest_modseq;
  Uid uid = row.uidnext;
  {
    auto tx = index_->begin();
    if (!tx) {
      return std::unexpected(tx.error());
    }
    for (Uid gone : vanished) {
      if (auto r = index_->expunge_message(row.id, gone, modseq); !r) {
        return r;
      }
    }
    for (MessageRow& m : flag_changes) {
      m.meta.modseq = modseq;
      if (auto r = index_->update_message(row.id, m); !r) {
        return r;
      }
    }
    for (const MessageRow& m : renames) {
      if (auto r = index_->update_message(row.id, m); !r) {
        return r;
      }
    }
    if (static_cast<std::uint64_t>(uid) + adopted.size() > 0xffffffffULL) {
      return base::fail(MailError::kOverQuota, "mailbox has run out of UIDs");
    }
    for (Adopted& a : adopted) {
      a.row.meta.uid = uid++;
      a.row.meta.modseq = modseq;
      if (auto r = index_->insert_message(row.id, a.row, a.record); !r) {
        return r;
      }
      if (!a.search_text.empty()) {
        if (auto r = index_->insert_search_text(row.id, a.row.meta.uid, a.search_text,
                                                /*batch=*/false);
            !r) {
          return r;
        }
      }
    }
    if (auto r = index_->set_counters(row.id, uid, modseq); !r) {
      return r;
    }
    if (auto r = index_->set_scan_mtimes(row.id, cur_mark, new_mark); !r) {
      return r;
    }
    if (auto r = tx->commit(); !r) {
      return r;
    }
    // An adoption has no reply of its own that upkeep runs after: the
    // records it leaves waiting join the index now, once committed (the
    // search writer reads the committed ones). A batch that fails does not
    // fail the sync (the records keep waiting).
    if (options_.full_text_index && !adopted.empty()) {
      if (auto r = index_->run_batch_now(static_cast<std::int64_t>(Index::kWaitingDocs)); !r) {
        base::log(base::LogLevel::kWarn, "search_index_batch_failed",
                  {{"user", user_}, {"reason", r.error().message}});
      }
    }
  }
  const auto key = static_cast<std::uint64_t>(row.id);
  listeners_.publish_expunged(key, vanished, modseq);
  std::vector<MessageMeta> changed;
  for (MessageRow& m : flag_changes) {
    changed.push_back(std::move(m.meta));
  }
  listeners_.publish_flags_changed(key, changed);
  std::vector<MessageMeta> appended;
  for (Adopted& a : adopted) {
    appended.push_back(std::move(a.row.meta));
  }
  listeners_.publish_appended(key, appended);
  return {};
}

}  // namespace peregrine::store::maildir
