#include "store/maildir/text_tokens.h"

#include <algorithm>
#include <iterator>

namespace peregrine::store::maildir {

bool has_capitals(std::string_view text) {
  return std::any_of(text.begin(), text.end(), [](char c) { return c >= 'A' && c <= 'Z'; });
}

std::string encode_capitals(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    if (c >= 'A' && c <= 'Z') {
      out += '\xff';
      out += static_cast<char>(c - 'A' + 'a');
    } else {
      out += c;
    }
  }
  return out;
}

namespace {

// The code point of a well-formed character of three or four bytes (the
// only lengths a CJK character has); 0 for anything else.
char32_t wide_code_point(std::string_view c) {
  const auto b = [&](std::size_t i) { return static_cast<unsigned char>(c[i]); };
  if (c.size() == 3 && b(0) >= 0xE0 && b(0) <= 0xEF) {
    const char32_t cp = ((b(0) & 0x0Fu) << 12) | ((b(1) & 0x3Fu) << 6) | (b(2) & 0x3Fu);
    return cp >= 0x800 && (cp < 0xD800 || cp > 0xDFFF) ? cp : 0;
  }
  if (c.size() == 4 && b(0) >= 0xF0 && b(0) <= 0xF4) {
    const char32_t cp =
        ((b(0) & 0x07u) << 18) | ((b(1) & 0x3Fu) << 12) | ((b(2) & 0x3Fu) << 6) | (b(3) & 0x3Fu);
    return cp >= 0x10000 && cp <= 0x10FFFF ? cp : 0;
  }
  return 0;
}

struct Range {
  char32_t first;
  char32_t last;
  CharClass kind;
};

// Ascending and disjoint. CJK: Hangul Jamo, CJK radicals, the letter-like
// marks among the CJK symbols (iteration marks, Hangzhou numerals, kana
// repeat marks), kana (less the katakana middle dot), Bopomofo, Hangul
// compatibility Jamo, Kanbun, CJK strokes, enclosed CJK letters, CJK
// compatibility, the CJK Unified Ideographs and their extensions, Yi,
// Hangul syllables, compatibility ideographs, half-width katakana and
// Hangul. Punctuation: the CJK symbols and punctuation block's, vertical
// and compatibility forms, and the full-width and half-width punctuation.
constexpr Range kRanges[] = {
    {0x1100, 0x11FF, CharClass::kCjk},
    {0x2E80, 0x2FDF, CharClass::kCjk},
    {0x3000, 0x3004, CharClass::kCjkPunctuation},
    {0x3005, 0x3007, CharClass::kCjk},
    {0x3008, 0x3020, CharClass::kCjkPunctuation},
    {0x3021, 0x3029, CharClass::kCjk},
    {0x302A, 0x3030, CharClass::kCjkPunctuation},
    {0x3031, 0x3035, CharClass::kCjk},
    {0x3036, 0x3037, CharClass::kCjkPunctuation},
    {0x3038, 0x303C, CharClass::kCjk},
    {0x303D, 0x303F, CharClass::kCjkPunctuation},
    {0x3040, 0x30FA, CharClass::kCjk},
    {0x30FB, 0x30FB, CharClass::kCjkPunctuation},
    {0x30FC, 0x4DBF, CharClass::kCjk},
    {0x4E00, 0xA4CF, CharClass::kCjk},
    {0xA960, 0xA97F, CharClass::kCjk},
    {0xAC00, 0xD7FF, CharClass::kCjk},
    {0xF900, 0xFAFF, CharClass::kCjk},
    {0xFE10, 0xFE1F, CharClass::kCjkPunctuation},
    {0xFE30, 0xFE6F, CharClass::kCjkPunctuation},
    {0xFF01, 0xFF0F, CharClass::kCjkPunctuation},
    {0xFF1A, 0xFF20, CharClass::kCjkPunctuation},
    {0xFF3B, 0xFF40, CharClass::kCjkPunctuation},
    {0xFF5B, 0xFF65, CharClass::kCjkPunctuation},
    {0xFF66, 0xFFDC, CharClass::kCjk},
    {0x20000, 0x3FFFF, CharClass::kCjk},
};

}  // namespace

