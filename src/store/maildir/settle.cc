// Files whose bytes wait in the index (MaildirOptions::settle_files_later):
// settling them after the reply, and writing them back after a crash.
//
// An append that settles later commits each message's bytes
// (unsettled_files) with its row, and names its file, written without an
// fsync, only after that commit: an acknowledged message is durable in the
// index, and no name in cur/ ever points at bytes a crash may lose unless
// the index holds them too. Settling fsyncs each file and its cur/, then
// deletes the bytes in a commit without fsync: lost, it only leaves them to
// be settled (or written back) again. Whatever renames or links a message
// file settles first (flags, copy, move, folder renames and deletes), so a
// waiting message's file keeps the one name the index has for it.

#include <set>
#include <span>
#include <vector>

#include "base/log.h"
#include "store/maildir/maildir_user_store.h"

namespace peregrine::store::maildir {

using base::MailError;
using base::Result;

namespace {

// Deletes the bytes of `files`, in one transaction.
Result<void> forget(Index& index, std::span<const UnsettledFile* const> files) {
  return in_transaction(index, [&]() -> Result<void> {
    for (const UnsettledFile* f : files) {
      if (auto r = index.forget_unsettled(f->mailbox_id, f->uid); !r) {
        return r;
      }
    }
    return {};
  });
}

}  // namespace

Result<void> MaildirUserStore::settle_files() {
  if (unsettled_count_ == 0) {
    return {};  // none of this store's appends left a file waiting
  }
  auto waiting = index_->unsettled_files();
  if (!waiting) {
    return std::unexpected(waiting.error());
  }
  // The files' fsyncs each wait for the device: several run at once.
  std::vector<std::filesystem::path> paths;
  paths.reserve(waiting->size());
  for (const UnsettledFile& f : *waiting) {
    paths.push_back(cur_dir(mailbox_dir(f.mailbox)) / f.file_name);
  }
  const std::vector<Result<void>> synced = sync_files(fs_, paths);
  std::vector<const UnsettledFile*> settled;
  std::set<std::filesystem::path> dirs;
  for (std::size_t i = 0; i < paths.size(); ++i) {
    if (!synced[i]) {
      if (synced[i].error().code == MailError::kNotFound) {
        continue;  // another program took it: its bytes stay
      }
      return synced[i];
    }
    dirs.insert(paths[i].parent_path());
    settled.push_back(&(*waiting)[i]);
  }
  for (const auto& dir : dirs) {
    if (auto r = fs_.sync_dir(dir); !r) {
      return r;
    }
  }
  if (!settled.empty()) {
    Index::QuickCommits quick(*index_);
    if (auto r = forget(*index_, settled); !r) {
      return r;
    }
  }
  unsettled_count_ = waiting->size() - settled.size();
  unsettled_bytes_ = 0;
  return {};
}

void MaildirUserStore::settle_files_if_any() {
  if (auto r = settle_files(); !r) {
    base::log(base::LogLevel::kWarn, "settle_files_failed",
              {{"user", user_}, {"error", r.error().message}});
  }
}

bool MaildirUserStore::settle_due(bool bound) const {
  return bound ? unsettled_count_ >= kMostUnsettled || unsettled_bytes_ >= kMostUnsettledBytes
               : unsettled_count_ >= kSettleAt || unsettled_bytes_ >= kSettleAtBytes;
}

void MaildirUserStore::settle_files_when_due(bool bound) {
  if (settle_due(bound)) {
    settle_files_if_any();
  }
}

Result<void> MaildirUserStore::restore_unsettled_files() {
  auto waiting = index_->unsettled_files();
  if (!waiting) {
    return std::unexpected(waiting.error());
  }
  if (waiting->empty()) {
    return {};
  }
  // A file that reads back whole is fsynced where it is (another process
  // of this user, alive, may have it waiting); any other is written anew,
  // whatever a crash left of it: through tmp/ under a name of its own (so
  // that a live append's file there is left alone), fsynced, renamed over
  // its name.
  std::set<std::filesystem::path> dirs;
  for (const UnsettledFile& f : *waiting) {
    auto bytes = index_->unsettled_bytes(f.mailbox_id, f.uid);
    if (!bytes) {
      return std::unexpected(bytes.error());
    }
    const std::filesystem::path dir = mailbox_dir(f.mailbox);
    const std::filesystem::path path = cur_dir(dir) / f.file_name;
    auto found = fs_.read_file(path, bytes->size() + 1);
    if (found && *found == *bytes) {
      if (auto r = fs_.sync_file(path); !r) {
        return r;
      }
    } else {
      const std::string name = f.base_name + ".restored";
      if (auto r = fs_.remove(tmp_dir(dir) / name); !r && r.error().code != MailError::kNotFound) {
        return r;
      }
      if (auto r = write_message_file(dir, name, path, *bytes, f.internal_date); !r) {
        return r;
      }
    }
    dirs.insert(cur_dir(dir));
  }
  for (const auto& dir : dirs) {
    if (auto r = fs_.sync_dir(dir); !r) {
      return r;
    }
  }
  std::vector<const UnsettledFile*> all;
  for (const UnsettledFile& f : *waiting) {
    all.push_back(&f);
  }
  if (auto r = forget(*index_, all); !r) {
    return r;
  }
  base::log(base::LogLevel::kInfo, "unsettled_files_restored",
            {{"user", user_}, {"files", static_cast<unsigned long long>(waiting->size())}});
  return {};
}

}  // namespace peregrine::store::maildir
