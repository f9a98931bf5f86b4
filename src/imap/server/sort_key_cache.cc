#include "imap/server/sort_key_cache.h"

#include <string>

namespace peregrine::imap {
namespace {

// A std::string's own buffer, when it is not the small in-object one.
size_t heap_of(const std::string& s) {
  return s.capacity() > std::string().capacity() ? s.capacity() + 1 : 0;
}

// A hash node: the key/value pair, the next pointer and the cached hash,
// plus the bucket slot it brings.
constexpr size_t kNodeOverhead = 3 * sizeof(void*);

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
  size_t n = sizeof(store::Uid) + sizeof(search::MessageKeys) + kNodeOverhead;
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

const search::MessageKeys* SortKeyCache::find(store::Uid uid) const {
  auto it = entries_.find(uid);
  return it == entries_.end() ? nullptr : &it->second;
}

const search::MessageKeys* SortKeyCache::put(store::Uid uid, search::MessageKeys&& keys) {
  if (const search::MessageKeys* have = find(uid)) {
    return have;
  }
  drop_fetch_parts(keys.record);
  const size_t cost = key_record_bytes(keys);
  if (bytes_ + cost > limit_bytes_) {
    return nullptr;  // `keys` stays with the caller
  }
  bytes_ += cost;
  return &entries_.emplace(uid, std::move(keys)).first->second;
}

void SortKeyCache::erase(std::span<const store::Uid> uids) {
  for (store::Uid uid : uids) {
    auto it = entries_.find(uid);
    if (it != entries_.end()) {
      bytes_ -= key_record_bytes(it->second);
      entries_.erase(it);
    }
  }
}

}  // namespace peregrine::imap
