#pragma once

// A POP3 session's maildrop (RFC 1939 §8): the user's INBOX as it was at
// login, numbered 1..n, with the session's deletion marks, and the lock that
// keeps a second POP3 session of the same user out while one holds it.
//
// Unique ids (UIDL) are "<uidvalidity>.<uid>" of the message in INBOX: the
// same in every session and after a restart, and never reused for another
// message, because the store never reuses a UID under one UIDVALIDITY.
//
// Thread safety: none; like everything of a user's, run on the user's
// strand (session/user_registry.h).

#include <cstdint>
#include <string>
#include <vector>

#include "base/result.h"
#include "session/user_registry.h"
#include "store/api/types.h"

namespace peregrine::pop3 {

// The per-user lock, kept as the user's UserContext attachment: true while
// a POP3 session holds the user's maildrop in this process.
struct MaildropLock {
  bool held = false;
};

class Maildrop {
 public:
  struct Message {
    store::Uid uid = 0;
    std::uint64_t size = 0;  // octets as RETR sends them before dot-stuffing
    bool deleted = false;
  };

  // Takes the user's lock and reads INBOX. Errors: kInUse when another POP3
  // session holds the lock; the store's errors (the lock is then not taken).
  static base::Result<Maildrop> open(session::UserContext& user);

  Maildrop(Maildrop&&) = default;
  Maildrop& operator=(Maildrop&&) = default;

  // Messages not marked deleted, and the sum of their sizes.
  std::uint32_t count() const { return live_count_; }
  std::uint64_t octets() const { return live_octets_; }
  // Message `number` (1-based), or null when there is none or it is marked
  // deleted.
  const Message* find(std::uint32_t number) const;
  std::uint32_t size() const { return static_cast<std::uint32_t>(messages_.size()); }
  const std::vector<Message>& messages() const { return messages_; }
  std::string unique_id(const Message& message) const;

  // Marks message `number` deleted; false if there is no such live message.
  bool mark_deleted(std::uint32_t number);
  // Unmarks every message (RSET).
  void unmark_all();

  // The UPDATE state: expunges the marked messages from INBOX. Returns how
  // many were removed. Errors: the store's (some may not be removed).
  base::Result<std::size_t> expunge_marked(session::UserContext& user);

  // Lets go of the user's lock (idempotent).
  static void unlock(session::UserContext& user);

 private:
  Maildrop() = default;

  std::uint32_t uidvalidity_ = 0;
  std::vector<Message> messages_;
  std::uint32_t live_count_ = 0;
  std::uint64_t live_octets_ = 0;
};

}  // namespace peregrine::pop3
