#pragma once

// RFC 2047 encoded words (=?charset?B|Q?text?=) in unstructured text and in
// phrases. Decoding never fails: a word whose charset is unknown, whose
// encoding is not B or Q, or whose payload is broken stays as written.
// Whitespace between two adjacent encoded words is dropped (RFC 2047 §6.2);
// whitespace next to ordinary text is kept. RFC 2231 language suffixes
// (=?utf-8*en?Q?...?=) are accepted. Common breakage is tolerated: encoded
// words inside a word, '?' or spaces inside Q text, missing padding in B text.

#include <string>
#include <string_view>

namespace peregrine::mime {

// Decodes every encoded word in `text` (already unfolded) and returns UTF-8.
// Text outside encoded words is passed through as-is (callers make it valid
// UTF-8 when they need to).
std::string decode_encoded_words(std::string_view text);

// decode_encoded_words(), with the text outside encoded words made valid
// UTF-8 too: each run of it goes through ensure_utf8() on its own, so decoded
// words are never converted twice (what decode_header_value() and
// decoded_value() use).
std::string decode_encoded_words_utf8(std::string_view text);

// True when `text` contains something that looks like an encoded word.
bool has_encoded_words(std::string_view text);

}  // namespace peregrine::mime
