#include "pop3/proto/dot_stuffer.h"

#include <gtest/gtest.h>

#include <string>

namespace peregrine::pop3 {
namespace {

// Feeds `message` in pieces of `piece` bytes.
std::string stuff(const std::string& message, size_t piece, DotStuffer stuffer = DotStuffer()) {
  std::string out;
  for (size_t i = 0; i < message.size() && !stuffer.done(); i += piece) {
    stuffer.feed(std::string_view(message).substr(i, piece), out);
  }
  stuffer.finish(out);
  return out;
}

struct Case {
  std::string in;
  std::string out;
};

TEST(DotStuffer, RetrCases) {
  const Case cases[] = {
      {"", ".\r\n"},
      {"a\r\n", "a\r\n.\r\n"},
      {".\r\n", "..\r\n.\r\n"},
      {"..x\r\n", "...x\r\n.\r\n"},
      {"a\r\n.\r\nb\r\n", "a\r\n..\r\nb\r\n.\r\n"},
      {"a.b\r\n .\r\n", "a.b\r\n .\r\n.\r\n"},
      {"no line end", "no line end\r\n.\r\n"},
      {"a\r\n.last", "a\r\n..last\r\n.\r\n"},
      {"a\r\n.", "a\r\n..\r\n.\r\n"},
      {"ends in CR\r", "ends in CR\r\n.\r\n"},
      {"bare\n.lf\n", "bare\n..lf\n.\r\n"},
      {"H: v\r\n\r\n.\r\n..\r\n", "H: v\r\n\r\n..\r\n...\r\n.\r\n"},
  };
  for (const Case& c : cases) {
    for (size_t piece : {1, 2, 3, 5, 1000}) {
      SCOPED_TRACE(c.in + " piece " + std::to_string(piece));
      EXPECT_EQ(stuff(c.in, piece), c.out);
    }
  }
}

TEST(DotStuffer, TopStopsAfterTheWantedLines) {
  const std::string message = "A: 1\r\nB: 2\r\n\r\nline1\r\n.line2\r\nline3\r\n";
  const Case cases[] = {
      {"0", "A: 1\r\nB: 2\r\n\r\n.\r\n"},
      {"1", "A: 1\r\nB: 2\r\n\r\nline1\r\n.\r\n"},
      {"2", "A: 1\r\nB: 2\r\n\r\nline1\r\n..line2\r\n.\r\n"},
      {"3", "A: 1\r\nB: 2\r\n\r\nline1\r\n..line2\r\nline3\r\n.\r\n"},
      {"100", "A: 1\r\nB: 2\r\n\r\nline1\r\n..line2\r\nline3\r\n.\r\n"},
  };
  for (const Case& c : cases) {
    for (size_t piece : {1, 4, 1000}) {
      SCOPED_TRACE(c.in + " piece " + std::to_string(piece));
      EXPECT_EQ(stuff(message, piece, DotStuffer(std::stoul(c.in))), c.out);
    }
  }
}

TEST(DotStuffer, TopOfAMessageWithoutBody) {
  EXPECT_EQ(stuff("A: 1\r\nB: 2", 3, DotStuffer(0)), "A: 1\r\nB: 2\r\n.\r\n");
  EXPECT_EQ(stuff("A: 1\r\n", 3, DotStuffer(5)), "A: 1\r\n.\r\n");
  EXPECT_EQ(stuff("A: 1\r\n\r\nbody", 2, DotStuffer(1)), "A: 1\r\n\r\nbody\r\n.\r\n");
}

TEST(DotStuffer, DoneMeansNoMoreInputNeeded) {
  DotStuffer stuffer(0);
  std::string out;
  stuffer.feed("A: 1\r\n", out);
  EXPECT_FALSE(stuffer.done());
  stuffer.feed("\r\nbody\r\n", out);
  EXPECT_TRUE(stuffer.done());
  stuffer.feed("more\r\n", out);
  EXPECT_EQ(out, "A: 1\r\n\r\n");
}

}  // namespace
}  // namespace peregrine::pop3
