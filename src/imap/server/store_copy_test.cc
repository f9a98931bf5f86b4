// STORE (FLAGS, +FLAGS, -FLAGS, .SILENT, keywords), COPY and MOVE, and
// their UID forms.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "imap/server/test_harness.h"

namespace peregrine::imap::testing {
namespace {

using ::testing::HasSubstr;
using ::testing::MatchesRegex;
using ::testing::StartsWith;

class StoreCopyTest : public ::testing::Test {
 protected:
  StoreCopyTest() : c_(server_) {
    c_.login();
    for (int i = 1; i <= 4; ++i) {
      c_.append("INBOX", message("m" + std::to_string(i)));
    }
    std::string out = c_.run("s1 SELECT INBOX");
    EXPECT_THAT(out, HasSubstr("s1 OK")) << out;
  }

  TestServer server_;
  TestClient c_;
};

TEST_F(StoreCopyTest, Store) {
  EXPECT_EQ(c_.run("a1 STORE 1 +FLAGS (\\Seen \\Flagged)"),
            "* 1 FETCH (FLAGS (\\Flagged \\Seen \\Recent))\r\na1 OK Store completed\r\n");
  EXPECT_EQ(c_.run("a2 STORE 1 -FLAGS (\\flagged)"),
            "* 1 FETCH (FLAGS (\\Seen \\Recent))\r\na2 OK Store completed\r\n");
  EXPECT_EQ(c_.run("a3 STORE 1:2 FLAGS ($Label1 \\Answered)"),
            "* 1 FETCH (FLAGS (\\Answered $Label1 \\Recent))\r\n"
            "* 2 FETCH (FLAGS (\\Answered $Label1 \\Recent))\r\n"
            "* FLAGS (\\Answered \\Flagged \\Deleted \\Seen \\Draft $Label1)\r\n"
            "* OK [PERMANENTFLAGS (\\Answered \\Flagged \\Deleted \\Seen \\Draft $Label1 \\*)] "
            "Flags permitted\r\n"
            "a3 OK Store completed\r\n");
  EXPECT_EQ(c_.run("a4 STORE 2 FLAGS.SILENT ()"), "a4 OK Store completed\r\n");
  // Keywords compare without case; a message keeps the first spelling it got.
  EXPECT_EQ(c_.run("a5 UID STORE 1:3 +FLAGS ($label1)"),
            "* 1 FETCH (UID 1 FLAGS (\\Answered $Label1 \\Recent))\r\n"
            "* 2 FETCH (UID 2 FLAGS ($label1 \\Recent))\r\n"
            "* 3 FETCH (UID 3 FLAGS ($label1 \\Recent))\r\n"
            "a5 OK Store completed\r\n");
  EXPECT_EQ(c_.run("a6 FETCH 1:4 FLAGS"),
            "* 1 FETCH (FLAGS (\\Answered $Label1 \\Recent))\r\n"
            "* 2 FETCH (FLAGS ($label1 \\Recent))\r\n"
            "* 3 FETCH (FLAGS ($label1 \\Recent))\r\n"
            "* 4 FETCH (FLAGS (\\Recent))\r\n"
            "a6 OK Fetch completed\r\n");
  // \Recent cannot be set or cleared by a client: it is ignored.
  EXPECT_EQ(c_.run("a7 STORE 4 -FLAGS (\\Recent)"),
            "* 4 FETCH (FLAGS (\\Recent))\r\na7 OK Store completed\r\n");
}

TEST_F(StoreCopyTest, StoreErrors) {
  EXPECT_EQ(c_.run("a1 STORE 1 +FLAGS (\\Bogus)"), "a1 BAD invalid system flag \\Bogus\r\n");
  EXPECT_EQ(c_.run("a2 STORE 9 +FLAGS (\\Seen)"),
            "a2 BAD invalid message sequence number 9 (4 messages)\r\n");
  EXPECT_EQ(c_.run("a3 STORE 1 FLAGZ (\\Seen)"), "a3 BAD STORE: unknown store item FLAGZ\r\n");
  EXPECT_EQ(c_.run("a4 UID STORE 9 +FLAGS (\\Seen)"), "a4 OK Store completed\r\n");
  EXPECT_THAT(c_.run("a5 STORE 1 +FLAGS (" + std::string(200, 'k') + ")"),
              StartsWith("a5 BAD keyword"));
}

TEST_F(StoreCopyTest, Copy) {
  ASSERT_EQ(c_.run("a0 STORE 2 +FLAGS (\\Flagged kw)"),
            "* 2 FETCH (FLAGS (\\Flagged kw \\Recent))\r\n"
            "* FLAGS (\\Answered \\Flagged \\Deleted \\Seen \\Draft kw)\r\n"
            "* OK [PERMANENTFLAGS (\\Answered \\Flagged \\Deleted \\Seen \\Draft kw \\*)] Flags "
            "permitted\r\n"
            "a0 OK Store completed\r\n");
  EXPECT_THAT(c_.run("a1 COPY 2:3 Archive"),
              MatchesRegex("a1 OK \\[COPYUID [0-9]+ 2:3 1:2\\] Copy completed\r\n"));
  EXPECT_THAT(c_.run("a2 UID COPY 4,1 Archive"),
              MatchesRegex("a2 OK \\[COPYUID [0-9]+ 1,4 3:4\\] Copy completed\r\n"));
  EXPECT_EQ(c_.run("a3 STATUS Archive (MESSAGES)"),
            "* STATUS Archive (MESSAGES 4)\r\na3 OK Status completed\r\n");
  EXPECT_EQ(c_.run("a4 COPY 1 Nope"), "a4 NO [TRYCREATE] no such mailbox Nope\r\n");
  EXPECT_EQ(c_.run("a5 COPY 7 Archive"),
            "a5 BAD invalid message sequence number 7 (4 messages)\r\n");
  EXPECT_EQ(c_.run("a6 UID COPY 70:80 Archive"), "a6 OK Copy completed\r\n");
  // Copying into the selected mailbox announces the new messages.
  EXPECT_THAT(c_.run("a7 COPY 1 INBOX"),
              MatchesRegex("\\* 5 EXISTS\r\n\\* 5 RECENT\r\na7 OK \\[COPYUID [0-9]+ 1 5\\] Copy "
                           "completed\r\n"));
  ASSERT_THAT(tagged_line(c_.run("a8 EXAMINE Archive")), StartsWith("a8 OK"));
  // Flags and keywords travel; the copies are \Recent (no session claimed them).
  EXPECT_EQ(c_.run("a9 FETCH 1 FLAGS"),
            "* 1 FETCH (FLAGS (\\Flagged kw \\Recent))\r\na9 OK Fetch completed\r\n");
}

TEST_F(StoreCopyTest, Move) {
  std::string out = c_.run("a1 MOVE 2:3 Trash");
  EXPECT_THAT(out, MatchesRegex("\\* OK \\[COPYUID [0-9]+ 2:3 1:2\\] Moved UIDs\r\n"
                                "\\* 2 EXPUNGE\r\n\\* 2 EXPUNGE\r\na1 OK Move completed\r\n"));
  EXPECT_THAT(c_.run("a2 UID MOVE 4 Trash"),
              MatchesRegex("\\* OK \\[COPYUID [0-9]+ 4 3\\] Moved UIDs\r\n"
                           "\\* 2 EXPUNGE\r\na2 OK Move completed\r\n"));
  EXPECT_EQ(c_.run("a3 FETCH 1:* UID"), "* 1 FETCH (UID 1)\r\na3 OK Fetch completed\r\n");
  EXPECT_EQ(c_.run("a4 MOVE 1 Nope"), "a4 NO [TRYCREATE] no such mailbox Nope\r\n");
  EXPECT_THAT(c_.run("a5 MOVE 1 INBOX"), StartsWith("a5 NO [CANNOT]"));
  EXPECT_EQ(c_.run("a6 STATUS Trash (MESSAGES)"),
            "* STATUS Trash (MESSAGES 3)\r\na6 OK Status completed\r\n");
}

}  // namespace
}  // namespace peregrine::imap::testing
