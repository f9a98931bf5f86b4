#pragma once

// What SORT and THREAD know of one message: facts the store keeps for every
// message (sequence number, INTERNALDATE, size) and its cache record, which
// holds the header keys (mime/cache_record.h). Nothing here reads a message
// file.

#include <cstdint>
#include <optional>
#include <string>

#include "mime/cache_record.h"

namespace peregrine::search {

struct MessageFacts {
  // The message's sequence number: the final tie-break of every order
  // (RFC 5256 §3), and what the results name.
  uint32_t seq = 0;
  int64_t internal_date = 0;  // seconds since the epoch, UTC
  uint64_t size = 0;          // RFC822.SIZE
  // The sent date (below) when the caller has it at hand, so that a sort by
  // date need not reach the message's cache record (which, for 100,000
  // messages kept in memory, is about 110 MB to walk).
  std::optional<int64_t> sent;
};

// The sent date of RFC 5256 §2.2: the Date header in UTC, or INTERNALDATE
// when the Date header is missing or unparsable. `record` may be null (no
// cache record): then INTERNALDATE.
inline int64_t sent_date(const MessageFacts& m, const mime::CacheRecord* record) {
  if (m.sent) {
    return *m.sent;
  }
  return record != nullptr && record->sent_date ? record->sent_date->utc_seconds : m.internal_date;
}

// A message's cache record with the string keys SORT and THREAD compare
// derived from it once: i;ascii-casemap of the base subject (RFC 5256 §2.1)
// and of the first From/To/Cc addr-mailbox and display names (RFC 5957).
// What a mailbox keeps in memory between SORT and THREAD commands.
struct MessageKeys {
  mime::CacheRecord record;
  std::string subject;  // base subject
  bool reply_or_forward = false;
  std::string from, to, cc, display_from, display_to;
};

MessageKeys message_keys(mime::CacheRecord record);

}  // namespace peregrine::search
