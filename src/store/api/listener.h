#pragma once

// Live change subscriptions. A MailboxListener watching a mailbox hears of
// every change committed to it, synchronously, by whichever UserStore call
// made the change (append, flag update, expunge, copy, move, rename of
// INBOX, or sync() folding in what another program did). The server's
// listener posts the news to its sessions' threads; it must not call back
// into the UserStore from a callback, nor block.
//
// Watches follow a mailbox, not a name: after RENAME the listener keeps
// hearing of the renamed mailbox.

#include <cstdint>
#include <map>
#include <memory>
#include <span>
#include <vector>

#include "store/api/types.h"

namespace peregrine::store {

class MailboxListener {
 public:
  virtual ~MailboxListener() = default;
  // New messages (append, copy or move into the mailbox, external delivery),
  // ascending UIDs.
  virtual void on_appended(std::span<const MessageMeta> messages) = 0;
  // Messages whose flags or keywords changed, with their new metadata.
  virtual void on_flags_changed(std::span<const MessageMeta> messages) = 0;
  // Messages removed, ascending UIDs; `modseq` is the mailbox's MODSEQ after
  // the removal.
  virtual void on_expunged(std::span<const Uid> uids, ModSeq modseq) = 0;
  // The mailbox was deleted (by DELETE or by another program removing its
  // folder). No further calls follow.
  virtual void on_mailbox_deleted() {}
};

class ListenerRegistry;

// An active subscription; destroying it (or reset()) stops the calls. It
// must be destroyed on the thread that uses the UserStore, not during a
// callback of another thread. Safe to destroy after the UserStore is gone.
class Watch {
 public:
  Watch() = default;
  Watch(Watch&& other) noexcept;
  Watch& operator=(Watch&& other) noexcept;
  Watch(const Watch&) = delete;
  Watch& operator=(const Watch&) = delete;
  ~Watch();

  void reset();
  bool active() const;

 private:
  friend class ListenerRegistry;
  struct State;
  Watch(std::weak_ptr<State> registry, std::uint64_t id);

  std::weak_ptr<State> registry_;
  std::uint64_t id_ = 0;
};

// The backend's side: listeners by mailbox key (a backend's stable mailbox
// id) and the publish calls. Not thread-safe; lives in the UserStore.
// A listener may drop its Watch (or another's) during a callback: it then
// gets no further calls.
class ListenerRegistry {
 public:
  ListenerRegistry();
  ~ListenerRegistry();
  ListenerRegistry(const ListenerRegistry&) = delete;
  ListenerRegistry& operator=(const ListenerRegistry&) = delete;

  // `listener` must outlive the returned Watch.
  Watch add(std::uint64_t mailbox_key, MailboxListener& listener);
  bool has_listeners(std::uint64_t mailbox_key) const;

  void publish_appended(std::uint64_t mailbox_key, std::span<const MessageMeta> messages);
  void publish_flags_changed(std::uint64_t mailbox_key, std::span<const MessageMeta> messages);
  void publish_expunged(std::uint64_t mailbox_key, std::span<const Uid> uids, ModSeq modseq);
  // Calls on_mailbox_deleted and drops the mailbox's listeners.
  void publish_mailbox_deleted(std::uint64_t mailbox_key);

 private:
  std::shared_ptr<Watch::State> state_;
};

}  // namespace peregrine::store
