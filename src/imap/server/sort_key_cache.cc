#include "imap/server/sort_key_cache.h"

#include <algorithm>
#include <string>

namespace peregrine::imap {
namespace {

// A std::string's own buffer, when it is not the small in-object one.
size_t heap_of(const std::string& s) {
  return s.capacity() > std::string().capacity() ? s.capacity() + 1 : 0;
}

// A table slot (uid and box pointer, with the vector's slack).
constexpr size_t kNodeOverhead = 4 * sizeof(void*);

void drop_fetch_parts(mime::CacheRecord& r) {
  // Swapping with fresh values frees the buffers (clear() would keep them,
  // and so may assigning an empty string).
  std::string().swap(r.envelope);
  std::string().swap(r.body);
  std::string().swap(r.bodystructure);
  r.parts = mime::PartMap();
}

}  // namespace

size_t key_record_bytes(const search::MessageKeys& k) {
  const mime::CacheRecord& r = k.record;
  size_t n = sizeof(search::MessageKeys) + kNodeOverhead;
  for (const std::string* s :
       {&r.envelope, &r.body, &r.bodystructure, &r.subject, &r.from_mailbox, &r.from_display,
        &r.to_mailbox, &r.to_display, &r.cc_mailbox, &r.cc_display, &r.message_id, &k.subject,
        &k.from, &k.to, &k.cc, &k.display_from, &k.display_to}) {
    n += heap_of(*s);
  }
  n += r.parts.nodes().capacity() * sizeof(mime::PartSpan);
  n += r.references.capacity() * sizeof(std::string);
  for (const std::string& ref : r.references) {
    n += heap_of(ref);
  }
  return n;
}

size_t SortKeyCache::index_of(store::Uid uid, size_t& cursor) const {
  auto first = entries_.begin();
  if (cursor < entries_.size() && entries_[cursor].uid <= uid) {
    // Ascending lookups mostly find the next entry or one shortly after.
    for (size_t j = cursor; j < entries_.size() && j < cursor + 8; ++j) {
      if (entries_[j].uid >= uid) {
        cursor = j;
        return entries_[j].uid == uid ? j : entries_.size();
      }
    }
    first += static_cast<std::ptrdiff_t>(cursor);
  }
  auto it = std::lower_bound(first, entries_.end(), uid,
                             [](const Entry& e, store::Uid u) { return e.uid < u; });
  cursor = static_cast<size_t>(it - entries_.begin());
  return it != entries_.end() && it->uid == uid ? cursor : entries_.size();
}

const search::MessageKeys* SortKeyCache::find(store::Uid uid, size_t& cursor) const {
  const size_t i = index_of(uid, cursor);
  return i < entries_.size() ? entries_[i].keys.get() : nullptr;
}

const search::MessageKeys* SortKeyCache::find(store::Uid uid, size_t& cursor,
                                              std::optional<std::int64_t>& sent) const {
  const size_t i = index_of(uid, cursor);
  if (i == entries_.size()) {
    sent.reset();
    return nullptr;
  }
  const Entry& e = entries_[i];
  sent = e.sent == kNoSentDate ? std::nullopt : std::optional(e.sent);
  return e.keys.get();
}

void SortKeyCache::put(Fresh& fresh) {
  const size_t old = entries_.size();
  for (auto& [uid, keys] : fresh) {
    drop_fetch_parts(keys.record);
    const size_t cost = key_record_bytes(keys);
    if (bytes_ + cost > limit_bytes_) {
      continue;
    }
    bytes_ += cost;
    const std::int64_t sent =
        keys.record.sent_date ? keys.record.sent_date->utc_seconds : kNoSentDate;
    entries_.push_back(Entry{uid, std::make_unique<search::MessageKeys>(std::move(keys)), sent});
  }
  // New messages come after the cached ones; keys read for a subset first
  // and the rest later land in between: one merge per call.
  const auto middle = entries_.begin() + static_cast<std::ptrdiff_t>(old);
  if (old > 0 && middle != entries_.end() && middle->uid < (middle - 1)->uid) {
    std::inplace_merge(entries_.begin(), middle, entries_.end(),
                       [](const Entry& a, const Entry& b) { return a.uid < b.uid; });
  }
}

const search::MessageKeys* SortKeyCache::put(store::Uid uid, search::MessageKeys&& keys) {
  if (const search::MessageKeys* have = find(uid)) {
    return have;
  }
  Fresh one;
  one.emplace_back(uid, std::move(keys));
  put(one);
  const search::MessageKeys* kept = find(uid);
  if (kept == nullptr) {
    keys = std::move(one.front().second);
  }
  return kept;
}

void SortKeyCache::erase(std::span<const store::Uid> uids) {
  std::erase_if(entries_, [&](const Entry& e) {
    if (!std::binary_search(uids.begin(), uids.end(), e.uid)) {
      return false;
    }
    bytes_ -= key_record_bytes(*e.keys);
    return true;
  });
}

}  // namespace peregrine::imap
