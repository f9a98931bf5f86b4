#pragma once

// The body of a POP3 multi-line response (RFC 1939 §3): a message's bytes
// with every line that starts with "." given one more ".", then the
// terminating ".CRLF". A message whose last line has no line end gets a
// CRLF first, so the terminator is always a line of its own. Stored
// messages have CRLF line ends; a bare LF is passed through as it is.
//
// For TOP (RFC 1939 §7) the stuffer can stop after the header, the blank
// line that ends it, and the first `n` body lines.
//
// Feed the message in chunks of any size; the output does not depend on
// where the chunks split.

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace peregrine::pop3 {

class DotStuffer {
 public:
  // All of the message (RETR).
  DotStuffer() = default;
  // The header and the first `body_lines` lines of the body (TOP).
  explicit DotStuffer(std::uint32_t body_lines) : body_lines_(body_lines) {}

  // Appends the stuffed form of `chunk` to `out`. After done(), appends
  // nothing.
  void feed(std::string_view chunk, std::string& out);
  // True once TOP has all the lines it wants: the rest need not be read.
  bool done() const { return done_; }
  // Ends the response: a CRLF if the last line had none, then ".CRLF".
  void finish(std::string& out);

 private:
  // Called with the length of a completed line (its bytes before the LF).
  void line_ended(std::size_t length, char first);

  std::optional<std::uint32_t> body_lines_;  // TOP's n; none for RETR
  bool in_header_ = true;
  bool done_ = false;
  bool at_line_start_ = true;
  std::size_t line_length_ = 0;  // bytes of the current line so far
  char line_first_ = 0;          // its first byte
  char last_ = 0;                // the last byte fed
};

}  // namespace peregrine::pop3
