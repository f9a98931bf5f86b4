#pragma once

// RFC 5322 header blocks. Parsing never fails and never copies the message:
// fields are views into the bytes handed to Header::parse, which must outlive
// the Header. CRLF and bare-LF line ends are both accepted; NUL bytes and 8-bit
// bytes (RFC 6532) are carried through untouched.

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace peregrine::mime {

struct HeaderField {
  // The field name as written, without the colon and without trailing WSP.
  std::string_view name;
  // The raw value: every byte after the colon up to, not including, the line
  // end that closes the field. Folds (line end + WSP) are kept; leading WSP is
  // kept too. Use unfold() or decode_header_value() to read it.
  std::string_view value;
  // The whole field: name, colon, value and its closing line end.
  std::string_view raw;
};

class Header {
 public:
  // Parses the header at the start of `bytes`. The header ends after the first
  // empty line (CRLF CRLF, LF LF or mixed), or at the end of `bytes` when there
  // is none. A line that is neither a field nor a continuation (no colon) is
  // kept as a field with that line as its name and an empty value, so nothing
  // silently disappears from HEADER fetches; a line starting with WSP before
  // any field is treated as such a line. Limits: fields past kMaxFields are
  // still counted in size() but not listed.
  static Header parse(std::string_view bytes);

  static constexpr size_t kMaxFields = 10000;

  const std::vector<HeaderField>& fields() const { return fields_; }
  // First field with that name, compared case-insensitively; nullptr if none.
  const HeaderField* find(std::string_view name) const;
  // Every field with that name, in order.
  std::vector<const HeaderField*> find_all(std::string_view name) const;

  // Bytes from the start of `bytes` to the start of the body, including the
  // empty separator line when present.
  size_t size() const { return size_; }
  // True when the header was closed by an empty line (false: no body at all).
  bool has_separator() const { return has_separator_; }

 private:
  std::vector<HeaderField> fields_;
  size_t size_ = 0;
  bool has_separator_ = false;
};

// Removes every line end (CRLF or LF) that is followed by WSP, keeping the WSP
// (RFC 5322 §2.2.3); any other CR, LF or CRLF becomes one space, so the words
// around it stay apart. Then trims leading and trailing WSP.
std::string unfold(std::string_view value);

// unfold(), then RFC 2047 encoded words decoded, then the whole converted to
// valid UTF-8 (8-bit bytes that are not UTF-8 are read as Windows-1252).
std::string decode_header_value(std::string_view value);

}  // namespace peregrine::mime
