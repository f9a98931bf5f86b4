// libFuzzer target for the stored search text (the full-text index's
// search_docs.text, read back from disk): unpack_search_text
// (src/store/maildir/search_text_pack.cc) and mime::deserialize_search_text,
// plus mime::fold_case, which prepares every text and search string. Any
// broken invariant aborts, so the fuzzer saves the input. See README.md.
//
// The first byte picks what the rest is:
//   0: a packed text, as stored (format byte, maybe zlib);
//   1: serialized text bytes (mime::serialize_search_text), unpacked;
//   2: serialized text bytes, compressed here into a valid zlib packing, so
//      the decompression path sees well-formed streams too.
// Whatever the mode, the first 4 KiB of the rest also go through fold_case.

#include <zlib.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "mime/case_fold.h"
#include "mime/search_text.h"
#include "store/maildir/search_text_pack.h"

namespace peregrine {
namespace {

void check(bool ok, const char* what) {
  if (!ok) {
    std::fprintf(stderr, "search_text_fuzz: invariant broken: %s\n", what);
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

// A serialized text that deserializes must serialize to the same bytes, and
// survive a pack/unpack round trip.
void check_serialized(std::string_view bytes) {
  std::optional<mime::SearchText> text = mime::deserialize_search_text(bytes);
  if (!text) {
    return;
  }
  const std::string again = mime::serialize_search_text(*text);
  check(again == bytes, "deserialize accepted bytes that serialize differently");
  std::optional<std::string> round =
      store::maildir::unpack_search_text(store::maildir::pack_search_text(*text));
  check(round.has_value() && *round == again, "pack/unpack lost the text");
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

void check_fold(std::string_view s) {
  const std::string once = mime::fold_case(s);
  check(valid_utf8(once), "fold_case gave invalid UTF-8");
  for (char c : once) {
    check(!(c >= 'A' && c <= 'Z'), "fold_case left an ASCII capital");
  }
  check(mime::fold_case(once) == once, "fold_case is not idempotent");
}

}  // namespace
}  // namespace peregrine

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace peregrine;
  if (size == 0) {
    return 0;
  }
  const std::string_view rest(reinterpret_cast<const char*>(data) + 1, size - 1);
  switch (data[0] % 3) {
    case 0:
      if (std::optional<std::string> bytes = store::maildir::unpack_search_text(rest)) {
        check_serialized(*bytes);
      }
      break;
    case 1:
      check_serialized(rest);
      break;
    default: {
      std::optional<std::string> bytes = store::maildir::unpack_search_text(zlib_packed(rest));
      check(bytes.has_value() && *bytes == rest, "a valid zlib packing did not unpack");
      check_serialized(*bytes);
      break;
    }
  }
  check_fold(rest.substr(0, 4096));
  return 0;
}
