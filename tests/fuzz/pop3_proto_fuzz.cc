// libFuzzer target for the POP3 grammar (src/pop3/proto): every input line
// goes through parse_command, and the whole input through the dot-stuffer
// as a message. Invariants (any broken one aborts, so the fuzzer keeps the
// input):
//
// - a parse error is one short printable line (safe after "-ERR ");
// - a parsed command carries only what its verb takes, numbers in range;
// - stuffing, then undoing the stuffing, gives the message back (with a
//   CRLF added when its last line had none), and the output is the same
//   whatever the chunk size the first input byte picks;
// - TOP output is a prefix of RETR output, terminator aside.

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "pop3/proto/command.h"
#include "pop3/proto/dot_stuffer.h"

namespace peregrine::pop3 {
namespace {

void check(bool ok, const char* what) {
  if (!ok) {
    std::fprintf(stderr, "pop3_proto_fuzz: invariant broken: %s\n", what);
    std::abort();
  }
}

void check_line(std::string_view line) {
  ParsedCommand parsed = parse_command(line);
  if (!parsed.ok()) {
    check(parsed.error.size() < 120, "short error");
    for (char c : parsed.error) {
      check(c >= 0x20 && c < 0x7f, "printable error");
    }
    return;
  }
  const Command& cmd = parsed.command;
  check(line.size() <= kMaxCommandLine, "line length bounded");
  check(cmd.msg <= kMaxNumber && cmd.lines <= kMaxNumber, "numbers in range");
  const bool numbered =
      cmd.verb == Verb::kRetr || cmd.verb == Verb::kDele || cmd.verb == Verb::kTop;
  if (numbered) {
    check(cmd.has_msg && cmd.msg >= 1, "message number present");
  }
  if (cmd.has_msg) {
    check(numbered || cmd.verb == Verb::kList || cmd.verb == Verb::kUidl, "number only if taken");
  }
}

std::string stuff(std::string_view message, std::size_t piece, DotStuffer stuffer) {
  std::string out;
  for (std::size_t i = 0; i < message.size() && !stuffer.done(); i += piece) {
    stuffer.feed(message.substr(i, piece), out);
  }
  stuffer.finish(out);
  return out;
}

void check_stuffing(std::string_view message, std::size_t piece) {
  const std::string whole = stuff(message, message.size() + 1, DotStuffer());
  check(stuff(message, piece, DotStuffer()) == whole, "chunking does not matter");
  check(whole.size() >= 3 && whole.compare(whole.size() - 3, 3, ".\r\n") == 0, "terminated");
  // Undo: drop one leading "." of every line; the terminator line goes.
  std::string undone;
  std::size_t pos = 0;
  const std::string_view body(whole.data(), whole.size() - 3);
  while (pos < body.size()) {
    std::size_t lf = body.find('\n', pos);
    std::size_t end = lf == std::string_view::npos ? body.size() : lf + 1;
    std::string_view line = body.substr(pos, end - pos);
    check(!line.empty(), "no empty piece");
    if (line.front() == '.') {
      check(line.size() >= 2 && line[1] == '.', "every dot line stuffed");
      line.remove_prefix(1);
    }
    undone.append(line);
    pos = end;
  }
  std::string expected(message);
  if (!expected.empty() && expected.back() != '\n') {
    expected += expected.back() == '\r' ? "\n" : "\r\n";
  }
  check(undone == expected, "stuffing round-trips");
  const std::string top = stuff(message, piece, DotStuffer(static_cast<std::uint32_t>(piece % 5)));
  // TOP stops at a line end, so what it sent is where RETR's output starts.
  check(top.size() <= whole.size(), "TOP is not longer than RETR");
  check(whole.compare(0, top.size() - 3, top, 0, top.size() - 3) == 0, "TOP is a prefix of RETR");
}

}  // namespace
}  // namespace peregrine::pop3

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace peregrine::pop3;
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  std::size_t pos = 0;
  while (pos <= input.size()) {
    std::size_t lf = input.find('\n', pos);
    std::size_t end = lf == std::string_view::npos ? input.size() : lf;
    std::string_view line = input.substr(pos, end - pos);
    if (!line.empty() && line.back() == '\r') {
      line.remove_suffix(1);
    }
    check_line(line);
    if (lf == std::string_view::npos) {
      break;
    }
    pos = lf + 1;
  }
  const std::size_t piece = size == 0 ? 1 : 1 + data[0] % 17;
  check_stuffing(input, piece);
  return 0;
}
