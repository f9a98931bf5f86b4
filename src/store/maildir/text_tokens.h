#pragma once

// The tokens of the word index (docs/formats/maildir-store.md, "Full-text
// index"), computed the way SQLite FTS5's built-in `ascii` tokenizer computes
// them, so that the vocabulary this code fills holds exactly the terms FTS5
// indexes: a token is a maximal run of token bytes (ASCII letters and digits,
// and every byte >= 0x80), A-Z folded to a-z, cut after kMaxTokenBytes bytes
// (FTS5 drops the rest of a longer run).
//
// A needle made only of token bytes occurs in a text exactly when it occurs
// inside one of the text's tokens, which is what lets the index answer such a
// substring search without reading the texts.
//
// Plain C++20 (no std::expected): the fuzz build compiles it with clang 14.

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace peregrine::store::maildir {

// FTS5 keeps at most this many bytes of a token.
inline constexpr std::size_t kMaxTokenBytes = 32768;

constexpr bool is_token_byte(unsigned char c) {
  return c >= 0x80 || (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

// Calls fn(std::string_view token) for every token of `text`, in order.
// `scratch` holds the folded token the view points into (valid until the
// next call of fn).
template <class Fn>
void for_each_token(std::string_view text, std::string& scratch, Fn&& fn) {
  std::size_t i = 0;
  const std::size_t n = text.size();
  while (i < n) {
    while (i < n && !is_token_byte(static_cast<unsigned char>(text[i]))) {
      ++i;
    }
    std::size_t start = i;
    while (i < n && is_token_byte(static_cast<unsigned char>(text[i]))) {
      ++i;
    }
    if (i == start) {
      break;
    }
    std::size_t len = i - start < kMaxTokenBytes ? i - start : kMaxTokenBytes;
    scratch.assign(text.data() + start, len);
    for (char& c : scratch) {
      if (c >= 'A' && c <= 'Z') {
        c = static_cast<char>(c - 'A' + 'a');
      }
    }
    fn(std::string_view(scratch));
  }
}

// The text with every ASCII capital written as the byte 0xFF followed by its
// lower-case letter. FTS5's ascii tokenizer folds A-Z, which would make the
// index blind to a difference the case-folded text keeps (a fold may map
// ASCII letters to capitals); 0xFF never occurs in UTF-8 and is a token
// byte, so this keeps token boundaries and loses nothing. Texts and needles
// both go through it before they meet the index.
std::string encode_capitals(std::string_view text);
bool has_capitals(std::string_view text);

// A maximal run of token bytes of a search needle, with what the needle says
// about the token it must lie in: `starts_token` when a separator precedes it
// in the needle (so in the text the token starts with it), `ends_token` when
// a separator follows it.
struct NeedlePiece {
  std::string text;  // as in the needle (not folded)
  bool starts_token = false;
  bool ends_token = false;
};

std::vector<NeedlePiece> needle_pieces(std::string_view needle);

// `term` as an FTS5 string: in double quotes, embedded quotes doubled.
std::string fts5_string(std::string_view term);

}  // namespace peregrine::store::maildir
