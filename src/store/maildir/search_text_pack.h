#pragma once

// The packed form of a message's folded search text, as the full-text index
// stores it (search_docs.text; docs/formats/maildir-store.md, "Full-text
// index"). The unpacking reads bytes from disk, so it is fuzzed
// (tests/fuzz/search_text_fuzz.cc): this file uses nothing the fuzz build's
// clang 14 cannot compile (no std::expected).

#include <optional>
#include <string>
#include <string_view>

#include "mime/search_text.h"

namespace peregrine::store::maildir {

// A folded search text as search_docs stores it: a format byte, then
// mime::serialize_search_text's bytes, zlib-compressed (format 1: a 4-byte
// little-endian length of the serialized bytes, then the zlib stream) or not
// (format 0).
std::string pack_search_text(const mime::SearchText& folded);
// mime::serialize_search_text's bytes again; nullopt when corrupt.
std::optional<std::string> unpack_search_text(std::string_view packed);

}  // namespace peregrine::store::maildir
