#pragma once

// One "* n FETCH (...)" response, built item by item so a server can write
// each item as it gets it, and stream large bodies: begin_literal() writes an
// item's name and literal header, then the caller appends (or sends) the
// bytes itself.
//
//   FetchResponse r(out, 12);
//   r.uid(4827313).flags(flags).section(item, bytes);
//   r.finish();   // ")\r\n"
//
// Not thread-safe; writes to `out` only.

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "imap/proto/fetch_item.h"
#include "mime/date.h"
#include "mime/envelope.h"
#include "mime/part.h"

namespace peregrine::imap {

// The bytes of `data` a partial asks for: <offset.length> clipped to the
// data (empty when the offset is past the end). No partial: all of it.
std::string_view apply_partial(std::string_view data, const std::optional<FetchPartial>& partial);

class FetchResponse {
 public:
  // Writes "* <seq> FETCH (".
  FetchResponse(std::string& out, uint32_t seq);

  FetchResponse& uid(uint32_t uid);
  // "FLAGS (\Seen $Junk)".
  FetchResponse& flags(std::span<const std::string> flags);
  // "INTERNALDATE "17-Jul-1996 02:44:25 -0700"".
  FetchResponse& internal_date(const mime::DateTime& date);
  FetchResponse& rfc822_size(uint64_t size);
  // "MODSEQ (12121231000)".
  FetchResponse& modseq(uint64_t modseq);
  FetchResponse& envelope(const mime::Envelope& envelope);
  // "BODY (...)" (extended = false) or "BODYSTRUCTURE (...)".
  FetchResponse& body_structure(const mime::Part& root, bool extended);
  // A body item (BODY[...], RFC822, RFC822.HEADER, RFC822.TEXT, BINARY[...])
  // named as the item requests it, with `data` as a literal: a literal8
  // ("~{n}") for BINARY data that holds NUL (RFC 3516), else "{n}". The
  // caller has applied any partial (apply_partial).
  FetchResponse& section(const FetchItem& item, std::string_view data);
  // The item with NIL (a section of a part that does not exist).
  FetchResponse& section_nil(const FetchItem& item);
  // Streaming form of section(): writes the name and "{size}\r\n" (or
  // "~{size}\r\n" when binary_literal); the caller must append exactly
  // `size` bytes before the next call.
  FetchResponse& begin_literal(const FetchItem& item, uint64_t size, bool binary_literal);
  // "BINARY.SIZE[1] 2047".
  FetchResponse& binary_size(const FetchItem& item, uint64_t size);
  // Any other item: name and value already in wire form.
  FetchResponse& raw(std::string_view name, std::string_view value);

  // Writes ")\r\n". Call exactly once.
  void finish();

 private:
  void next_item();

  std::string& out_;
  bool first_ = true;
};

}  // namespace peregrine::imap
