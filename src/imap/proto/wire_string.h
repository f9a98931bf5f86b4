#pragma once

// Strings in the forms IMAP's grammar names: atom-or-string (astring),
// string (quoted or literal, via mime::append_imap_string), nstring; and
// decimal numbers, written and read.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace peregrine::imap {

// An atom when `s` is non-empty, all ASTRING-CHARs and not "NIL" (which a
// client could read as nil); otherwise a quoted string or literal.
void append_astring(std::string& out, std::string_view s);
// A quoted string or a literal (mime::append_imap_string).
void append_string(std::string& out, std::string_view s);
// NIL or a string.
void append_nstring(std::string& out, const std::optional<std::string>& s);
// A decimal number.
void append_number(std::string& out, uint64_t n);
// The value of `digits` when it is a non-empty run of ASCII digits worth at
// most `max` (number: 2^32-1, RFC 9051 §9; number64: 2^63-1); nullopt for
// anything else. Leading zeros are allowed: callers that forbid them check.
std::optional<uint64_t> parse_number(std::string_view digits, uint64_t max = 0xffffffffu);

}  // namespace peregrine::imap
