#include "mime/transfer.h"

#include <array>
#include <cstdint>
#include <cstring>

#include "base/ascii.h"

namespace peregrine::mime {

namespace {

constexpr uint8_t kNotBase64 = 0xff;
constexpr uint8_t kPad = 0xfe;

constexpr std::array<uint8_t, 256> make_base64_table() {
  std::array<uint8_t, 256> table{};
  for (size_t i = 0; i < table.size(); ++i) {
    const int v = base::base64_value(static_cast<char>(i));
    table[i] = v < 0 ? kNotBase64 : static_cast<uint8_t>(v);
  }
  table['='] = kPad;
  return table;
}

constexpr std::array<uint8_t, 256> kBase64 = make_base64_table();

}  // namespace

Encoding parse_encoding(std::string_view value) {
  value = base::trim(value);
  // Tolerate a trailing comment or parameter ("base64 (foo)", "7bit; x").
  for (size_t i = 0; i < value.size(); ++i) {
    char c = value[i];
    if (c == '(' || c == ';' || base::is_wsp(c)) {
      value = value.substr(0, i);
      break;
    }
  }
  if (value.empty() || base::iequals(value, "7bit")) {
    return Encoding::k7Bit;
  }
  if (base::iequals(value, "8bit")) {
    return Encoding::k8Bit;
  }
  if (base::iequals(value, "binary")) {
    return Encoding::kBinary;
  }
  if (base::iequals(value, "base64")) {
    return Encoding::kBase64;
  }
  if (base::iequals(value, "quoted-printable")) {
    return Encoding::kQuotedPrintable;
  }
  return Encoding::kUnknown;
}

std::string decode_base64(std::string_view in) {
  std::string out;
  out.resize(in.size() / 4 * 3 + 3);
  char* dst = out.data();
  uint32_t group = 0;
  int count = 0;
  const auto* p = reinterpret_cast<const unsigned char*>(in.data());
  const auto* end = p + in.size();
  // Fast path: whole groups of four alphabet characters (the usual 76-column
  // lines), then one byte at a time around line ends and junk.
  while (p < end) {
    if (count == 0) {
      while (end - p >= 4) {
        uint8_t a = kBase64[p[0]];
        uint8_t b = kBase64[p[1]];
        uint8_t c = kBase64[p[2]];
        uint8_t d = kBase64[p[3]];
        if ((a | b | c | d) >= 64) {
          break;
        }
        uint32_t v = (uint32_t{a} << 18) | (uint32_t{b} << 12) | (uint32_t{c} << 6) | d;
        dst[0] = static_cast<char>(v >> 16);
        dst[1] = static_cast<char>(v >> 8);
        dst[2] = static_cast<char>(v);
        dst += 3;
        p += 4;
      }
      if (p == end) {
        break;
      }
    }
    uint8_t v = kBase64[*p++];
    if (v == kPad) {
      break;
    }
    if (v == kNotBase64) {
      continue;
    }
    group = (group << 6) | v;
    if (++count == 4) {
      dst[0] = static_cast<char>(group >> 16);
      dst[1] = static_cast<char>(group >> 8);
      dst[2] = static_cast<char>(group);
      dst += 3;
      group = 0;
      count = 0;
    }
  }
  // A partial group of two or three characters still carries one or two
  // whole bytes (padding missing or cut at '='); a single character does not.
  if (count == 2) {
    *dst++ = static_cast<char>(group >> 4);
  } else if (count == 3) {
    *dst++ = static_cast<char>(group >> 10);
    *dst++ = static_cast<char>(group >> 2);
  }
  out.resize(static_cast<size_t>(dst - out.data()));
  return out;
}

std::string decode_quoted_printable(std::string_view in) {
  std::string out;
  out.reserve(in.size());
  // Output up to here is never trimmed as trailing whitespace: it holds
  // decoded "=20"/"=09" or an earlier line.
  size_t keep = 0;
  auto trim_trailing_wsp = [&out, &keep] {
    while (out.size() > keep && base::is_wsp(out.back())) {
      out.pop_back();
    }
  };
  size_t i = 0;
  const size_t n = in.size();
  while (i < n) {
    // Copy the run of ordinary characters in one go.
    size_t run = i;
    while (run < n && in[run] != '=' && in[run] != '\n') {
      ++run;
    }
    out.append(in.data() + i, run - i);
    i = run;
    if (i == n) {
      break;
    }
    if (in[i] == '\n') {
      bool cr = out.size() > keep && out.back() == '\r';
      if (cr) {
        out.pop_back();
      }
      trim_trailing_wsp();
      out.append(cr ? "\r\n" : "\n");
      keep = out.size();
      ++i;
      continue;
    }
    // in[i] == '='
    if (i + 2 < n && base::hex_value(in[i + 1]) >= 0 && base::hex_value(in[i + 2]) >= 0) {
      out.push_back(
          static_cast<char>(base::hex_value(in[i + 1]) * 16 + base::hex_value(in[i + 2])));
      keep = out.size();
      i += 3;
      continue;
    }
    // Soft line break: '=' then optional whitespace (added in transport) and
    // a line end, or the end of the data. Whitespace before the '=' is data:
    // encoders put the '=' there so that it is not at the end of the line
    // (RFC 2045 §6.7 rule 3: "an "=" at the end of an encoded line ... may
    // follow one or more TAB (HT) or SPACE characters").
    size_t j = i + 1;
    while (j < n && base::is_wsp(in[j])) {
      ++j;
    }
    if (j == n) {
      keep = out.size();
      i = n;
      break;
    }
    if (in[j] == '\n') {
      keep = out.size();
      i = j + 1;
      continue;
    }
    if (in[j] == '\r' && (j + 1 == n || in[j + 1] == '\n')) {
      keep = out.size();
      i = j + 1 < n ? j + 2 : n;
      continue;
    }
    // Malformed '=': kept as is.
    out.push_back('=');
    keep = out.size();
    ++i;
  }
  trim_trailing_wsp();
  return out;
}

std::string decode_body(std::string_view body, Encoding encoding) {
  switch (encoding) {
    case Encoding::kBase64:
      return decode_base64(body);
    case Encoding::kQuotedPrintable:
      return decode_quoted_printable(body);
    default:
      return std::string(body);
  }
}

}  // namespace peregrine::mime
