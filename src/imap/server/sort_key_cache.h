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
// buffers and a table slot each) stay under the byte limit given at
// construction, kDefaultLimitBytes (128 MiB) for a hub. A message costs
// about 600 bytes of fixed size plus its keys' text, so roughly 800 bytes
// of typical mail (an estimate, not a measurement): about 160,000
// messages. Past the limit put() refuses, and the caller uses those keys
// for one command and drops them (reading the store each time, as before).
//
// Thread safety: none; used on the user's strand only, as the hub is.

#include <cstddef>
#include <limits>
#include <memory>
#include <optional>
#include <span>
#include <utility>
#include <vector>

#include "mime/cache_record.h"
#include "search/message_keys.h"
#include "store/api/types.h"

namespace peregrine::imap {

class SortKeyCache {
 public:
  static constexpr size_t kDefaultLimitBytes = size_t{128} << 20;
  using Fresh = std::vector<std::pair<store::Uid, search::MessageKeys>>;

  explicit SortKeyCache(size_t limit_bytes = kDefaultLimitBytes) : limit_bytes_(limit_bytes) {}

  // The keys of `uid`, nullptr when they are not cached. Stay valid until
  // the uid is erased or the cache is destroyed. `cursor` (start at 0) makes
  // lookups in ascending UID order cost amortized O(1); any value is safe.
  const search::MessageKeys* find(store::Uid uid, size_t& cursor) const;
  // The same, and the message's sent date (its Date header in UTC; nullopt
  // when it has none) into `sent`, read from the cache's own table: a sort
  // by date then never reaches the key records themselves (about 1 KB
  // each, 110 MB at 100,000 messages, memory that costs many times more to
  // reach after a pause on a VM: docs/benchmarks.md).
  const search::MessageKeys* find(store::Uid uid, size_t& cursor,
                                  std::optional<std::int64_t>& sent) const;
  const search::MessageKeys* find(store::Uid uid) const {
    size_t cursor = 0;
    return find(uid, cursor);
  }
  // Keeps the keys of `fresh` (ascending UIDs, none cached yet), dropping
  // their FETCH parts, while the byte limit allows; those it takes are
  // moved out, the others are left in `fresh` to be used once.
  void put(Fresh& fresh);
  // One message's keys: the kept keys, or nullptr when they would pass the
  // byte limit (then `keys` is left with them, FETCH parts dropped).
  const search::MessageKeys* put(store::Uid uid, search::MessageKeys&& keys);
  // Forgets expunged messages; `uids` ascending.
  void erase(std::span<const store::Uid> uids);

  size_t size() const { return entries_.size(); }
  size_t bytes() const { return bytes_; }

 private:
  static constexpr std::int64_t kNoSentDate = std::numeric_limits<std::int64_t>::min();
  struct Entry {
    store::Uid uid;
    std::unique_ptr<search::MessageKeys> keys;  // boxed: pointers outlive inserts
    std::int64_t sent = kNoSentDate;            // keys->record.sent_date, in UTC
  };
  // Index in entries_ of `uid`, or entries_.size(); see find().
  size_t index_of(store::Uid uid, size_t& cursor) const;
  std::vector<Entry> entries_;  // ascending UIDs
  size_t limit_bytes_;
  size_t bytes_ = 0;
};

// The heap bytes a key record costs in the cache (the estimate the bound is
// kept with). Exposed for tests.
size_t key_record_bytes(const search::MessageKeys& keys);

}  // namespace peregrine::imap
