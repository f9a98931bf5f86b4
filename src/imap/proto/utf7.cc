#include "imap/proto/utf7.h"

#include <cstdint>

#include "base/ascii.h"

namespace peregrine::imap {
namespace {

constexpr char kAlphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+,";

bool is_printable(uint32_t c) { return c >= 0x20 && c <= 0x7e; }

void append_utf8(std::string& out, uint32_t cp) {
  if (cp < 0x80) {
    out.push_back(static_cast<char>(cp));
  } else if (cp < 0x800) {
    out.push_back(static_cast<char>(0xc0 | (cp >> 6)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3f)));
  } else if (cp < 0x10000) {
    out.push_back(static_cast<char>(0xe0 | (cp >> 12)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3f)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3f)));
  } else {
    out.push_back(static_cast<char>(0xf0 | (cp >> 18)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3f)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3f)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3f)));
  }
}

// Decodes one base64 run (between "&" and "-") into `out`.
bool decode_run(std::string_view run, std::string& out) {
  uint32_t bits = 0;
  int nbits = 0;
  uint32_t high = 0;  // a pending high surrogate
  for (char c : run) {
    int v = base::base64_value(c, '+', ',');
    if (v < 0) {
      return false;
    }
    bits = (bits << 6) | static_cast<uint32_t>(v);
    nbits += 6;
    if (nbits < 16) {
      continue;
    }
    nbits -= 16;
    uint32_t unit = (bits >> nbits) & 0xffff;
    bits &= (1u << nbits) - 1;
    if (high != 0) {
      if (unit < 0xdc00 || unit > 0xdfff) {
        return false;
      }
      append_utf8(out, 0x10000 + ((high - 0xd800) << 10) + (unit - 0xdc00));
      high = 0;
    } else if (unit >= 0xd800 && unit <= 0xdbff) {
      high = unit;
    } else if ((unit >= 0xdc00 && unit <= 0xdfff) || is_printable(unit)) {
      return false;
    } else {
      append_utf8(out, unit);
    }
  }
  // Leftover bits are padding: fewer than 6 of a partial unit... and zero.
  return high == 0 && nbits < 6 && bits == 0 && !run.empty();
}

// Reads one UTF-8 code point at s[i]; returns its length, 0 if invalid.
size_t read_utf8(std::string_view s, size_t i, uint32_t& cp) {
  auto b = [&](size_t k) { return static_cast<unsigned char>(s[i + k]); };
  unsigned char c = b(0);
  size_t len = 0;
  uint32_t min = 0;
  if (c < 0x80) {
    cp = c;
    return 1;
  }
  if ((c & 0xe0) == 0xc0) {
    len = 2;
    cp = c & 0x1f;
    min = 0x80;
  } else if ((c & 0xf0) == 0xe0) {
    len = 3;
    cp = c & 0x0f;
    min = 0x800;
  } else if ((c & 0xf8) == 0xf0) {
    len = 4;
    cp = c & 0x07;
    min = 0x10000;
  } else {
    return 0;
  }
  if (i + len > s.size()) {
    return 0;
  }
  for (size_t k = 1; k < len; ++k) {
    if ((b(k) & 0xc0) != 0x80) {
      return 0;
    }
    cp = (cp << 6) | (b(k) & 0x3f);
  }
  if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) {
    return 0;
  }
  return len;
}

void flush_units(std::string& out, const std::u16string& units) {
  uint32_t bits = 0;
  int nbits = 0;
  out.push_back('&');
  for (char16_t u : units) {
    bits = (bits << 16) | u;
    nbits += 16;
    while (nbits >= 6) {
      nbits -= 6;
      out.push_back(kAlphabet[(bits >> nbits) & 0x3f]);
    }
    bits &= (1u << nbits) - 1;
  }
  if (nbits > 0) {
    out.push_back(kAlphabet[(bits << (6 - nbits)) & 0x3f]);
  }
  out.push_back('-');
}

}  // namespace

Parsed<std::string> decode_mutf7(std::string_view name) {
  std::string out;
  out.reserve(name.size());
  for (size_t i = 0; i < name.size(); ++i) {
    char c = name[i];
    if (!is_printable(static_cast<unsigned char>(c))) {
      return parse_error("invalid modified UTF-7 mailbox name " + excerpt(name));
    }
    if (c != '&') {
      out.push_back(c);
      continue;
    }
    size_t end = name.find('-', i + 1);
    if (end == std::string_view::npos) {
      return parse_error("invalid modified UTF-7 mailbox name " + excerpt(name));
    }
    if (end == i + 1) {
      out.push_back('&');
    } else if (!decode_run(name.substr(i + 1, end - i - 1), out)) {
      return parse_error("invalid modified UTF-7 mailbox name " + excerpt(name));
    }
    i = end;
  }
  return out;
}

Parsed<std::string> encode_mutf7(std::string_view utf8) {
  std::string out;
  out.reserve(utf8.size());
  std::u16string units;
  for (size_t i = 0; i < utf8.size();) {
    uint32_t cp = 0;
    size_t len = read_utf8(utf8, i, cp);
    if (len == 0) {
      return parse_error("invalid UTF-8 in mailbox name " + excerpt(utf8));
    }
    i += len;
    if (is_printable(cp)) {
      if (!units.empty()) {
        flush_units(out, units);
        units.clear();
      }
      out += cp == '&' ? std::string_view("&-") : std::string_view(&utf8[i - 1], 1);
      continue;
    }
    if (cp >= 0x10000) {
      cp -= 0x10000;
      units.push_back(static_cast<char16_t>(0xd800 + (cp >> 10)));
      units.push_back(static_cast<char16_t>(0xdc00 + (cp & 0x3ff)));
    } else {
      units.push_back(static_cast<char16_t>(cp));
    }
  }
  if (!units.empty()) {
    flush_units(out, units);
  }
  return out;
}

bool is_valid_mutf7(std::string_view name) { return decode_mutf7(name).ok(); }

bool is_inbox(std::string_view name) { return base::iequals(name, "INBOX"); }

std::string normalize_inbox(std::string name) {
  if (is_inbox(name)) {
    name = "INBOX";
  }
  return name;
}

}  // namespace peregrine::imap
