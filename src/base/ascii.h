#pragma once

// ASCII-only character and string helpers. Mail protocols are case-insensitive
// in ASCII only (field names, keywords, charset names), so these never consult
// the locale and are safe on arbitrary 8-bit input.

#include <cstddef>
#include <string>
#include <string_view>

namespace peregrine::base {

constexpr char ascii_lower(char c) {
  return (c >= 'A' && c <= 'Z') ? static_cast<char>(c + 32) : c;
}
constexpr char ascii_upper(char c) {
  return (c >= 'a' && c <= 'z') ? static_cast<char>(c - 32) : c;
}
constexpr bool is_wsp(char c) { return c == ' ' || c == '\t'; }
constexpr bool is_digit(char c) { return c >= '0' && c <= '9'; }
constexpr bool is_alpha(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }

// Value of a hex digit (either case), or -1.
constexpr int hex_value(char c) {
  if (c >= '0' && c <= '9') {
    return c - '0';
  }
  const char l = ascii_lower(c);
  if (l >= 'a' && l <= 'f') {
    return l - 'a' + 10;
  }
  return -1;
}

// Value of a digit of a base64 alphabet: A-Z, a-z, 0-9, then `c62` and `c63`
// (RFC 4648 base64 has '+' and '/'; IMAP's modified UTF-7 has '+' and ',').
// -1 for any other byte, '=' included.
constexpr int base64_value(char c, char c62 = '+', char c63 = '/') {
  if (c >= 'A' && c <= 'Z') {
    return c - 'A';
  }
  if (c >= 'a' && c <= 'z') {
    return c - 'a' + 26;
  }
  if (c >= '0' && c <= '9') {
    return c - '0' + 52;
  }
  if (c == c62) {
    return 62;
  }
  if (c == c63) {
    return 63;
  }
  return -1;
}

bool iequals(std::string_view a, std::string_view b);
bool istarts_with(std::string_view s, std::string_view prefix);
// Case-insensitive three-way comparison in ASCII.
int icompare(std::string_view a, std::string_view b);
std::string to_lower(std::string_view s);
std::string to_upper(std::string_view s);
// Removes leading and trailing spaces, tabs, CR and LF.
std::string_view trim(std::string_view s);

}  // namespace peregrine::base
