#pragma once

// POP3 command lines (RFC 1939 §3, RFC 2449 §4, RFC 2595 §4, RFC 5034 §4)
// parsed into typed commands. The parser knows the grammar only: which
// command is allowed in which state is the session's business.
//
// A command line is a keyword of 3 or 4 letters (any case), then arguments
// separated by single spaces; the line, with its CRLF, is at most 255
// octets (RFC 2449 §4). PASS takes the rest of the line as the password, so
// a password may hold spaces (RFC 1939 §7 allows it). Message numbers are
// decimal, 1 to 2^31 - 1; TOP's line count may be 0.

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace peregrine::pop3 {

// The longest command line without its CRLF (RFC 2449 §4: 255 with it).
inline constexpr std::size_t kMaxCommandLine = 253;
// The largest message number (and TOP line count) a command may carry.
inline constexpr std::uint32_t kMaxNumber = 0x7fffffff;

enum class Verb : std::uint8_t {
  kUser,  // USER name
  kPass,  // PASS password
  kApop,  // APOP name digest (recognized, not offered)
  kAuth,  // AUTH [mechanism [initial-response]]
  kStls,  // STLS
  kCapa,  // CAPA
  kStat,  // STAT
  kList,  // LIST [msg]
  kRetr,  // RETR msg
  kDele,  // DELE msg
  kNoop,  // NOOP
  kRset,  // RSET
  kTop,   // TOP msg n
  kUidl,  // UIDL [msg]
  kQuit,  // QUIT
};

struct Command {
  Verb verb = Verb::kNoop;
  // USER's name, PASS's password, AUTH's mechanism (upper-cased), APOP's name.
  std::string text;
  // AUTH's initial response (present when has_initial), APOP's digest.
  std::string text2;
  bool has_initial = false;
  // LIST, UIDL: whether a message number was given; RETR, DELE, TOP: always.
  bool has_msg = false;
  std::uint32_t msg = 0;
  std::uint32_t lines = 0;  // TOP's line count
};

// What parse_command returns: the command, or an error text (one line,
// printable ASCII, fit to follow "-ERR ").
struct ParsedCommand {
  Command command;
  std::string error;  // empty when the line parsed
  bool ok() const { return error.empty(); }
};

// Parses one command line, given without its line end.
ParsedCommand parse_command(std::string_view line);

// The keyword as written in CAPA and logs ("USER", "RETR", ...).
const char* to_string(Verb verb);

}  // namespace peregrine::pop3
