#include "store/maildir/maildir_user_store.h"

#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <charconv>
#include <chrono>
#include <utility>

#include "base/ascii.h"
#include "store/maildir/names.h"

namespace peregrine::store::maildir {

using base::MailError;
using base::Result;

namespace {

// In the Maildir: the last UIDVALIDITY given out, in decimal.
constexpr std::string_view kUidvalidityFile = "peregrine-uidvalidity";

}  // namespace

std::string journal_path(std::string_view folder, std::string_view file) {
  std::string out(folder);
  if (!out.empty()) {
    out += '/';
  }
  out += "cur/";
  out += file;
  return out;
}

std::int64_t now_micros() {
  return std::chrono::duration_cast<std::chrono::microseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

bool mtime_too_recent(std::int64_t mtime_ns) {
  constexpr std::int64_t kMarginNs = 2'000'000'000;
  return mtime_ns == 0 || mtime_ns > now_micros() * 1000 - kMarginNs;
}

// ---- MaildirStore ----

MaildirStore::MaildirStore(MaildirOptions options) : options_(std::move(options)) {
  if (options_.fs == nullptr) {
    options_.fs = &real_maildir_fs();
  }
  if (options_.host_name.empty()) {
    char host[256] = {};
    if (::gethostname(host, sizeof(host) - 1) == 0 && host[0] != '\0') {
      options_.host_name = host;
    } else {
      options_.host_name = "localhost";
    }
  }
}

Result<std::unique_ptr<UserStore>> MaildirStore::open_user(std::string_view user,
                                                           const std::filesystem::path& home) {
  if (auto ok = check_user_name(user); !ok) {
    return std::unexpected(ok.error());
  }
  std::filesystem::path root = home.empty() ? options_.data_dir / std::string(user) : home;
  auto store = MaildirUserStore::open(std::string(user), std::move(root), options_);
  if (!store) {
    return std::unexpected(store.error());
  }
  return std::unique_ptr<UserStore>(std::move(*store));
}

// ---- Opening ----

namespace {

// mkdir -p, through the seam.
Result<void> make_dirs(MaildirFs& fs, const std::filesystem::path& dir) {
  if (auto info = fs.stat(dir); info) {
    return {};
  }
  std::filesystem::path parent = dir.parent_path();
  if (!parent.empty() && parent != dir) {
    if (auto r = make_dirs(fs, parent); !r) {
      return r;
    }
  }
  auto r = fs.make_dir(dir, 0700);
  if (!r && r.error().code != MailError::kExists) {
    return r;
  }
  return {};
}

}  // namespace

MaildirUserStore::MaildirUserStore(std::string user, std::filesystem::path root,
                                   const MaildirOptions& options, std::unique_ptr<Index> index)
    : user_(std::move(user)),
      root_(std::move(root)),
      maildir_(root_ / "Maildir"),
      options_(options),
      fs_(*options.fs),
      index_(std::move(index)) {}

Result<std::unique_ptr<MaildirUserStore>> MaildirUserStore::open(std::string user,
                                                                 std::filesystem::path root,
                                                                 const MaildirOptions& options) {
  MaildirFs& fs = options.fs ? *options.fs : real_maildir_fs();
  if (auto r = make_dirs(fs, root); !r) {
    return std::unexpected(r.error());
  }
  const std::filesystem::path index_path = root / "index.sqlite";
  auto index = Index::open(index_path, options.busy_timeout_ms);
  if (!index) {
    return std::unexpected(index.error());
  }
  // Mail is private; SQLite gives its -wal and -shm files the same mode.
  for (const auto& file : {index_path, Index::search_path(index_path)}) {
    if (auto r = fs.set_mode(file, 0600); !r) {
      return std::unexpected(r.error());
    }
  }
  if (options.upkeep_after_reply) {
    (*index)->set_batch_at(Index::kMostWaitingDocs);
    (*index)->set_background_batches(true);
  }
  MaildirOptions resolved = options;
  resolved.fs = &fs;
  std::unique_ptr<MaildirUserStore> store(
      new MaildirUserStore(std::move(user), std::move(root), resolved, std::move(*index)));
  if (auto r = store->make_folder(store->maildir_, true); !r) {
    return std::unexpected(r.error());
  }
  if (auto r = store->replay_journal(/*removals=*/true); !r) {
    return std::unexpected(r.error());
  }
  // Before any sync could take a message whose file a crash lost for gone.
  if (auto r = store->restore_unsettled_files(); !r) {
    return std::unexpected(r.error());
  }
  if (auto r = store->initialize(); !r) {
    return std::unexpected(r.error());
  }
  if (auto r = store->purge_search_index(); !r) {
    return std::unexpected(r.error());
  }
  if (store->options_.full_text_index) {
    if (auto r = store->check_search_index(); !r) {
      return std::unexpected(r.error());
    }
  }
  return store;
}

Result<void> MaildirUserStore::initialize() {
  auto done = index_->initialized();
  if (!done) {
    return std::unexpected(done.error());
  }
  if (*done) {
    return {};
  }
  // An index made anew over an existing Maildir continues its UIDVALIDITYs.
  auto recorded = fs_.read_file(maildir_ / kUidvalidityFile, 64);
  if (recorded) {
    std::uint32_t value = 0;
    std::string_view text = base::trim(*recorded);
    auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (ec == std::errc() && ptr == text.data() + text.size()) {
      if (auto r = index_->raise_uidvalidity_floor(value); !r) {
        return r;
      }
    }
  } else if (recorded.error().code != MailError::kNotFound) {
    return std::unexpected(recorded.error());
  }
  // First use: the default folders on disk, then every folder on disk (ours
  // and any an earlier program made) into the index, then their special uses
  // and subscriptions. Every step can be redone, so a crash here is harmless.
  // The folders' entries in the Maildir are made durable by one fsync of
  // it, after all of them, before the index learns of them.
  for (const auto& d : MaildirStore::kDefaultMailboxes) {
    if (auto r = make_folder(mailbox_dir(d.name), false, /*sync_parent=*/false); !r) {
      return r;
    }
  }
  if (auto r = fs_.sync_dir(maildir_); !r) {
    return r;
  }
  if (auto r = scan_folders(true); !r) {
    return r;
  }
  auto tx = index_->begin();
  if (!tx) {
    return std::unexpected(tx.error());
  }
  for (const auto& d : MaildirStore::kDefaultMailboxes) {
    auto row = index_->find_mailbox(d.name);
    if (!row) {
      return std::unexpected(row.error());
    }
    if (*row && (*row)->special_use == SpecialUse::kNone) {
      if (auto r = index_->set_special_use((*row)->id, d.use); !r) {
        return r;
      }
    }
    if (auto r = index_->add_subscription(d.name); !r) {
      return std::unexpected(r.error());
    }
  }
  if (auto r = index_->add_subscription(kInbox); !r) {
    return std::unexpected(r.error());
  }
  if (auto r = index_->set_initialized(); !r) {
    return r;
  }
  return tx->commit();
}

// ---- Helpers ----

std::filesystem::path MaildirUserStore::mailbox_dir(std::string_view name) const {
  std::string dir = folder_dir(name);
  return dir.empty() ? maildir_ : maildir_ / dir;
}

Result<MailboxRow> MaildirUserStore::require_mailbox(std::string_view name) {
  auto canonical = normalize_mailbox_name(name);
  if (!canonical) {
    return std::unexpected(canonical.error());
  }
  auto row = index_->find_mailbox(*canonical);
  if (!row) {
    return std::unexpected(row.error());
  }
  if (!*row) {
    return base::fail(MailError::kNotFound, "no such mailbox " + *canonical);
  }
  return std::move(**row);
}

Result<void> MaildirUserStore::make_folder(const std::filesystem::path& dir, bool is_inbox,
                                           bool sync_parent) {
  bool created = false;
  auto mkdir = [&](const std::filesystem::path& path) -> Result<void> {
    auto r = fs_.make_dir(path, 0700);
    if (r) {
      created = true;
      return {};
    }
    if (r.error().code == MailError::kExists) {
      return {};
    }
    return r;
  };
  if (auto r = mkdir(dir); !r) {
    return r;
  }
  for (const auto& sub : {cur_dir(dir), new_dir(dir), tmp_dir(dir)}) {
    if (auto r = mkdir(sub); !r) {
      return r;
    }
  }
  if (!is_inbox) {
    // Maildir++ marks a folder with an empty "maildirfolder" file.
    auto file = fs_.create_exclusive(dir / "maildirfolder", 0600);
    if (file) {
      created = true;
      if (auto r = (*file)->close(); !r) {
        return r;
      }
    } else if (file.error().code != MailError::kExists) {
      return std::unexpected(file.error());
    }
  }
  if (!created) {
    return {};
  }
  if (auto r = fs_.sync_dir(dir); !r) {
    return r;
  }
  return sync_parent ? fs_.sync_dir(dir.parent_path()) : Result<void>{};
}

Result<void> MaildirUserStore::remove_tree(const std::filesystem::path& dir) {
  auto entries = fs_.list_dir(dir);
  if (!entries) {
    return entries.error().code == MailError::kNotFound ? Result<void>()
                                                        : std::unexpected(entries.error());
  }
  Result<void> first_error;
  for (const DirEntry& e : *entries) {
    std::filesystem::path path = dir / e.name;
    bool is_dir = e.type == DirEntry::Type::kDirectory;
    if (e.type == DirEntry::Type::kUnknown) {
      auto info = fs_.stat(path);
      is_dir = info && !info->is_regular() && S_ISDIR(info->mode);
    }
    auto r = is_dir ? remove_tree(path) : fs_.remove(path);
    if (!r && first_error) {
      first_error = r;
    }
  }
  auto r = fs_.remove_dir(dir);
  if (!r && first_error) {
    first_error = r;
  }
  return first_error;
}

Result<void> MaildirUserStore::replay_journal(bool removals) {
  if (!removals) {
    // The common case, at every sync: nothing to rename. Removals may be
    // pending meanwhile; they are the RemovalQueue's.
    auto pending = index_->has_pending_renames();
    if (!pending) {
      return std::unexpected(pending.error());
    }
    if (!*pending) {
      return {};
    }
  }
  auto entries = index_->journal();
  if (!entries) {
    return std::unexpected(entries.error());
  }
  bool any = false;
  std::set<std::filesystem::path> touched;
  for (const JournalEntry& e : *entries) {
    if (e.is_removal() && !removals) {
      continue;
    }
    any = true;
    std::filesystem::path from = maildir_ / e.from;
    // A missing source was renamed or removed before a crash (or since).
    if (e.is_removal()) {
      auto r = fs_.remove(from);
      if (!r && r.error().code != MailError::kNotFound) {
        return r;
      }
    } else {
      std::filesystem::path to = maildir_ / e.to;
      auto r = fs_.rename(from, to);
      if (!r && r.error().code != MailError::kNotFound) {
        return r;
      }
      touched.insert(to.parent_path());
    }
    touched.insert(from.parent_path());
  }
  if (!any) {
    return {};
  }
  for (const auto& dir : touched) {
    auto r = fs_.sync_dir(dir);
    if (!r && r.error().code != MailError::kNotFound) {
      return r;
    }
  }
  return removals ? index_->clear_journal() : index_->clear_pending_renames();
}

Result<void> MaildirUserStore::finish_removals() {
  if (auto r = settle_files(); !r) {
    return r;
  }
  removals_.wait();
  (void)removals_.take_done();  // replay_journal deletes every entry
  return replay_journal(true);
}

void MaildirUserStore::upkeep() {
  run_due_index_batch();
  settle_files_when_due(/*bound=*/false);
}

bool MaildirUserStore::upkeep_due() { return index_batch_due() || settle_due(/*bound=*/false); }

MaildirUserStore::~MaildirUserStore() {
  // Best effort, as everything here: what is left unsettled, the next open
  // writes back.
  settle_files_if_any();
  removals_.wait();
  std::vector<std::int64_t> done = removals_.take_done();
  if (done.empty()) {
    return;
  }
  // Best effort: an entry left behind is replayed (its file already gone)
  // at the next open.
  if (auto tx = index_->begin(); tx) {
    if (index_->clear_journal_entries(std::move(done))) {
      (void)tx->commit();
    }
  }
}

Result<std::uint32_t> MaildirUserStore::take_uidvalidity() {
  auto value = index_->take_uidvalidity(now_micros() / 1'000'000);
  if (!value) {
    return value;
  }
  if (auto r = record_uidvalidity(*value); !r) {
    return std::unexpected(r.error());
  }
  return value;
}

Result<void> MaildirUserStore::record_uidvalidity(std::uint32_t value) {
  return base::atomic_write(fs_, maildir_ / kUidvalidityFile, std::to_string(value) + "\n",
                            base::AtomicWriteOptions{0600});
}

std::string MaildirUserStore::new_base_name(std::uint64_t size) {
  static std::atomic<std::uint64_t> counter{0};
  return make_base_name(now_micros(), static_cast<long>(::getpid()),
                        counter.fetch_add(1, std::memory_order_relaxed), options_.host_name, size);
}

Result<void> MaildirUserStore::create_message_file(const std::filesystem::path& dir,
                                                   std::string_view base_name,
                                                   const std::filesystem::path& cur_path,
                                                   std::string_view bytes,
                                                   std::int64_t mtime_seconds) {
  // An unnamed file linked into cur/ once durable, where the filesystem has
  // them; else through tmp/ (the Maildir way) and a rename.
  auto linked = fs_.write_unnamed(cur_path, bytes, mtime_seconds);
  if (!linked) {
    return std::unexpected(linked.error());
  }
  if (*linked) {
    return {};
  }
  return write_message_file(dir, base_name, cur_path, bytes, mtime_seconds);
}

Result<void> MaildirUserStore::write_message_file(const std::filesystem::path& dir,
                                                  std::string_view base_name,
                                                  const std::filesystem::path& cur_path,
                                                  std::string_view bytes,
                                                  std::int64_t mtime_seconds) {
  auto tmp = write_tmp_file(dir, base_name, bytes, mtime_seconds, /*sync=*/true);
  if (!tmp) {
    return std::unexpected(tmp.error());
  }
  if (auto r = fs_.rename(*tmp, cur_path); !r) {
    (void)fs_.remove(*tmp);
    return r;
  }
  return {};
}

Result<std::filesystem::path> MaildirUserStore::write_tmp_file(const std::filesystem::path& dir,
                                                               std::string_view base_name,
                                                               std::string_view bytes,
                                                               std::int64_t mtime_seconds,
                                                               bool sync) {
  std::filesystem::path tmp = tmp_dir(dir) / std::string(base_name);
  auto file = fs_.create_exclusive(tmp, 0600);
  if (!file) {
    return std::unexpected(file.error());
  }
  auto write = [&]() -> Result<void> {
    if (auto r = (*file)->append(bytes); !r) {
      return r;
    }
    // The file's date is the internal date, so that a file adopted after a
    // crash (before the index commit) keeps it: set before the fsync, which
    // then makes it durable with the bytes, before the name in cur/ is.
    if (auto r = fs_.set_mtime(tmp, mtime_seconds); !r) {
      return r;
    }
    if (sync) {
      if (auto r = (*file)->sync(); !r) {
        return r;
      }
    }
    return (*file)->close();
  };
  if (auto r = write(); !r) {
    file->reset();
    (void)fs_.remove(tmp);
    return std::unexpected(r.error());
  }
  return tmp;
}

}  // namespace peregrine::store::maildir
