#pragma once

// What a text search key asks of a message's search text, protocol-neutral:
// which parts of the text (TextTarget), and the exact test on the folded
// text (text_matches) that confirms each candidate the full-text index gives.
//
// Every string here is case-folded UTF-8 (mime::fold_case): the key's string
// and the message's text alike.

#include <string>
#include <string_view>

#include "mime/search_text.h"
#include "store/api/types.h"

namespace peregrine::search {

enum class TextTarget : std::uint8_t {
  kFrom,
  kTo,
  kCc,
  kBcc,
  kSubject,
  kHeader,  // a named header field (HEADER name string)
  kBody,
  kText,  // every header field and the body
};

struct TextKey {
  TextTarget target = TextTarget::kText;
  std::string field;   // kHeader: the field name, as given
  std::string needle;  // folded; empty matches every message (for kHeader:
                       // every message that has the field)
};

// Whether `text` (folded) satisfies `key`.
bool text_matches(const mime::SearchText& text, const TextKey& key);

// The full-text index query whose candidates include every message that
// text_matches `key` would accept. Its exact answer (TextCandidates::exact)
// is text_matches' answer, except for kHeader (the field name and the value
// must be on one line): those candidates are always confirmed.
store::TextQuery index_query(const TextKey& key);

}  // namespace peregrine::search
