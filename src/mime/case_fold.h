#pragma once

// Case folding for substring search. IMAP SEARCH compares strings
// case-insensitively (RFC 3501 §6.4.4; RFC 9051 §6.4.4 names the
// i;unicode-casemap comparator of RFC 5051): both the text searched and the
// string searched for are folded here, then compared byte for byte.
// ASCII is lower-cased; any other text gets ICU's full Unicode case folding
// ("ÉCOLE" and "école" both fold to "école", "Straße" to "strasse").

#include <string>
#include <string_view>

#include "mime/search_text.h"

namespace peregrine::mime {

// Folded UTF-8. Invalid UTF-8 in non-ASCII text becomes U+FFFD.
std::string fold_case(std::string_view utf8);

// Folds every field of `text` in place.
void fold_search_text(SearchText& text);

}  // namespace peregrine::mime
