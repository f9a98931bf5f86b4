#include "store/maildir/term_record.h"

#include <zlib.h>
#include <zstd.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <functional>

#include "store/maildir/term_set.h"
#include "store/maildir/text_tokens.h"

namespace peregrine::store::maildir {
namespace {

constexpr char kPackedRaw = 0;
constexpr char kPackedZlib = 1;  // written before; still read
constexpr char kPackedZstd = 2;
// Records smaller than this are not worth compressing.
constexpr std::size_t kCompressFrom = 128;
// Deflate's best ratio: a stored byte never stands for more than this many.
constexpr std::size_t kMaxDeflateRatio = 1032;
// Zstandard's: a block of 128 KiB from a 3-byte header and one byte.
constexpr std::size_t kMaxZstdRatio = 32768;
// Zstandard level 1. On the records of the benchmark's mail against
// deflate level 1 (what format 1 used): 2.6% more bytes, packed 3.3 times
// as fast and unpacked 2.6 times (docs/benchmarks.md, "Term records
// compressed with Zstandard").
constexpr int kZstdLevel = 1;
// Matches of at least 7 bytes (level 1's own minimum is shorter): a
// record is mostly literals (term suffixes) that the entropy coder packs,
// and shorter matches cost more to find than they save. Records packed
// 20-25% faster, 0.5% larger (docs/benchmarks.md, "Less decoding in the
// batch"). The frames are Zstandard's own: any decoder reads them.
constexpr int kZstdMinMatch = 7;

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

namespace {

// What a byte is to the tokenizer: 0 a separator, kToken a token byte,
// with kCapital for an ASCII capital and kMayStartCjk for the lead bytes
// of CJK characters (text_tokens.h).
constexpr std::uint8_t kToken = 1;
constexpr std::uint8_t kCapital = 2;
constexpr std::uint8_t kMayStartCjk = 4;
constexpr std::array<std::uint8_t, 256> kByteKinds = [] {
  std::array<std::uint8_t, 256> kinds{};
  for (int b = 0; b < 256; ++b) {
    if (is_token_byte(static_cast<unsigned char>(b))) {
      kinds[b] = kToken;
    }
    if (b >= 'A' && b <= 'Z') {
      kinds[b] |= kCapital;
    }
    if (may_start_cjk(static_cast<unsigned char>(b))) {
      kinds[b] |= kMayStartCjk;
    }
  }
  return kinds;
}();

// Calls fn(term) for every term of `text` as the word index sees it after
// encode_capitals (text_tokens.h: an ASCII capital written as 0xFF and its
// lower-case letter). A run of token bytes without capitals or CJK is
// passed as it lies in the text; others are built in `scratch` or split.
template <class Fn>
void for_each_encoded_token(std::string_view text, std::string& scratch, Fn&& fn) {
  const std::size_t n = text.size();
  const auto* bytes = reinterpret_cast<const unsigned char*>(text.data());
  std::size_t i = 0;
  while (i < n) {
    while (i < n && kByteKinds[bytes[i]] == 0) {
      ++i;
    }
    const std::size_t start = i;
    std::uint8_t kinds = 0;
    while (i < n && kByteKinds[bytes[i]] != 0) {
      kinds |= kByteKinds[bytes[i]];
      ++i;
    }
    if (i == start) {
      break;
    }
    std::string_view run = text.substr(start, i - start);
    if ((kinds & kCapital) != 0) {
      // The encoding is never cut: for_each_run_term cuts the terms.
      scratch.clear();
      for (const char c : run) {
        if (c >= 'A' && c <= 'Z') {
          scratch += '\xff';
          scratch += static_cast<char>(c - 'A' + 'a');
        } else {
          scratch += c;
        }
      }
      run = scratch;
    }
    if ((kinds & kMayStartCjk) == 0) {
      fn(run.substr(0, kMaxTokenBytes));
    } else {
      for_each_run_term(run, fn);
    }
  }
}

}  // namespace

std::vector<IndexedTerm> index_terms(const mime::SearchText& folded) {
  std::size_t bytes = 0;
  for (int n = 0; n < kTermColumns; ++n) {
    bytes += term_column(folded, n).size();
  }
  TermSet set(bytes);
  std::string scratch;
  for (int n = 0; n < kTermColumns; ++n) {
    const auto bit = static_cast<std::uint8_t>(1u << n);
    for_each_encoded_token(term_column(folded, n), scratch,
                           [&](std::string_view token) { set.add(token, bit); });
  }
  return set.sorted();
}

namespace {

// Zstandard's contexts, kept per thread: setting one up (and tearing it
// down) for each record would cost more than compressing a record of 2 KB.
struct ZstdContexts {
  ZSTD_CCtx* compress = ZSTD_createCCtx();
  ZSTD_DCtx* decompress = ZSTD_createDCtx();
  ZstdContexts() {
    // Kept by every frame ZSTD_compress2 makes with this context. Should
    // the minimum match be refused, the level's own is used.
    if (compress != nullptr) {
      ZSTD_CCtx_setParameter(compress, ZSTD_c_compressionLevel, kZstdLevel);
      ZSTD_CCtx_setParameter(compress, ZSTD_c_minMatch, kZstdMinMatch);
    }
  }
  ~ZstdContexts() {
    ZSTD_freeCCtx(compress);
    ZSTD_freeDCtx(decompress);
  }
  ZstdContexts(const ZstdContexts&) = delete;
  ZstdContexts& operator=(const ZstdContexts&) = delete;
};

ZstdContexts& zstd_contexts() {
  thread_local ZstdContexts contexts;
  return contexts;
}

}  // namespace

std::string pack_terms(const std::vector<IndexedTerm>& terms) {
  const std::string raw = encode_record(terms);
  std::string out;
  ZSTD_CCtx* cctx = zstd_contexts().compress;
  if (raw.size() >= kCompressFrom && raw.size() <= 0xffffffffu && cctx != nullptr) {
    out.resize(5 + ZSTD_compressBound(raw.size()));
    out[0] = kPackedZstd;
    const auto n = static_cast<std::uint32_t>(raw.size());
    for (int i = 0; i < 4; ++i) {
      out[1 + i] = static_cast<char>((n >> (8 * i)) & 0xff);
    }
    const std::size_t written =
        ZSTD_compress2(cctx, out.data() + 5, out.size() - 5, raw.data(), raw.size());
    if (!ZSTD_isError(written)) {
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
  if ((packed[0] != kPackedZlib && packed[0] != kPackedZstd) || packed.size() < 5) {
    return std::nullopt;
  }
  std::uint32_t n = 0;
  for (int i = 0; i < 4; ++i) {
    n |= static_cast<std::uint32_t>(static_cast<unsigned char>(packed[1 + i])) << (8 * i);
  }
  // A length the compressor cannot reach from the bytes there are is
  // corrupt, and refused before it becomes an allocation.
  const std::size_t stream = packed.size() - 5;
  const std::size_t ratio = packed[0] == kPackedZstd ? kMaxZstdRatio : kMaxDeflateRatio;
  if (n > kMaxRecordBytes || n > stream * ratio + 64) {
    return std::nullopt;
  }
  if (packed[0] == kPackedZstd) {
    ZSTD_DCtx* dctx = zstd_contexts().decompress;
    if (dctx == nullptr) {
      return std::nullopt;
    }
    buffer.resize(n);
    const std::size_t size = ZSTD_decompressDCtx(dctx, buffer.data(), n, packed.data() + 5, stream);
    if (ZSTD_isError(size) || size != n) {
      return std::nullopt;
    }
    return std::string_view(buffer);
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
