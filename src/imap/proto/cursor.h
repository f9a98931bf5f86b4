#pragma once

// Reads the tokens of one framed command (command_reader.h) left to right,
// across its line segments and literals. The grammar lives in the parser;
// the cursor knows the lexical forms: SP, atoms, quoted strings, literals,
// numbers.
//
// Each reader that can fail returns Parsed<T> with a message naming `what`
// was expected ("missing mailbox name", "invalid mailbox name"). The cursor
// only moves past what it successfully read.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "imap/proto/command_reader.h"
#include "imap/proto/result.h"

namespace peregrine::imap {

class Cursor {
 public:
  explicit Cursor(const FramedCommand& command);

  // Nothing left in the command.
  bool at_end() const;
  // The next token is a literal.
  bool at_literal() const;
  // The next byte of the current line, or -1 at a literal or the end.
  int peek() const;
  // Consumes `c` if it is next.
  bool consume(char c);
  // Consumes one or more spaces; false (and nothing consumed) when there is
  // none.
  bool space();
  // Skips trailing spaces; true when nothing else is left.
  bool finish();

  // The longest run of bytes of the current line that satisfy pred (possibly
  // empty). Never crosses a literal.
  template <typename Pred>
  std::string_view take_while(Pred pred) {
    std::string_view line = cmd_->lines[seg_];
    size_t start = pos_;
    while (pos_ < line.size() && pred(line[pos_])) {
      ++pos_;
    }
    return line.substr(start, pos_ - start);
  }

  // 1*ATOM-CHAR, possibly empty.
  std::string_view atom();
  // An atom that equals `word` case-insensitively and is not followed by
  // more ATOM-CHARs; consumed only if it matches.
  bool keyword(std::string_view word);

  // astring: 1*ASTRING-CHAR, a quoted string or a literal.
  Parsed<std::string> astring(std::string_view what);
  // string: a quoted string or a literal.
  Parsed<std::string> string(std::string_view what);
  // nstring: NIL or a string.
  Parsed<std::optional<std::string>> nstring(std::string_view what);
  // A literal as is (APPEND's message data). literal8 is accepted only when
  // allow_binary.
  Parsed<Literal> literal(std::string_view what, bool allow_binary);

  // A decimal number in [min, max] (number: max 2^32-1, nz-number: min 1,
  // number64 / mod-sequence-value: max 2^63-1). Reads digits only: the
  // caller checks what follows.
  Parsed<uint64_t> number(std::string_view what, uint64_t min = 0, uint64_t max = 0xffffffffu);

  // What is left of the current line (for error messages).
  std::string_view rest_of_line() const;

 private:
  Parsed<std::string> quoted(std::string_view what);
  Parsed<std::string> literal_string(std::string_view what);

  const FramedCommand* cmd_;
  size_t seg_ = 0;  // index into cmd_.lines
  size_t pos_ = 0;  // offset in cmd_.lines[seg_]
};

// "missing <what>" when the cursor is at the end or before ")", else
// "invalid <what>".
ParseError missing_or_invalid(const Cursor& cursor, std::string_view what);

}  // namespace peregrine::imap
