#pragma once

// How the Maildir backend names things on disk (docs/formats/maildir-store.md):
// mailbox names <-> Maildir++ folder directories, message file names with
// their flag letters, user names, and CRLF normalization of message bytes.
// Pure functions, no I/O.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "base/result.h"
#include "store/api/types.h"

namespace peregrine::store::maildir {

// ---- Mailbox names ----

// The canonical form of an API mailbox name: one trailing delimiter dropped,
// "INBOX" in any case as the whole name or its first level spelled "INBOX".
// kBadInput for an empty name, an empty level ("/A", "A//B"), a byte outside
// printable ASCII, or a name whose folder directory would exceed 255 bytes.
base::Result<std::string> normalize_mailbox_name(std::string_view name);

// The Maildir++ directory (relative to the Maildir) of a canonical name:
// "" for INBOX, ".A.B" for "A/B". In each level '%' is written "%25" and '.'
// "%2E", so that '.' can only mean the hierarchy.
std::string folder_dir(std::string_view canonical_name);

// The inverse of folder_dir for a directory found in the Maildir: nullopt
// unless `dir` is exactly what folder_dir writes for some name other than
// INBOX (so "..x", ".", ".A..B", ".INBOX", ".a%zz" are not mailboxes).
std::optional<std::string> mailbox_name_from_dir(std::string_view dir);

// Whether `name` is `parent` or below it ("A/B" is below "A", "AB" is not).
bool is_same_or_below(std::string_view name, std::string_view parent);

// ---- User names ----

// kBadInput unless `user` can be one directory name: 1..255 bytes, no '/',
// no control character, not "." or "..".
base::Result<void> check_user_name(std::string_view user);

// ---- Message file names ----
//
// A message file is "<base>:2,<letters>": the base name identifies the
// message for its whole life; the letters after ":2," are its flags, sorted
// (D draft, F flagged, P passed, R replied, S seen, T trashed, and letters
// of other programs, which are kept).

struct FileName {
  std::string_view base;     // up to the first ':'
  std::string_view letters;  // after ":2,"; empty when there is no ":2,"
};
FileName split_file_name(std::string_view name);

// The system flags that the letters name (P and others are not IMAP flags).
SystemFlags flags_from_letters(std::string_view letters);

// "<base>:2,<letters>" for `flags`, keeping from `old_letters` the letters
// that are not D F R S T.
std::string file_name_with_flags(std::string_view base, std::string_view old_letters,
                                 SystemFlags flags);

// A new unique base name, "<secs>.M<usec>P<pid>Q<counter>.<host>,S=<size>".
// `host` is sanitized ('/' -> "\057", ':' -> "\072", as Maildir asks).
std::string make_base_name(std::int64_t unix_micros, long pid, std::uint64_t counter,
                           std::string_view host, std::uint64_t size);

// The ",S=<n>" size of a base name; nullopt if it has none.
std::optional<std::uint64_t> size_from_base_name(std::string_view base);
// `base` with its ",S=" field set to `size` (and any ",W=" field dropped,
// since it would be stale too); unchanged when it has no ",S=".
std::string base_name_with_size(std::string_view base, std::uint64_t size);

// ---- Message bytes ----

// Whether `bytes` has a LF not preceded by CR.
bool has_bare_lf(std::string_view bytes);
// `bytes` with every bare LF made CRLF (a lone CR is left as it is).
std::string to_crlf(std::string_view bytes);

}  // namespace peregrine::store::maildir
