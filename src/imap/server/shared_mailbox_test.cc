// Many sessions on one mailbox: each sees the others' APPEND, STORE and
// EXPUNGE as untagged EXISTS, FETCH and EXPUNGE only where RFC 3501 §7.4.1
// allows, with sequence numbers that always mean what it was told; IDLE
// gets them at once through the wake callback.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>

#include "imap/server/test_harness.h"

namespace peregrine::imap::testing {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

class SharedMailboxTest : public ::testing::Test {
 protected:
  SharedMailboxTest() : a_(server_), b_(server_) {
    a_.login();
    b_.login();
    for (int i = 1; i <= 3; ++i) {
      a_.append("INBOX", message("m" + std::to_string(i)));
    }
    EXPECT_THAT(a_.run("s1 SELECT INBOX"), HasSubstr("* 3 RECENT\r\n"));
    EXPECT_THAT(b_.run("s2 SELECT INBOX"), HasSubstr("* 3 EXISTS\r\n* 0 RECENT\r\n"));
  }

  TestServer server_;
  TestClient a_;
  TestClient b_;
};

TEST_F(SharedMailboxTest, AppendShowsUpAtTheNextCommand) {
  a_.append("INBOX", message("m4"));  // A's own APPEND tells A (and claims \Recent)
  EXPECT_EQ(b_.run("b1 NOOP"), "* 4 EXISTS\r\n* 0 RECENT\r\nb1 OK NOOP completed\r\n");
  EXPECT_EQ(b_.run("b2 NOOP"), "b2 OK NOOP completed\r\n");
  // EXISTS may go out during FETCH too.
  a_.append("INBOX", message("m5"));
  EXPECT_EQ(b_.run("b3 FETCH 4 UID"),
            "* 4 FETCH (UID 4)\r\n* 5 EXISTS\r\n* 0 RECENT\r\nb3 OK Fetch completed\r\n");
}

TEST_F(SharedMailboxTest, RecentGoesToTheFirstSessionTold) {
  TestClient c(server_);
  c.login();
  c.append("INBOX", message("m4"));  // c has nothing selected
  EXPECT_EQ(b_.run("b1 NOOP"), "* 4 EXISTS\r\n* 1 RECENT\r\nb1 OK NOOP completed\r\n");
  EXPECT_EQ(a_.run("a1 NOOP"), "* 4 EXISTS\r\n* 3 RECENT\r\na1 OK NOOP completed\r\n");
  EXPECT_EQ(b_.run("b2 FETCH 4 FLAGS"),
            "* 4 FETCH (FLAGS (\\Recent))\r\nb2 OK Fetch completed\r\n");
  EXPECT_EQ(a_.run("a2 FETCH 4 FLAGS"), "* 4 FETCH (FLAGS ())\r\na2 OK Fetch completed\r\n");
}

TEST_F(SharedMailboxTest, ExpungeIsDeferredDuringFetchStoreSearch) {
  ASSERT_THAT(a_.run("a1 STORE 2 +FLAGS.SILENT (\\Deleted)"), StartsWith("a1 OK"));
  EXPECT_EQ(a_.run("a2 EXPUNGE"), "* 2 EXPUNGE\r\na2 OK Expunge completed\r\n");
  // B was not told: message 2 keeps its number, 3 is still 3; the flag
  // change of a message now gone is not reported.
  EXPECT_EQ(b_.run("b1 FETCH 1:3 UID"),
            "* 1 FETCH (UID 1)\r\n* 3 FETCH (UID 3)\r\n"
            "b1 NO [EXPUNGEISSUED] Some of the requested messages no longer exist\r\n");
  EXPECT_EQ(b_.run("b2 STORE 3 +FLAGS (\\Seen)"),
            "* 3 FETCH (FLAGS (\\Seen))\r\nb2 OK Store completed\r\n");
  EXPECT_EQ(b_.run("b3 SEARCH ALL"), "* SEARCH 1 3\r\nb3 OK Search completed\r\n");
  EXPECT_EQ(b_.run("b4 FETCH 2 FLAGS"),
            "b4 NO [EXPUNGEISSUED] Some of the requested messages no longer exist\r\n");
  // Then NOOP delivers it, and the numbers shift as the client expects.
  EXPECT_EQ(b_.run("b5 NOOP"), "* 2 EXPUNGE\r\nb5 OK NOOP completed\r\n");
  EXPECT_EQ(b_.run("b6 FETCH 2 UID"), "* 2 FETCH (UID 3)\r\nb6 OK Fetch completed\r\n");
  // A heard of B's \Seen.
  EXPECT_EQ(a_.run("a3 NOOP"), "* 2 FETCH (FLAGS (\\Seen \\Recent))\r\na3 OK NOOP completed\r\n");
}

TEST_F(SharedMailboxTest, FlagSearchesSeeOtherSessionsChanges) {
  // Flag keys read the hub's copy of each message's flags: it follows
  // another session's STORE, its EXPUNGE (a ghost in B's numbering matches
  // nothing) and its APPEND.
  ASSERT_THAT(a_.run("a1 STORE 1:2 +FLAGS.SILENT (\\Flagged)"), StartsWith("a1 OK"));
  EXPECT_EQ(b_.run("b1 SEARCH FLAGGED"),
            "* SEARCH 1 2\r\n* 1 FETCH (FLAGS (\\Flagged))\r\n"
            "* 2 FETCH (FLAGS (\\Flagged))\r\nb1 OK Search completed\r\n");
  ASSERT_THAT(a_.run("a2 STORE 1 +FLAGS.SILENT (\\Deleted)"), StartsWith("a2 OK"));
  ASSERT_THAT(a_.run("a3 EXPUNGE"), StartsWith("* 1 EXPUNGE\r\n"));
  a_.append("INBOX", message("m4"), "\\Flagged \\Seen");
  // B still numbers the expunged message 1; SEARCH may not tell it.
  EXPECT_EQ(b_.run("b2 SEARCH FLAGGED"),
            "* SEARCH 2\r\n* 4 EXISTS\r\n* 0 RECENT\r\nb2 OK Search completed\r\n");
  EXPECT_EQ(b_.run("b3 SEARCH UNSEEN"), "* SEARCH 2 3\r\nb3 OK Search completed\r\n");
  EXPECT_EQ(b_.run("b4 NOOP"), "* 1 EXPUNGE\r\nb4 OK NOOP completed\r\n");
  EXPECT_EQ(b_.run("b5 SEARCH FLAGGED SEEN"), "* SEARCH 3\r\nb5 OK Search completed\r\n");
}

TEST_F(SharedMailboxTest, UidCommandsMayCarryExpunge) {
  ASSERT_THAT(a_.run("a1 STORE 1 +FLAGS.SILENT (\\Deleted)"), StartsWith("a1 OK"));
  ASSERT_THAT(a_.run("a2 EXPUNGE"), StartsWith("* 1 EXPUNGE\r\n"));
  EXPECT_EQ(b_.run("b1 UID FETCH 1:* UID"),
            "* 2 FETCH (UID 2)\r\n* 3 FETCH (UID 3)\r\n* 1 EXPUNGE\r\nb1 OK Fetch completed\r\n");
  EXPECT_EQ(b_.run("b2 FETCH 1:* UID"),
            "* 1 FETCH (UID 2)\r\n* 2 FETCH (UID 3)\r\nb2 OK Fetch completed\r\n");
}

TEST_F(SharedMailboxTest, ExistsCountsMessagesExpungedButNotYetTold) {
  ASSERT_THAT(a_.run("a1 STORE 1 +FLAGS.SILENT (\\Deleted)"), StartsWith("a1 OK"));
  ASSERT_THAT(a_.run("a2 EXPUNGE"), StartsWith("* 1 EXPUNGE\r\n"));
  a_.append("INBOX", message("m4"));
  // During FETCH: the new message is announced as number 4, since 1 is
  // still there for B.
  EXPECT_EQ(b_.run("b1 FETCH 3 UID"),
            "* 3 FETCH (UID 3)\r\n* 4 EXISTS\r\n* 0 RECENT\r\nb1 OK Fetch completed\r\n");
  EXPECT_EQ(b_.run("b2 FETCH 4 UID"), "* 4 FETCH (UID 4)\r\nb2 OK Fetch completed\r\n");
  EXPECT_EQ(b_.run("b3 CHECK"), "* 1 EXPUNGE\r\nb3 OK Check completed\r\n");
  EXPECT_EQ(b_.run("b4 FETCH 3 UID"), "* 3 FETCH (UID 4)\r\nb4 OK Fetch completed\r\n");
}

TEST_F(SharedMailboxTest, FlagChangesOfOthers) {
  EXPECT_EQ(a_.run("a1 STORE 1:2 +FLAGS ($Done)"),
            "* 1 FETCH (FLAGS ($Done \\Recent))\r\n* 2 FETCH (FLAGS ($Done \\Recent))\r\n"
            "* FLAGS (\\Answered \\Flagged \\Deleted \\Seen \\Draft $Done)\r\n"
            "* OK [PERMANENTFLAGS (\\Answered \\Flagged \\Deleted \\Seen \\Draft $Done \\*)] "
            "Flags permitted\r\n"
            "a1 OK Store completed\r\n");
  EXPECT_EQ(b_.run("b1 UID SEARCH KEYWORD $Done"),
            "* SEARCH 1 2\r\n"
            "* FLAGS (\\Answered \\Flagged \\Deleted \\Seen \\Draft $Done)\r\n"
            "* OK [PERMANENTFLAGS (\\Answered \\Flagged \\Deleted \\Seen \\Draft $Done \\*)] "
            "Flags permitted\r\n"
            "* 1 FETCH (UID 1 FLAGS ($Done))\r\n* 2 FETCH (UID 2 FLAGS ($Done))\r\n"
            "b1 OK Search completed\r\n");
  // A FETCH of FLAGS answers the pending change itself: no second FETCH.
  ASSERT_THAT(a_.run("a2 STORE 3 +FLAGS.SILENT (\\Flagged)"), StartsWith("a2 OK"));
  EXPECT_EQ(b_.run("b2 FETCH 3 FLAGS"),
            "* 3 FETCH (FLAGS (\\Flagged))\r\nb2 OK Fetch completed\r\n");
  // .SILENT hides one's own change, not someone else's earlier one.
  ASSERT_THAT(a_.run("a3 STORE 3 +FLAGS.SILENT (\\Answered)"), StartsWith("a3 OK"));
  EXPECT_EQ(b_.run("b3 STORE 3 +FLAGS.SILENT (\\Seen)"),
            "* 3 FETCH (FLAGS (\\Answered \\Flagged \\Seen))\r\nb3 OK Store completed\r\n");
  EXPECT_EQ(a_.run("a4 NOOP"),
            "* 3 FETCH (FLAGS (\\Answered \\Flagged \\Seen \\Recent))\r\na4 OK NOOP completed\r\n");
}

TEST_F(SharedMailboxTest, IdleGetsUpdatesAtOnce) {
  EXPECT_EQ(b_.run("b1 IDLE"), "+ idling\r\n");
  EXPECT_EQ(b_.session().input_mode(), InputMode::kIdle);
  EXPECT_EQ(b_.poll(), "");
  a_.append("INBOX", message("m4"));
  EXPECT_EQ(b_.wakes(), 1);
  EXPECT_EQ(b_.poll(), "* 4 EXISTS\r\n* 0 RECENT\r\n");
  ASSERT_THAT(a_.run("a1 STORE 1 +FLAGS.SILENT (\\Deleted)"), StartsWith("a1 OK"));
  EXPECT_EQ(b_.wakes(), 2);
  ASSERT_THAT(a_.run("a2 EXPUNGE"), StartsWith("* 1 EXPUNGE\r\n"));
  // Two updates, one wake: the callback is not repeated until polled.
  EXPECT_EQ(b_.wakes(), 2);
  EXPECT_EQ(b_.poll(), "* 1 EXPUNGE\r\n");
  ASSERT_THAT(a_.run("a3 STORE 1 +FLAGS.SILENT (\\Seen)"), StartsWith("a3 OK"));
  EXPECT_EQ(b_.wakes(), 3);
  EXPECT_EQ(b_.poll(), "* 1 FETCH (FLAGS (\\Seen))\r\n");
  EXPECT_EQ(b_.run("DONE"), "b1 OK Idle completed\r\n");
  EXPECT_EQ(b_.session().input_mode(), InputMode::kCommand);
  EXPECT_EQ(
      b_.run("b2 FETCH 1:* UID"),
      "* 1 FETCH (UID 2)\r\n* 2 FETCH (UID 3)\r\n* 3 FETCH (UID 4)\r\nb2 OK Fetch completed\r\n");
  // Not idling: updates wait for a command, and do not wake.
  a_.append("INBOX", message("m5"));
  EXPECT_EQ(b_.wakes(), 3);
  EXPECT_EQ(b_.poll(), "");
}

TEST_F(SharedMailboxTest, IdleSendsWhatIsPendingFirst) {
  a_.append("INBOX", message("m4"));
  EXPECT_EQ(b_.run("b1 IDLE"), "+ idling\r\n* 4 EXISTS\r\n* 0 RECENT\r\n");
  EXPECT_EQ(b_.run("done"), "b1 OK Idle completed\r\n");
  EXPECT_EQ(b_.run("b2 IDLE"), "+ idling\r\n");
  EXPECT_EQ(b_.run("b3 NOOP"), "b2 BAD Expected DONE to end IDLE\r\n");
  EXPECT_EQ(b_.session().input_mode(), InputMode::kCommand);
  // IDLE without a selected mailbox.
  TestClient c(server_);
  c.login();
  EXPECT_EQ(c.run("c1 IDLE"), "+ idling\r\n");
  EXPECT_EQ(c.poll(), "");
  EXPECT_EQ(c.run("DONE"), "c1 OK Idle completed\r\n");
}

TEST_F(SharedMailboxTest, IdleCheckPicksUpFilesOtherProgramsDrop) {
  EXPECT_EQ(b_.run("b1 IDLE"), "+ idling\r\n");
  {
    std::ofstream f(server_.maildir() / "new" / "1700000000.M1P1.elsewhere");
    f << "Subject: dropped\r\n\r\nby hand\r\n";
  }
  Reply r = b_.session().idle_check();
  EXPECT_EQ(r.out, "* 4 EXISTS\r\n* 1 RECENT\r\n");
  EXPECT_EQ(b_.run("DONE"), "b1 OK Idle completed\r\n");
  EXPECT_EQ(b_.run("b2 FETCH 4 (UID BODY[HEADER.FIELDS (SUBJECT)])"),
            "* 4 FETCH (UID 4 BODY[HEADER.FIELDS (SUBJECT)] {20}\r\nSubject: dropped\r\n\r\n "
            "FLAGS (\\Seen \\Recent))\r\nb2 OK Fetch completed\r\n");
  EXPECT_EQ(a_.run("a1 NOOP"), "* 4 EXISTS\r\n* 3 RECENT\r\na1 OK NOOP completed\r\n");
  // (A's client was never told of message 4 before its \Seen: it fetches
  // the flags of new messages itself.)
}

TEST_F(SharedMailboxTest, DeletedMailboxEndsTheOtherSessions) {
  ASSERT_THAT(a_.run("a1 CREATE Shared"), StartsWith("a1 OK"));
  ASSERT_THAT(b_.run("b1 SELECT Shared"), HasSubstr("b1 OK"));
  ASSERT_THAT(a_.run("a2 DELETE Shared"), StartsWith("a2 OK"));
  EXPECT_EQ(b_.run("b2 NOOP"),
            "* BYE Selected mailbox was deleted, have to disconnect\r\nb2 OK NOOP completed\r\n");
  EXPECT_EQ(b_.last_action(), SessionAction::kClose);
  EXPECT_EQ(b_.session().state(), SessionState::kLogout);
}

TEST_F(SharedMailboxTest, CloseOfOneSessionExpungesForTheOthers) {
  ASSERT_THAT(a_.run("a1 STORE 2 +FLAGS.SILENT (\\Deleted)"), StartsWith("a1 OK"));
  EXPECT_EQ(a_.run("a2 CLOSE"), "a2 OK Close completed\r\n");
  EXPECT_EQ(b_.run("b1 NOOP"), "* 2 EXPUNGE\r\nb1 OK NOOP completed\r\n");
}

TEST_F(SharedMailboxTest, MoveAcrossSessions) {
  EXPECT_THAT(a_.run("a1 MOVE 1 Archive"), HasSubstr("* 1 EXPUNGE\r\na1 OK Move completed\r\n"));
  ASSERT_THAT(b_.run("b1 SELECT Archive"), HasSubstr("* 1 EXISTS\r\n"));
  // B left INBOX when it selected Archive: nothing pending from there.
  EXPECT_EQ(b_.run("b2 NOOP"), "b2 OK NOOP completed\r\n");
  EXPECT_THAT(a_.run("a2 COPY 1 Archive"), StartsWith("a2 OK [COPYUID"));
  EXPECT_EQ(b_.run("b3 NOOP"), "* 2 EXISTS\r\n* 2 RECENT\r\nb3 OK NOOP completed\r\n");
}

}  // namespace
}  // namespace peregrine::imap::testing
