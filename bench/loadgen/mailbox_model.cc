#include "bench/loadgen/mailbox_model.h"

#include <fmt/core.h>

#include "bench/loadgen/response.h"

namespace peregrine::bench {

namespace {

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) {
    if (c >= 'A' && c <= 'Z') {
      c = static_cast<char>(c - 'A' + 'a');
    }
  }
  return out;
}

// FETCH 1:* items, as bits of SessionTracker::fetched_.
constexpr std::uint8_t kUidItem = 1;
constexpr std::uint8_t kFlagsItem = 2;
constexpr std::uint8_t kEnvelopeItem = 4;
constexpr std::uint8_t kStructureItem = 8;
constexpr std::uint8_t kDateItem = 16;
constexpr std::uint8_t kAllItems = 31;

}  // namespace

// ------------------------------------------------------------ MailboxModel

FlagBits MailboxModel::flag_bit(std::string_view flag) {
  std::string name = lower(flag);
  if (name == "\\recent") {
    return 0;  // session state the server manages, not a stored flag
  }
  for (std::size_t i = 0; i < names_.size(); ++i) {
    if (names_[i] == name) {
      return FlagBits{1} << i;
    }
  }
  if (names_.size() >= 63) {
    return 0;
  }
  names_.push_back(std::move(name));
  return FlagBits{1} << (names_.size() - 1);
}

FlagBits MailboxModel::flag_bits(const std::vector<std::string_view>& flags) {
  FlagBits bits = 0;
  for (std::string_view f : flags) {
    bits |= flag_bit(f);
  }
  return bits;
}

std::string MailboxModel::flag_text(FlagBits bits) const {
  std::string out = "(";
  for (std::size_t i = 0; i < names_.size(); ++i) {
    if (bits & (FlagBits{1} << i)) {
      out.append(out.size() > 1 ? " " : "").append(names_[i]);
    }
  }
  return out + ")";
}

void MailboxModel::observe(int client, std::uint32_t uid, FlagBits flags, std::uint32_t& watermark,
                           std::string_view where) {
  if (expunged_.count(uid) != 0) {
    return;  // a session may still show a message it has not been told is gone
  }
  Message& m = messages_[uid];
  if (flags & deleted_bit()) {
    m.doomed = true;
  }
  if (!m.known) {
    if (m.lock >= 0) {
      return;
    }
    m.known = true;
    m.history.emplace_back(m.next_version, flags);
    watermark = m.next_version++;
    return;
  }
  for (auto it = m.history.rbegin(); it != m.history.rend(); ++it) {
    if (it->first < watermark) {
      break;
    }
    if (it->second == flags) {
      watermark = it->first;
      return;
    }
  }
  if (m.lock == client || (m.lock >= 0 && flags == m.pending)) {
    return;  // the client's own STORE checks its answer when it completes
  }
  if (!m.history.empty() && m.history.front().first > watermark) {
    // The versions this client may still see have fallen out of the history.
    for (const auto& [version, bits] : m.history) {
      if (bits == flags) {
        return;
      }
    }
  }
  std::string expected;
  for (auto it = m.history.rbegin(); it != m.history.rend() && it->first >= watermark; ++it) {
    expected.append(expected.empty() ? "" : " or ").append(flag_text(it->second));
  }
  if (m.lock >= 0) {
    expected += " or " + flag_text(m.pending);
  }
  stats_.violation(fmt::format("client {} {}: UID {} has FLAGS {}, but what was stored is {}",
                               client, where, uid, flag_text(flags), expected));
}

bool MailboxModel::lockable(std::uint32_t uid) const {
  auto it = messages_.find(uid);
  return it != messages_.end() && it->second.known && !it->second.doomed && it->second.lock < 0 &&
         expunged_.count(uid) == 0;
}

void MailboxModel::lock(std::uint32_t uid, int client, FlagBits expected) {
  Message& m = messages_[uid];
  m.lock = client;
  m.pending = expected;
}

