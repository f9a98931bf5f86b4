#pragma once

// The terms of the word index (docs/formats/maildir-store.md, "Full-text
// index"). A text is first cut the way SQLite FTS5's built-in `ascii`
// tokenizer cuts it: into maximal runs of token bytes (ASCII letters and
// digits, and every byte >= 0x80), A-Z folded to a-z. A run is then cut
// further where it holds CJK text (Han, kana, Hangul): those scripts put no
// space between words, so such a run is a sentence or a paragraph, a term
// no other message holds. A maximal stretch of CJK characters gives its
// bigrams instead (every two adjacent characters; a lone character
// itself), CJK punctuation separates, and every other stretch of the run
// is one term, cut after kMaxTokenBytes bytes (as FTS5 cuts a token). The
// word index is fed each document's terms joined by spaces, so FTS5 holds
// exactly these terms.
//
// A needle occurs in a text only if each of its pieces (needle_pieces) lies
// in a term of the text as the piece says, which is what lets the index
// answer a substring search without reading the texts.
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

// The length of the character that starts at s[i], as FTS5's trigram
// tokenizer reads UTF-8: a byte from 0xC0 up with the continuation bytes
// that follow it, any other byte alone.
inline std::size_t char_length(std::string_view s, std::size_t i) {
  std::size_t n = 1;
  if (static_cast<unsigned char>(s[i]) >= 0xC0) {
    while (i + n < s.size() && (static_cast<unsigned char>(s[i + n]) & 0xC0) == 0x80) {
      ++n;
    }
  }
  return n;
}

enum class CharClass : unsigned char { kOther, kCjk, kCjkPunctuation };

// What the character `c` (one char_length's bytes) is to the terms: a CJK
// character, CJK punctuation (a separator), or anything else (including
// bytes that are no well-formed UTF-8).
CharClass char_class(std::string_view c);

// Whether a run holding byte b may hold a CJK character: every one is
// three or four bytes long, its lead byte 0xE1 to 0xF0.
constexpr bool may_start_cjk(unsigned char b) { return b >= 0xE1 && b <= 0xF0; }

// Appends the terms of a run of token bytes that holds some byte for which
// may_start_cjk is true (views into `run`).
void split_cjk_run(std::string_view run, std::vector<std::string_view>& out);

// Calls fn(term) for every term of a run of token bytes (with its capitals
// encoded, when it had any), in order; a term may come more than once.
template <class Fn>
void for_each_run_term(std::string_view run, Fn&& fn) {
  bool plain = true;
  for (char c : run) {
    if (may_start_cjk(static_cast<unsigned char>(c))) {
      plain = false;
      break;
    }
  }
  if (plain) {
    fn(run.substr(0, kMaxTokenBytes));
    return;
  }
  thread_local std::vector<std::string_view> terms;
  terms.clear();
  split_cjk_run(run, terms);
  for (std::string_view term : terms) {
    fn(term);
  }
}

// Calls fn(std::string_view term) for every term of `text` (the simple
// form, for tests and the fuzz target: term_record.cc has a faster one).
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
    scratch.assign(text.data() + start, i - start);
    for (char& c : scratch) {
      if (c >= 'A' && c <= 'Z') {
        c = static_cast<char>(c - 'A' + 'a');
      }
    }
    for_each_run_term(std::string_view(scratch), fn);
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

// A piece of a search needle: a term of the needle (as the text's terms
// are cut), with what the needle says about the term of a text it must lie
// in: `starts_token` when something precedes it in the needle (so in the
// text the term starts with it), `ends_token` when something follows it.
// A bigram of a longer stretch of CJK characters is a whole term
// (both set).
struct NeedlePiece {
  std::string text;  // as in the needle (not folded)
  bool starts_token = false;
  bool ends_token = false;
};

std::vector<NeedlePiece> needle_pieces(std::string_view needle);

// Whether a text holds `needle` exactly when its terms hold `pieces` (the
// needle's) as they say: the needle is one piece, the piece itself.
inline bool pieces_exact(std::string_view needle, const std::vector<NeedlePiece>& pieces) {
  return pieces.size() == 1 && pieces[0].text == needle;
}

// `term` as an FTS5 string: in double quotes, embedded quotes doubled.
std::string fts5_string(std::string_view term);

}  // namespace peregrine::store::maildir
