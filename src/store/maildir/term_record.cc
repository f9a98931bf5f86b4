#include "store/maildir/term_record.h"

#include <zlib.h>

#include <algorithm>
#include <functional>
#include <unordered_map>

#include "store/maildir/text_tokens.h"

namespace peregrine::store::maildir {
namespace {

constexpr char kPackedRaw = 0;
constexpr char kPackedZlib = 1;
// Records smaller than this are not worth compressing.
constexpr std::size_t kCompressFrom = 128;
// Deflate's best ratio: a stored byte never stands for more than this many.
constexpr std::size_t kMaxDeflateRatio = 1032;

void put_varint(std::string& out, std::uint64_t n) {
  while (n >= 0x80) {
    out.push_back(static_cast<char>((n & 0x7f) | 0x80));
    n >>= 7;
  }
  out.push_back(static_cast<char>(n));
}

// Reads a varint of at most 5 bytes (values below 2^35); false when
// truncated or longer.
bool get_varint(std::string_view& in, std::uint64_t& n) {
  n = 0;
  for (int shift = 0; shift < 35; shift += 7) {
    if (in.empty()) {
      return false;
    }
    const auto b = static_cast<unsigned char>(in.front());
    in.remove_prefix(1);
    n |= static_cast<std::uint64_t>(b & 0x7f) << shift;
    if ((b & 0x80) == 0) {
      return true;
    }
  }
  return false;
}

std::string encode_record(const std::vector<IndexedTerm>& terms) {
  std::string out;
  put_varint(out, terms.size());
  std::string_view prev;
  for (const IndexedTerm& t : terms) {
    std::size_t shared = 0;
    const std::size_t most = std::min(prev.size(), t.text.size());
    while (shared < most && prev[shared] == t.text[shared]) {
      ++shared;
    }
    put_varint(out, shared);
    put_varint(out, t.text.size() - shared);
    out.append(t.text, shared, std::string::npos);
    out.push_back(static_cast<char>(t.columns));
    prev = t.text;
  }
  return out;
}

bool valid_term_bytes(std::string_view s) {
  return std::all_of(s.begin(), s.end(), [](char c) {
    const auto b = static_cast<unsigned char>(c);
    return is_token_byte(b) && !(b >= 'A' && b <= 'Z');
  });
}

// Calls fn(term, columns) for each term of the record `in`, in order, with
// `term` rebuilt in `scratch`; stops when fn returns false. Returns
// kCorrupt as soon as the bytes break a rule (fn has then seen a prefix).
enum class Visit { kDone, kStopped, kCorrupt };

template <class Fn>
Visit visit_record(std::string_view in, std::string& scratch, Fn&& fn) {
  std::uint64_t count = 0;
  if (!get_varint(in, count)) {
    return Visit::kCorrupt;
  }
  // Every term takes at least 4 bytes: two varints, one new byte, a mask.
  if (count > in.size() / 4) {
    return Visit::kCorrupt;
  }
  scratch.clear();
  std::size_t total = 0;
  for (std::uint64_t i = 0; i < count; ++i) {
    std::uint64_t shared = 0;
    std::uint64_t fresh = 0;
    if (!get_varint(in, shared) || !get_varint(in, fresh)) {
      return Visit::kCorrupt;
    }
    if (shared > scratch.size() || fresh == 0 || fresh >= in.size() ||
        shared + fresh > kMaxTokenBytes) {
      return Visit::kCorrupt;
    }
    total += shared + fresh;
    if (total > kMaxTermBytesTotal) {
      return Visit::kCorrupt;
    }
    const std::string_view added = in.substr(0, fresh);
    if (!valid_term_bytes(added)) {
      return Visit::kCorrupt;
    }
    // Strictly ascending (no term twice, one encoding per record): the
    // shared part is the whole common prefix, and the first new byte sorts
    // after the previous term's byte there (if it has one).
    if (i > 0 && shared < scratch.size() &&
        static_cast<unsigned char>(added[0]) <= static_cast<unsigned char>(scratch[shared])) {
      return Visit::kCorrupt;
    }
    scratch.resize(shared);
    scratch.append(added);
    in.remove_prefix(fresh);
    const auto columns = static_cast<std::uint8_t>(in.front());
    in.remove_prefix(1);
    if (columns == 0 || columns >= (1u << kTermColumns)) {
      return Visit::kCorrupt;
    }
    if (!fn(std::string_view(scratch), columns)) {
      return Visit::kStopped;
    }
  }
  return in.empty() ? Visit::kDone : Visit::kCorrupt;
}

std::optional<std::vector<IndexedTerm>> decode_record(std::string_view in) {
  std::vector<IndexedTerm> out;
  std::string scratch;
  const Visit v = visit_record(in, scratch, [&](std::string_view term, std::uint8_t columns) {
    out.push_back(IndexedTerm{std::string(term), columns});
    return true;
  });
  if (v != Visit::kDone) {
    return std::nullopt;
  }
  return out;
}

// The record of `packed` (format byte, maybe zlib), in `buffer` when it had
// to be inflated; nullopt when corrupt.
std::optional<std::string_view> record_bytes(std::string_view packed, std::string& buffer);

}  // namespace

std::string_view term_column(const mime::SearchText& t, int n) {
  switch (n) {
    case 0:
      return t.from;
    case 1:
      return t.to;
    case 2:
      return t.cc;
    case 3:
      return t.bcc;
    case 4:
      return t.subject;
    case 5:
      return t.headers;
    default:
      return t.body;
  }
}

std::vector<IndexedTerm> index_terms(const mime::SearchText& folded) {
  std::unordered_map<std::string, std::uint8_t> seen;
  std::string scratch;
  for (int n = 0; n < kTermColumns; ++n) {
    std::string_view column = term_column(folded, n);
    std::string encoded;
    if (has_capitals(column)) {
      encoded = encode_capitals(column);
      column = encoded;
    }
    for_each_token(column, scratch, [&](std::string_view token) {
      auto it = seen.find(scratch);
      if (it == seen.end()) {
        seen.emplace(std::string(token), static_cast<std::uint8_t>(1u << n));
      } else {
        it->second |= static_cast<std::uint8_t>(1u << n);
      }
    });
  }
  std::vector<IndexedTerm> out;
  out.reserve(seen.size());
  for (auto& [text, columns] : seen) {
    out.push_back(IndexedTerm{text, columns});
  }
  std::sort(out.begin(), out.end(),
            [](const IndexedTerm& a, const IndexedTerm& b) { return a.text < b.text; });
  return out;
}

std::string pack_terms(const std::vector<IndexedTerm>& terms) {
  const std::string raw = encode_record(terms);
  std::string out;
  if (raw.size() >= kCompressFrom) {
    uLongf bound = compressBound(raw.size());
    out.resize(1 + 4 + bound);
    out[0] = kPackedZlib;
    auto n = static_cast<std::uint32_t>(raw.size());
    for (int i = 0; i < 4; ++i) {
      out[1 + i] = static_cast<char>((n >> (8 * i)) & 0xff);
    }
    uLongf written = bound;
    if (compress2(reinterpret_cast<Bytef*>(out.data() + 5), &written,
                  reinterpret_cast<const Bytef*>(raw.data()), raw.size(), 6) == Z_OK) {
      out.resize(5 + written);
      return out;
    }
  }
  out.assign(1, kPackedRaw);
  out += raw;
  return out;
}

namespace {

std::optional<std::string_view> record_bytes(std::string_view packed, std::string& buffer) {
  if (packed.empty()) {
    return std::nullopt;
  }
  if (packed[0] == kPackedRaw) {
    if (packed.size() - 1 > kMaxRecordBytes) {
      return std::nullopt;
    }
    return packed.substr(1);
  }
  if (packed[0] != kPackedZlib || packed.size() < 5) {
    return std::nullopt;
  }
  std::uint32_t n = 0;
  for (int i = 0; i < 4; ++i) {
    n |= static_cast<std::uint32_t>(static_cast<unsigned char>(packed[1 + i])) << (8 * i);
  }
  // A length deflate cannot reach from the bytes there are (at most
  // 1032:1) is corrupt, and refused before it becomes an allocation.
  const std::size_t stream = packed.size() - 5;
  if (n > kMaxRecordBytes || n > stream * kMaxDeflateRatio + 64) {
    return std::nullopt;
  }
  buffer.resize(n);
  uLongf size = n;
  if (uncompress(reinterpret_cast<Bytef*>(buffer.data()), &size,
                 reinterpret_cast<const Bytef*>(packed.data() + 5), stream) != Z_OK ||
      size != n) {
    return std::nullopt;
  }
  return std::string_view(buffer);
}

}  // namespace

std::optional<std::vector<IndexedTerm>> unpack_terms(std::string_view packed) {
  std::string buffer;
  auto raw = record_bytes(packed, buffer);
  if (!raw) {
    return std::nullopt;
  }
  return decode_record(*raw);
}

bool for_each_term(std::string_view packed, TermScratch& scratch,
                   const std::function<bool(std::string_view, std::uint8_t)>& fn) {
  auto raw = record_bytes(packed, scratch.inflated);
  return raw && visit_record(*raw, scratch.term, fn) != Visit::kCorrupt;
}

std::string column_terms(const std::vector<IndexedTerm>& terms, int n) {
  std::string out;
  const auto bit = static_cast<std::uint8_t>(1u << n);
  for (const IndexedTerm& t : terms) {
    if (t.columns & bit) {
      if (!out.empty()) {
        out += ' ';
      }
      out += t.text;
    }
  }
  return out;
}

}  // namespace peregrine::store::maildir
