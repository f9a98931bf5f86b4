#pragma once

// The MIME tree of a message (RFC 2045, RFC 2046) with exact byte offsets.
// Parsing works on a view of the whole message and never copies it: a Part
// holds offsets and the few decoded header values IMAP needs.

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "mime/envelope.h"
#include "mime/params.h"

namespace peregrine::mime {

enum class PartKind : uint8_t {
  kLeaf,       // any other part, including a message/rfc822 part whose
               // Content-Transfer-Encoding is not 7bit/8bit/binary (its body
               // is opaque; BODYSTRUCTURE and PartMap show it as a message
               // with an empty body) and any part nested past
               // ParseLimits::max_depth
  kMultipart,  // multipart/*: children are the subparts
  kMessage,    // message/rfc822 or message/global: one child, the encapsulated message
};

struct Part {
  PartKind kind = PartKind::kLeaf;

  // Offsets from the start of the message. The header of the top-level part
  // is the message header; of a subpart, its MIME header; of an encapsulated
  // message (the child of a kMessage part), that message's header.
  // header_size includes the empty separator line; body_offset ==
  // header_offset + header_size. A subpart's header that runs into a
  // boundary line (no empty line, or an empty line right before the
  // boundary) ends before the line end that belongs to the boundary; its
  // body is then empty (as Dovecot answers BODY[n.MIME]).
  uint32_t header_offset = 0;
  uint32_t header_size = 0;
  uint32_t body_offset = 0;
  // For a subpart, the body ends before the line end that precedes the next
  // boundary line (RFC 2046 §5.1.1: that CRLF belongs to the boundary).
  // Dovecot 2.3 differs after a closed inner multipart: in "--i-- CRLF --o"
  // it counts that CRLF into the part holding the inner multipart; we do not.
  uint32_t body_size = 0;
  // Number of lines in the body (IMAP body-fld-lines): the line ends (LF,
  // with or without CR) in the body. A last line without a line end is not
  // counted: a line is what a line end closes (RFC 5322 §2.1), as Dovecot
  // and UW c-client count. So a subpart "hello" before its boundary (whose
  // CRLF belongs to the boundary) has 0 lines, and "a\r\nb" has 1.
  uint32_t body_lines = 0;

  // Content-Type, with the RFC 2046 defaults applied: text/plain;
  // charset=us-ascii (or message/rfc822 as the child of multipart/digest)
  // when the field is missing or unparseable. content_type_present says
  // whether the field was there and parsed.
  ContentType content_type;
  bool content_type_present = false;

  // Raw values (unfolded, trimmed), nullopt when absent.
  std::optional<std::string> content_id;
  std::optional<std::string> content_description;
  std::optional<std::string> content_transfer_encoding;
  std::optional<std::string> content_md5;
  std::optional<std::string> content_location;
  std::optional<Disposition> disposition;
  // Content-Language tags in order (RFC 3282): comments removed, empty list
  // items skipped, at most 100.
  std::vector<std::string> content_language;

  // Multipart: the subparts (a multipart with no subpart found gets none;
  // BODYSTRUCTURE and PartMap show one empty part for it). kMessage: exactly
  // one, the encapsulated message's top-level part.
  std::vector<Part> children;
  // kMessage only: the encapsulated message's envelope.
  std::unique_ptr<Envelope> envelope;

  // Multipart only: true when the closing boundary "--b--" was seen.
  bool closed = false;
};

struct ParseLimits {
  // Deeper nesting is treated as a leaf (its body stays one opaque part).
  uint32_t max_depth = 64;
  // Parts past this count are folded into their parent's last part.
  uint32_t max_parts = 5000;
};

// Parses the structure of the whole message in one pass. Never fails. The
// top-level Part's header is the message header. A boundary line is
// "--boundary" at the start of a line, optionally "--" (the close), then
// only WSP to the line end (RFC 2046 §5.1.1): a line that merely starts with
// it ("--boundaryX") is body text (Dovecot matches by prefix; we do not). A
// line matching the boundary of an enclosing multipart also ends the inner
// ones (their close is missing); with equal boundaries the innermost wins.
// Preamble and epilogue belong to the multipart's body, not to a subpart.
// A missing close boundary: the last subpart runs to the end of the
// enclosing part. Messages over 4 GiB are parsed up to 4 GiB.
Part parse_message(std::string_view message, const ParseLimits& limits = {});

// Total number of parts in the tree, the root included.
size_t count_parts(const Part& root);

}  // namespace peregrine::mime
