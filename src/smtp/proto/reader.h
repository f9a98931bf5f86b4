#pragma once

// Framing of an SMTP/LMTP input stream (RFC 5321 §2.3.8, §4.5.2): command
// lines, and the message text after DATA with its dot-stuffing undone.
//
// The network layer reads into prepare()/commit(); the session takes
// command lines with next_line() and, after a 354 reply, message text with
// read_data(). Bytes after a line or after the end of the message stay
// buffered, so pipelined commands (RFC 2920) are framed in order.
//
// Memory is bounded: a command line longer than max_line_bytes is reported
// (kTooLong) and skipped up to its LF without being kept; message text
// beyond the DATA limit is parsed to its end and discarded.
//
// Built with clang 14 for the fuzzer too: no std::expected here.

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace peregrine::smtp {

// Undoes the transparency of RFC 5321 §4.5.2 on message text as it
// arrives: a leading "." of a line is dropped, the line "." ends the text.
// Line ends come out as CRLF (a bare LF, as some clients send, becomes
// CRLF; a CR not before an LF is kept as it is). The text is kept up to
// `max_bytes`; beyond that it is counted but dropped (too_big()).
class DataDecoder {
 public:
  explicit DataDecoder(std::uint64_t max_bytes) : max_bytes_(max_bytes) {}

  // Consumes bytes of `in` up to and including the end marker; returns how
  // many it consumed (less than in.size() only when done() became true).
  std::size_t feed(std::string_view in);

  bool done() const { return state_ == State::kDone; }
  bool too_big() const { return size_ > max_bytes_; }
  // Octets of message text decoded so far, kept or not.
  std::uint64_t size() const { return size_; }
  // The text (when !too_big()); the caller may move it out once done().
  std::string& text() { return text_; }

 private:
  enum class State { kLineStart, kMid, kDot, kDotCr, kDone };
  void emit(std::string_view bytes);

  const std::uint64_t max_bytes_;
  State state_ = State::kLineStart;
  bool last_cr_ = false;  // the last octet emitted was a CR
  std::uint64_t size_ = 0;
  std::string text_;
};

class Reader {
 public:
  explicit Reader(std::size_t max_line_bytes) : max_line_bytes_(max_line_bytes) {}

  // Space for at least `n` more bytes; commit() says how many were written.
  std::span<char> prepare(std::size_t n);
  void commit(std::size_t n);
  std::size_t buffered() const { return end_ - begin_; }

  struct Line {
    enum class Kind { kNeedMore, kLine, kTooLong };
    Kind kind = Kind::kNeedMore;
    // kLine: the line without its CR LF (or bare LF); valid until the next
    // call on the reader.
    std::string_view text;
  };
  // The next command line. kTooLong once for a line over the limit, whose
  // rest is then skipped up to and including its LF.
  Line next_line();

  // Feeds what is buffered to `decoder` (message text after DATA); true
  // once the decoder is done. Bytes after the end marker stay buffered.
  bool read_data(DataDecoder& decoder);

  // Drops everything buffered (after STARTTLS-like resets, or on close).
  void clear() { begin_ = end_ = 0; }

 private:
  const std::size_t max_line_bytes_;
  std::vector<char> buf_;
  std::size_t begin_ = 0;
  std::size_t end_ = 0;
  bool skipping_ = false;  // inside an over-long line, up to its LF
};

}  // namespace peregrine::smtp