std::uint32_t MailboxModel::unlock_with(std::uint32_t uid, FlagBits result) {
  if (expunged_.count(uid) != 0) {
    return 0;
  }
  Message& m = messages_[uid];
  m.lock = -1;
  m.known = true;
  if (result & deleted_bit()) {
    m.doomed = true;
  }
  m.history.emplace_back(m.next_version, result);
  if (m.history.size() > kHistory) {
    m.history.erase(m.history.begin());
  }
  return m.next_version++;
}

void MailboxModel::unlock_unknown(std::uint32_t uid) {
  if (expunged_.count(uid) != 0) {
    return;
  }
  Message& m = messages_[uid];
  m.lock = -1;
  m.known = false;
  m.history.clear();
}

const MailboxModel::Message* MailboxModel::find(std::uint32_t uid) const {
  auto it = messages_.find(uid);
  return it == messages_.end() ? nullptr : &it->second;
}

FlagBits MailboxModel::current(std::uint32_t uid) const {
  const Message* m = find(uid);
  return m == nullptr || m->history.empty() ? 0 : m->history.back().second;
}

void MailboxModel::expunged(std::uint32_t uid) {
  expunged_.insert(uid);
  messages_.erase(uid);
}

void MailboxModel::saw_count(std::uint32_t exists, std::string_view where) {
  if (appends_started_ == 0) {
    base_exists_ = std::max<std::int64_t>(base_exists_, exists);
    return;
  }
  if (base_exists_ >= 0 && static_cast<std::uint64_t>(exists) >
                               static_cast<std::uint64_t>(base_exists_) + appends_started_) {
    stats_.violation(fmt::format(
        "{}: {} messages, but at most {} can exist ({} at the start, {} "
        "APPENDs begun)",
        where, exists, base_exists_ + appends_started_, base_exists_, appends_started_));
  }
}

// ---------------------------------------------------------- SessionTracker

void SessionTracker::violation(const std::string& what) {
  stats_.violation(fmt::format("client {}: {}", client_, what));
}

void SessionTracker::set_selected(bool selected) {
  selected_ = selected;
  if (!selected) {
    uids_.clear();
  }
}

void SessionTracker::begin(Command command, std::uint32_t target) {
  command_ = command;
  target_ = target;
  target_seen_ = false;
  target_flags_ = 0;
  if (command == Command::kSelect) {
    uids_.clear();
  }
  if (command == Command::kFetchAll) {
    fetch_all_count_ = exists();
    fetched_.assign(fetch_all_count_, 0);
  }
}

void SessionTracker::end_fetch_all(bool ok) {
  command_ = Command::kOther;
  if (!ok || model_ == nullptr) {
    return;
  }
  std::uint32_t n = std::min(fetch_all_count_, exists());
  for (std::uint32_t seq = 1; seq <= n; ++seq) {
    if (fetched_[seq - 1] == kAllItems) {
      continue;
    }
    if (fetched_[seq - 1] != 0) {
      // Items may come in several FETCH responses (a flag update among
      // them), but all must come.
      violation(fmt::format("FETCH 1:* answer for message {} lacks a requested item", seq));
      break;
    }
    std::uint32_t uid = uids_[seq - 1];
    const MailboxModel::Message* m = uid ? model_->find(uid) : nullptr;
    if (m != nullptr && m->known && !m->doomed && !model_->is_expunged(uid)) {
      violation(fmt::format("FETCH 1:* returned nothing for message {} (UID {}) of {}", seq, uid,
                            fetch_all_count_));
      break;
    }
  }
  std::uint32_t last = 0;
  for (std::uint32_t seq = 1; seq <= exists(); ++seq) {
    std::uint32_t uid = uids_[seq - 1];
    if (uid == 0) {
      continue;
    }
    if (uid <= last) {
      violation(
          fmt::format("UIDs not ascending: message {} has UID {} after UID {}", seq, uid, last));
      break;
    }
    last = uid;
  }
}

