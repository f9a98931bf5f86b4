#include "mime/case_fold.h"

#include <unicode/unistr.h>

#include <algorithm>

#include "base/ascii.h"

namespace peregrine::mime {

std::string fold_case(std::string_view utf8) {
  bool ascii = std::all_of(utf8.begin(), utf8.end(),
                           [](char c) { return static_cast<unsigned char>(c) < 0x80; });
  if (ascii) {
    return base::to_lower(utf8);
  }
  icu::UnicodeString s = icu::UnicodeString::fromUTF8(
      icu::StringPiece(utf8.data(), static_cast<int32_t>(utf8.size())));
  s.foldCase();
  std::string out;
  s.toUTF8String(out);
  return out;
}

void fold_search_text(SearchText& text) {
  for (std::string* s :
       {&text.from, &text.to, &text.cc, &text.bcc, &text.subject, &text.headers, &text.body}) {
    *s = fold_case(*s);
  }
}

}  // namespace peregrine::mime
