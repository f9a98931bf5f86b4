#include "mime/case_fold.h"

#include <unicode/normalizer2.h>
#include <unicode/uchar.h>
#include <unicode/unistr.h>
#include <unicode/utf16.h>
#include <unicode/utf8.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstring>

#include "base/ascii.h"

namespace peregrine::mime {
namespace {

// Decomposition chains are a few levels deep; the bound only keeps broken
// Unicode data from recursing without end.
constexpr int kMaxDepth = 16;

void append_utf8(std::string& out, UChar32 c) {
  char buf[U8_MAX_LENGTH];
  int32_t n = 0;
  U8_APPEND_UNSAFE(buf, n, c);
  out.append(buf, static_cast<size_t>(n));
}

// The decomposition mappings (UnicodeData.txt field 5, canonical and
// compatibility, Hangul included): ICU's NFKD data, one level at a time.
const icu::Normalizer2* decompositions() {
  static const icu::Normalizer2* nfkd = [] {
    UErrorCode status = U_ZERO_ERROR;
    const icu::Normalizer2* n = icu::Normalizer2::getNFKDInstance(status);
    return U_SUCCESS(status) ? n : nullptr;
  }();
  return nfkd;
}

// RFC 5051 §2 step (2) on one code point, appended in the output form
// (case_fold.h): titlecase property, then decomposition, recursively.
void prepare(UChar32 c, int depth, std::string& out) {
  const UChar32 title = u_totitle(c);
  icu::UnicodeString decomposition;
  const icu::Normalizer2* nfkd = decompositions();
  if (depth < kMaxDepth && nfkd != nullptr && nfkd->getRawDecomposition(title, decomposition)) {
    for (int32_t i = 0; i < decomposition.length();) {
      const UChar32 part = decomposition.char32At(i);
      prepare(part, depth + 1, out);
      i += U16_LENGTH(part);
    }
    return;
  }
  if (title >= 'A' && title <= 'Z') {
    out.push_back(static_cast<char>(title - 'A' + 'a'));
    return;
  }
  append_utf8(out, title);
}

// The prepared form of every code point from U+0080 to U+FFFF (two bytes:
// Latin, Greek, Cyrillic, Hebrew, Arabic...; three: CJK, Hangul, Thai,
// symbols...), computed once (about half a megabyte), so text in those
// scripts costs a table lookup a character instead of ICU's property
// lookups. Surrogates are never looked up: their UTF-8 forms are
// ill-formed.
class BmpTable {
 public:
  static constexpr UChar32 kFirst = 0x80;
  static constexpr UChar32 kEnd = 0x10000;

  BmpTable() {
    for (UChar32 c = kFirst; c < kEnd; ++c) {
      begin_[static_cast<size_t>(c - kFirst)] = static_cast<uint32_t>(bytes_.size());
      prepare(c, 0, bytes_);
    }
    begin_[static_cast<size_t>(kEnd - kFirst)] = static_cast<uint32_t>(bytes_.size());
  }

  std::string_view operator[](UChar32 c) const {
    const auto i = static_cast<size_t>(c - kFirst);
    return std::string_view(bytes_).substr(begin_[i], begin_[i + 1] - begin_[i]);
  }

 private:
  std::string bytes_;
  std::array<uint32_t, kEnd - kFirst + 1> begin_{};
};

const BmpTable& bmp_table() {
  static const BmpTable table;
  return table;
}

// The length of the run of ASCII bytes at the start of s[0, n), eight bytes
// at a time.
size_t ascii_run(const uint8_t* s, size_t n) {
  size_t i = 0;
  while (i + 8 <= n) {
    uint64_t word = 0;
    std::memcpy(&word, s + i, 8);
    if ((word & 0x8080808080808080ULL) != 0) {
      break;
    }
    i += 8;
  }
  while (i < n && s[i] < 0x80) {
    ++i;
  }
  return i;
}

// Appends s[0, n) (ASCII) in lower case: copied, then lowered in place (a
// loop the compiler vectorizes).
void append_ascii_lower(std::string& out, const uint8_t* s, size_t n) {
  const size_t at = out.size();
  out.append(reinterpret_cast<const char*>(s), n);
  char* d = out.data() + at;
  for (size_t k = 0; k < n; ++k) {
    d[k] = base::ascii_lower(d[k]);
  }
}

}  // namespace

std::string fold_case(std::string_view utf8) {
  std::string out;
  out.reserve(utf8.size() + utf8.size() / 4);
  const auto* s = reinterpret_cast<const uint8_t*>(utf8.data());
  const size_t n = utf8.size();
  const BmpTable* table = nullptr;  // looked up at the first byte past ASCII
  size_t i = 0;
  while (i < n) {
    const uint8_t b = s[i];
    if (b < 0x80) {
      const size_t run = ascii_run(s + i, n - i);
      append_ascii_lower(out, s + i, run);
      i += run;
      continue;
    }
    if (table == nullptr) {
      table = &bmp_table();
    }
    if (b >= 0xC2 && b < 0xE0 && i + 1 < n && (s[i + 1] & 0xC0) == 0x80) {
      out.append((*table)[((b & 0x1F) << 6) | (s[i + 1] & 0x3F)]);
      i += 2;
      continue;
    }
    // At most four bytes make a character: decoding from a window keeps the
    // offsets within int32_t whatever the length of the text.
    const auto window = static_cast<int32_t>(std::min<size_t>(n - i, U8_MAX_LENGTH));
    int32_t used = 0;
    UChar32 c = 0;
    U8_NEXT(s + i, used, window, c);
    if (c < 0) {
      c = 0xFFFD;
    }
    if (c < BmpTable::kEnd) {
      out.append((*table)[c]);
    } else {
      prepare(c, 0, out);
    }
    i += static_cast<size_t>(used);
  }
  return out;
}

void fold_search_text(SearchText& text) {
  for (std::string* s :
       {&text.from, &text.to, &text.cc, &text.bcc, &text.subject, &text.headers, &text.body}) {
    *s = fold_case(*s);
  }
}

}  // namespace peregrine::mime
