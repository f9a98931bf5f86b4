#pragma once

// The state checks: what the generator knows about a mailbox, shared by every
// client of one user in one mailbox, and what each client's session has been
// told (docs/peregrine-bench.md, "What peregrine-bench checks").
//
// Correct under concurrency by construction:
// - Flags change only through this generator's STOREs, and at most one STORE
//   per message is in flight at any time (a client locks the UID first). So
//   when a STORE completes the message's flags are exactly known, and every
//   state the message has been in is kept as a numbered version.
// - A server may show a client a state late (it sends updates only at
//   command boundaries) but never one that was not stored and never an older
//   one after a newer one: each client keeps, per UID, the version it last
//   saw, and an observation must match that version or a later one. While a
//   STORE is in flight the state it is about to write is accepted too.
// - Messages are expunged only after this generator set \Deleted on them
//   (they are "doomed" from then on and never chosen again), so a message
//   that was never doomed must still exist.
//
// Thread safety: none; the generator runs on one thread.

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "bench/loadgen/stats.h"

namespace peregrine::bench {

using FlagBits = std::uint64_t;

// One user's mailbox as the generator's clients have jointly seen it.
class MailboxModel {
 public:
  static constexpr std::size_t kHistory = 16;  // versions kept per message

  explicit MailboxModel(Stats& stats) : stats_(stats) {}

  // Flag names to bits (case-insensitive; \Recent and flags past 63 map to 0).
  FlagBits flag_bit(std::string_view flag);
  FlagBits flag_bits(const std::vector<std::string_view>& flags);
  std::string flag_text(FlagBits bits) const;
  FlagBits deleted_bit() { return flag_bit("\\Deleted"); }

  struct Message {
    bool known = false;  // flags observed or stored at least once
    std::vector<std::pair<std::uint32_t, FlagBits>> history;  // (version, flags), oldest first
    std::uint32_t next_version = 1;
    int lock = -1;         // client whose STORE is in flight
    FlagBits pending = 0;  // the flags that STORE is expected to leave
    bool doomed = false;   // \Deleted was set: may vanish at any EXPUNGE
  };

  // Client `client` was shown `flags` for `uid`; `watermark` is that
  // client's last matched version of it. Reports a violation if the flags
  // match no state the message may be in for that client.
  void observe(int client, std::uint32_t uid, FlagBits flags, std::uint32_t& watermark,
               std::string_view where);

  // A message this client may lock for a STORE: known flags, not doomed,
  // not locked, not expunged.
  bool lockable(std::uint32_t uid) const;
  // Locks `uid` for a STORE that should leave `expected` flags.
  void lock(std::uint32_t uid, int client, FlagBits expected);
  // Ends the STORE: `result` are the flags it left (now the latest version).
  std::uint32_t unlock_with(std::uint32_t uid, FlagBits result);
  // Ends a STORE that failed: the flags are unknown again.
  void unlock_unknown(std::uint32_t uid);
  const Message* find(std::uint32_t uid) const;
  FlagBits current(std::uint32_t uid) const;

  void expunged(std::uint32_t uid);
  bool is_expunged(std::uint32_t uid) const { return expunged_.count(uid) != 0; }

  // EXISTS bound: messages at the start plus APPENDs begun since.
  void append_started() { ++appends_started_; }
  void saw_count(std::uint32_t exists, std::string_view where);

 private:
  Stats& stats_;
  std::vector<std::string> names_;  // bit i is names_[i], lower case
  std::unordered_map<std::uint32_t, Message> messages_;
  std::unordered_set<std::uint32_t> expunged_;
  std::uint64_t appends_started_ = 0;
  std::int64_t base_exists_ = -1;  // largest count seen before any APPEND
};

// What one client's session has been told about its selected mailbox, and
// the checks of every untagged response against it and the model.
class SessionTracker {
 public:
  SessionTracker(int client, Stats& stats) : client_(client), stats_(stats) {}

  void attach(MailboxModel* model) { model_ = model; }
  MailboxModel* model() const { return model_; }

  // The command now running, for the rules that depend on it.
  enum class Command { kOther, kSelect, kFetchAll, kSeqCommand, kStore, kFetchOne };
  // `target`: the UID a kStore or kFetchOne command is about.
  void begin(Command command, std::uint32_t target = 0);
  // Ends a command; what it saw of its target stays readable.
  void end() { command_ = Command::kOther; }
  // Ends the command; for kFetchAll checks that every message got an answer.
  void end_fetch_all(bool ok);

  // Checks one untagged response (already parsed) and updates the view.
  void on_untagged(const struct Response& r);

  bool selected() const { return selected_; }
  // Deselecting forgets the view; selecting keeps what the SELECT built.
  void set_selected(bool selected);
  std::uint32_t exists() const { return static_cast<std::uint32_t>(uids_.size()); }
  std::uint32_t uid_at(std::uint32_t seq) const { return uids_[seq - 1]; }
  bool told_expunged(std::uint32_t uid) const { return expunged_.count(uid) != 0; }
  // Whether a message of the view may be gone at the server: one with an
  // unknown UID, one marked \Deleted, or one another client saw expunged.
  bool may_hold_expunged() const;

  // Whether the target UID got its FETCH answer (FLAGS for kStore, a body
  // section for kFetchOne), and for kStore the last flags it showed.
  bool target_seen() const { return target_seen_; }
  FlagBits target_flags() const { return target_flags_; }
  void set_watermark(std::uint32_t uid, std::uint32_t version) { watermark_[uid] = version; }

 private:
  void violation(const std::string& what);
  void on_fetch(const struct Response& r);

  int client_;
  Stats& stats_;
  MailboxModel* model_ = nullptr;
  bool selected_ = false;
  std::vector<std::uint32_t> uids_;  // by sequence number - 1; 0 = not yet known
  std::unordered_set<std::uint32_t> expunged_;
  std::unordered_map<std::uint32_t, std::uint32_t> watermark_;
  Command command_ = Command::kOther;
  std::uint32_t target_ = 0;
  bool target_seen_ = false;
  FlagBits target_flags_ = 0;
  std::uint32_t fetch_all_count_ = 0;  // EXISTS when FETCH 1:* began
  std::vector<std::uint8_t> fetched_;  // items seen by sequence number - 1, during FETCH 1:*
};

}  // namespace peregrine::bench
