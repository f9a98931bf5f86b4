#pragma once

// Incremental framing of IMAP client input into whole commands (RFC 3501
// §2.2, RFC 9051 §2.2): a command is a line, and every literal announced at
// a line's end ("{n}" synchronizing, "{n+}" LITERAL+ / LITERAL- RFC 7888,
// "~{n}" literal8 RFC 3516) is followed by its n bytes and the rest of the
// command. The reader knows only framing; parser.h gives the bytes meaning.
//
// Bytes in, events out; no I/O. The caller feeds what the socket delivered
// and calls next() until it says kNeedMore:
//
//   reader.feed(bytes);
//   for (auto ev = reader.next(); ev.kind != ReaderEvent::Kind::kNeedMore; ev = reader.next()) {
//     kCommand  -> parse_command(*ev.command) and run it
//     kContinue -> write "+ ..." (the client waits for it before sending the literal)
//     kError    -> write "<tag> BAD ..." (or "* BAD" when ev.tag is empty); if ev.fatal,
//                  close the connection after writing
//   }
//
// Every size is bounded by ReaderLimits: a line longer than max_line_bytes is
// reported as soon as it is seen (not when it ends) and skipped up to its end;
// an over-large synchronizing literal is refused before the client sends it,
// so its data never arrives and reading resumes at the next line.
//
// Thread safety: none; one reader per connection.

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace peregrine::imap {

struct ReaderLimits {
  // One line segment (the text between literals), without its CRLF.
  size_t max_line_bytes = 64 * 1024;
  // One literal's payload.
  uint64_t max_literal_bytes = 64 * 1024 * 1024;
  // All line segments and literals of one command together.
  uint64_t max_command_bytes = 256 * 1024 * 1024;
  // Literals in one command (MULTIAPPEND sends one per message).
  size_t max_literals = 1000;
};

struct Literal {
  std::string_view data;
  bool synchronizing = true;  // "{n}"; false for "{n+}"
  bool binary = false;        // "~{n}" literal8: may hold NUL (BINARY, APPEND)

  bool operator==(const Literal&) const = default;
};

// One whole command. lines[i] is followed by literals[i] for every i <
// literals.size(), so lines.size() == literals.size() + 1. Lines have no
// CRLF; a line that announces a literal ends before its marker ("a1 LOGIN
// {4}" gives the line "a1 LOGIN "). Views point into the reader's buffer and
// are valid until the reader's next non-const call.
struct FramedCommand {
  std::vector<std::string_view> lines;
  std::vector<Literal> literals;

  // The first space-delimited word of the first line if it is a valid tag,
  // else empty.
  std::string_view tag() const;
};

enum class ReaderError : uint8_t {
  kLineTooLong,    // a line is longer than max_line_bytes
  kCommandTooBig,  // the command exceeds max_command_bytes or max_literals
  kLiteralTooBig,  // a literal is larger than max_literal_bytes (or the room left)
  kBadLiteral,     // a "{...}" line end that is not a literal size below 2^32
};

struct ReaderEvent {
  enum class Kind : uint8_t {
    kNeedMore,  // nothing more can be framed until more input is fed
    kCommand,   // *command is complete
    kContinue,  // send a continuation request ("+ ...") now
    kError,     // the current command is dropped; answer BAD
  };
  Kind kind = Kind::kNeedMore;
  const FramedCommand* command = nullptr;  // kCommand only
  // kError only:
  ReaderError error = ReaderError::kLineTooLong;
  // The stream cannot be resynchronised (a non-synchronizing literal that
  // is too big or unparseable: its data is on the way and would be read as
  // commands). Answer, then close the connection; the reader stays failed.
  bool fatal = false;
  std::string tag;      // the dropped command's tag, empty if unknown
  std::string message;  // for the BAD text, e.g. "line too long"
};

class CommandReader {
 public:
  explicit CommandReader(ReaderLimits limits = {});

  // Appends input. Ignored once failed().
  void feed(std::string_view bytes);
  // Zero-copy alternative to feed(): read up to n bytes into the returned
  // span, then commit(k) with the number actually written (k <= n).
  std::span<char> prepare(size_t n);
  void commit(size_t k);

  // The next event. A kCommand's views stay valid until the next call to
  // feed(), prepare() or next().
  ReaderEvent next();

  // True after a fatal error: nothing more will be framed.
  bool failed() const { return state_ == State::kFailed; }
  // Bytes held: a partial command, or input not yet framed.
  size_t buffered() const { return buf_.size() - cmd_start_; }

 private:
  enum class State : uint8_t {
    kLine,         // reading a line segment that starts at seg_start_
    kLiteral,      // waiting for lit_size_ bytes at seg_start_
    kSkipLine,     // dropping a command: discard up to the line's end
    kSkipLiteral,  // dropping a command: discard skip_left_ literal bytes
    kFailed,
  };
  struct Span {
    size_t offset;  // from cmd_start_
    size_t size;
  };
  struct LiteralSpan {
    Span span;
    bool synchronizing;
    bool binary;
  };

  void compact();
  ReaderEvent on_line(size_t lf);
  ReaderEvent on_skip_line(size_t lf);
  ReaderEvent drop(ReaderError error, std::string message);
  ReaderEvent fail(ReaderError error, std::string message);
  void start_command(size_t at);
  std::string current_tag() const;

  ReaderLimits limits_;
  std::string buf_;
  State state_ = State::kLine;
  size_t cmd_start_ = 0;  // the current command's first byte (bytes before it are done)
  size_t seg_start_ = 0;  // the current line or literal's first byte
  size_t scan_pos_ = 0;   // where the search for LF resumes
  uint64_t cmd_bytes_ = 0;
  uint64_t lit_size_ = 0;
  bool lit_sync_ = true;
  bool lit_binary_ = false;
  size_t pending_prepare_ = 0;
  uint64_t skip_left_ = 0;
  std::string skip_tail_;  // the last bytes of a line being skipped
  std::vector<Span> line_spans_;
  std::vector<LiteralSpan> literal_spans_;
  FramedCommand command_;
};

// The literal announced at the end of `line` (no CRLF), as the reader sees
// it. Exposed for tests and the fuzzer.
struct LiteralMarker {
  enum class Kind : uint8_t { kNone, kValid, kBad };
  Kind kind = Kind::kNone;
  size_t start = 0;  // where the marker ("{", or "~" of "~{") starts in the line
  uint64_t size = 0;
  bool synchronizing = true;
  bool binary = false;
};
// Finds a marker outside quoted strings. `quotes_known` false means `line` is
// only the tail of a line (quoted-string state unknown): a marker is then
// recognised by its shape alone.
LiteralMarker find_literal_marker(std::string_view line, bool quotes_known = true);

}  // namespace peregrine::imap