bool SessionTracker::may_hold_expunged() const {
  for (std::uint32_t uid : uids_) {
    if (uid == 0 || model_ == nullptr || model_->is_expunged(uid)) {
      return true;
    }
    const MailboxModel::Message* m = model_->find(uid);
    if (m == nullptr || !m->known || m->doomed) {
      return true;
    }
  }
  return false;
}

void SessionTracker::on_untagged(const Response& r) {
  if (!selected_ && command_ != Command::kSelect) {
    return;
  }
  switch (r.data) {
    case Data::kExists:
      if (r.number < exists() && command_ != Command::kSelect) {
        violation(
            fmt::format("EXISTS went down from {} to {} without EXPUNGE", exists(), r.number));
      }
      uids_.resize(r.number, 0);
      if (model_ != nullptr) {
        model_->saw_count(r.number, fmt::format("client {}: EXISTS", client_));
      }
      break;
    case Data::kExpunge: {
      if (r.number > exists()) {
        violation(fmt::format("EXPUNGE of message {} but only {} exist", r.number, exists()));
        break;
      }
      if (command_ == Command::kFetchAll || command_ == Command::kSeqCommand) {
        violation(
            fmt::format("EXPUNGE {} sent during FETCH/STORE/SEARCH (RFC 3501 7.4.1)", r.number));
      }
      std::uint32_t uid = uids_[r.number - 1];
      uids_.erase(uids_.begin() + (r.number - 1));
      if (command_ == Command::kFetchAll && r.number <= fetched_.size()) {
        fetched_.erase(fetched_.begin() + (r.number - 1));
        --fetch_all_count_;
      }
      if (uid != 0) {
        expunged_.insert(uid);
        watermark_.erase(uid);
        if (model_ != nullptr) {
          model_->expunged(uid);
        }
      }
      break;
    }
    case Data::kFetch:
      on_fetch(r);
      break;
    case Data::kSearch:
      for (std::uint32_t n : r.search) {
        if (n > exists()) {
          violation(fmt::format("SEARCH returned message {} but only {} exist", n, exists()));
          break;
        }
      }
      break;
    case Data::kMailboxStatus:
      if (r.status_messages >= 0 && model_ != nullptr) {
        model_->saw_count(static_cast<std::uint32_t>(r.status_messages),
                          fmt::format("client {}: STATUS MESSAGES", client_));
      }
      break;
    default:
      break;
  }
}

void SessionTracker::on_fetch(const Response& r) {
  const FetchData& f = r.fetch;
  std::uint32_t seq = r.number;
  if (seq > exists()) {
    violation(fmt::format("FETCH for message {} but only {} exist", seq, exists()));
    return;
  }
  std::uint32_t& known = uids_[seq - 1];
  if (f.uid != 0) {
    if (known != 0 && known != f.uid) {
      violation(fmt::format("message {} was UID {} and is now UID {}", seq, known, f.uid));
    }
    if (expunged_.count(f.uid) != 0) {
      violation(fmt::format("FETCH returned UID {}, which was expunged", f.uid));
    }
    known = f.uid;
  }
  std::uint32_t uid = known;
  if (command_ == Command::kFetchOne && uid == target_ && f.has_body) {
    target_seen_ = true;
  }
  if (command_ == Command::kFetchAll) {
    if (seq <= fetched_.size()) {
      fetched_[seq - 1] |= (f.uid != 0 ? kUidItem : 0) | (f.has_flags ? kFlagsItem : 0) |
                           (f.has_envelope ? kEnvelopeItem : 0) |
                           (f.has_bodystructure ? kStructureItem : 0) |
                           (f.has_internaldate ? kDateItem : 0);
    }
  }
  if (!f.has_flags || uid == 0 || model_ == nullptr) {
    return;
  }
  FlagBits bits = model_->flag_bits(f.flags);
  if (command_ == Command::kStore && uid == target_) {
    target_seen_ = true;
    target_flags_ = bits;
  }
  model_->observe(client_, uid, bits, watermark_[uid], fmt::format("FETCH {}", seq));
}

}  // namespace peregrine::bench
