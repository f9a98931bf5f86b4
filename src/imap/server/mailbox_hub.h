#pragma once

// The shared in-memory state of one open mailbox of one user: the
// authoritative list of its messages' (uid, flags, keywords, modseq), kept
// current by the store's change feed, and the selected views of every
// session that has the mailbox selected, to which it fans each change out as
// pending updates (selected_view.h).
//
// Ownership: the views hold the hub (shared_ptr); UserContext finds it while
// any view exists. The hub holds a reference to the UserStore it watches,
// which outlives it (the sessions hold the UserContext).
//
// Thread safety: none; used on the user's strand only (user_context.h).

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.h"
#include "imap/server/sort_key_cache.h"
#include "store/api/listener.h"
#include "store/api/types.h"
#include "store/api/user_store.h"

namespace peregrine::imap {

class SelectedView;

class MailboxHub final : public store::MailboxListener {
 public:
  // Syncs the mailbox (folding in what other programs did), snapshots it and
  // watches it. Errors: the store's (kNotFound: no such mailbox).
  static base::Result<std::shared_ptr<MailboxHub>> open(store::UserStore& store,
                                                        std::string_view mailbox);
  ~MailboxHub() override;
  MailboxHub(const MailboxHub&) = delete;
  MailboxHub& operator=(const MailboxHub&) = delete;

  store::UserStore& store() { return store_; }
  // The mailbox's current name (RENAME changes it).
  const std::string& name() const { return name_; }
  void set_name(std::string name) { name_ = std::move(name); }

  std::uint32_t uidvalidity() const { return uidvalidity_; }
  store::Uid uidnext() const { return uidnext_; }
  store::ModSeq highest_modseq() const { return highest_modseq_; }
  // Every message now in the mailbox, ascending UIDs.
  const std::vector<store::MessageMeta>& messages() const { return messages_; }
  // The message with `uid`, nullptr once it is expunged.
  const store::MessageMeta* find(store::Uid uid) const;
  // The same, trying position `hint` of messages() first (a view whose
  // numbering matches the hub's finds every message there at once).
  const store::MessageMeta* find(store::Uid uid, std::size_t hint) const;
  // find(uid, hint)->flags, or nullopt, read from a copy of every
  // message's UID and flags kept apart from the rest of its metadata: a
  // search by flag over 100,000 messages reads 800 KB instead of about
  // 8.8 MB (memory that costs many times more to reach after a pause on a
  // VM: docs/benchmarks.md, "SEARCH after a pause").
  std::optional<store::SystemFlags> flags_of(store::Uid uid, std::size_t hint) const;
  // Every keyword the mailbox's messages have had since the hub opened, in
  // order of first appearance (first spelling kept). Only grows.
  const std::vector<std::string>& keywords() const { return keywords_; }
  // The SORT and THREAD keys of the messages a SORT or THREAD has read so
  // far (sort_key_cache.h): filled by the commands, trimmed here on expunge,
  // dropped with the hub.
  SortKeyCache& sort_keys() { return sort_keys_; }
  // The mailbox was deleted; the hub hears nothing more.
  bool deleted() const { return deleted_; }

  // A view joins or leaves the fan-out. A view detaches before it is destroyed.
  void attach(SelectedView& view);
  void detach(SelectedView& view);

  // store::MailboxListener: apply the change, then tell every view.
  void on_appended(std::span<const store::MessageMeta> messages) override;
  void on_flags_changed(std::span<const store::MessageMeta> messages) override;
  void on_expunged(std::span<const store::Uid> uids, store::ModSeq modseq) override;
  void on_mailbox_deleted() override;

 private:
  MailboxHub(store::UserStore& store, store::MailboxSnapshot snapshot);
  void learn_keywords(const store::MessageMeta& meta);

  store::UserStore& store_;
  std::string name_;
  std::uint32_t uidvalidity_ = 0;
  store::Uid uidnext_ = 1;
  store::ModSeq highest_modseq_ = 0;
  std::vector<store::MessageMeta> messages_;
  struct UidFlags {
    store::Uid uid;
    store::SystemFlags flags;
  };
  std::vector<UidFlags> flags_;  // messages_[i].uid and .flags, for every i
  // The index of `uid` in messages_ (and flags_), trying `hint` first, or
  // flags_.size(): found in flags_, 8 bytes a message, not in messages_.
  std::size_t position_of(store::Uid uid, std::size_t hint) const;
  std::vector<std::string> keywords_;
  std::vector<SelectedView*> views_;
  SortKeyCache sort_keys_;
  bool deleted_ = false;
  // Last, so it is destroyed first: no call arrives at a half-destroyed hub.
  store::Watch watch_;
};

}  // namespace peregrine::imap
