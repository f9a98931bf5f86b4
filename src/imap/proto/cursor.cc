#include "imap/proto/cursor.h"

#include <cstring>

#include "base/ascii.h"
#include "imap/proto/chars.h"
#include "imap/proto/wire_string.h"

namespace peregrine::imap {
namespace {

const FramedCommand& empty_command() {
  static const FramedCommand kEmpty{{std::string_view()}, {}};
  return kEmpty;
}

}  // namespace

Cursor::Cursor(const FramedCommand& command) : cmd_(&command) {
  // Keep every accessor in bounds even for a hand-made command that breaks
  // the lines.size() == literals.size() + 1 promise.
  if (command.lines.empty() || command.lines.size() != command.literals.size() + 1) {
    cmd_ = &empty_command();
  }
}

bool Cursor::at_end() const {
  return seg_ + 1 == cmd_->lines.size() && pos_ == cmd_->lines[seg_].size();
}

bool Cursor::at_literal() const {
  return seg_ < cmd_->literals.size() && pos_ == cmd_->lines[seg_].size();
}

int Cursor::peek() const {
  std::string_view line = cmd_->lines[seg_];
  return pos_ < line.size() ? static_cast<unsigned char>(line[pos_]) : -1;
}

bool Cursor::consume(char c) {
  if (peek() == static_cast<unsigned char>(c)) {
    ++pos_;
    return true;
  }
  return false;
}

bool Cursor::space() {
  return !take_while([](char c) { return c == ' '; }).empty();
}

bool Cursor::finish() {
  space();
  return at_end();
}

std::string_view Cursor::atom() { return take_while(is_atom_char); }

bool Cursor::keyword(std::string_view word) {
  std::string_view line = cmd_->lines[seg_];
  size_t end = pos_;
  while (end < line.size() && is_atom_char(line[end])) {
    ++end;
  }
  if (!base::iequals(line.substr(pos_, end - pos_), word)) {
    return false;
  }
  pos_ = end;
  return true;
}

std::string_view Cursor::rest_of_line() const { return cmd_->lines[seg_].substr(pos_); }

ParseError missing_or_invalid(const Cursor& cursor, std::string_view what) {
  int c = cursor.peek();
  bool missing = cursor.at_end() || c == ')' || (c == -1 && !cursor.at_literal());
  return parse_error((missing ? "missing " : "invalid ") + std::string(what));
}

Parsed<std::string> Cursor::quoted(std::string_view what) {
  std::string_view line = cmd_->lines[seg_];
  size_t i = pos_ + 1;  // after the opening quote
  std::string out;
  for (;;) {
    size_t start = i;
    while (i < line.size() && is_quoted_plain_char(line[i])) {
      ++i;
    }
    out.append(line.substr(start, i - start));
    if (i >= line.size()) {
      return parse_error("unterminated quoted " + std::string(what));
    }
    char c = line[i];
    if (c == '"') {
      pos_ = i + 1;
      return out;
    }
    if (c != '\\' || i + 1 >= line.size() || (line[i + 1] != '"' && line[i + 1] != '\\')) {
      return parse_error("invalid character in quoted " + std::string(what));
    }
    out.push_back(line[i + 1]);
    i += 2;
  }
}

Parsed<std::string> Cursor::literal_string(std::string_view what) {
  Parsed<Literal> lit = literal(what, /*allow_binary=*/false);
  if (!lit) {
    return lit.error();
  }
  if (std::memchr(lit->data.data(), '\0', lit->data.size()) != nullptr) {
    return parse_error("NUL in " + std::string(what));
  }
  return std::string(lit->data);
}

Parsed<Literal> Cursor::literal(std::string_view what, bool allow_binary) {
  if (!at_literal()) {
    return missing_or_invalid(*this, what);
  }
  const Literal& lit = cmd_->literals[seg_];
  if (lit.binary && !allow_binary) {
    return parse_error("literal8 not allowed for " + std::string(what));
  }
  ++seg_;
  pos_ = 0;
  return lit;
}

Parsed<std::string> Cursor::astring(std::string_view what) {
  if (at_literal()) {
    return literal_string(what);
  }
  if (peek() == '"') {
    return quoted(what);
  }
  std::string_view a = take_while(is_astring_char);
  if (a.empty()) {
    return missing_or_invalid(*this, what);
  }
  return std::string(a);
}

Parsed<std::string> Cursor::string(std::string_view what) {
  if (at_literal()) {
    return literal_string(what);
  }
  if (peek() == '"') {
    return quoted(what);
  }
  return missing_or_invalid(*this, what);
}

Parsed<std::optional<std::string>> Cursor::nstring(std::string_view what) {
  if (keyword("NIL")) {
    return std::optional<std::string>();
  }
  Parsed<std::string> s = string(what);
  if (!s) {
    return s.error();
  }
  return std::optional<std::string>(std::move(*s));
}

Parsed<uint64_t> Cursor::number(std::string_view what, uint64_t min, uint64_t max) {
  std::string_view line = cmd_->lines[seg_];
  size_t i = pos_;
  while (i < line.size() && base::is_digit(line[i])) {
    ++i;
  }
  if (i == pos_) {
    return missing_or_invalid(*this, what);
  }
  const std::string_view digits = line.substr(pos_, i - pos_);
  std::optional<uint64_t> value = parse_number(digits, max);
  if (!value || *value < min) {
    return parse_error("invalid " + std::string(what) + " " + std::string(digits));
  }
  pos_ = i;
  return *value;
}

}  // namespace peregrine::imap
