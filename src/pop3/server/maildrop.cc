#include "pop3/server/maildrop.h"

#include "store/api/uid_set.h"
#include "store/api/user_store.h"

namespace peregrine::pop3 {

base::Result<Maildrop> Maildrop::open(session::UserContext& user) {
  MaildropLock& lock = user.attachment<MaildropLock>();
  if (lock.held) {
    return base::fail(base::MailError::kInUse, "maildrop is held by another POP3 session");
  }
  store::UserStore& store = user.store();
  // Mail other programs dropped into the Maildir counts too.
  if (auto synced = store.sync_mailbox(store::kInbox); !synced) {
    return std::unexpected(synced.error());
  }
  auto snapshot = store.open_mailbox(store::kInbox);
  if (!snapshot) {
    return std::unexpected(snapshot.error());
  }
  Maildrop drop;
  drop.uidvalidity_ = snapshot->info.uidvalidity;
  drop.messages_.reserve(snapshot->messages.size());
  for (const store::MessageMeta& meta : snapshot->messages) {
    drop.messages_.push_back(Message{.uid = meta.uid, .size = meta.size});
    drop.live_octets_ += meta.size;
  }
  drop.live_count_ = static_cast<std::uint32_t>(drop.messages_.size());
  lock.held = true;
  return drop;
}

const Maildrop::Message* Maildrop::find(std::uint32_t number) const {
  if (number == 0 || number > messages_.size() || messages_[number - 1].deleted) {
    return nullptr;
  }
  return &messages_[number - 1];
}

std::string Maildrop::unique_id(const Message& message) const {
  return std::to_string(uidvalidity_) + "." + std::to_string(message.uid);
}

bool Maildrop::mark_deleted(std::uint32_t number) {
  if (find(number) == nullptr) {
    return false;
  }
  Message& message = messages_[number - 1];
  message.deleted = true;
  --live_count_;
  live_octets_ -= message.size;
  return true;
}

void Maildrop::unmark_all() {
  live_count_ = 0;
  live_octets_ = 0;
  for (Message& message : messages_) {
    message.deleted = false;
    ++live_count_;
    live_octets_ += message.size;
  }
}

base::Result<std::size_t> Maildrop::expunge_marked(session::UserContext& user) {
  std::vector<store::Uid> marked;
  for (const Message& message : messages_) {
    if (message.deleted) {
      marked.push_back(message.uid);
    }
  }
  if (marked.empty()) {
    return 0;
  }
  const store::UidSet uids = store::UidSet::of(marked);
  // Removed as they are: a \Deleted mark first would cost a rename per
  // file, and a QUIT cut short would leave marks RFC 1939 says it has not
  // made (deletions happen only in the UPDATE state).
  auto expunged = user.store().remove_messages(store::kInbox, uids);
  if (!expunged) {
    return std::unexpected(expunged.error());
  }
  return expunged->size();
}

void Maildrop::unlock(session::UserContext& user) { user.attachment<MaildropLock>().held = false; }

}  // namespace peregrine::pop3
