// Hostile and malformed input in every state: each line gets a tagged (or
// untagged) answer, nothing crashes (the tests run under ASan/UBSan), the
// session stays usable and the mailbox is unchanged.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <random>

#include "imap/server/test_harness.h"

namespace peregrine::imap::testing {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

const std::string kHostile[] = {
    "a FETCH 1:4294967295 (BODY[1.2.3.4.5.6.7.8.9]<4294967295.4294967295>)",
    "a FETCH 4294967296 FLAGS",
    "a FETCH -1 FLAGS",
    "a FETCH * (BODY[HEADER.FIELDS ()])",
    "a FETCH * (BODY.PEEK[1.MIME] BODY.PEEK[0] BINARY.SIZE[0])",
    "a UID FETCH 4294967295:* (FLAGS BODY.PEEK[]<0.1>)",
    "a UID FETCH 1:* (BINARY.PEEK[1.1.1.1] BINARY.SIZE[1.1])",
    "a FETCH 1 (FLAGS",
    "a FETCH 1 ((((((((((FLAGS))))))))))",
    "a STORE 1:* FLAGS (\\*)",
    "a STORE 1:* +FLAGS (\\Recent \\Seen)",
    "a STORE * +FLAGS.SILENT ()",
    "a STORE 1 UNCHANGEDSINCE FLAGS ()",
    "a SEARCH NOT NOT NOT NOT NOT NOT NOT NOT NOT NOT NOT NOT ALL",
    "a SEARCH OR OR OR OR ALL ALL ALL ALL",
    "a SEARCH ((((((((((((((((((((((((((((((((((((ALL))))))))))))))))))))))))))))))))))))",
    "a SEARCH LARGER 18446744073709551615 SMALLER 0",
    "a SEARCH UID 4294967295:1 HEADER \"\" \"\"",
    "a SEARCH CHARSET \"\" ALL",
    "a SEARCH SENTON 1-Jan-0001 BEFORE 31-Dec-9999",
    "a UID SEARCH YOUNGER 18446744073709551615 OLDER 18446744073709551615",
    "a COPY 1:* \"\"",
    "a MOVE * INBOX",
    "a CREATE \"\"",
    "a CREATE /",
    "a CREATE \"a/../b\"",
    "a CREATE \".\"",
    "a CREATE \"a\\\\b\"",
    std::string("a CREATE {3+}\r\nA\0B", 19),
    "a RENAME INBOX INBOX",
    "a RENAME \"\" x",
    "a DELETE \"\"",
    "a SELECT \"\"",
    "a SELECT \"..\"",
    "a STATUS INBOX ()",
    "a STATUS \"\" (MESSAGES)",
    "a LIST \"\" \"****%%%%****%%%%\"",
    "a LIST \"*\" \"*\"",
    "a LSUB \"%\" \"%/%/%/%\"",
    "a APPEND INBOX (\\Seen) {0}",
    "a APPEND INBOX () \"\" {1+}\r\nx",
    "a APPEND INBOX (\\Seen \\Seen \\Seen) {1+}\r\nx",
    "a EXPUNGE extra",
    "a UID EXPUNGE *",
    "a ID (\"a\" \"b\" \"c\")",
    "a ENABLE",
    "a NAMESPACE x",
    "a LOGIN a b",
    "a AUTHENTICATE PLAIN ====",
    "a CAPABILITY \r",
    "\x01\x02\x03",
    "* NOOP",
    "a" + std::string(1, '\0') + " NOOP",
    "a UID",
    "a UID FROB 1",
    "a SORT (ARRIVAL) UTF-8 ALL",
    "a THREAD REFERENCES UTF-8 ALL",
    "a IDLE extra",
};

class HostileInputTest : public ::testing::Test {
 protected:
  HostileInputTest() : c_(server_) {
    c_.login();
    c_.append("INBOX", message("one"));
    c_.append("INBOX",
              "Subject: two\r\nContent-Type: multipart/mixed; boundary=b\r\n\r\n--b\r\n"
              "\r\npart\r\n--b--\r\n");
  }

  // Sends `line` and checks that it got an answer and left no exchange open.
  void expect_answered(const std::string& line) {
    std::string out = c_.run(line);
    ASSERT_FALSE(out.empty()) << line;
    std::string tagged = tagged_line(out);
    EXPECT_TRUE(tagged.starts_with("a ") || tagged.starts_with("* BAD") || tagged.starts_with("+"))
        << line << " -> " << out;
    if (c_.session().input_mode() != InputMode::kCommand) {
      (void)c_.run("*");  // cancel an AUTHENTICATE, end an IDLE
      (void)c_.run("DONE");
    }
  }

  TestServer server_;
  TestClient c_;
};

TEST_F(HostileInputTest, EveryStateAnswersAndSurvives) {
  for (const std::string& line : kHostile) {
    expect_answered(line);
  }
  ASSERT_THAT(c_.run("s1 SELECT INBOX"), HasSubstr("s1 OK"));
  for (const std::string& line : kHostile) {
    expect_answered(line);
    if (c_.session().state() != SessionState::kSelected) {
      ASSERT_THAT(c_.run("s2 SELECT INBOX"), HasSubstr("s2 OK")) << "after " << line;
    }
  }
  EXPECT_THAT(c_.run("s3 FETCH 1:* UID"), HasSubstr("s3 OK Fetch completed"));
}

TEST_F(HostileInputTest, RandomTokenSoup) {
  const char* const tokens[] = {
      "FETCH",  "UID",        "STORE",    "SEARCH",  "1",       "*",     "1:*",
      "0",      "(",          ")",        "[",       "]",       "<",     ">",
      "BODY",   "BODY.PEEK[", "FLAGS",    "\\Seen",  "+FLAGS",  "\"",    "{0}",
      "{0+}",   "~{0}",       "NOT",      "OR",      "HEADER",  "INBOX", "COPY",
      "MOVE",   "LIST",       "%",        "SELECT",  "EXAMINE", "CLOSE", "EXPUNGE",
      "APPEND", "\x80",       "\t",       "CHARSET", "IDLE",    "DONE",  "AUTHENTICATE",
      "PLAIN",  "=",          "UNSELECT", "RENAME"};
  std::mt19937 rng(42);
  ASSERT_THAT(c_.run("s1 SELECT INBOX"), HasSubstr("s1 OK"));
  for (int i = 0; i < 3000; ++i) {
    std::string line = "a";
    int n = static_cast<int>(rng() % 8);
    for (int k = 0; k < n; ++k) {
      line += (rng() % 4 == 0) ? "" : " ";
      line += tokens[rng() % std::size(tokens)];
    }
    (void)c_.send(line + "\r\n");
    if (c_.session().input_mode() != InputMode::kCommand) {
      (void)c_.run("*");
      (void)c_.run("DONE");
    }
    if (c_.last_action() == SessionAction::kClose) {
      break;
    }
  }
  // Whatever happened, the session still answers (after an empty line ends
  // a command whose last line announced an empty literal).
  (void)c_.send("\r\n");
  std::string out = c_.run("z1 NOOP");
  EXPECT_THAT(out, ::testing::AnyOf(HasSubstr("z1 OK"), HasSubstr("z1 BAD"))) << out;
}

}  // namespace
}  // namespace peregrine::imap::testing
