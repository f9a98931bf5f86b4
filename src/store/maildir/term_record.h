#pragma once

// A message's term record: what the full-text index keeps of its search
// text (search_docs.terms; docs/formats/maildir-store.md, "Full-text
// index"). The word index (FTS5, detail=column) knows only which columns of
// a document hold a term, so the document's distinct terms, each with the
// columns it occurs in, are all it needs to index the document and, later,
// to unindex it (FTS5's contentless 'delete' takes the same tokens again).
// The text itself is not kept: answers the index cannot give exactly are
// confirmed from the message file.
//
// The decoder reads bytes from disk, so it is fuzzed
// (tests/fuzz/term_record_fuzz.cc) and bounds every size; this file uses
// nothing the fuzz build's clang 14 cannot compile (no std::expected).

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "mime/search_text.h"

namespace peregrine::store::maildir {

// The columns of the word index: from, to, cc, bcc, subject, headers, body
// (the order of store::TextColumns' bits).
inline constexpr int kTermColumns = 7;

struct IndexedTerm {
  // A token of the text with its capitals encoded (text_tokens.h): token
  // bytes only, no ASCII capital, 1 to kMaxTokenBytes bytes.
  std::string text;
  std::uint8_t columns = 0;  // bit n: the term occurs in column n
  bool operator==(const IndexedTerm&) const = default;
};

// Column n of a folded search text (n < kTermColumns).
std::string_view term_column(const mime::SearchText& text, int n);

// The distinct terms of a folded search text, ascending, with their columns.
std::vector<IndexedTerm> index_terms(const mime::SearchText& folded);

// A message's term record as the index writes it: its terms, and their
// stored form (pack_terms). Kept together so that indexing the record does
// not decode what was just encoded.
struct TermRecord {
  std::vector<IndexedTerm> terms;
  std::string packed;
  bool empty() const { return packed.empty(); }
};

// The stored form (format byte 0: the record as it is; 2: a 4-byte
// little-endian length, then the record as one Zstandard frame; 1, read
// but no longer written: the length, then the record zlib-compressed).
// The record: the number of terms (varint), then per term, ascending: the
// bytes it shares with the term before (varint), the number of bytes that
// follow (varint), those bytes, and its column mask (one byte, 1..127).
std::string pack_terms(const std::vector<IndexedTerm>& terms);
// The terms again; nullopt when the bytes break any rule above or a bound
// (kMaxRecordBytes of record, kMaxTermBytesTotal of terms).
std::optional<std::vector<IndexedTerm>> unpack_terms(std::string_view packed);

// Buffers for_each_term reuses from one record to the next.
struct TermScratch {
  std::string inflated;
  std::string term;
};

// Calls fn(term, columns) for each term of a packed record, in order,
// without building the terms (each view is valid during its call); stops
// early when fn returns false. False when the bytes are corrupt (fn may have
// seen some terms first); the rules and bounds are unpack_terms'.
bool for_each_term(std::string_view packed, TermScratch& scratch,
                   const std::function<bool(std::string_view, std::uint8_t)>& fn);

// The record's terms that occur in column n, separated by spaces: the text
// the word index is given for that column (tokenized, it gives exactly
// those terms).
std::string column_terms(const std::vector<IndexedTerm>& terms, int n);

// Calls fn(term) for each term of a column_terms() text, in order.
template <class Fn>
void for_each_column_term(std::string_view column, Fn&& fn) {
  while (!column.empty()) {
    const std::size_t end = column.find(' ');
    fn(column.substr(0, end));
    if (end == std::string_view::npos) {
      return;
    }
    column.remove_prefix(end + 1);
  }
}

// Bounds of the decoder.
inline constexpr std::size_t kMaxRecordBytes = 64u * 1024 * 1024;
inline constexpr std::size_t kMaxTermBytesTotal = 64u * 1024 * 1024;

}  // namespace peregrine::store::maildir
