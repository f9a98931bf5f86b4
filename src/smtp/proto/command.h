#pragma once

// The SMTP/LMTP command grammar (RFC 5321 §4.1, RFC 2033 §4): one command
// line, without its CRLF, into a typed Command, or the reply that refuses it.
// No I/O, no state: what a command may do in the session's current state is
// the session's business.
//
// Built with clang 14 for the fuzzer too: nothing here uses std::expected.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "smtp/proto/reply.h"

namespace peregrine::smtp {

enum class Verb {
  kLhlo,  // LMTP's greeting (RFC 2033 §4.1)
  kHelo,  // SMTP's greetings: refused by an LMTP server (RFC 2033 §4.1)
  kEhlo,
  kMail,
  kRcpt,
  kData,
  kRset,
  kNoop,
  kQuit,
  kVrfy,
  kHelp,
};

// BODY= of RFC 6152 (8BITMIME); 7BIT when absent.
enum class BodyType { k7Bit, k8BitMime };

// A mailbox of a path: "local@domain", or just "local" (an LMTP server may
// take a bare local part as its own user, see lmtp/). The local part is
// kept unquoted ("\"a b\"@x" -> local `a b`); `text` is the path as the
// client wrote it between the angle brackets, without a source route.
struct Address {
  std::string local;
  std::string domain;  // empty when the client gave none
  std::string text;    // "" for the null reverse-path "<>"
  bool utf8 = false;   // has octets >= 0x80 (needs SMTPUTF8, RFC 6531)
  bool null() const { return text.empty(); }
};

struct Command {
  Verb verb = Verb::kNoop;
  std::string domain;  // LHLO/HELO/EHLO argument
  Address address;     // MAIL FROM (may be null) / RCPT TO
  // MAIL FROM parameters (RFC 1870, 6152, 6531).
  std::optional<std::uint64_t> size;
  BodyType body = BodyType::k7Bit;
  bool smtputf8 = false;
};

// Limits of RFC 5321 §4.5.3.1.
inline constexpr std::size_t kMaxLocalPart = 64;
inline constexpr std::size_t kMaxPath = 256;
inline constexpr std::size_t kMaxDomain = 255;

struct ParseResult {
  bool ok = false;
  Command command;  // when ok
  Reply error;      // when not ok: the reply to send (500/501/504/555 with 5.5.x)
};

// Parses one command line. Verbs and parameter names are case-insensitive.
// MAIL FROM:<path> and RCPT TO:<path> accept one space after the colon (a
// common client habit) and an optional source route, which is ignored.
// Errors: 500 5.5.1 unknown command, 501 5.5.4 bad arguments or address
// syntax, 555 5.5.4 an unknown or malformed MAIL/RCPT parameter.
ParseResult parse_command(std::string_view line);

}  // namespace peregrine::smtp
