// libFuzzer target for the word index's tokenizer and needle splitter
// (src/store/maildir/text_tokens.h) and the record's terms (index_terms,
// term_record.h). Invariants: every term is a non-empty string of
// lower-case token bytes no longer than FTS5 keeps, and the terms lie in
// the input (A-Z folded) in order of their starts; a record's terms are
// sorted and unique, and are the terms of the input with its capitals
// encoded; a needle's pieces lie in it in order, with only separators and
// non-ASCII between them, and a piece that is no bigram of a longer CJK
// stretch starts (ends) a term exactly when something precedes (follows)
// it; in valid UTF-8, every piece of a needle cut from the input lies in
// a term of the input's record as it says (the index never misses a
// message that holds a needle); an FTS5 string round-trips; encoding
// capitals keeps the number of terms. See tests/fuzz/README.md.

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "base/ascii.h"
#include "store/maildir/term_record.h"
#include "store/maildir/text_tokens.h"

namespace peregrine::store::maildir {
namespace {

void check(bool ok, const char* what) {
  if (!ok) {
    std::fprintf(stderr, "text_tokens_fuzz: invariant broken: %s\n", what);
    std::abort();
  }
}

// Whether `s` is well-formed UTF-8 (encoded capitals' 0xFF aside: it is
// always followed by an ASCII letter).
bool valid_utf8(std::string_view s) {
  std::size_t i = 0;
  while (i < s.size()) {
    const auto c = static_cast<unsigned char>(s[i]);
    if (c < 0x80 || c == 0xFF) {
      ++i;
      continue;
    }
    const std::size_t n = c >= 0xF0 ? 4 : c >= 0xE0 ? 3 : c >= 0xC2 ? 2 : 0;
    if (n == 0 || c > 0xF4 || i + n > s.size()) {
      return false;
    }
    std::uint32_t cp = c & (0x7F >> n);
    for (std::size_t k = 1; k < n; ++k) {
      const auto b = static_cast<unsigned char>(s[i + k]);
      if ((b & 0xC0) != 0x80) {
        return false;
      }
      cp = (cp << 6) | (b & 0x3F);
    }
    const std::uint32_t min = n == 2 ? 0x80 : n == 3 ? 0x800 : 0x10000;
    if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) {
      return false;
    }
    i += n;
  }
  return true;
}

void run(std::string_view input) {
  const std::string folded = base::to_lower(input);
  std::string scratch;
  std::size_t from = 0;
  for_each_token(input, scratch, [&](std::string_view token) {
    check(!token.empty() && token.size() <= kMaxTokenBytes, "token size");
    for (char c : token) {
      check(is_token_byte(static_cast<unsigned char>(c)) && !(c >= 'A' && c <= 'Z'), "token bytes");
    }
    std::size_t at = folded.find(token, from);
    check(at != std::string::npos, "token in input");
    from = at + 1;  // CJK bigrams overlap
  });
  mime::SearchText text;
  text.body = std::string(input);
  const std::vector<IndexedTerm> terms = index_terms(text);
  for (std::size_t i = 1; i < terms.size(); ++i) {
    check(terms[i - 1].text < terms[i].text, "record terms sorted and unique");
  }
  std::string encoded_input = encode_capitals(input);
  std::size_t tokens = 0;
  for_each_token(encoded_input, scratch, [&](std::string_view token) {
    ++tokens;
    auto it = std::lower_bound(
        terms.begin(), terms.end(), token,
        [](const IndexedTerm& t, std::string_view v) { return std::string_view(t.text) < v; });
    check(it != terms.end() && it->text == token && it->columns == (1u << 6),
          "every token of the encoded input is a record term");
  });
  check(terms.size() <= tokens, "no record term but the tokens");

  auto pieces = needle_pieces(input);
  std::size_t covered = 0;                      // the end of the pieces so far
  std::size_t last_bigram = std::string::npos;  // the start of the last piece, a bigram
  for (const NeedlePiece& p : pieces) {
    check(!p.text.empty(), "piece not empty");
    const bool bigram = char_length(p.text, 0) < p.text.size() &&
                        char_class(p.text.substr(0, char_length(p.text, 0))) == CharClass::kCjk;
    // The bigrams of a stretch overlap by one character.
    const std::size_t from = bigram && last_bigram != std::string::npos ? last_bigram + 1 : covered;
    // The first place from `from` on where the piece may lie: only
    // separators and non-ASCII before it, its flags as it lies there.
    // (CJK punctuation between pieces may hold the bytes of a piece.)
    std::size_t at = input.find(p.text, from);
    for (; at != std::string_view::npos; at = input.find(p.text, at + 1)) {
      bool gap_ok = true;
      for (std::size_t i = covered; i < at; ++i) {
        const auto b = static_cast<unsigned char>(input[i]);
        gap_ok = gap_ok && (!is_token_byte(b) || b >= 0x80);
      }
      if (!gap_ok) {
        at = std::string_view::npos;
        break;
      }
      const std::size_t end = at + p.text.size();
      if (bigram ? p.starts_token && p.ends_token
                 : p.starts_token == (at > 0) && p.ends_token == (end < input.size())) {
        break;
      }
    }
    check(at != std::string_view::npos, "piece in needle as it says");
    const std::size_t end = at + p.text.size();
    last_bigram = bigram ? at : std::string::npos;
    covered = std::max(covered, end);
  }
  for (std::size_t i = covered; i < input.size(); ++i) {
    const auto b = static_cast<unsigned char>(input[i]);
    check(!is_token_byte(b) || b >= 0x80, "only separators and non-ASCII after");
  }

  // A needle cut from a valid UTF-8 input: each of its pieces lies in a
  // term of the input's record as it says (or a term was cut).
  if (input.size() >= 2 && valid_utf8(input)) {
    const std::size_t a = static_cast<unsigned char>(input[0]) % input.size();
    const std::size_t n = static_cast<unsigned char>(input[1]) % (input.size() - a + 1);
    const std::string needle = encode_capitals(input.substr(a, n));
    if (valid_utf8(needle)) {
      const std::vector<IndexedTerm> encoded_terms = index_terms(text);
      bool cut = false;
      for (const IndexedTerm& t : encoded_terms) {
        cut = cut || t.text.size() >= kMaxTokenBytes;
      }
      for (const NeedlePiece& p : needle_pieces(needle)) {
        bool found = false;
        for (const IndexedTerm& t : encoded_terms) {
          const std::string_view term = t.text;
          if (p.starts_token && p.ends_token) {
            found = term == p.text;
          } else if (p.starts_token) {
            found = term.substr(0, p.text.size()) == p.text;
          } else if (p.ends_token) {
            found =
                term.size() >= p.text.size() && term.substr(term.size() - p.text.size()) == p.text;
          } else {
            found = term.find(p.text) != std::string_view::npos;
          }
          if (found) {
            break;
          }
        }
        check(found || cut, "a needle cut from the text has its pieces in the text's terms");
      }
    }
  }

  // Encoding capitals keeps the token boundaries and removes every A-Z.
  std::string encoded = encode_capitals(input);
  check(!has_capitals(encoded), "no capitals after encoding");
  std::size_t before = 0;
  std::size_t after = 0;
  for_each_token(input, scratch, [&](std::string_view) { ++before; });
  for_each_token(encoded, scratch, [&](std::string_view) { ++after; });
  check(before == after, "encoding keeps the tokens");

  std::string quoted = fts5_string(input);
  check(quoted.size() >= 2 && quoted.front() == '"' && quoted.back() == '"', "quoted");
  std::string back;
  for (std::size_t i = 1; i + 1 < quoted.size(); ++i) {
    back += quoted[i];
    if (quoted[i] == '"') {
      check(quoted[i + 1] == '"', "quote doubled");
      ++i;
    }
  }
  check(back == input, "fts5 string round trip");
}

}  // namespace
}  // namespace peregrine::store::maildir

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  peregrine::store::maildir::run(std::string_view(reinterpret_cast<const char*>(data), size));
  return 0;
}
