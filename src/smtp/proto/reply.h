#pragma once

// SMTP/LMTP replies (RFC 5321 §4.2) with enhanced status codes (RFC 2034,
// RFC 3463), written as bytes. Built with clang 14 for the fuzzer too.

#include <string>
#include <string_view>
#include <vector>

namespace peregrine::smtp {

struct Reply {
  int code = 0;          // 3 digits, 200..599
  std::string enhanced;  // "2.1.5"; empty for replies that carry none (220, 221 may)
  std::string text;      // one line, no CR or LF

  bool positive() const { return code >= 200 && code < 400; }
};

// "250 2.1.5 OK\r\n". CR and LF in the text are replaced by spaces, so a
// reply is always one line whatever the caller put in it.
std::string format_reply(const Reply& reply);

// A multi-line reply: "250-first\r\n250-...\r\n250 last\r\n" (RFC 5321
// §4.2.1). `lines` must not be empty; no enhanced codes (LHLO's reply).
std::string format_multiline(int code, const std::vector<std::string>& lines);

}  // namespace peregrine::smtp
