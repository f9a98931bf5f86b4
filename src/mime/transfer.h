#pragma once

// Content-Transfer-Encoding decoders (RFC 2045 §6): base64 and
// quoted-printable, tolerant of what real mail does to them.

#include <cstdint>
#include <string>
#include <string_view>

namespace peregrine::mime {

enum class Encoding : uint8_t { k7Bit, k8Bit, kBinary, kBase64, kQuotedPrintable, kUnknown };

// Case-insensitive; a missing value (empty) is 7bit; anything unrecognised
// (x-uuencode, garbage) is kUnknown. Surrounding whitespace and anything
// after the token (a comment "base64 (x)", a stray ';') are ignored.
Encoding parse_encoding(std::string_view value);

// Skips characters outside the base64 alphabet (line ends, spaces, junk) and
// stops at the first '=' pad. A final group of two or three characters
// (padding missing, or cut at the pad) still yields its one or two whole
// bytes; a single leftover character, which holds no whole byte, is dropped.
std::string decode_base64(std::string_view in);

// RFC 2045 §6.7: "=XX" (either case), soft line breaks "=\r\n" and "=\n"
// (also with whitespace between '=' and the line end, and a '=' at the very
// end of the data), trailing whitespace on a line removed (encoded "=20" is
// kept). A malformed '=' is kept as is. Line ends in the output are as in
// the input.
std::string decode_quoted_printable(std::string_view in);

// The body decoded per `encoding`; 7bit, 8bit, binary and unknown are
// returned unchanged.
std::string decode_body(std::string_view body, Encoding encoding);

}  // namespace peregrine::mime
