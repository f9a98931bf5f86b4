#pragma once

// THREAD=ORDEREDSUBJECT and THREAD=REFERENCES (RFC 5256 §3) over the
// messages a search selected. Pure: the caller hands in each message's
// keys (from its cache record) and gets the threads back.
//
// Deep threads (a chain of 100,000 replies) are handled without recursion,
// and the result is flat, so nothing destroys a deep tree recursively
// either.
//
// Thread safety: none needed; the functions share no state.

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "search/message_keys.h"

namespace peregrine::search {

// One message's threading keys.
struct ThreadMessage {
  uint32_t seq = 0;
  int64_t sent_date = 0;  // RFC 5256 §2.2
  std::string subject;    // base subject, i;ascii-casemap key (ascii_casemap)
  bool reply_or_forward = false;
  std::string message_id;               // "<...>", empty when there is none
  std::vector<std::string> references;  // oldest first (References, else In-Reply-To)
};

ThreadMessage thread_message(const MessageFacts& message, const mime::CacheRecord* record);
ThreadMessage thread_message(const MessageFacts& message, const MessageKeys* keys);
inline ThreadMessage thread_message(const MessageFacts& message, std::nullptr_t) {
  return thread_message(message, static_cast<const MessageKeys*>(nullptr));
}

// A thread forest in pre-order: every node followed by its subtrees, each
// node telling how many children it has. `seq` 0 is a dummy (a missing
// parent that holds siblings together, RFC 5256 §3 REFERENCES step 3).
// "(3 6 (4 23)(44 7 96))" is {3,1} {6,2} {4,1} {23,0} {44,1} {7,1} {96,0}.
struct ThreadEntry {
  uint32_t seq = 0;
  uint32_t children = 0;

  bool operator==(const ThreadEntry&) const = default;
};

// `messages` in ascending sequence order (the first of two messages with
// one Message-ID keeps it).
std::vector<ThreadEntry> thread_ordered_subject(std::vector<ThreadMessage> messages);
std::vector<ThreadEntry> thread_references(std::vector<ThreadMessage> messages);

}  // namespace peregrine::search
