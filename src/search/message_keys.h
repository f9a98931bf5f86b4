#pragma once

// What SORT and THREAD know of one message: facts the store keeps for every
// message (sequence number, INTERNALDATE, size) and its cache record, which
// holds the header keys (mime/cache_record.h). Nothing here reads a message
// file.

#include <cstdint>

#include "mime/cache_record.h"

namespace peregrine::search {

struct MessageFacts {
  // The message's sequence number: the final tie-break of every order
  // (RFC 5256 §3), and what the results name.
  uint32_t seq = 0;
  int64_t internal_date = 0;  // seconds since the epoch, UTC
  uint64_t size = 0;          // RFC822.SIZE
};

// The sent date of RFC 5256 §2.2: the Date header in UTC, or INTERNALDATE
// when the Date header is missing or unparsable. `record` may be null (no
// cache record): then INTERNALDATE.
inline int64_t sent_date(const MessageFacts& m, const mime::CacheRecord* record) {
  return record != nullptr && record->sent_date ? record->sent_date->utc_seconds : m.internal_date;
}

}  // namespace peregrine::search
