// libFuzzer target for the word index's tokenizer and needle splitter
// (src/store/maildir/text_tokens.h) and the record's terms (index_terms,
// term_record.h). Invariants: every token is a non-empty run of lower-case
// token bytes no longer than FTS5 keeps, and each lies in the input (A-Z
// folded); a record's terms are sorted and unique, and are the tokens of
// the input with its capitals encoded; a
// needle's pieces are its runs of token bytes in order, and a piece starts
// (ends) a token exactly when a separator precedes (follows) it; an FTS5
// string round-trips; encoding capitals keeps the number of tokens. See tests/fuzz/README.md.

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
    from = at + token.size();
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
  std::string joined;
  std::size_t pos = 0;
  for (const NeedlePiece& p : pieces) {
    check(!p.text.empty(), "piece not empty");
    std::size_t at = input.find(p.text, pos);
    check(at != std::string_view::npos, "piece in needle");
    for (std::size_t i = pos; i < at; ++i) {
      check(!is_token_byte(static_cast<unsigned char>(input[i])), "only separators between");
    }
    check(p.starts_token == (at > 0), "starts_token");
    pos = at + p.text.size();
    check(p.ends_token == (pos < input.size()), "ends_token");
  }
  for (std::size_t i = pos; i < input.size(); ++i) {
    check(!is_token_byte(static_cast<unsigned char>(input[i])), "only separators after");
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
