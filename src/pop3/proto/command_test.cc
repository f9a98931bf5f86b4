#include "pop3/proto/command.h"

#include <gtest/gtest.h>

#include <string>

namespace peregrine::pop3 {
namespace {

TEST(Pop3Command, ParsesEveryCommand) {
  struct Case {
    std::string line;
    Verb verb;
    std::string text;
    std::string text2;
    bool has_msg;
    std::uint32_t msg;
    std::uint32_t lines;
  };
  const Case cases[] = {
      {"USER alice", Verb::kUser, "alice", "", false, 0, 0},
      {"user alice@example.org", Verb::kUser, "alice@example.org", "", false, 0, 0},
      {"PASS secret word ", Verb::kPass, "secret word ", "", false, 0, 0},
      {"APOP bob c4c9334bac560ecc979e58001b3e22fb", Verb::kApop, "bob",
       "c4c9334bac560ecc979e58001b3e22fb", false, 0, 0},
      {"AUTH", Verb::kAuth, "", "", false, 0, 0},
      {"AUTH plain", Verb::kAuth, "PLAIN", "", false, 0, 0},
      {"AUTH PLAIN AGFsaWNlAHNlY3JldA==", Verb::kAuth, "PLAIN", "AGFsaWNlAHNlY3JldA==", false, 0,
       0},
      {"STLS", Verb::kStls, "", "", false, 0, 0},
      {"capa", Verb::kCapa, "", "", false, 0, 0},
      {"STAT", Verb::kStat, "", "", false, 0, 0},
      {"LIST", Verb::kList, "", "", false, 0, 0},
      {"LIST 2", Verb::kList, "", "", true, 2, 0},
      {"RETR 1", Verb::kRetr, "", "", true, 1, 0},
      {"DELE 2147483647", Verb::kDele, "", "", true, 2147483647u, 0},
      {"NOOP", Verb::kNoop, "", "", false, 0, 0},
      {"RSET", Verb::kRset, "", "", false, 0, 0},
      {"TOP 3 0", Verb::kTop, "", "", true, 3, 0},
      {"ToP 3 10", Verb::kTop, "", "", true, 3, 10},
      {"UIDL", Verb::kUidl, "", "", false, 0, 0},
      {"UIDL 007", Verb::kUidl, "", "", true, 7, 0},
      {"QUIT", Verb::kQuit, "", "", false, 0, 0},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.line);
    ParsedCommand parsed = parse_command(c.line);
    ASSERT_TRUE(parsed.ok()) << parsed.error;
    EXPECT_EQ(parsed.command.verb, c.verb);
    EXPECT_EQ(parsed.command.text, c.text);
    EXPECT_EQ(parsed.command.text2, c.text2);
    EXPECT_EQ(parsed.command.has_initial, !c.text2.empty() && c.verb == Verb::kAuth);
    EXPECT_EQ(parsed.command.has_msg, c.has_msg);
    EXPECT_EQ(parsed.command.msg, c.msg);
    EXPECT_EQ(parsed.command.lines, c.lines);
  }
}

TEST(Pop3Command, RejectsBadLines) {
  const std::string bad[] = {
      "",
      "X",
      "RETRIEVE 1",
      "HELO",
      "STAT 1",
      "QUIT now",
      "USER",
      "USER a b",
      "USER  alice",
      "USER alice ",
      "PASS",
      "LIST 0",
      "LIST -1",
      "LIST +1",
      "LIST 1 2",
      "LIST x",
      "RETR",
      "RETR 2147483648",
      "RETR 99999999999",
      "TOP 1",
      "TOP 1 -1",
      "TOP 0 1",
      "DELE 1 1",
      "AUTH PLAIN a b",
      std::string("NOOP\0", 5),
      "USER a\tb",
      "USER \x7f",
      "LIST " + std::string(300, '1'),
      "USER " + std::string(kMaxCommandLine, 'a'),
  };
  for (const std::string& line : bad) {
    SCOPED_TRACE(line);
    ParsedCommand parsed = parse_command(line);
    EXPECT_FALSE(parsed.ok());
    // The error text goes on a "-ERR" line: one printable line.
    for (char c : parsed.error) {
      EXPECT_TRUE(c >= 0x20 && c < 0x7f);
    }
  }
}

TEST(Pop3Command, LongestLineIsAccepted) {
  std::string line = "USER " + std::string(kMaxCommandLine - 5, 'a');
  ASSERT_EQ(line.size(), kMaxCommandLine);
  EXPECT_TRUE(parse_command(line).ok());
  EXPECT_FALSE(parse_command(line + "a").ok());
}

}  // namespace
}  // namespace peregrine::pop3
