#pragma once

// The embedded default backend: each user's mail is a Maildir++ directory
// that other Maildir programs can read and write, plus one SQLite index per
// user holding UIDs, flags, keywords, MODSEQs and the MIME cache records.
//
//   <data_dir>/<user>/Maildir/        INBOX (cur/ new/ tmp/) and .Folder.Sub/ dirs
//   <data_dir>/<user>/index.sqlite    the index (WAL)
//
// The on-disk format, the write order that makes every operation crash-safe,
// and the recovery rules are in docs/formats/maildir-store.md.

#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <string_view>

#include "base/result.h"
#include "store/api/user_store.h"
#include "store/maildir/maildir_fs.h"

namespace peregrine::store::maildir {

struct MaildirOptions {
  // Where users' directories are created (a user's `home`, when given to
  // open_user, is used instead).
  std::filesystem::path data_dir;
  // Messages larger than this are refused (kTooBig) at append, and files
  // larger than this that other programs drop in are not picked up.
  std::uint64_t max_message_size = 64ull * 1024 * 1024;
  // The filesystem seam; null means real_maildir_fs(). Must outlive the store
  // and every UserStore opened from it.
  MaildirFs* fs = nullptr;
  // The host part of new file names; empty means gethostname().
  std::string host_name;
  // Whether messages' text is kept in the full-text index ([search] fts).
  // Off, SEARCH reads and parses every message a text key looks at.
  bool full_text_index = true;
  // Whether the full-text index's batches (the waiting records' terms into
  // the vocabulary, the records into the word index) are left to
  // UserStore::upkeep, which the server runs after it has replied; a
  // change then runs a batch itself only when Index::kMostWaitingDocs
  // records wait. Off, every Index::kWaitingDocs-th change runs it.
  bool upkeep_after_reply = false;
  // Whether an append of messages up to kSettleLaterBytes commits their
  // bytes in the index with their rows, writes their files without fsync,
  // and leaves the files' fsyncs (and cur/'s) to MaildirUserStore::
  // settle_files: UserStore::upkeep after the reply, an append when many
  // wait, the close. The reply then waits for one fsync (the commit's)
  // instead of two in a row (the file's, then the commit's beside cur/'s);
  // the open writes back the file of every message a crash left waiting.
  bool settle_files_later = false;
  // How long an index write waits for another process's lock.
  int busy_timeout_ms = 5000;
};

// Stateless apart from its options: open_user may be called from any thread.
class MaildirStore final : public Store {
 public:
  explicit MaildirStore(MaildirOptions options);

  using Store::open_user;
  base::Result<std::unique_ptr<UserStore>> open_user(std::string_view user,
                                                     const std::filesystem::path& home) override;

  // The mailboxes a new user gets besides INBOX, subscribed.
  struct DefaultMailbox {
    std::string_view name;
    SpecialUse use;
  };
  static constexpr DefaultMailbox kDefaultMailboxes[] = {
      {"Drafts", SpecialUse::kDrafts},   {"Sent", SpecialUse::kSent},
      {"Trash", SpecialUse::kTrash},     {"Junk", SpecialUse::kJunk},
      {"Archive", SpecialUse::kArchive},
  };

 private:
  MaildirOptions options_;
};

}  // namespace peregrine::store::maildir
