#pragma once

// Case folding for substring search. IMAP SEARCH compares strings
// case-insensitively with the i;unicode-casemap comparator (RFC 9051 §6.4.4
// and §7.5.3 name it; RFC 5051 defines it): both the text searched and the
// string searched for are prepared here, then compared byte for byte.
//
// RFC 5051 §2 prepares a "titlecased canonicalized UTF-8" string: each code
// point is replaced by its titlecase property (UnicodeData.txt field 14, the
// simple one-to-one mapping), then by its decomposition mapping (field 5,
// compatibility mappings included), and both steps are repeated on each code
// point of the decomposition. Hangul syllables decompose too: their
// Decomposition_Mapping is the algorithmic one of Unicode §3.12.
//
// The output is that prepared string with one change: ASCII capital letters
// are written in lower case. A prepared string never holds a small ASCII
// letter (every one of them has a titlecase mapping), so this is one-to-one
// and two outputs are equal, or one is a substring of the other, exactly when
// RFC 5051 says so. It keeps ASCII text as it is lower-cased anywhere else
// (the full-text index folds ASCII to lower case too). So:
//   "ÉCOLE", "école" and "e" U+0301 "cole"  ->  "e" U+0301 "cole"
//   "Straße" -> "stra" "ß"   (ß has no titlecase mapping: not "strasse")
//   U+017F ſ -> "s", U+212A KELVIN SIGN -> "k", U+FB01 ﬁ -> "fi"
//   σ and final ς -> Σ
// Every delivery folds its whole search text, so runs of ASCII are only
// lower-cased, and the other code points up to U+FFFF come from a table
// made once.

#include <string>
#include <string_view>

#include "mime/search_text.h"

namespace peregrine::mime {

// Prepared UTF-8. Invalid UTF-8 becomes U+FFFD, one per maximal ill-formed
// subsequence.
std::string fold_case(std::string_view utf8);

// Folds every field of `text` in place.
void fold_search_text(SearchText& text);

}  // namespace peregrine::mime
