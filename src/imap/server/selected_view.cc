#include "imap/server/selected_view.h"

#include <algorithm>

#include "imap/proto/fetch_response.h"
#include "imap/proto/response_writer.h"
#include "imap/server/flag_names.h"
#include "imap/server/mailbox_hub.h"

namespace peregrine::imap {

SelectedView::SelectedView(std::shared_ptr<MailboxHub> hub, bool read_only,
                           std::vector<store::Uid> recent)
    : hub_(std::move(hub)), read_only_(read_only), recent_(std::move(recent)) {
  known_.reserve(hub_->messages().size());
  for (const store::MessageMeta& m : hub_->messages()) {
    known_.push_back(Known{m.uid, false});
  }
  keywords_told_ = hub_->keywords().size();
  deleted_ = hub_->deleted();
  hub_->attach(*this);
}

SelectedView::~SelectedView() { hub_->detach(*this); }

size_t SelectedView::index_of(store::Uid uid) const {
  auto it = std::lower_bound(known_.begin(), known_.end(), uid,
                             [](const Known& k, store::Uid u) { return k.uid < u; });
  return it != known_.end() && it->uid == uid ? static_cast<size_t>(it - known_.begin())
                                              : known_.size();
}

const store::MessageMeta* SelectedView::meta_at(std::uint32_t seq) const {
  const Known& k = known_[seq - 1];
  return k.expunged ? nullptr : hub_->find(k.uid, seq - 1);
}

std::optional<store::SystemFlags> SelectedView::flags_at(std::uint32_t seq) const {
  const Known& k = known_[seq - 1];
  return k.expunged ? std::nullopt : hub_->flags_of(k.uid, seq - 1);
}

void SelectedView::fill(std::vector<store::Uid>& uids, std::vector<char>& present) const {
  // A message this view knows is in the hub until the hub expunges it, and
  // the hub's expunge makes it a ghost here in the same call
  // (on_expunged): so known_ alone says which are present, without a walk
  // over the hub's metadata (100,000 entries of about 80 bytes each, memory
  // that costs many times more to reach after the session was idle:
  // docs/benchmarks.md, "SEARCH after a pause").
  for (size_t i = 0; i < known_.size(); ++i) {
    uids[i + 1] = known_[i].uid;
    present[i + 1] = !known_[i].expunged;
  }
}

std::optional<std::uint32_t> SelectedView::seq_of(store::Uid uid) const {
  size_t i = index_of(uid);
  if (i == known_.size()) {
    return std::nullopt;
  }
  return static_cast<std::uint32_t>(i + 1);
}

bool SelectedView::is_recent(store::Uid uid) const {
  return std::binary_search(recent_.begin(), recent_.end(), uid);
}

std::uint32_t SelectedView::recent_count() const {
  std::uint32_t n = 0;
  for (store::Uid uid : recent_) {
    size_t i = index_of(uid);
    if (i < known_.size() && !known_[i].expunged) {
      ++n;
    }
  }
  return n;
}

base::Result<std::vector<std::uint32_t>> SelectedView::resolve(const SequenceSet& set,
                                                               bool uid) const {
  std::vector<std::uint32_t> out;
  if (set.saved) {
    for (store::Uid u : saved_) {
      size_t i = index_of(u);
      if (i < known_.size() && !known_[i].expunged) {
        out.push_back(static_cast<std::uint32_t>(i + 1));
      }
    }
    return out;
  }
  if (uid) {
    store::Uid largest = known_.empty() ? 0 : known_.back().uid;
    for (const SeqRange& r : set.normalized(largest)) {
      auto it = std::lower_bound(known_.begin(), known_.end(), r.first,
                                 [](const Known& k, store::Uid u) { return k.uid < u; });
      for (; it != known_.end() && it->uid <= r.last; ++it) {
        out.push_back(static_cast<std::uint32_t>(it - known_.begin() + 1));
      }
    }
    return out;  // normalized ranges are sorted and disjoint
  }
  std::uint32_t n = count();
  std::vector<SeqRange> ranges;
  for (SeqRange r : set.ranges) {
    bool star = r.first == kStar || r.last == kStar;
    if (star) {
      if (n == 0) {
        continue;
      }
      r.first = r.first == kStar ? n : std::min(r.first, n);
      r.last = r.last == kStar ? n : std::min(r.last, n);
    } else if (std::max(r.first, r.last) > n) {
      return base::fail(base::MailError::kBadInput, "invalid message sequence number " +
                                                        std::to_string(std::max(r.first, r.last)) +
                                                        " (" + std::to_string(n) + " messages)");
    }
    ranges.push_back(SeqRange{std::min(r.first, r.last), std::max(r.first, r.last)});
  }
  std::sort(ranges.begin(), ranges.end(),
            [](const SeqRange& a, const SeqRange& b) { return a.first < b.first; });
  std::uint32_t next = 1;  // numbers below this are already out
  for (const SeqRange& r : ranges) {
    for (std::uint32_t s = std::max(r.first, next); s <= r.last; ++s) {
      out.push_back(s);
    }
    next = std::max(next, r.last + 1);
  }
  return out;
}

bool SelectedView::has_pending() const {
  return ghosts_ > 0 || !unannounced_.empty() || !flag_pending_.empty() ||
         hub_->keywords().size() > keywords_told_ || (deleted_ && !deletion_told_);
}

void SelectedView::notify() {
  if (on_update_) {
    on_update_();
  }
}

void SelectedView::on_appended(std::span<const store::MessageMeta> messages) {
  for (const store::MessageMeta& m : messages) {
    if ((known_.empty() || m.uid > known_.back().uid) &&
        (unannounced_.empty() || m.uid > unannounced_.back())) {
      unannounced_.push_back(m.uid);
    }
  }
  notify();
}

void SelectedView::on_flags_changed(std::span<const store::MessageMeta> messages) {
  for (const store::MessageMeta& m : messages) {
    size_t i = index_of(m.uid);
    if (i < known_.size() && !known_[i].expunged) {
      flag_pending_.insert(m.uid);
    }
  }
  notify();
}

void SelectedView::on_expunged(std::span<const store::Uid> sorted_uids) {
  for (store::Uid uid : sorted_uids) {
    auto un = std::lower_bound(unannounced_.begin(), unannounced_.end(), uid);
    if (un != unannounced_.end() && *un == uid) {
      unannounced_.erase(un);  // the client never heard of it
    } else if (size_t i = index_of(uid); i < known_.size() && !known_[i].expunged) {
      known_[i].expunged = true;
      ++ghosts_;
    }
    flag_pending_.erase(uid);
    auto r = std::lower_bound(recent_.begin(), recent_.end(), uid);
    if (r != recent_.end() && *r == uid) {
      recent_.erase(r);
    }
  }
  notify();
}

void SelectedView::on_mailbox_deleted() {
  deleted_ = true;
  notify();
}

bool SelectedView::flush(std::string& out, const FlushOptions& options) {
  if (deleted_) {
    if (!deletion_told_) {
      write_untagged(out, ResponseStatus::kBye, "Selected mailbox was deleted, have to disconnect");
      deletion_told_ = true;
    }
    return false;
  }
  if (options.allow_expunge) {
    write_expunges(out);
  }
  write_exists(out);
  if (hub_->keywords().size() > keywords_told_) {
    keywords_told_ = hub_->keywords().size();
    std::vector<std::string> flags = mailbox_flags(hub_->keywords());
    write_flags(out, flags);
    if (!read_only_) {
      write_untagged(out, ResponseStatus::kOk, ResponseCode::permanent_flags(flags, true),
                     "Flags permitted");
    }
  }
  write_flag_updates(out, options.with_uid);
  return true;
}

void SelectedView::write_expunges(std::string& out) {
  if (ghosts_ == 0) {
    return;
  }
  size_t kept = 0;
  for (size_t i = 0; i < known_.size(); ++i) {
    if (known_[i].expunged) {
      // Each EXPUNGE renumbers the messages after it at once: the ones
      // before this were removed, so this one is now number kept + 1.
      write_expunge(out, static_cast<std::uint32_t>(kept + 1));
    } else {
      known_[kept++] = known_[i];
    }
  }
  known_.resize(kept);
  ghosts_ = 0;
}

void SelectedView::write_exists(std::string& out) {
  if (unannounced_.empty()) {
    return;
  }
  for (store::Uid uid : unannounced_) {
    known_.push_back(Known{uid, false});
  }
  if (!read_only_) {
    // Each new message is \Recent in the first session to be told of it.
    auto claimed = hub_->store().claim_recent(hub_->name());
    if (claimed) {
      for (store::Uid uid : *claimed) {
        if (std::binary_search(unannounced_.begin(), unannounced_.end(), uid) &&
            (recent_.empty() || recent_.back() < uid)) {
          recent_.push_back(uid);
        }
      }
    }
  }
  unannounced_.clear();
  imap::write_exists(out, count());
  imap::write_recent(out, recent_count());
}

void SelectedView::write_flag_updates(std::string& out, bool with_uid) {
  for (store::Uid uid : flag_pending_) {
    size_t i = index_of(uid);
    const store::MessageMeta* meta = hub_->find(uid);
    if (i == known_.size() || known_[i].expunged || meta == nullptr) {
      continue;
    }
    FetchResponse r(out, static_cast<std::uint32_t>(i + 1));
    if (with_uid) {
      r.uid(uid);
    }
    r.flags(message_flags(*meta, is_recent(uid)));
    r.finish();
  }
  flag_pending_.clear();
}

}  // namespace peregrine::imap
