#include "imap/proto/command_reader.h"

#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

namespace peregrine::imap {
namespace {

using Transcript = std::vector<std::string>;

// One line per event: "CMD <lines with literals in [brackets]>", "CONT",
// "ERR <kind> tag=<tag>[ fatal]". A literal renders as [data], [+data] when
// non-synchronizing, [~data] when literal8.
std::string render(const ReaderEvent& ev) {
  switch (ev.kind) {
    case ReaderEvent::Kind::kNeedMore:
      return "NEED";
    case ReaderEvent::Kind::kContinue:
      return "CONT";
    case ReaderEvent::Kind::kCommand: {
      std::string s = "CMD ";
      const FramedCommand& c = *ev.command;
      EXPECT_EQ(c.lines.size(), c.literals.size() + 1);
      for (size_t i = 0; i < c.lines.size(); ++i) {
        s += c.lines[i];
        if (i < c.literals.size()) {
          s += "[";
          s += c.literals[i].binary ? "~" : "";
          s += c.literals[i].synchronizing ? "" : "+";
          s += c.literals[i].data;
          s += "]";
        }
      }
      return s;
    }
    case ReaderEvent::Kind::kError: {
      static const char* kNames[] = {"line-too-long", "command-too-big", "literal-too-big",
                                     "bad-literal"};
      std::string s = "ERR ";
      s += kNames[static_cast<int>(ev.error)];
      s += " tag=" + ev.tag;
      if (ev.fatal) {
        s += " fatal";
      }
      EXPECT_FALSE(ev.message.empty());
      return s;
    }
  }
  return "?";
}

void drain(CommandReader& reader, Transcript& out) {
  for (int guard = 0; guard < 100000; ++guard) {
    ReaderEvent ev = reader.next();
    if (ev.kind == ReaderEvent::Kind::kNeedMore) {
      return;
    }
    out.push_back(render(ev));
  }
  ADD_FAILURE() << "reader never asked for more input";
}

// Feeds `input` in chunks of `chunk` bytes (0 = all at once).
Transcript run(std::string_view input, const ReaderLimits& limits, size_t chunk) {
  CommandReader reader(limits);
  Transcript out;
  if (chunk == 0) {
    reader.feed(input);
    drain(reader, out);
    return out;
  }
  for (size_t i = 0; i < input.size(); i += chunk) {
    reader.feed(input.substr(i, chunk));
    drain(reader, out);
  }
  return out;
}

struct Case {
  const char* name;
  std::string input;
  Transcript expected;
  ReaderLimits limits = {};
};

ReaderLimits small_limits() {
  ReaderLimits l;
  l.max_line_bytes = 20;
  l.max_literal_bytes = 10;
  l.max_command_bytes = 60;
  l.max_literals = 3;
  return l;
}

std::vector<Case> cases() {
  using namespace std::string_literals;
  const ReaderLimits small = small_limits();
  ReaderLimits tight = small;
  tight.max_command_bytes = 40;
  return {
      {"simple", "a1 NOOP\r\n", {"CMD a1 NOOP"}},
      {"bare LF", "a1 NOOP\n", {"CMD a1 NOOP"}},
      {"incomplete", "a1 NOOP\r", {}},
      {"empty line", "\r\n", {"CMD "}},
      {"pipelined", "a1 NOOP\r\na2 CHECK\r\n", {"CMD a1 NOOP", "CMD a2 CHECK"}},
      {"sync literals",
       "a1 LOGIN {4}\r\nuser {4}\r\npass\r\n",
       {"CONT", "CONT", "CMD a1 LOGIN [user] [pass]"}},
      {"non-sync literals",
       "a1 LOGIN {4+}\r\nuser {4+}\r\npass\r\n",
       {"CMD a1 LOGIN [+user] [+pass]"}},
      {"literal8 with NUL",
       "a1 APPEND INBOX ~{3}\r\na\0b\r\n"s,
       {"CONT", "CMD a1 APPEND INBOX [~a\0b]"s}},
      {"literal8 non-sync", "a1 APPEND INBOX ~{2+}\r\nab\r\n", {"CMD a1 APPEND INBOX [~+ab]"}},
      {"literal bytes are not interpreted",
       "a1 X {9}\r\n{5}\r\nb\r\nc\r\n",
       {"CONT", "CMD a1 X [{5}\r\nb\r\nc]"}},
      {"zero-length literal", "a1 LOGIN {0}\r\n {0+}\r\n\r\n", {"CONT", "CMD a1 LOGIN [] [+]"}},
      {"literal ends the command line",
       "a1 X {2}\r\nab\r\na2 NOOP\r\n",
       {"CONT", "CMD a1 X [ab]", "CMD a2 NOOP"}},
      {"braces inside a quoted string", "a1 LOGIN \"a{4}\" b}\r\n", {"CMD a1 LOGIN \"a{4}\" b}"}},
      {"escaped quote does not end the string",
       "a1 LOGIN \"a\\\"{4}\" {1}\r\nx\r\n",
       {"CONT", "CMD a1 LOGIN \"a\\\"{4}\" [x]"}},
      {"unterminated quote", "a1 LOGIN \"a {4}\r\n", {"CMD a1 LOGIN \"a {4}"}},
      {"closing brace without open", "a1 LOGIN a b}\r\n", {"CMD a1 LOGIN a b}"}},
      {"bad literal: negative",
       "a1 X {-1}\r\na2 NOOP\r\n",
       {"ERR bad-literal tag=a1", "CMD a2 NOOP"}},
      {"bad literal: letters",
       "a1 X {abc}\r\na2 NOOP\r\n",
       {"ERR bad-literal tag=a1", "CMD a2 NOOP"}},
      {"bad literal: empty", "a1 X {}\r\na2 NOOP\r\n", {"ERR bad-literal tag=a1", "CMD a2 NOOP"}},
      {"bad literal: 2^32",
       "a1 X {4294967296}\r\na2 NOOP\r\n",
       {"ERR bad-literal tag=a1", "CMD a2 NOOP"}},
      {"bad literal: huge",
       "a1 X {99999999999999999999999999}\r\na2 NOOP\r\n",
       {"ERR bad-literal tag=a1", "CMD a2 NOOP"}},
      {"bad literal: only plus", "a1 X {+}\r\ngarbage\r\n", {"ERR bad-literal tag=a1 fatal"}},
      {"bad non-sync literal is fatal",
       "a1 X {-5+}\r\nhello\r\na2 NOOP\r\n",
       {"ERR bad-literal tag=a1 fatal"}},
      {"2^32-1 is a size, too big by default",
       "a1 X {4294967295}\r\na2 NOOP\r\n",
       {"ERR literal-too-big tag=a1", "CMD a2 NOOP"}},
      {"bad literal after a good one",
       "a1 X {1}\r\nx {z}\r\na2 NOOP\r\n",
       {"CONT", "ERR bad-literal tag=a1", "CMD a2 NOOP"}},
      {"line too long",
       "a1 NOOP xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx\r\na2 NOOP\r\n",
       {"ERR line-too-long tag=a1", "CMD a2 NOOP"},
       small},
      {"line of exactly the limit",
       "a1 NOOP 123456789012\r\n",
       {"CMD a1 NOOP 123456789012"},
       small},
      {"line one over the limit",
       "a1 NOOP 1234567890123\r\na2 NOOP\r\n",
       {"ERR line-too-long tag=a1", "CMD a2 NOOP"},
       small},
      {"line too long without a tag",
       "                                  \r\na2 NOOP\r\n",
       {"ERR line-too-long tag=", "CMD a2 NOOP"},
       small},
      {"line too long announcing a sync literal",
       "a1 APPEND xxxxxxxxxxxxxxxxxxxxxxxxxx {3}\r\na2 NOOP\r\n",
       {"ERR line-too-long tag=a1", "CMD a2 NOOP"},
       small},
      {"line too long announcing a non-sync literal: its data is skipped",
       "a1 APPEND xxxxxxxxxxxxxxxxxxxxxxxxxx {9+}\r\na3 NOOP\r\n {2+}\r\nzz\r\na2 NOOP\r\n",
       {"ERR line-too-long tag=a1", "CMD a2 NOOP"},
       small},
      {"line too long announcing a huge non-sync literal",
       "a1 APPEND xxxxxxxxxxxxxxxxxxxxxxxxxx {99+}\r\n",
       {"ERR line-too-long tag=a1", "ERR literal-too-big tag= fatal"},
       small},
      {"line too long after a literal",
       "a1 X {2}\r\nab xxxxxxxxxxxxxxxxxxxxxxxxxxxxx\r\na2 NOOP\r\n",
       {"CONT", "ERR line-too-long tag=a1", "CMD a2 NOOP"},
       small},
      {"sync literal too big: no continuation, data not swallowed",
       "a1 APPEND X {11}\r\na2 NOOP\r\n",
       {"ERR literal-too-big tag=a1", "CMD a2 NOOP"},
       small},
      {"sync literal of exactly the limit",
       "a1 APPEND X {10}\r\n0123456789\r\n",
       {"CONT", "CMD a1 APPEND X [0123456789]"},
       small},
      {"non-sync literal too big is fatal",
       "a1 APPEND X {11+}\r\n01234567890\r\na2 NOOP\r\n",
       {"ERR literal-too-big tag=a1 fatal"},
       small},
      {"too many literals",
       "a1 X {1}\r\na {1}\r\nb {1}\r\nc {1}\r\na2 NOOP\r\n",
       {"CONT", "CONT", "CONT", "ERR command-too-big tag=a1", "CMD a2 NOOP"},
       small},
      {"command too long",
       "a1 X {10}\r\n0123456789 {10}\r\n0123456789 {10}\r\n0123456789\r\na2 N\r\n",
       {"CONT", "CONT", "ERR command-too-big tag=a1", "CMD 0123456789", "CMD a2 N"},
       tight},
  };
}

TEST(CommandReader, TableWholeChunkedAndByteAtATime) {
  for (const Case& c : cases()) {
    SCOPED_TRACE(c.name);
    EXPECT_EQ(run(c.input, c.limits, 0), c.expected);
    EXPECT_EQ(run(c.input, c.limits, 1), c.expected);
    EXPECT_EQ(run(c.input, c.limits, 7), c.expected);
  }
}

TEST(CommandReader, EveryPrefixNeedsMoreUntilTheLineIsWhole) {
  const std::string input = "a1 LOGIN {4+}\r\nuser \"pass\"\r\n";
  for (size_t n = 0; n < input.size(); ++n) {
    CommandReader reader;
    reader.feed(std::string_view(input).substr(0, n));
    EXPECT_EQ(reader.next().kind, ReaderEvent::Kind::kNeedMore) << n;
  }
}

TEST(CommandReader, ContinuationIsRequestedOnce) {
  CommandReader reader;
  reader.feed("a1 LOGIN {4}\r\n");
  EXPECT_EQ(reader.next().kind, ReaderEvent::Kind::kContinue);
  EXPECT_EQ(reader.next().kind, ReaderEvent::Kind::kNeedMore);
  EXPECT_EQ(reader.next().kind, ReaderEvent::Kind::kNeedMore);
  reader.feed("us");
  EXPECT_EQ(reader.next().kind, ReaderEvent::Kind::kNeedMore);
  reader.feed("er pw\r\n");
  ReaderEvent ev = reader.next();
  ASSERT_EQ(ev.kind, ReaderEvent::Kind::kCommand);
  EXPECT_EQ(ev.command->literals[0].data, "user");
  EXPECT_EQ(ev.command->lines[1], " pw");
  EXPECT_EQ(ev.command->tag(), "a1");
}

TEST(CommandReader, FailedReaderIgnoresInput) {
  ReaderLimits limits = small_limits();
  CommandReader reader(limits);
  reader.feed("a1 X {50+}\r\n");
  ReaderEvent ev = reader.next();
  EXPECT_EQ(ev.kind, ReaderEvent::Kind::kError);
  EXPECT_TRUE(ev.fatal);
  EXPECT_TRUE(reader.failed());
  reader.feed("a2 NOOP\r\n");
  EXPECT_EQ(reader.next().kind, ReaderEvent::Kind::kNeedMore);
  EXPECT_EQ(reader.buffered(), 0u);
}

TEST(CommandReader, PrepareAndCommit) {
  CommandReader reader;
  std::span<char> space = reader.prepare(64);
  ASSERT_EQ(space.size(), 64u);
  const char kInput[] = "a1 NOOP\r\na2";
  std::memcpy(space.data(), kInput, sizeof(kInput) - 1);
  reader.commit(sizeof(kInput) - 1);
  ReaderEvent ev = reader.next();
  ASSERT_EQ(ev.kind, ReaderEvent::Kind::kCommand);
  EXPECT_EQ(ev.command->lines[0], "a1 NOOP");
  EXPECT_EQ(reader.next().kind, ReaderEvent::Kind::kNeedMore);
  EXPECT_EQ(reader.buffered(), 2u);
  space = reader.prepare(16);
  std::memcpy(space.data(), " X\r\n", 4);
  reader.commit(4);
  ev = reader.next();
  ASSERT_EQ(ev.kind, ReaderEvent::Kind::kCommand);
  EXPECT_EQ(ev.command->lines[0], "a2 X");
}

TEST(CommandReader, LargePipelinedInputStaysBounded) {
  CommandReader reader;
  std::string input;
  for (int i = 0; i < 5000; ++i) {
    input += "a" + std::to_string(i) + " NOOP\r\n";
  }
  reader.feed(input);
  int commands = 0;
  for (ReaderEvent ev = reader.next(); ev.kind != ReaderEvent::Kind::kNeedMore;
       ev = reader.next()) {
    ASSERT_EQ(ev.kind, ReaderEvent::Kind::kCommand);
    EXPECT_EQ(ev.command->tag(), "a" + std::to_string(commands));
    ++commands;
  }
  EXPECT_EQ(commands, 5000);
  EXPECT_EQ(reader.buffered(), 0u);
}

TEST(CommandReader, LongLineIsDiscardedAsItArrives) {
  ReaderLimits limits;
  limits.max_line_bytes = 100;
  CommandReader reader(limits);
  reader.feed("a1 X ");
  EXPECT_EQ(reader.next().kind, ReaderEvent::Kind::kNeedMore);
  std::string chunk(1000, 'x');
  reader.feed(chunk);
  ReaderEvent ev = reader.next();
  EXPECT_EQ(ev.kind, ReaderEvent::Kind::kError);
  EXPECT_EQ(ev.tag, "a1");
  for (int i = 0; i < 100; ++i) {
    reader.feed(chunk);
    EXPECT_EQ(reader.next().kind, ReaderEvent::Kind::kNeedMore);
    EXPECT_EQ(reader.buffered(), 0u);
  }
  reader.feed("\r\na2 NOOP\r\n");
  ev = reader.next();
  ASSERT_EQ(ev.kind, ReaderEvent::Kind::kCommand);
  EXPECT_EQ(ev.command->lines[0], "a2 NOOP");
}

TEST(FramedCommand, Tag) {
  auto tag_of = [](std::string_view line) {
    FramedCommand c;
    c.lines.push_back(line);
    return std::string(c.tag());
  };
  EXPECT_EQ(tag_of("a1 NOOP"), "a1");
  EXPECT_EQ(tag_of("a1"), "a1");
  EXPECT_EQ(tag_of("a+1 NOOP"), "");
  EXPECT_EQ(tag_of("a(1 NOOP"), "");
  EXPECT_EQ(tag_of(" NOOP"), "");
  EXPECT_EQ(tag_of("]x NOOP"), "]x");
  EXPECT_EQ(tag_of(""), "");
}

TEST(FindLiteralMarker, Shapes) {
  LiteralMarker m = find_literal_marker("a1 APPEND x ~{12+}");
  EXPECT_EQ(m.kind, LiteralMarker::Kind::kValid);
  EXPECT_EQ(m.size, 12u);
  EXPECT_FALSE(m.synchronizing);
  EXPECT_TRUE(m.binary);
  EXPECT_EQ(m.start, 12u);
  EXPECT_EQ(find_literal_marker("a1 X \"{3}\"").kind, LiteralMarker::Kind::kNone);
  EXPECT_EQ(find_literal_marker("a1 X \"{3}").kind, LiteralMarker::Kind::kNone);
  EXPECT_EQ(find_literal_marker("x\"{3}", false).kind, LiteralMarker::Kind::kValid);
  EXPECT_EQ(find_literal_marker("{1 2}").kind, LiteralMarker::Kind::kBad);
}

}  // namespace
}  // namespace peregrine::imap
