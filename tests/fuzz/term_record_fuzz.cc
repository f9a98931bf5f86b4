// libFuzzer target for the full-text index's term record (search_docs.terms,
// read back from disk): unpack_terms (src/store/maildir/term_record.cc),
// and the record the store writes for a search text (index_terms,
// pack_terms, column_terms), plus mime::deserialize_search_text and
// mime::fold_case, which prepares every text and search string. Any broken
// invariant aborts, so the fuzzer saves the input. See README.md.
//
// The first byte picks what the rest is:
//   0: a packed record, as stored (format byte, maybe compressed);
//   1: a record, compressed here into a valid zlib packing (format 1, as
//      older builds wrote), so the decompression path sees well-formed
//      streams too;
//   2: serialized text bytes (mime::serialize_search_text): the record of
//      the text they hold must round-trip and give each column its tokens;
//   3: a record, compressed here into a valid Zstandard packing (format 2).
// Whatever the mode, the first 4 KiB of the rest also go through fold_case.

#include <zlib.h>
#include <zstd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <set>
#include <string>
#include <string_view>

#include "mime/case_fold.h"
#include "mime/search_text.h"
#include "store/maildir/term_record.h"
#include "store/maildir/text_tokens.h"

namespace peregrine {
namespace {

using store::maildir::IndexedTerm;

void check(bool ok, const char* what) {
  if (!ok) {
    std::fprintf(stderr, "term_record_fuzz: invariant broken: %s\n", what);
    std::abort();
  }
}

bool valid_utf8(std::string_view s) {
  size_t i = 0;
  while (i < s.size()) {
    const auto b = static_cast<unsigned char>(s[i]);
    size_t n = b < 0x80                  ? 1
               : (b >= 0xC2 && b < 0xE0) ? 2
               : (b >= 0xE0 && b < 0xF0) ? 3
               : (b >= 0xF0 && b < 0xF5) ? 4
                                         : 0;
    if (n == 0 || i + n > s.size()) {
      return false;
    }
    uint32_t cp = n == 1 ? b : b & (0xFF >> (n + 1));
    for (size_t k = 1; k < n; ++k) {
      const auto c = static_cast<unsigned char>(s[i + k]);
      if ((c & 0xC0) != 0x80) {
        return false;
      }
      cp = (cp << 6) | (c & 0x3F);
    }
    const uint32_t min = n == 2 ? 0x80 : n == 3 ? 0x800 : n == 4 ? 0x10000 : 0;
    if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) {
      return false;
    }
    i += n;
  }
  return true;
}

// What unpack_terms accepts keeps the record's rules and packs back to
// the same terms.
void check_terms(const std::vector<IndexedTerm>& terms) {
  std::size_t total = 0;
  for (std::size_t i = 0; i < terms.size(); ++i) {
    const IndexedTerm& t = terms[i];
    check(!t.text.empty() && t.text.size() <= store::maildir::kMaxTokenBytes,
          "a term's length is out of bounds");
    check(i == 0 || terms[i - 1].text < t.text, "terms are not strictly ascending");
    check(t.columns != 0 && t.columns < (1u << store::maildir::kTermColumns),
          "a column mask is out of range");
    for (char c : t.text) {
      const auto b = static_cast<unsigned char>(c);
      check(store::maildir::is_token_byte(b) && !(b >= 'A' && b <= 'Z'),
            "a term holds a byte that is no token byte");
    }
    total += t.text.size();
  }
  check(total <= store::maildir::kMaxTermBytesTotal, "the terms exceed their bound");
  auto again = store::maildir::unpack_terms(store::maildir::pack_terms(terms));
  check(again.has_value() && *again == terms, "pack/unpack lost terms");
}

std::string zlib_packed(std::string_view raw) {
  uLongf bound = compressBound(raw.size());
  std::string out(5 + bound, '\0');
  out[0] = 1;
  const auto n = static_cast<uint32_t>(raw.size());
  for (int i = 0; i < 4; ++i) {
    out[1 + i] = static_cast<char>((n >> (8 * i)) & 0xff);
  }
  uLongf written = bound;
  check(compress2(reinterpret_cast<Bytef*>(out.data() + 5), &written,
                  reinterpret_cast<const Bytef*>(raw.data()), raw.size(), 1) == Z_OK,
        "compress2 failed");
  out.resize(5 + written);
  return out;
}

std::string zstd_packed(std::string_view raw) {
  std::string out(5 + ZSTD_compressBound(raw.size()), '\0');
  out[0] = 2;
  const auto n = static_cast<uint32_t>(raw.size());
  for (int i = 0; i < 4; ++i) {
    out[1 + i] = static_cast<char>((n >> (8 * i)) & 0xff);
  }
  const size_t written = ZSTD_compress(out.data() + 5, out.size() - 5, raw.data(), raw.size(), 1);
  check(!ZSTD_isError(written), "ZSTD_compress failed");
  out.resize(5 + written);
  return out;
}

// The record of a text: each column's tokens are exactly the terms marked
// for that column, and the record round-trips.
void check_text(std::string_view bytes) {
  std::optional<mime::SearchText> text = mime::deserialize_search_text(bytes);
  if (!text) {
    return;
  }
  check(mime::serialize_search_text(*text) == bytes,
        "deserialize accepted bytes that serialize differently");
  const std::vector<IndexedTerm> terms = store::maildir::index_terms(*text);
  check_terms(terms);
  std::string scratch;
  for (int n = 0; n < store::maildir::kTermColumns; ++n) {
    std::set<std::string> want;
    const std::string encoded =
        store::maildir::encode_capitals(store::maildir::term_column(*text, n));
    store::maildir::for_each_token(encoded, scratch,
                                   [&](std::string_view token) { want.emplace(token); });
    // What FTS5's ascii tokenizer makes of the column's text: its words.
    std::set<std::string> got;
    const std::string column = store::maildir::column_terms(terms, n);
    for (std::size_t at = 0; at < column.size();) {
      std::size_t end = column.find(' ', at);
      end = end == std::string::npos ? column.size() : end;
      got.emplace(column.substr(at, end - at));
      at = end + 1;
    }
    check(got == want, "a column's terms are not its tokens");
  }
}

void check_fold(std::string_view s) {
  const std::string once = mime::fold_case(s);
  check(valid_utf8(once), "fold_case gave invalid UTF-8");
  for (char c : once) {
    check(!(c >= 'A' && c <= 'Z'), "fold_case left an ASCII capital");
  }
  check(mime::fold_case(once) == once, "fold_case is not idempotent");
  // Character by character: cut anywhere but inside a character, the two
  // pieces fold to the whole's fold (ASCII runs and table lookups agree
  // with each other wherever a run starts or ends).
  if (valid_utf8(s) && !s.empty()) {
    std::size_t cut = static_cast<unsigned char>(s[0]) * s.size() / 256;
    while (cut < s.size() && (static_cast<unsigned char>(s[cut]) & 0xC0) == 0x80) {
      ++cut;
    }
    check(mime::fold_case(s.substr(0, cut)) + mime::fold_case(s.substr(cut)) == once,
          "fold_case of two pieces differs from the whole's");
  }
}

}  // namespace
}  // namespace peregrine

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace peregrine;
  if (size == 0) {
    return 0;
  }
  const std::string_view rest(reinterpret_cast<const char*>(data) + 1, size - 1);
  switch (data[0] % 4) {
    case 0:
      if (auto terms = store::maildir::unpack_terms(rest)) {
        check_terms(*terms);
      }
      break;
    case 1:
      if (auto terms = store::maildir::unpack_terms(zlib_packed(rest))) {
        check_terms(*terms);
      }
      break;
    case 3:
      if (auto terms = store::maildir::unpack_terms(zstd_packed(rest))) {
        check_terms(*terms);
      }
      break;
    default:
      check_text(rest);
      break;
  }
  check_fold(rest.substr(0, 4096));
  return 0;
}
