#pragma once

// IMAP wire forms of the MIME engine's values: strings (quoted or literal),
// ENVELOPE and BODY/BODYSTRUCTURE exactly per RFC 3501 §7.4.2 and
// RFC 9051 §7.5.2. Output is appended to a caller's buffer.

#include <optional>
#include <string>
#include <string_view>

#include "mime/envelope.h"
#include "mime/part.h"

namespace peregrine::mime {

// A quoted string when `s` has only 7-bit TEXT-CHARs other than CR and LF and
// is not overly long (4096 bytes); otherwise a synchronizing literal
// {n}\r\n... , in which a NUL byte (not allowed in a literal) becomes U+FFFD.
void append_imap_string(std::string& out, std::string_view s);
// NIL for nullopt, else append_imap_string.
void append_imap_nstring(std::string& out, const std::optional<std::string>& s);

// "(date subject (from) (sender) (reply-to) (to) (cc) (bcc) in-reply-to message-id)"
void append_envelope(std::string& out, const Envelope& envelope);

// BODY (extended = false) or BODYSTRUCTURE (extended = true) of the tree.
// message/global is written as a basic part (IMAP4rev1's body-type-msg is for
// message/rfc822 only); RFC 2231 parameters go out as
// name* "UTF-8'<language>'%XX..." (RFC 9051 §7.5.2).
void append_body_structure(std::string& out, const Part& root, bool extended);

}  // namespace peregrine::mime
