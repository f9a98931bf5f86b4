#pragma once

// Message flags as IMAP writes them (RFC 9051 §2.3.2): system flags
// ("\Seen"), other backslash flags (flag-extension) and keywords ("$Junk",
// "NonJunk"). System flags are case-insensitive and are canonicalised to one
// spelling; keywords keep the client's spelling (the store compares them
// case-insensitively).

#include <string>
#include <string_view>

namespace peregrine::imap {

// Whether `flag` is one of \Answered \Flagged \Deleted \Seen \Draft \Recent,
// in any case.
bool is_system_flag(std::string_view flag);

// The canonical spelling of a system flag ("\seen" -> "\Seen"); any other
// flag is returned unchanged.
std::string canonical_flag(std::string_view flag);

// Whether `flag` has a flag's syntax: "\" atom or a keyword atom. ("\*" is
// only valid in PERMANENTFLAGS and is not accepted here.)
bool is_valid_flag(std::string_view flag);

}  // namespace peregrine::imap
