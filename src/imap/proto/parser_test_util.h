#pragma once

// Test helpers: frame a wire string with a real CommandReader and parse it.

#include <gtest/gtest.h>

#include <optional>
#include <string>

#include "imap/proto/command_reader.h"
#include "imap/proto/parser.h"

namespace peregrine::imap::testing {

// Frames `wire` + CRLF and parses it. Keeps the reader alive so views into
// its buffer (APPEND data) stay valid for the object's lifetime.
class WireParse {
 public:
  explicit WireParse(const std::string& wire) {
    reader_.feed(wire + "\r\n");
    for (;;) {
      ReaderEvent ev = reader_.next();
      if (ev.kind == ReaderEvent::Kind::kContinue) {
        continue;
      }
      if (ev.kind != ReaderEvent::Kind::kCommand) {
        ADD_FAILURE() << "not framed as one command: " << wire;
        result_.emplace(ParseError{"", "framing failed"});
        return;
      }
      result_.emplace(parse_command(*ev.command));
      return;
    }
  }
  const Parsed<Command>& result() const { return *result_; }

 private:
  CommandReader reader_;
  std::optional<Parsed<Command>> result_;
};

}  // namespace peregrine::imap::testing
