#pragma once

// One session's view of its selected mailbox: the message sequence numbers
// the client has been told (number -> UID), its \Recent set, and the changes
// other sessions (and this one) made that the client has not been told yet.
//
// Changes arrive from the MailboxHub at any time and wait here as pending
// updates; flush() tells the client at the points RFC 3501 §7.4.1 allows:
//  - new messages: "* n EXISTS" (and "* n RECENT") at the end of any command;
//  - flag changes: "* n FETCH (FLAGS (...))" at the end of any command;
//  - expunges: "* n EXPUNGE" at the end of any command except FETCH, STORE
//    and SEARCH (the non-UID forms), and never when no command is running
//    (IDLE counts as running).
// Until an expunge is told, the expunged message keeps its sequence number
// (a "ghost": its metadata is gone), so the numbers the client uses always
// mean what the client was told.
//
// Thread safety: none; used on the user's strand only (user_context.h).

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <vector>

#include "base/result.h"
#include "imap/proto/sequence_set.h"
#include "store/api/types.h"

namespace peregrine::imap {

class MailboxHub;

class SelectedView {
 public:
  // The client is about to be told every message the hub has now (SELECT's
  // EXISTS). `recent`: the UIDs that are \Recent in this session, ascending.
  // `read_only`: EXAMINE (new messages are not claimed as \Recent).
  SelectedView(std::shared_ptr<MailboxHub> hub, bool read_only, std::vector<store::Uid> recent);
  ~SelectedView();
  SelectedView(const SelectedView&) = delete;
  SelectedView& operator=(const SelectedView&) = delete;

  MailboxHub& hub() { return *hub_; }
  const MailboxHub& hub() const { return *hub_; }
  bool read_only() const { return read_only_; }

  // Called whenever a pending update arrives (the session wakes an IDLE).
  void set_on_update(std::function<void()> on_update) { on_update_ = std::move(on_update); }

  // ---- The client's numbering ----

  // Messages the client knows, ghosts included ("* n EXISTS" last told).
  std::uint32_t count() const { return static_cast<std::uint32_t>(known_.size()); }
  // Precondition: 1 <= seq <= count().
  store::Uid uid_at(std::uint32_t seq) const { return known_[seq - 1].uid; }
  // The metadata of message `seq`; nullptr for a ghost (expunged, not yet told).
  const store::MessageMeta* meta_at(std::uint32_t seq) const;
  // uid_at(seq) into uids[seq] and whether meta_at(seq) is not null into
  // present[seq], for every seq (both hold count() + 1 elements), in one
  // pass over the view.
  void fill(std::vector<store::Uid>& uids, std::vector<char>& present) const;
  // meta_at(seq)->flags without the rest of the metadata; nullopt for a ghost.
  std::optional<store::SystemFlags> flags_at(std::uint32_t seq) const;
  // The sequence number of `uid`, if the client knows it.
  std::optional<std::uint32_t> seq_of(store::Uid uid) const;
  bool is_recent(store::Uid uid) const;
  // \Recent messages among those the client knows and that still exist.
  std::uint32_t recent_count() const;

  // The sequence numbers `set` names, ascending and unique: message numbers,
  // or UIDs when `uid` (UIDs the client does not know are left out; "*" is
  // the largest UID it knows); "$" names the saved search result's messages
  // that still exist. Errors (kBadInput): a message number above count()
  // outside a range with "*".
  base::Result<std::vector<std::uint32_t>> resolve(const SequenceSet& set, bool uid) const;

  // ---- The saved search result (RFC 5182 SEARCHRES) ----

  // The UIDs "$" stands for, ascending: empty until a SEARCH RETURN (SAVE)
  // in this selection. Expunged UIDs stay in it but match nothing.
  const std::vector<store::Uid>& saved_result() const { return saved_; }
  void set_saved_result(std::vector<store::Uid> uids) { saved_ = std::move(uids); }

  // ---- Pending updates ----

  struct FlushOptions {
    bool allow_expunge = true;  // false during FETCH, STORE, SEARCH
    bool with_uid = false;      // add UID to FETCH FLAGS (during UID commands)
  };
  // Writes the pending updates the options allow. Returns false when the
  // mailbox was deleted: "* BYE" is written and the session must end.
  bool flush(std::string& out, const FlushOptions& options);
  bool has_pending() const;
  // The client was just sent `uid`'s current flags: drop its pending FETCH.
  void flags_told(store::Uid uid) { flag_pending_.erase(uid); }
  bool flags_pending(store::Uid uid) const { return flag_pending_.contains(uid); }

  // From the hub.
  void on_appended(std::span<const store::MessageMeta> messages);
  void on_flags_changed(std::span<const store::MessageMeta> messages);
  void on_expunged(std::span<const store::Uid> sorted_uids);
  void on_mailbox_deleted();

 private:
  struct Known {
    store::Uid uid;
    bool expunged;
  };
  // Index in known_ of `uid`, or known_.size().
  size_t index_of(store::Uid uid) const;
  void notify();
  void write_expunges(std::string& out);
  void write_exists(std::string& out);
  void write_flag_updates(std::string& out, bool with_uid);

  std::shared_ptr<MailboxHub> hub_;
  const bool read_only_;
  std::vector<Known> known_;             // ascending UIDs; index + 1 = sequence number
  size_t ghosts_ = 0;                    // known_ entries with expunged set
  std::vector<store::Uid> unannounced_;  // arrived, no EXISTS told yet; ascending
  std::set<store::Uid> flag_pending_;    // known, flags changed, not told
  std::vector<store::Uid> recent_;       // ascending
  size_t keywords_told_ = 0;             // hub keywords covered by the last * FLAGS
  std::vector<store::Uid> saved_;        // SEARCHRES "$", ascending
  bool deleted_ = false;
  bool deletion_told_ = false;
  std::function<void()> on_update_;
};

}  // namespace peregrine::imap
