#include "mime/charset.h"

#include <unicode/ucnv.h>
#include <unicode/ucnv_cb.h>

#include <array>
#include <cstdint>
#include <cstring>
#include <memory>
#include <vector>

#include "base/ascii.h"

namespace peregrine::mime {

namespace {

// Longer names are not charsets; they would only grow the cache.
constexpr size_t kMaxCharsetName = 40;
// Converters kept per thread (known and unknown names alike).
constexpr size_t kMaxCachedConverters = 32;

// Windows-1252 bytes 0x80..0x9F. The five bytes it leaves undefined map to
// the C1 control of the same value, as the WHATWG Encoding Standard does.
constexpr std::array<uint16_t, 32> kCp1252High = {
    0x20AC, 0x0081, 0x201A, 0x0192, 0x201E, 0x2026, 0x2020, 0x2021, 0x02C6, 0x2030, 0x0160,
    0x2039, 0x0152, 0x008D, 0x017D, 0x008F, 0x0090, 0x2018, 0x2019, 0x201C, 0x201D, 0x2022,
    0x2013, 0x2014, 0x02DC, 0x2122, 0x0161, 0x203A, 0x0153, 0x009D, 0x017E, 0x0178};

void append_utf8(uint32_t cp, std::string& out) {
  if (cp < 0x80) {
    out.push_back(static_cast<char>(cp));
  } else if (cp < 0x800) {
    out.push_back(static_cast<char>(0xC0 | (cp >> 6)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else {
    out.push_back(static_cast<char>(0xE0 | (cp >> 12)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  }
}

std::string cp1252_to_utf8(std::string_view bytes) {
  std::string out;
  out.reserve(bytes.size() + bytes.size() / 2);
  for (char c : bytes) {
    const auto u = static_cast<unsigned char>(c);
    if (u < 0x80) {
      out.push_back(c);
    } else if (u < 0xA0) {
      append_utf8(kCp1252High[u - 0x80], out);
    } else {
      append_utf8(u, out);
    }
  }
  return out;
}

// Length of the well-formed UTF-8 sequence at `s[i]`, or 0 when there is none;
// then `*bad` is the length of the maximal ill-formed prefix (at least 1), the
// span one U+FFFD replaces (Unicode §3.9, "maximal subpart").
size_t utf8_sequence(std::string_view s, size_t i, size_t* bad) {
  const auto b0 = static_cast<unsigned char>(s[i]);
  *bad = 1;
  if (b0 < 0x80) {
    return 1;
  }
  size_t len = 0;
  unsigned char lo = 0x80;
  unsigned char hi = 0xBF;
  if (b0 >= 0xC2 && b0 <= 0xDF) {
    len = 2;
  } else if (b0 >= 0xE0 && b0 <= 0xEF) {
    len = 3;
    lo = b0 == 0xE0 ? 0xA0 : 0x80;
    hi = b0 == 0xED ? 0x9F : 0xBF;
  } else if (b0 >= 0xF0 && b0 <= 0xF4) {
    len = 4;
    lo = b0 == 0xF0 ? 0x90 : 0x80;
    hi = b0 == 0xF4 ? 0x8F : 0xBF;
  } else {
    return 0;
  }
  for (size_t k = 1; k < len; ++k) {
    if (i + k >= s.size()) {
      *bad = k;
      return 0;
    }
    const auto b = static_cast<unsigned char>(s[i + k]);
    const unsigned char min = k == 1 ? lo : 0x80;
    const unsigned char max = k == 1 ? hi : 0xBF;
    if (b < min || b > max) {
      *bad = k;
      return 0;
    }
  }
  return len;
}

// `bytes` as UTF-8 with every ill-formed sequence replaced by U+FFFD.
std::string repair_utf8(std::string_view bytes) {
  std::string out;
  out.reserve(bytes.size());
  size_t i = 0;
  while (i < bytes.size()) {
    size_t bad = 0;
    const size_t len = utf8_sequence(bytes, i, &bad);
    if (len > 0) {
      out.append(bytes.substr(i, len));
      i += len;
    } else {
      out.append("\xEF\xBF\xBD");
      i += bad;
    }
  }
  return out;
}

// Charset names compared the way ICU does: case and punctuation ignored.
std::string normalize_name(std::string_view name) {
  std::string key;
  key.reserve(name.size());
  for (char c : name) {
    if (base::is_alpha(c) || base::is_digit(c)) {
      key.push_back(base::ascii_lower(c));
    }
  }
  return key;
}

enum class Kind : uint8_t {
  kUtf8,    // validated, ill-formed bytes become U+FFFD
  kAscii,   // mislabelled 8-bit text is common: read as ensure_utf8() does
  kCp1252,  // our own table, no ICU
  kIcu,
  kUnknown,
};

struct Alias {
  const char* key;  // normalized
  Kind kind;
  const char* icu_name;
};

// Names real mail carries that ICU does not know, or knows as something
// narrower than what the senders meant (WHATWG Encoding Standard choices).
constexpr Alias kAliases[] = {
    {"utf8", Kind::kUtf8, nullptr},
    {"unicode11utf8", Kind::kUtf8, nullptr},
    {"xunicode20utf8", Kind::kUtf8, nullptr},
    {"usascii", Kind::kAscii, nullptr},
    {"ascii", Kind::kAscii, nullptr},
    {"us", Kind::kAscii, nullptr},
    {"ansix341968", Kind::kAscii, nullptr},
    {"iso646us", Kind::kAscii, nullptr},
    {"7bit", Kind::kAscii, nullptr},
    {"windows1252", Kind::kCp1252, nullptr},
    {"cp1252", Kind::kCp1252, nullptr},
    {"xcp1252", Kind::kCp1252, nullptr},
    {"win1252", Kind::kCp1252, nullptr},
    {"iso88591", Kind::kCp1252, nullptr},
    {"iso885911987", Kind::kCp1252, nullptr},
    {"latin1", Kind::kCp1252, nullptr},
    {"l1", Kind::kCp1252, nullptr},
    {"cp819", Kind::kCp1252, nullptr},
    {"ibm819", Kind::kCp1252, nullptr},
    {"isoir100", Kind::kCp1252, nullptr},
    {"88591", Kind::kCp1252, nullptr},
    {"xunknown", Kind::kCp1252, nullptr},
    {"unknown", Kind::kCp1252, nullptr},
    {"unknown8bit", Kind::kCp1252, nullptr},
    {"xuserdefined", Kind::kCp1252, nullptr},
    {"default", Kind::kCp1252, nullptr},
    {"8bit", Kind::kCp1252, nullptr},
    {"ansi", Kind::kCp1252, nullptr},
    {"gb2312", Kind::kIcu, "GBK"},
    {"gb231280", Kind::kIcu, "GBK"},
    {"xgbk", Kind::kIcu, "GBK"},
    {"cngb", Kind::kIcu, "GBK"},
    {"euccn", Kind::kIcu, "GBK"},
    {"xeuccn", Kind::kIcu, "GBK"},
    {"ksc56011987", Kind::kIcu, "windows-949"},
    {"ksc5601", Kind::kIcu, "windows-949"},
    {"ksc56011989", Kind::kIcu, "windows-949"},
    {"euckr", Kind::kIcu, "windows-949"},
    {"xeuckr", Kind::kIcu, "windows-949"},
    {"iso88598i", Kind::kIcu, "ISO-8859-8"},
    {"iso88596i", Kind::kIcu, "ISO-8859-6"},
    {"iso88596e", Kind::kIcu, "ISO-8859-6"},
    {"iso88598e", Kind::kIcu, "ISO-8859-8"},
    {"sjis", Kind::kIcu, "windows-31j"},
    {"xsjis", Kind::kIcu, "windows-31j"},
    {"shiftjis", Kind::kIcu, "windows-31j"},
    {"msshiftjis", Kind::kIcu, "windows-31j"},
    {"big5", Kind::kIcu, "windows-950"},
    {"xxbig5", Kind::kIcu, "windows-950"},
    {"xmacroman", Kind::kIcu, "macintosh"},
    {"macroman", Kind::kIcu, "macintosh"},
    {"iso88599", Kind::kIcu, "windows-1254"},
    {"latin5", Kind::kIcu, "windows-1254"},
    {"tis620", Kind::kIcu, "windows-874"},
    {"iso885911", Kind::kIcu, "windows-874"},
    {"xmaccyrillic", Kind::kIcu, "x-mac-cyrillic"},
};

struct ConverterCloser {
  void operator()(UConverter* converter) const { ucnv_close(converter); }
};
using ConverterPtr = std::unique_ptr<UConverter, ConverterCloser>;

// Every unmappable, illegal or truncated sequence becomes U+FFFD (ICU's
// default substitutes U+001A for some charsets).
void substitute_fffd(const void* /*context*/, UConverterToUnicodeArgs* args, const char* /*units*/,
                     int32_t /*length*/, UConverterCallbackReason reason, UErrorCode* err) {
  if (reason > UCNV_IRREGULAR) {
    return;  // reset, close or clone: nothing to write
  }
  static constexpr UChar kReplacement = 0xFFFD;
  *err = U_ZERO_ERROR;
  ucnv_cbToUWriteUChars(args, &kReplacement, 1, 0, err);
}

struct Resolved {
  Kind kind = Kind::kUnknown;
  UConverter* converter = nullptr;  // kIcu only; owned by the cache
};

// Per-thread converters: UConverter is stateful and not thread-safe, and
// opening one costs far more than a conversion of a header.
class ConverterCache {
 public:
  Resolved resolve(std::string_view charset) {
    std::string_view name = base::trim(charset);
    if (name.size() >= 2 && name.front() == '"' && name.back() == '"') {
      name = base::trim(name.substr(1, name.size() - 2));
    }
    if (name.empty() || name.size() > kMaxCharsetName) {
      return {};
    }
    for (char c : name) {
      if (!base::is_alpha(c) && !base::is_digit(c) && std::strchr("-_.:+ ", c) == nullptr) {
        return {};
      }
    }
    const std::string key = normalize_name(name);
    if (key.empty()) {
      return {};
    }
    for (const Alias& alias : kAliases) {
      if (key == alias.key && alias.kind != Kind::kIcu) {
        return Resolved{alias.kind, nullptr};
      }
    }
    for (Entry& entry : entries_) {
      if (entry.key == key) {
        return Resolved{entry.converter ? Kind::kIcu : Kind::kUnknown, entry.converter.get()};
      }
    }
    std::string icu_name(name);
    for (const Alias& alias : kAliases) {
      if (key == alias.key) {
        icu_name = alias.icu_name;
        break;
      }
    }
    UErrorCode err = U_ZERO_ERROR;
    ConverterPtr converter(ucnv_open(icu_name.c_str(), &err));
    if (U_FAILURE(err)) {
      converter.reset();
    } else {
      ucnv_setToUCallBack(converter.get(), substitute_fffd, nullptr, nullptr, nullptr, &err);
    }
    if (entries_.size() >= kMaxCachedConverters) {
      entries_.erase(entries_.begin());
    }
    entries_.push_back(Entry{key, std::move(converter)});
    UConverter* raw = entries_.back().converter.get();
    return Resolved{raw ? Kind::kIcu : Kind::kUnknown, raw};
  }

  // The UTF-8 converter ucnv_convertEx writes through.
  UConverter* utf8() {
    if (!utf8_) {
      UErrorCode err = U_ZERO_ERROR;
      utf8_.reset(ucnv_open("UTF-8", &err));
      if (U_FAILURE(err)) {
        utf8_.reset();
      }
    }
    return utf8_.get();
  }

 private:
  struct Entry {
    std::string key;
    ConverterPtr converter;  // null: ICU does not know the name
  };
  std::vector<Entry> entries_;
  ConverterPtr utf8_;
};

ConverterCache& cache() {
  thread_local ConverterCache instance;
  return instance;
}

std::optional<std::string> icu_to_utf8(std::string_view bytes, UConverter* source) {
  UConverter* target_converter = cache().utf8();
  if (target_converter == nullptr) {
    return std::nullopt;
  }
  std::string out;
  // One input byte gives at most three UTF-8 bytes for nearly every charset;
  // the loop grows the buffer for the rest (UTF-7, ISO-2022 escapes...).
  out.resize(bytes.size() * 3 + 16);
  std::array<UChar, 1024> pivot;
  UChar* pivot_source = pivot.data();
  UChar* pivot_target = pivot.data();
  const char* src = bytes.data();
  const char* src_end = bytes.data() + bytes.size();
  char* target = out.data();
  UBool reset = true;
  for (;;) {
    UErrorCode err = U_ZERO_ERROR;
    ucnv_convertEx(target_converter, source, &target, out.data() + out.size(), &src, src_end,
                   pivot.data(), &pivot_source, &pivot_target, pivot.data() + pivot.size(), reset,
                   true, &err);
    reset = false;
    if (err == U_BUFFER_OVERFLOW_ERROR) {
      const size_t written = static_cast<size_t>(target - out.data());
      out.resize(out.size() * 2);
      target = out.data() + written;
      continue;
    }
    if (U_FAILURE(err)) {
      // Only on internal errors: the substitute callbacks absorb bad input.
      ucnv_reset(source);
      ucnv_reset(target_converter);
      return repair_utf8(bytes);
    }
    break;
  }
  out.resize(static_cast<size_t>(target - out.data()));
  return out;
}

}  // namespace

bool is_valid_utf8(std::string_view bytes) {
  size_t i = 0;
  const size_t n = bytes.size();
  while (i < n) {
    // Skip ASCII eight bytes at a time.
    while (i + 8 <= n) {
      uint64_t word;
      std::memcpy(&word, bytes.data() + i, 8);
      if ((word & 0x8080808080808080ULL) != 0) {
        break;
      }
      i += 8;
    }
    if (i >= n) {
      break;
    }
    if (static_cast<unsigned char>(bytes[i]) < 0x80) {
      ++i;
      continue;
    }
    size_t bad = 0;
    const size_t len = utf8_sequence(bytes, i, &bad);
    if (len == 0) {
      return false;
    }
    i += len;
  }
  return true;
}

std::string ensure_utf8(std::string_view bytes) {
  if (is_valid_utf8(bytes)) {
    return std::string(bytes);
  }
  return cp1252_to_utf8(bytes);
}

std::optional<std::string> convert_to_utf8(std::string_view bytes, std::string_view charset) {
  const Resolved resolved = cache().resolve(charset);
  switch (resolved.kind) {
    case Kind::kUtf8:
      return is_valid_utf8(bytes) ? std::string(bytes) : repair_utf8(bytes);
    case Kind::kAscii:
      return ensure_utf8(bytes);
    case Kind::kCp1252:
      return cp1252_to_utf8(bytes);
    case Kind::kIcu:
      return icu_to_utf8(bytes, resolved.converter);
    case Kind::kUnknown:
      break;
  }
  return std::nullopt;
}

bool is_known_charset(std::string_view charset) {
  return cache().resolve(charset).kind != Kind::kUnknown;
}

}  // namespace peregrine::mime
