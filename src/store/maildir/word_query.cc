#include "store/maildir/word_query.h"

#include <algorithm>

#include "store/maildir/sql_util.h"
#include "store/maildir/text_tokens.h"

namespace peregrine::store::maildir {

using base::Result;

namespace {

// A word fragment of a query gives at most this many trigrams to the
// vocabulary query (terms are checked exactly afterwards).
constexpr std::size_t kMaxTermTrigrams = 12;
// A needle piece that matches more terms than this does not narrow the
// query (the OR would cost more than it saves): its needle is confirmed.
constexpr std::size_t kMaxOrTerms = 4000;

}  // namespace

std::vector<std::string_view> characters(std::string_view s) {
  std::vector<std::string_view> out;
  std::size_t i = 0;
  while (i < s.size()) {
    const std::size_t start = i;
    auto c = static_cast<unsigned char>(s[i++]);
    if (c >= 0xC0) {
      while (i < s.size() && (static_cast<unsigned char>(s[i]) & 0xC0) == 0x80) {
        ++i;
      }
    }
    out.push_back(s.substr(start, i - start));
  }
  return out;
}

namespace {

// The trigram query on search_terms_fts for terms that may hold `piece`
// (at least three characters): the AND of up to kMaxTermTrigrams of its
// trigrams, spread over it, first and last included.
std::string term_trigram_query(std::string_view piece) {
  auto chars = characters(piece);
  std::vector<std::string> all;
  for (std::size_t i = 0; i + 3 <= chars.size(); ++i) {
    std::string t;
    for (std::size_t k = 0; k < 3; ++k) {
      t += chars[i + k];
    }
    all.push_back(std::move(t));
  }
  std::size_t take = std::min(all.size(), kMaxTermTrigrams);
  std::vector<std::string> chosen;
  for (std::size_t k = 0; k < take; ++k) {
    chosen.push_back(all[take == 1 ? 0 : k * (all.size() - 1) / (take - 1)]);
  }
  std::sort(chosen.begin(), chosen.end());
  chosen.erase(std::unique(chosen.begin(), chosen.end()), chosen.end());
  std::string out;
  for (const std::string& t : chosen) {
    if (!out.empty()) {
      out += " AND ";
    }
    out += fts5_string(t);
  }
  return out;
}

bool ends_with(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

}  // namespace

Result<std::optional<std::vector<std::string>>> matching_terms(Database& db, std::string_view piece,
                                                               TermMatch how) {
  std::vector<std::string> out;
  bool too_many = false;
  auto keep = [&](std::string_view term) {
    bool ok = how == TermMatch::kSuffix ? ends_with(term, piece)
                                        : term.find(piece) != std::string_view::npos;
    if (ok) {
      if (out.size() == kMaxOrTerms) {
        too_many = true;
        return;
      }
      out.emplace_back(term);
    }
  };
  const bool trigrams = characters(piece).size() >= 3;
  auto s = trigrams
               ? db.prepare("SELECT term FROM search_terms_fts WHERE search_terms_fts MATCH ?1")
               // Too short for a trigram: scan the vocabulary.
               : db.prepare("SELECT term FROM search_terms WHERE instr(term, ?1) > 0");
  if (!s) {
    return std::unexpected(s.error());
  }
  if (trigrams) {
    s->bind_text(1, term_trigram_query(piece));
  } else {
    s->bind_text(1, piece);
  }
  while (!too_many) {
    auto row = s->step();
    if (!row) {
      return std::unexpected(row.error());
    }
    if (!*row) {
      break;
    }
    keep(s->column_text(0));
  }
  if (trigrams && !too_many) {
    // The newest terms, not yet in the trigram index (search_index.cc
    // indexes them a batch at a time).
    auto r = each_row(
        db, "SELECT term FROM search_terms WHERE id > (SELECT upto FROM search_terms_indexed)",
        [](Statement&) {},
        [&](const Statement& row) {
          keep(row.column_text(0));
          return !too_many;
        });
    if (!r) {
      return std::unexpected(r.error());
    }
  }
  if (too_many) {
    return std::optional<std::vector<std::string>>();
  }
  return std::optional<std::vector<std::string>>(std::move(out));
}

namespace {

// The terms FTS5 cut at kMaxTokenBytes (a needle may lie past the cut).
Result<std::vector<std::string>> cut_terms(Database& db) {
  return collect<std::string>(
      db, "SELECT term FROM search_terms WHERE length(CAST(term AS BLOB)) >= 32768",
      [](Statement&) {}, [](const Statement& s) { return std::string(s.column_text(0)); });
}

std::string or_of(const std::vector<std::string>& terms) {
  std::string out = "(";
  for (std::size_t i = 0; i < terms.size(); ++i) {
    if (i > 0) {
      out += " OR ";
    }
    out += fts5_string(terms[i]);
  }
  out += ")";
  return out;
}

}  // namespace

RecordFilter::RecordFilter(const TextQuery& query) : columns_(query.columns) {
  exact_ = query.needles.size() == 1;
  for (const std::string& raw : query.needles) {
    const std::string needle = encode_capitals(raw);
    auto pieces = needle_pieces(needle);
    if (!pieces_exact(needle, pieces)) {
      exact_ = false;
    }
    for (NeedlePiece& piece : pieces) {
      if (piece.text.size() >= kMaxTokenBytes) {
        exact_ = false;  // longer than any term
        continue;
      }
      pieces_.push_back(std::move(piece));
    }
  }
  narrows_ = !pieces_.empty();
  exact_ = exact_ && narrows_;
}

bool RecordFilter::may_match(std::string_view packed, TermScratch& scratch, bool* uncertain) const {
  std::vector<bool> found(pieces_.size(), false);
  std::size_t missing = pieces_.size();
  bool cut = false;
  const bool read = for_each_term(packed, scratch, [&](std::string_view term, std::uint8_t in) {
    if ((in & columns_) == 0) {
      return true;
    }
    cut = cut || term.size() >= kMaxTokenBytes;
    for (std::size_t i = 0; i < pieces_.size(); ++i) {
      if (found[i]) {
        continue;
      }
      const NeedlePiece& piece = pieces_[i];
      const std::string_view p = piece.text;
      bool here = false;
      if (piece.starts_token && piece.ends_token) {
        here = term == p;
      } else if (piece.starts_token) {
        here = term.substr(0, p.size()) == p;
      } else if (piece.ends_token) {
        here = ends_with(term, p);
      } else {
        here = term.find(p) != std::string_view::npos;
      }
      if (here) {
        found[i] = true;
        --missing;
      }
    }
    return missing > 0;  // every piece found: the rest cannot change the answer
  });
  if (!read) {
    *uncertain = true;  // corrupt: the file decides
    return true;
  }
  if (missing > 0) {
    if (!cut) {
      return false;
    }
    *uncertain = true;
  }
  return true;
}

// A column filter over the AND of one expression per needle piece that
// narrows.
Result<WordQuery> word_query(Database& db, const TextQuery& query) {
  WordQuery out;
  std::vector<std::string> parts;
  // Exact when the one needle is one piece that the vocabulary can be
  // searched for as it is.
  bool exact = query.needles.size() == 1;
  std::optional<std::vector<std::string>> cut;
  for (const std::string& raw : query.needles) {
    const std::string needle = encode_capitals(raw);  // as the texts were indexed
    auto pieces = needle_pieces(needle);
    if (!pieces_exact(needle, pieces)) {
      exact = false;
    }
    for (const NeedlePiece& piece : pieces) {
      if (piece.text.size() >= kMaxTokenBytes) {
        exact = false;
        continue;  // longer than any term
      }
      if (piece.starts_token) {
        // The whole term, or its prefix.
        parts.push_back(fts5_string(piece.text) + (piece.ends_token ? "" : " *"));
        continue;
      }
      auto terms = matching_terms(db, piece.text,
                                  piece.ends_token ? TermMatch::kSuffix : TermMatch::kContains);
      if (!terms) {
        return std::unexpected(terms.error());
      }
      if (!*terms) {
        exact = false;
        continue;  // too common to narrow
      }
      if (!cut) {
        auto c = cut_terms(db);
        if (!c) {
          return std::unexpected(c.error());
        }
        cut = std::move(*c);
      }
      for (const std::string& t : *cut) {
        if (std::find((*terms)->begin(), (*terms)->end(), t) == (*terms)->end()) {
          (*terms)->push_back(t);
          exact = false;
        }
      }
      if ((*terms)->empty()) {
        out.empty = true;
        out.exact = exact;
        return out;
      }
      parts.push_back(or_of(**terms));
    }
  }
  if (parts.empty()) {
    return out;
  }
  std::string match = "{";
  for (int n = 0; n < kColumnCount; ++n) {
    if (query.columns & (1u << n)) {
      match += ' ';
      match += kColumnNames[n];
    }
  }
  match += " } : (";
  for (std::size_t i = 0; i < parts.size(); ++i) {
    if (i > 0) {
      match += " AND ";
    }
    match += parts[i];
  }
  match += ")";
  out.match = std::move(match);
  out.exact = exact;
  return out;
}

}  // namespace peregrine::store::maildir
