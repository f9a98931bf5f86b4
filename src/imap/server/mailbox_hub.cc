#include "imap/server/mailbox_hub.h"

#include <algorithm>

#include "base/ascii.h"
#include "imap/server/selected_view.h"

namespace peregrine::imap {
namespace {

bool uid_less(const store::MessageMeta& m, store::Uid uid) { return m.uid < uid; }

}  // namespace

base::Result<std::shared_ptr<MailboxHub>> MailboxHub::open(store::UserStore& store,
                                                           std::string_view mailbox) {
  if (auto synced = store.sync_mailbox(mailbox); !synced) {
    return std::unexpected(synced.error());
  }
  auto snapshot = store.open_mailbox(mailbox);
  if (!snapshot) {
    return std::unexpected(snapshot.error());
  }
  std::shared_ptr<MailboxHub> hub(new MailboxHub(store, std::move(*snapshot)));
  auto watch = store.watch(hub->name_, *hub);
  if (!watch) {
    return std::unexpected(watch.error());
  }
  hub->watch_ = std::move(*watch);
  return hub;
}

MailboxHub::MailboxHub(store::UserStore& store, store::MailboxSnapshot snapshot)
    : store_(store),
      name_(std::move(snapshot.info.name)),
      uidvalidity_(snapshot.info.uidvalidity),
      uidnext_(snapshot.info.uidnext),
      highest_modseq_(snapshot.info.highest_modseq),
      messages_(std::move(snapshot.messages)) {
  flags_.reserve(messages_.size());
  for (const store::MessageMeta& m : messages_) {
    learn_keywords(m);
    flags_.push_back({m.uid, m.flags});
  }
}

MailboxHub::~MailboxHub() { watch_.reset(); }

std::size_t MailboxHub::position_of(store::Uid uid, std::size_t hint) const {
  if (hint < flags_.size() && flags_[hint].uid == uid) {
    return hint;
  }
  auto it = std::lower_bound(flags_.begin(), flags_.end(), uid,
                             [](const UidFlags& f, store::Uid u) { return f.uid < u; });
  return it != flags_.end() && it->uid == uid ? static_cast<std::size_t>(it - flags_.begin())
                                              : flags_.size();
}

const store::MessageMeta* MailboxHub::find(store::Uid uid) const {
  return find(uid, flags_.size());
}

const store::MessageMeta* MailboxHub::find(store::Uid uid, std::size_t hint) const {
  const std::size_t at = position_of(uid, hint);
  return at < messages_.size() ? &messages_[at] : nullptr;
}

std::optional<store::SystemFlags> MailboxHub::flags_of(store::Uid uid, std::size_t hint) const {
  const std::size_t at = position_of(uid, hint);
  return at < flags_.size() ? std::optional(flags_[at].flags) : std::nullopt;
}

void MailboxHub::attach(SelectedView& view) { views_.push_back(&view); }

void MailboxHub::detach(SelectedView& view) { std::erase(views_, &view); }

void MailboxHub::learn_keywords(const store::MessageMeta& meta) {
  for (const std::string& k : meta.keywords) {
    bool known = std::any_of(keywords_.begin(), keywords_.end(),
                             [&](const std::string& have) { return base::iequals(have, k); });
    if (!known) {
      keywords_.push_back(k);
    }
  }
}

void MailboxHub::on_appended(std::span<const store::MessageMeta> messages) {
  for (const store::MessageMeta& m : messages) {
    if (messages_.empty() || messages_.back().uid < m.uid) {
      messages_.push_back(m);
      flags_.push_back({m.uid, m.flags});
    } else {
      // Out of order (never expected: UIDs ascend); keep the list sorted.
      auto it = std::lower_bound(messages_.begin(), messages_.end(), m.uid, uid_less);
      const auto at = it - messages_.begin();
      if (it != messages_.end() && it->uid == m.uid) {
        *it = m;
        flags_[at] = {m.uid, m.flags};
      } else {
        messages_.insert(it, m);
        flags_.insert(flags_.begin() + at, {m.uid, m.flags});
      }
    }
    learn_keywords(m);
    uidnext_ = std::max(uidnext_, m.uid + 1);
    highest_modseq_ = std::max(highest_modseq_, m.modseq);
  }
  for (SelectedView* view : std::vector<SelectedView*>(views_)) {
    view->on_appended(messages);
  }
}

void MailboxHub::on_flags_changed(std::span<const store::MessageMeta> messages) {
  for (const store::MessageMeta& m : messages) {
    if (const std::size_t at = position_of(m.uid, flags_.size()); at < messages_.size()) {
      messages_[at] = m;
      flags_[at].flags = m.flags;
    }
    learn_keywords(m);
    highest_modseq_ = std::max(highest_modseq_, m.modseq);
  }
  for (SelectedView* view : std::vector<SelectedView*>(views_)) {
    view->on_flags_changed(messages);
  }
}

void MailboxHub::on_expunged(std::span<const store::Uid> uids, store::ModSeq modseq) {
  std::vector<store::Uid> sorted(uids.begin(), uids.end());
  std::sort(sorted.begin(), sorted.end());
  std::erase_if(messages_, [&](const store::MessageMeta& m) {
    return std::binary_search(sorted.begin(), sorted.end(), m.uid);
  });
  std::erase_if(flags_, [&](const UidFlags& f) {
    return std::binary_search(sorted.begin(), sorted.end(), f.uid);
  });
  sort_keys_.erase(sorted);
  highest_modseq_ = std::max(highest_modseq_, modseq);
  for (SelectedView* view : std::vector<SelectedView*>(views_)) {
    view->on_expunged(sorted);
  }
}

void MailboxHub::on_mailbox_deleted() {
  deleted_ = true;
  for (SelectedView* view : std::vector<SelectedView*>(views_)) {
    view->on_mailbox_deleted();
  }
}

}  // namespace peregrine::imap
