#pragma once

// From a TextQuery to a query of the word index (search_index.cc): each
// needle cut into pieces (text_tokens.h), each piece resolved through the
// vocabulary to the terms that may hold it, and the FTS5 MATCH expression
// over them. The format is in docs/formats/maildir-store.md, "Full-text
// index".

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.h"
#include "store/api/types.h"
#include "store/maildir/sqlite.h"
#include "store/maildir/term_record.h"
#include "store/maildir/text_tokens.h"

namespace peregrine::store::maildir {

// The columns of search_fts, in the order of TextColumns' bits and of
// peregrine_search_column's n.
inline constexpr std::string_view kColumnNames[] = {"addr_from", "addr_to", "addr_cc", "addr_bcc",
                                                    "subject",   "hdr",     "body"};
inline constexpr int kColumnCount = 7;

struct WordQuery {
  std::string match;   // the MATCH expression; empty: nothing narrows
  bool empty = false;  // some piece is in no term: no document qualifies
  // The documents `match` finds are exactly those holding the (single)
  // needle in one of the columns.
  bool exact = false;
};

base::Result<WordQuery> word_query(Database& db, const TextQuery& query);

// How a needle piece must lie in a term of the vocabulary.
enum class TermMatch { kContains, kSuffix };

// The terms of the vocabulary that hold `piece` (kContains) or end with it
// (kSuffix); nullopt when there are too many to narrow a query.
base::Result<std::optional<std::vector<std::string>>> matching_terms(Database& db,
                                                                     std::string_view piece,
                                                                     TermMatch how);

// A TextQuery checked against a document's term record: for every needle,
// each of its pieces (text_tokens.h) must lie in a term of the query's
// columns as the piece says (the whole term, its start, its end, or
// anywhere in it). That is necessary for the document to hold the needles,
// and it is exactly the answer when `exact()`: one needle that is one piece
// (pieces_exact). Used when the word index cannot narrow a query (a fragment in
// too many terms) or its answer must be confirmed: a record costs far less
// to read than the message file.
class RecordFilter {
 public:
  explicit RecordFilter(const TextQuery& query);
  // Whether some needle has a piece to look for.
  bool narrows() const { return narrows_; }
  bool exact() const { return exact_; }
  // Whether a document with the packed term record `packed` may hold every
  // needle. Sets *uncertain when it kept the document only because a term
  // of it was cut at kMaxTokenBytes (the piece may lie past the cut) or
  // because the record is corrupt (the file decides).
  bool may_match(std::string_view packed, TermScratch& scratch, bool* uncertain) const;

 private:
  std::uint8_t columns_ = 0;
  std::vector<NeedlePiece> pieces_;  // every needle's, capitals encoded
  bool narrows_ = false;
  bool exact_ = false;
};

// The characters of `s` as FTS5's trigram tokenizer reads UTF-8 (each a
// view of its bytes): a byte from 0xC0 up with the continuation bytes that
// follow it, any other byte alone. So a needle's trigrams are the ones the
// tokenizer made of every term that holds it, even around invalid bytes.
std::vector<std::string_view> characters(std::string_view s);

}  // namespace peregrine::store::maildir
