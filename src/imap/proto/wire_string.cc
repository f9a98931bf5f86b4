#include "imap/proto/wire_string.h"

#include <charconv>

#include "base/ascii.h"
#include "imap/proto/chars.h"
#include "mime/imap_output.h"

namespace peregrine::imap {

void append_astring(std::string& out, std::string_view s) {
  bool atom = !s.empty() && !base::iequals(s, "NIL");
  for (size_t i = 0; atom && i < s.size(); ++i) {
    atom = is_astring_char(s[i]);
  }
  if (atom) {
    out.append(s);
  } else {
    mime::append_imap_string(out, s);
  }
}

void append_string(std::string& out, std::string_view s) { mime::append_imap_string(out, s); }

void append_nstring(std::string& out, const std::optional<std::string>& s) {
  if (s) {
    mime::append_imap_string(out, *s);
  } else {
    out += "NIL";
  }
}

void append_number(std::string& out, uint64_t n) {
  char buf[24];
  auto [end, ec] = std::to_chars(buf, buf + sizeof(buf), n);
  (void)ec;
  out.append(buf, end);
}

std::optional<uint64_t> parse_number(std::string_view digits, uint64_t max) {
  if (digits.empty()) {
    return std::nullopt;
  }
  uint64_t value = 0;
  for (char c : digits) {
    if (!base::is_digit(c)) {
      return std::nullopt;
    }
    const auto digit = static_cast<uint64_t>(c - '0');
    // value * 10 + digit <= max, checked without overflowing.
    if (digit > max || value > (max - digit) / 10) {
      return std::nullopt;
    }
    value = value * 10 + digit;
  }
  return value;
}

}  // namespace peregrine::imap
