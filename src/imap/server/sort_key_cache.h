#pragma once

// The SORT and THREAD keys of one open mailbox's messages, kept in memory so
// a second SORT or THREAD reads no cache record from the store and decodes
// nothing. A key record (search::MessageKeys) is the message's cache record
// with the FETCH parts (envelope, BODY, BODYSTRUCTURE, part map) dropped and
// the compared strings derived once: what search::Sorter and
// search::thread_message read. Messages are immutable, so an entry never
// goes stale; it leaves when its message is expunged, and all of them when
// the mailbox hub closes (the hub owns the cache).
//
// Memory bound: the entries' estimated heap bytes (key record, its strings'
// buffers and a hash node each) stay under the byte limit given at
// construction, kDefaultLimitBytes (64 MiB) for a hub, about 200,000
// messages of typical mail. Past the limit put() refuses, and the caller
// uses the record once and drops it (the slow path of reading the store).
//
// Thread safety: none; used on the user's strand only, as the hub is.

#include <cstddef>
#include <span>
#include <unordered_map>

#include "mime/cache_record.h"
#include "search/message_keys.h"
#include "store/api/types.h"

namespace peregrine::imap {

class SortKeyCache {
 public:
  static constexpr size_t kDefaultLimitBytes = size_t{64} << 20;

  explicit SortKeyCache(size_t limit_bytes = kDefaultLimitBytes) : limit_bytes_(limit_bytes) {}

  // The key record of `uid`, nullptr when it is not cached. Stays valid
  // until the uid is erased or the cache is destroyed.
  const search::MessageKeys* find(store::Uid uid) const;
  // Drops the FETCH parts of `keys.record` and keeps the rest under `uid`.
  // Returns the kept keys; nullptr when they would pass the byte limit, and
  // then `keys` is left with them (FETCH parts dropped all the same).
  const search::MessageKeys* put(store::Uid uid, search::MessageKeys&& keys);
  // Forgets expunged messages.
  void erase(std::span<const store::Uid> uids);

  size_t size() const { return entries_.size(); }
  size_t bytes() const { return bytes_; }

 private:
  std::unordered_map<store::Uid, search::MessageKeys> entries_;
  size_t limit_bytes_;
  size_t bytes_ = 0;
};

// The heap bytes a key record costs in the cache (the estimate the bound is
// kept with). Exposed for tests.
size_t key_record_bytes(const search::MessageKeys& keys);

}  // namespace peregrine::imap
