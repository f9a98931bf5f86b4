#include "store/api/listener.h"

#include <algorithm>
#include <utility>

namespace peregrine::store {

struct Watch::State {
  struct Entry {
    std::uint64_t id = 0;
    std::uint64_t mailbox_key = 0;
    MailboxListener* listener = nullptr;
    bool active = true;
  };
  std::uint64_t next_id = 1;
  std::map<std::uint64_t, std::vector<std::shared_ptr<Entry>>> by_mailbox;

  void remove(std::uint64_t id) {
    for (auto it = by_mailbox.begin(); it != by_mailbox.end(); ++it) {
      auto& entries = it->second;
      auto found =
          std::find_if(entries.begin(), entries.end(), [&](const auto& e) { return e->id == id; });
      if (found != entries.end()) {
        (*found)->active = false;
        entries.erase(found);
        if (entries.empty()) {
          by_mailbox.erase(it);
        }
        return;
      }
    }
  }

  bool contains(std::uint64_t id) const {
    for (const auto& [key, entries] : by_mailbox) {
      for (const auto& e : entries) {
        if (e->id == id) {
          return true;
        }
      }
    }
    return false;
  }

  // A copy, so that callbacks may add or drop watches while we iterate.
  std::vector<std::shared_ptr<Entry>> entries_of(std::uint64_t key) const {
    auto it = by_mailbox.find(key);
    if (it == by_mailbox.end()) {
      return {};
    }
    return it->second;
  }

  template <typename F>
  void each(std::uint64_t key, F&& call) {
    for (const auto& entry : entries_of(key)) {
      if (entry->active) {
        call(*entry->listener);
      }
    }
  }
};

Watch::Watch(std::weak_ptr<State> registry, std::uint64_t id)
    : registry_(std::move(registry)), id_(id) {}

Watch::Watch(Watch&& other) noexcept
    : registry_(std::move(other.registry_)), id_(std::exchange(other.id_, 0)) {}

Watch& Watch::operator=(Watch&& other) noexcept {
  if (this != &other) {
    reset();
    registry_ = std::move(other.registry_);
    id_ = std::exchange(other.id_, 0);
  }
  return *this;
}

Watch::~Watch() { reset(); }

void Watch::reset() {
  if (auto state = registry_.lock()) {
    state->remove(id_);
  }
  registry_.reset();
  id_ = 0;
}

bool Watch::active() const {
  auto state = registry_.lock();
  return state && state->contains(id_);
}

ListenerRegistry::ListenerRegistry() : state_(std::make_shared<Watch::State>()) {}

ListenerRegistry::~ListenerRegistry() {
  // Outstanding Watches see the state expire and become inert.
  for (auto& [key, entries] : state_->by_mailbox) {
    for (auto& e : entries) {
      e->active = false;
    }
  }
}

Watch ListenerRegistry::add(std::uint64_t mailbox_key, MailboxListener& listener) {
  auto entry = std::make_shared<Watch::State::Entry>();
  entry->id = state_->next_id++;
  entry->mailbox_key = mailbox_key;
  entry->listener = &listener;
  state_->by_mailbox[mailbox_key].push_back(entry);
  return Watch(state_, entry->id);
}

bool ListenerRegistry::has_listeners(std::uint64_t mailbox_key) const {
  return state_->by_mailbox.contains(mailbox_key);
}

void ListenerRegistry::publish_appended(std::uint64_t mailbox_key,
                                        std::span<const MessageMeta> messages) {
  if (messages.empty()) {
    return;
  }
  state_->each(mailbox_key, [&](MailboxListener& l) { l.on_appended(messages); });
}

void ListenerRegistry::publish_flags_changed(std::uint64_t mailbox_key,
                                             std::span<const MessageMeta> messages) {
  if (messages.empty()) {
    return;
  }
  state_->each(mailbox_key, [&](MailboxListener& l) { l.on_flags_changed(messages); });
}

void ListenerRegistry::publish_expunged(std::uint64_t mailbox_key, std::span<const Uid> uids,
                                        ModSeq modseq) {
  if (uids.empty()) {
    return;
  }
  state_->each(mailbox_key, [&](MailboxListener& l) { l.on_expunged(uids, modseq); });
}

void ListenerRegistry::publish_mailbox_deleted(std::uint64_t mailbox_key) {
  auto entries = state_->entries_of(mailbox_key);
  for (auto& e : entries) {
    if (e->active) {
      e->active = false;
      e->listener->on_mailbox_deleted();
    }
  }
  state_->by_mailbox.erase(mailbox_key);
}

}  // namespace peregrine::store
