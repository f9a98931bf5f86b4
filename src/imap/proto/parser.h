#pragma once

// Framed command (command_reader.h) -> typed Command (command.h).
//
//   Parsed<Command> cmd = parse_command(*event.command);
//   if (!cmd) write "<tag> BAD <message>" (cmd.error().tag may be empty: "* BAD")
//
// Parsing is pure and total: any input gives a Command or a ParseError whose
// message names what was wrong, prefixed with the command's name once it is
// known ("FETCH: unknown item FOO", "SELECT: missing mailbox name",
// "unknown command FOO"). The parser checks syntax only; whether a command is
// allowed in the session's state, or a charset is supported, is the server's
// call.

#include <string>

#include "imap/proto/command.h"
#include "imap/proto/command_reader.h"
#include "imap/proto/result.h"

namespace peregrine::imap {

Parsed<Command> parse_command(const FramedCommand& command);

// Whether a line read during IDLE is the "DONE" that ends it (RFC 2177; any
// case, trailing spaces ignored).
bool is_idle_done(const FramedCommand& line);

// A client's line during AUTHENTICATE (RFC 3501 §6.2.2).
struct AuthResponse {
  bool cancelled = false;  // "*": the server answers BAD and ends the exchange
  std::string base64;      // the response as sent (not decoded), may be empty

  bool operator==(const AuthResponse&) const = default;
};
// Errors: a literal, or a character outside the base64 alphabet.
Parsed<AuthResponse> parse_auth_response(const FramedCommand& line);

}  // namespace peregrine::imap
