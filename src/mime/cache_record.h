#pragma once

// The cache record: everything FETCH, SEARCH, SORT and THREAD need from a
// message, built by one parse at delivery and stored beside the message, so a
// message is never parsed again. Serialized in a compact versioned binary
// form (docs/formats/cache_record.md).

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "mime/date.h"
#include "mime/part.h"
#include "mime/search_text.h"
#include "mime/section.h"

namespace peregrine::mime {

inline constexpr uint8_t kCacheRecordVersion = 1;

struct CacheRecord {
  uint32_t message_size = 0;
  uint32_t header_size = 0;
  uint32_t body_lines = 0;

  // Rendered IMAP forms, ready to copy into a FETCH response.
  std::string envelope;       // "(...)"
  std::string body;           // BODY "(...)"
  std::string bodystructure;  // BODYSTRUCTURE "(...)"

  PartMap parts;

  // SORT keys (RFC 5256, RFC 5957): the Date header; the decoded subject;
  // the first From/To/Cc address's mailbox (addr-mailbox) and display name
  // (decoded display name, or the addr-spec when there is none).
  std::optional<DateTime> sent_date;
  std::string subject;
  std::string from_mailbox, from_display;
  std::string to_mailbox, to_display;
  std::string cc_mailbox, cc_display;

  // THREAD keys: Message-ID, and the parent chain from References (or the
  // first id of In-Reply-To when References is absent or holds no valid id,
  // RFC 5256 §2.2), each "<...>".
  std::string message_id;
  std::vector<std::string> references;

  bool operator==(const CacheRecord&) const = default;
};

// Builds the record of `message`, whose tree `root` came from parse_message.
CacheRecord build_cache_record(std::string_view message, const Part& root);

std::string serialize(const CacheRecord& record);
// nullopt when the bytes are not a record of a version this build reads, or
// are truncated or corrupt.
std::optional<CacheRecord> deserialize(std::string_view bytes);

// Everything the store needs at delivery, from a single parse. Without
// `with_text` (the full-text index is off, or only the record is wanted)
// the search text is left empty.
struct AnalyzedMessage {
  CacheRecord record;
  SearchText text;
};
AnalyzedMessage analyze_message(std::string_view message, bool with_text = true);

}  // namespace peregrine::mime
