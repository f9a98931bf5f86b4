#include "store/maildir/search_text_pack.h"

#include <zlib.h>

#include <cstdint>

namespace peregrine::store::maildir {
namespace {

constexpr char kPackedRaw = 0;
constexpr char kPackedZlib = 1;
// Texts smaller than this are not worth compressing.
constexpr std::size_t kCompressFrom = 128;
// Deflate's best ratio: a stored byte never stands for more than this many.
constexpr std::size_t kMaxDeflateRatio = 1032;

}  // namespace

std::string pack_search_text(const mime::SearchText& folded) {
  std::string raw = mime::serialize_search_text(folded);
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

std::optional<std::string> unpack_search_text(std::string_view packed) {
  if (packed.empty()) {
    return std::nullopt;
  }
  if (packed[0] == kPackedRaw) {
    return std::string(packed.substr(1));
  }
  if (packed[0] != kPackedZlib || packed.size() < 5) {
    return std::nullopt;
  }
  std::uint32_t n = 0;
  for (int i = 0; i < 4; ++i) {
    n |= static_cast<std::uint32_t>(static_cast<unsigned char>(packed[1 + i])) << (8 * i);
  }
  // The body is bounded (mime::SearchTextLimits); anything far larger is
  // corrupt. So is a length deflate cannot reach from the bytes there are
  // (at most 1032:1), which a few corrupt bytes would otherwise turn into a
  // large allocation.
  const std::size_t stream = packed.size() - 5;
  if (n > 64u * 1024 * 1024 || n > stream * kMaxDeflateRatio + 64) {
    return std::nullopt;
  }
  std::string out(n, '\0');
  uLongf size = n;
  if (uncompress(reinterpret_cast<Bytef*>(out.data()), &size,
                 reinterpret_cast<const Bytef*>(packed.data() + 5), packed.size() - 5) != Z_OK ||
      size != n) {
    return std::nullopt;
  }
  return out;
}

}  // namespace peregrine::store::maildir
