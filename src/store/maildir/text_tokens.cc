#include "store/maildir/text_tokens.h"

#include <algorithm>

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

std::vector<NeedlePiece> needle_pieces(std::string_view needle) {
  std::vector<NeedlePiece> out;
  std::size_t i = 0;
  const std::size_t n = needle.size();
  while (i < n) {
    std::size_t start = i;
    while (i < n && !is_token_byte(static_cast<unsigned char>(needle[i]))) {
      ++i;
    }
    const bool after_separator = i > start;
    start = i;
    while (i < n && is_token_byte(static_cast<unsigned char>(needle[i]))) {
      ++i;
    }
    if (i == start) {
      break;
    }
    NeedlePiece piece;
    piece.text.assign(needle.substr(start, i - start));
    piece.starts_token = after_separator;
    piece.ends_token = i < n;
    out.push_back(std::move(piece));
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
