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

}  // namespace peregrine::imap