CharClass char_class(std::string_view c) {
  const char32_t cp = wide_code_point(c);
  if (cp < kRanges[0].first) {
    return CharClass::kOther;
  }
  // The common cases first: the CJK Unified Ideographs, and kana.
  if ((cp >= 0x4E00 && cp <= 0x9FFF) || (cp >= 0x3040 && cp <= 0x30FA)) {
    return CharClass::kCjk;
  }
  auto it = std::upper_bound(std::begin(kRanges), std::end(kRanges), cp,
                             [](char32_t v, const Range& r) { return v < r.first; });
  --it;
  return cp <= it->last ? it->kind : CharClass::kOther;
}

namespace {

// A stretch of a run: one term, or CJK characters whose bigrams are terms.
struct Stretch {
  std::size_t begin = 0;
  std::size_t end = 0;
  bool cjk = false;
};

// Calls fn(stretch) for each stretch of `run`, in order (punctuation
// between stretches belongs to none).
template <class Fn>
void for_each_stretch(std::string_view run, Fn&& fn) {
  Stretch open;
  bool is_open = false;
  std::size_t i = 0;
  while (i < run.size()) {
    const std::size_t len = char_length(run, i);
    const CharClass kind = char_class(run.substr(i, len));
    const bool cjk = kind == CharClass::kCjk;
    if (is_open && (kind == CharClass::kCjkPunctuation || cjk != open.cjk)) {
      fn(open);
      is_open = false;
    }
    if (kind != CharClass::kCjkPunctuation) {
      if (!is_open) {
        open = Stretch{i, i, cjk};
        is_open = true;
      }
      open.end = i + len;
    }
    i += len;
  }
  if (is_open) {
    fn(open);
  }
}

// Calls fn(bigram) for each two adjacent characters of the CJK stretch
// `s`, or fn(s) when it is one character.
template <class Fn>
void for_each_bigram(std::string_view s, Fn&& fn) {
  std::size_t first = 0;
  std::size_t second = char_length(s, 0);
  if (second == s.size()) {
    fn(s);
    return;
  }
  while (second < s.size()) {
    const std::size_t after = second + char_length(s, second);
    fn(s.substr(first, after - first));
    first = second;
    second = after;
  }
}

}  // namespace

void split_cjk_run(std::string_view run, std::vector<std::string_view>& out) {
  for_each_stretch(run, [&](const Stretch& s) {
    const std::string_view text = run.substr(s.begin, s.end - s.begin);
    if (s.cjk) {
      for_each_bigram(text, [&](std::string_view bigram) { out.push_back(bigram); });
    } else {
      out.push_back(text.substr(0, kMaxTokenBytes));
    }
  });
}

std::vector<NeedlePiece> needle_pieces(std::string_view needle) {
  std::vector<NeedlePiece> out;
  std::size_t i = 0;
  const std::size_t n = needle.size();
  while (i < n) {
    while (i < n && !is_token_byte(static_cast<unsigned char>(needle[i]))) {
      ++i;
    }
    const std::size_t start = i;
    while (i < n && is_token_byte(static_cast<unsigned char>(needle[i]))) {
      ++i;
    }
    if (i == start) {
      break;
    }
    const std::string_view run = needle.substr(start, i - start);
    for_each_stretch(run, [&](const Stretch& s) {
      const std::string_view text = run.substr(s.begin, s.end - s.begin);
      const std::size_t begin = start + s.begin;
      const std::size_t end = start + s.end;
      if (s.cjk && char_length(text, 0) < text.size()) {
        // Each bigram is a whole term of the text.
        for_each_bigram(text, [&](std::string_view bigram) {
          out.push_back(NeedlePiece{std::string(bigram), true, true});
        });
        return;
      }
      out.push_back(NeedlePiece{std::string(text), begin > 0, end < n});
    });
  }
  return out;
}

std::string fts5_string(std::string_view term) {
  std::string out;
  out.reserve(term.size() + 2);
  out += '"';
  for (char c : term) {
    out += c;
    if (c == '"') {
      out += '"';
    }
  }
  out += '"';
  return out;
}

}  // namespace peregrine::store::maildir
