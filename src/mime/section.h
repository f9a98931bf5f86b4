#pragma once

// IMAP body sections (RFC 3501 §6.4.5 FETCH BODY[section], RFC 9051 §6.4.5)
// resolved to byte ranges of the original message, so FETCH reads just
// those bytes (pread) and never copies or re-parses the message. The one
// section that is not a range of the message, HEADER.FIELDS (...), is a
// header range to filter with filter_header_fields().

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "mime/part.h"
#include "mime/transfer.h"

namespace peregrine::mime {

// One node of the part tree as IMAP numbers it, enough to resolve sections
// and decode bodies.
struct PartSpan {
  uint32_t header_offset = 0;
  uint32_t header_size = 0;
  uint32_t body_offset = 0;
  uint32_t body_size = 0;
  // Nodes in this node's subtree, itself included (pre-order skip distance).
  uint32_t subtree_size = 1;
  // The Part's kind, except that a message/rfc822 part left unparsed is
  // kMessage here (see PartMap).
  PartKind kind = PartKind::kLeaf;
  Encoding encoding = Encoding::k7Bit;

  bool operator==(const PartSpan&) const = default;
};

// The part tree flattened in pre-order: nodes[0] is the message itself.
//
// It holds every part that BODYSTRUCTURE shows (imap_output.h), so each part
// number a client sees there resolves. Two of them are not parts of the
// Part tree, and get a node of their own here:
//  - a multipart without subparts is shown with one empty text/plain part
//    (body-type-mpart needs one): its node has an empty header and body at
//    the end of the multipart's body, so "1" and "1.MIME" are empty;
//  - a message/rfc822 part left unparsed (a transfer encoding other than
//    7bit/8bit/binary, which RFC 2046 §5.2.1 forbids, or past a ParseLimits
//    limit) is shown as a message with an empty envelope and an empty
//    text/plain body: its node is kMessage, and its encapsulated message
//    is the part's body read as stored, a header without a blank line and
//    an empty body. So "n" is the body as stored, "n.HEADER" and "n.1.MIME"
//    that same text, "n.TEXT" and "n.1" empty, as Dovecot 2.3 answers.
class PartMap {
 public:
  PartMap() = default;
  explicit PartMap(std::vector<PartSpan> nodes) : nodes_(std::move(nodes)) {}
  static PartMap from(const Part& root);

  const std::vector<PartSpan>& nodes() const { return nodes_; }

  // The node for an IMAP part number (1-based components; empty = the whole
  // message). Follows IMAP's numbering: the children of a multipart are 1..n;
  // a non-multipart message's body is part 1; a message/rfc822 part's
  // numbers continue into the encapsulated message (part "2.1" of a
  // message/rfc822 part 2 is the first part of the message inside, or its
  // body when that message is not a multipart).
  // nullopt when there is no such part.
  //
  // Where RFC 3501 is silent we follow Dovecot 2.3 (checked on loopback):
  //  - "1" of a non-multipart message (top level or encapsulated) is the
  //    message's own node, so "1.MIME" is the message header and "1" its body;
  //    "1.1" of a single-part message does not exist.
  //  - A non-multipart subpart "n" also answers to "n.1", once: "n.1" is the
  //    same node as "n" (so "n.1.MIME" is n's MIME header); "n.1.1" and
  //    "n.2" do not exist.
  //  - A message/rfc822 subpart "n" never answers to "n.1" as itself:
  //    "n.1" always enters the encapsulated message.
  // Dovecot answers a missing part with an empty string; we return nullopt
  // and leave that choice to the IMAP layer.
  std::optional<size_t> locate(std::span<const uint32_t> path) const;

  bool operator==(const PartMap&) const = default;

 private:
  std::vector<PartSpan> nodes_;
};

enum class SectionText : uint8_t {
  kNone,             // BODY[] or BODY[1.2]: the whole message / part body
  kHeader,           // HEADER
  kHeaderFields,     // HEADER.FIELDS (...)
  kHeaderFieldsNot,  // HEADER.FIELDS.NOT (...)
  kText,             // TEXT
  kMime,             // MIME (needs a part number)
};

struct SectionSpec {
  std::vector<uint32_t> part;
  SectionText text = SectionText::kNone;
  std::vector<std::string> fields;  // for kHeaderFields / kHeaderFieldsNot
};

struct SectionRange {
  uint32_t offset = 0;
  uint32_t size = 0;
  // For HEADER.FIELDS[.NOT]: the range is a header block; pass its bytes to
  // filter_header_fields() to get the section.
  bool needs_filter = false;

  bool operator==(const SectionRange&) const = default;
};

// Resolves a section to the bytes that hold it. nullopt when the part does
// not exist, or HEADER/TEXT/HEADER.FIELDS name a part that is not a message
// (RFC 3501 allows them only on the top level and on message/rfc822 parts),
// or MIME has no part number. BODY[] is the whole message; BODY[n] is part
// n's body (for a message/rfc822 part: the whole encapsulated message, its
// header included); n.MIME is part n's MIME header; n.HEADER / n.TEXT of a
// message/rfc822 part are the encapsulated message's header / body (also
// when the top-level message itself is message/rfc822: "1.HEADER"), and of
// one left unparsed (see PartMap).
std::optional<SectionRange> resolve_section(const PartMap& parts, const SectionSpec& spec);

// The fields of `header` (a header block, as from a HEADER range) whose name
// is (exclude=false) or is not (exclude=true) in `names`, compared
// case-insensitively, each as written (folds and line end included), then
// the header's empty line when it has one, as HEADER.FIELDS returns them.
// Nothing is added: RFC 3501 §6.4.5 includes the blank line "except in the
// case of a message which has no body and no blank line", so a header
// without one gives only the fields, the last one without a line end when
// the message ends without one. HEADER.FIELDS.NOT () is thus HEADER.
// Lines that are not fields (no colon) never match a name, so .NOT keeps them.
std::string filter_header_fields(std::string_view header, std::span<const std::string> names,
                                 bool exclude);

}  // namespace peregrine::mime
