#pragma once

// Mailbox names on the wire: modified UTF-7 (RFC 3501 §5.1.3) and the
// case-insensitive name INBOX. With UTF8=ACCEPT (RFC 6855) names travel as
// UTF-8 and need no conversion; the server decides which applies.

#include <string>
#include <string_view>

#include "imap/proto/result.h"

namespace peregrine::imap {

// Modified UTF-7 -> UTF-8. Errors ("invalid modified UTF-7 mailbox name"):
// a byte outside printable ASCII, "&" without its closing "-", a character
// outside the modified-base64 alphabet, non-zero padding bits, an unpaired
// UTF-16 surrogate, or base64 used for a printable ASCII character (which
// must represent itself, so every name has one encoding).
Parsed<std::string> decode_mutf7(std::string_view name);

// UTF-8 -> modified UTF-7. Error on invalid UTF-8 (overlong forms,
// surrogates, code points above U+10FFFF, truncated sequences).
Parsed<std::string> encode_mutf7(std::string_view utf8);

// Whether `name` is valid modified UTF-7 (decode_mutf7 would succeed).
bool is_valid_mutf7(std::string_view name);

// Whether `name` is INBOX in any case.
bool is_inbox(std::string_view name);
// INBOX in any case becomes "INBOX"; any other name is returned unchanged.
// Only the whole name: "inbox/sub" is left alone (RFC 3501 §5.1 makes only
// the name INBOX itself case-insensitive).
std::string normalize_inbox(std::string name);

}  // namespace peregrine::imap
