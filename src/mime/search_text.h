#pragma once

// The text IMAP SEARCH looks in, decoded to UTF-8: address and subject
// headers, every header value, and the body's text parts (transfer-decoded,
// charset-converted, HTML reduced to text) plus attachment file names. The
// full-text index is fed from it.

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

#include "mime/part.h"

namespace peregrine::mime {

struct SearchText {
  // Decoded address fields: each address as "Display Name <mailbox@host>",
  // separated by ", ". Decoded subject.
  std::string from, to, cc, bcc, subject;
  // Every field of the top-level header, one per line: "Name: decoded value\n".
  std::string headers;
  // The body of the message, separated by "\n": for each part below the
  // top-level header, its MIME header (every field, decoded, as in
  // `headers`), its file name (RFC 2231/2047 decoded) and, for text/* parts,
  // its text (text/html reduced to text); an encapsulated message adds its
  // whole header, then its parts the same way. Bounded by
  // SearchTextLimits::max_body_bytes (cut at a UTF-8 character boundary).
  std::string body;
};

struct SearchTextLimits {
  size_t max_body_bytes = 4 * 1024 * 1024;
};

SearchText build_search_text(std::string_view message, const Part& root,
                             const SearchTextLimits& limits = {});

// Text content of an HTML document: tags removed, <script>/<style> dropped,
// block elements and <br> turned into line ends, entities (named, &#nnn;,
// &#xhh;) decoded. Works on UTF-8 input; never fails on broken HTML.
// Also dropped: <head> contents and comments. Whitespace runs become one
// space, and &nbsp; a plain space, so searches for "a b" match.
std::string html_to_text(std::string_view html);

// SearchText as bytes, for the store to keep (search_text_record.cc): a
// version byte (1), then from, to, cc, bcc, subject, headers and body, each
// as a 4-byte little-endian length and its bytes.
std::string serialize_search_text(const SearchText& text);
// nullopt when the bytes are truncated or of another version.
std::optional<SearchText> deserialize_search_text(std::string_view bytes);

}  // namespace peregrine::mime
