#pragma once

// FETCH data items (RFC 3501 §6.4.5, RFC 9051 §6.4.5, RFC 3516 BINARY,
// RFC 7162 MODSEQ). The macros ALL, FAST and FULL are expanded by the
// parser into the items they stand for.

#include <cstdint>
#include <optional>
#include <string>

#include "mime/section.h"

namespace peregrine::imap {

enum class FetchAttr : uint8_t {
  kEnvelope,
  kFlags,
  kInternalDate,
  kRfc822,        // = BODY[] (sets \Seen)
  kRfc822Header,  // = BODY.PEEK[HEADER]
  kRfc822Size,
  kRfc822Text,  // = BODY[TEXT] (sets \Seen)
  kBody,        // BODY without a section: the non-extensible BODYSTRUCTURE
  kBodyStructure,
  kUid,
  kModSeq,
  kBodySection,  // BODY[section]<partial>, BODY.PEEK[...]
  kBinary,       // BINARY[part]<partial>, BINARY.PEEK[...]
  kBinarySize,   // BINARY.SIZE[part]
};

struct FetchPartial {
  uint64_t offset = 0;
  uint64_t length = 0;  // > 0

  bool operator==(const FetchPartial&) const = default;
};

struct FetchItem {
  FetchAttr attr = FetchAttr::kFlags;
  // BODY.PEEK / BINARY.PEEK: do not set \Seen.
  bool peek = false;
  // kBodySection: the section; kBinary / kBinarySize: only section.part.
  mime::SectionSpec section;
  // kBodySection / kBinary: "<offset.length>".
  std::optional<FetchPartial> partial;

  bool operator==(const FetchItem& other) const;
};

// Appends the item's name as a FETCH response names it: "UID",
// "BODY[1.HEADER.FIELDS (From To)]", "BINARY.SIZE[2]". BODY.PEEK and
// BINARY.PEEK answer as BODY and BINARY (RFC 3501 §7.4.2); a partial answers
// with its origin only ("BODY[]<0>").
void append_fetch_item_name(std::string& out, const FetchItem& item);

// Appends the item as a client writes it (for logs, tests and proxies):
// "BODY.PEEK[HEADER]<0.100>".
void append_fetch_item_request(std::string& out, const FetchItem& item);

}  // namespace peregrine::imap
