// SELECT, EXAMINE, CREATE, DELETE, RENAME, SUBSCRIBE, UNSUBSCRIBE, LIST,
// LSUB, STATUS, APPEND, CHECK, CLOSE, UNSELECT, EXPUNGE and UID EXPUNGE.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "imap/server/test_harness.h"

namespace peregrine::imap::testing {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::StartsWith;

class MailboxTest : public ::testing::Test {
 protected:
  MailboxTest() : c_(server_) { c_.login(); }

  TestServer server_;
  TestClient c_;
};

TEST_F(MailboxTest, SelectReportsTheMailbox) {
  c_.append("INBOX", message("one"), "\\Seen");
  c_.append("INBOX", message("two"), "$Important");
  std::string out = c_.run("a1 SELECT inbox");
  EXPECT_THAT(out,
              StartsWith("* FLAGS (\\Answered \\Flagged \\Deleted \\Seen \\Draft $Important)\r\n"
                         "* OK [PERMANENTFLAGS (\\Answered \\Flagged \\Deleted \\Seen \\Draft "
                         "$Important \\*)] Flags permitted\r\n"
                         "* 2 EXISTS\r\n"
                         "* 2 RECENT\r\n"
                         "* OK [UNSEEN 2] First unseen message\r\n"
                         "* OK [UIDVALIDITY "));
  EXPECT_THAT(out, HasSubstr("* OK [UIDNEXT 3] Predicted next UID\r\n"
                             "a1 OK [READ-WRITE] Select completed\r\n"));
  EXPECT_EQ(c_.session().state(), SessionState::kSelected);
  // \Recent went to this session: a second one sees none.
  TestClient other(server_);
  other.login();
  EXPECT_THAT(other.run("b1 SELECT INBOX"), HasSubstr("* 2 EXISTS\r\n* 0 RECENT\r\n"));
}

TEST_F(MailboxTest, ExamineIsReadOnly) {
  c_.append("INBOX", message("one"));
  std::string out = c_.run("a1 EXAMINE INBOX");
  EXPECT_THAT(out, HasSubstr("* OK [PERMANENTFLAGS ()] No permanent flags permitted\r\n"));
  EXPECT_THAT(out, HasSubstr("* 1 EXISTS\r\n* 1 RECENT\r\n"));
  EXPECT_THAT(out, HasSubstr("a1 OK [READ-ONLY] Examine completed\r\n"));
  EXPECT_EQ(c_.run("a2 STORE 1 +FLAGS (\\Deleted)"),
            "a2 NO [READ-ONLY] The mailbox is read-only (EXAMINE)\r\n");
  EXPECT_EQ(c_.run("a3 EXPUNGE"), "a3 NO [READ-ONLY] The mailbox is read-only (EXAMINE)\r\n");
  EXPECT_EQ(c_.run("a4 MOVE 1 Trash"), "a4 NO [READ-ONLY] The mailbox is read-only (EXAMINE)\r\n");
  // Reading does not set \Seen in a read-only mailbox.
  EXPECT_THAT(c_.run("a5 FETCH 1 (BODY[TEXT] FLAGS)"),
              HasSubstr("FETCH (BODY[TEXT] {8}\r\nHello.\r\n FLAGS (\\Recent))"));
  // EXAMINE claimed nothing: SELECT still gets the \Recent message.
  EXPECT_THAT(c_.run("a6 SELECT INBOX"), HasSubstr("* 1 RECENT\r\n"));
}

TEST_F(MailboxTest, SelectFailures) {
  EXPECT_EQ(c_.run("a1 SELECT INBOX"), c_.run("a1 SELECT INBOX"));
  EXPECT_EQ(tagged_line(c_.run("a2 SELECT Nope")), "a2 NO [NONEXISTENT] no such mailbox Nope");
  // A failed SELECT leaves the client with no mailbox selected.
  EXPECT_EQ(c_.session().state(), SessionState::kAuthenticated);
  EXPECT_EQ(c_.run("a3 CREATE A/B"), "a3 OK Create completed\r\n");
  EXPECT_THAT(tagged_line(c_.run("a4 SELECT A")), StartsWith("a4 NO [NONEXISTENT]"));
  EXPECT_EQ(c_.run("a5 SELECT INBOX (CONDSTORE)"),
            "a5 BAD Parameter CONDSTORE is not supported\r\n");
}

TEST_F(MailboxTest, Create) {
  EXPECT_EQ(c_.run("a1 CREATE Projects"), "a1 OK Create completed\r\n");
  EXPECT_EQ(c_.run("a2 CREATE Projects"), "a2 NO [ALREADYEXISTS] mailbox Projects exists\r\n");
  EXPECT_EQ(c_.run("a3 CREATE inbox"), "a3 NO [ALREADYEXISTS] INBOX always exists\r\n");
  EXPECT_EQ(c_.run("a4 CREATE Work/"), "a4 OK Create completed\r\n");
  EXPECT_EQ(c_.run("a5 CREATE &Jjo"),
            "a5 NO [CANNOT] Mailbox name is not valid modified UTF-7\r\n");
  EXPECT_EQ(c_.run("a6 CREATE A*B"), "a6 BAD CREATE: unexpected *B\r\n");
  EXPECT_EQ(c_.run("a6 CREATE \"A%B\""), "a6 NO [CANNOT] Mailbox names cannot contain * or %\r\n");
  EXPECT_THAT(tagged_line(c_.run("a7 CREATE A//B")), StartsWith("a7 NO [CANNOT]"));
  EXPECT_THAT(tagged_line(c_.run("a8 CREATE \"caf\xc3\xa9\"")), StartsWith("a8 NO [CANNOT]"));
  EXPECT_EQ(c_.run("a9 CREATE Caf&AOk-"), "a9 OK Create completed\r\n");
  EXPECT_EQ(c_.run("b1 CREATE Spam (USE (\\Junk))"), "b1 OK Create completed\r\n");
  EXPECT_EQ(c_.run("b2 CREATE Bad (USE (\\Nonsense))"), "b2 BAD Unsupported special use\r\n");
  EXPECT_EQ(c_.run("b3 LIST \"\" %"),
            "* LIST (\\HasNoChildren \\Archive) \"/\" Archive\r\n"
            "* LIST (\\HasNoChildren) \"/\" Caf&AOk-\r\n"
            "* LIST (\\HasNoChildren \\Drafts) \"/\" Drafts\r\n"
            "* LIST (\\HasNoChildren) \"/\" INBOX\r\n"
            "* LIST (\\HasNoChildren \\Junk) \"/\" Junk\r\n"
            "* LIST (\\HasNoChildren) \"/\" Projects\r\n"
            "* LIST (\\HasNoChildren \\Sent) \"/\" Sent\r\n"
            "* LIST (\\HasNoChildren \\Junk) \"/\" Spam\r\n"
            "* LIST (\\HasNoChildren \\Trash) \"/\" Trash\r\n"
            "* LIST (\\HasNoChildren) \"/\" Work\r\n"
            "b3 OK List completed\r\n");
}

TEST_F(MailboxTest, Delete) {
  ASSERT_EQ(c_.run("a1 CREATE A/B"), "a1 OK Create completed\r\n");
  ASSERT_EQ(c_.run("a2 CREATE A"), "a2 OK Create completed\r\n");
  EXPECT_EQ(c_.run("a3 DELETE A"), "a3 OK Delete completed\r\n");
  EXPECT_EQ(c_.run("a4 LIST \"\" A"),
            "* LIST (\\Noselect \\HasChildren) \"/\" A\r\na4 OK List completed\r\n");
  EXPECT_EQ(c_.run("a4 LIST \"\" A/*"),
            "* LIST (\\HasNoChildren) \"/\" A/B\r\na4 OK List completed\r\n");
  EXPECT_THAT(tagged_line(c_.run("a5 DELETE A")), StartsWith("a5 NO [NONEXISTENT]"));
  EXPECT_EQ(c_.run("a6 DELETE INBOX"), "a6 NO [CANNOT] INBOX cannot be deleted\r\n");
  EXPECT_THAT(tagged_line(c_.run("a7 DELETE Nope")), StartsWith("a7 NO [NONEXISTENT]"));
  // Deleting the selected mailbox leaves it first.
  ASSERT_THAT(tagged_line(c_.run("a8 SELECT A/B")), StartsWith("a8 OK"));
  EXPECT_EQ(c_.run("a9 DELETE A/B"), "a9 OK Delete completed\r\n");
  EXPECT_EQ(c_.session().state(), SessionState::kAuthenticated);
  EXPECT_EQ(c_.run("b1 LIST \"\" A/*"), "b1 OK List completed\r\n");
}

TEST_F(MailboxTest, Rename) {
  ASSERT_EQ(c_.run("a1 CREATE A/B"), "a1 OK Create completed\r\n");
  ASSERT_EQ(c_.run("a2 CREATE A"), "a2 OK Create completed\r\n");
  c_.append("A", message("kept"));
  EXPECT_EQ(c_.run("a3 RENAME A C"), "a3 OK Rename completed\r\n");
  EXPECT_EQ(c_.run("a4 LIST \"\" *"),
            "* LIST (\\HasNoChildren \\Archive) \"/\" Archive\r\n"
            "* LIST (\\HasChildren) \"/\" C\r\n"
            "* LIST (\\HasNoChildren) \"/\" C/B\r\n"
            "* LIST (\\HasNoChildren \\Drafts) \"/\" Drafts\r\n"
            "* LIST (\\HasNoChildren) \"/\" INBOX\r\n"
            "* LIST (\\HasNoChildren \\Junk) \"/\" Junk\r\n"
            "* LIST (\\HasNoChildren \\Sent) \"/\" Sent\r\n"
            "* LIST (\\HasNoChildren \\Trash) \"/\" Trash\r\n"
            "a4 OK List completed\r\n");
  EXPECT_EQ(c_.run("a5 STATUS C (MESSAGES)"),
            "* STATUS C (MESSAGES 1)\r\na5 OK Status completed\r\n");
  EXPECT_EQ(c_.run("a6 RENAME C Sent"), "a6 NO [ALREADYEXISTS] mailbox Sent exists\r\n");
  EXPECT_THAT(tagged_line(c_.run("a7 RENAME Nope X")), StartsWith("a7 NO [NONEXISTENT]"));
  EXPECT_THAT(tagged_line(c_.run("a8 RENAME C C/D")), StartsWith("a8 NO [CANNOT]"));
  EXPECT_EQ(c_.run("a9 RENAME C &Jjo"),
            "a9 NO [CANNOT] Mailbox name is not valid modified UTF-7\r\n");
}

TEST_F(MailboxTest, RenameTheSelectedMailboxKeepsItWorking) {
  ASSERT_EQ(c_.run("a1 CREATE Old"), "a1 OK Create completed\r\n");
  c_.append("Old", message("one"));
  ASSERT_THAT(tagged_line(c_.run("a2 SELECT Old")), StartsWith("a2 OK"));
  EXPECT_EQ(c_.run("a3 RENAME Old New"), "a3 OK Rename completed\r\n");
  EXPECT_EQ(c_.run("a4 FETCH 1 (UID BODY.PEEK[HEADER.FIELDS (Subject)])"),
            "* 1 FETCH (UID 1 BODY[HEADER.FIELDS (Subject)] {16}\r\nSubject: one\r\n\r\n)\r\n"
            "a4 OK Fetch completed\r\n");
  TestClient other(server_);
  other.login();
  other.append("New", message("two"));  // the view hears of it under its new name
  EXPECT_EQ(c_.run("a5 NOOP"), "* 2 EXISTS\r\n* 2 RECENT\r\na5 OK NOOP completed\r\n");
}

TEST_F(MailboxTest, RenameInboxMovesItsMessages) {
  c_.append("INBOX", message("one"));
  c_.append("INBOX", message("two"));
  EXPECT_EQ(c_.run("a1 RENAME INBOX Old-Inbox"), "a1 OK Rename completed\r\n");
  EXPECT_EQ(c_.run("a2 STATUS INBOX (MESSAGES)"),
            "* STATUS INBOX (MESSAGES 0)\r\na2 OK Status completed\r\n");
  EXPECT_EQ(c_.run("a3 STATUS Old-Inbox (MESSAGES)"),
            "* STATUS Old-Inbox (MESSAGES 2)\r\na3 OK Status completed\r\n");
}

TEST_F(MailboxTest, SubscribeAndLsub) {
  EXPECT_EQ(c_.run("a1 UNSUBSCRIBE Sent"), "a1 OK Unsubscribe completed\r\n");
  EXPECT_THAT(tagged_line(c_.run("a2 UNSUBSCRIBE Sent")), StartsWith("a2 NO [NONEXISTENT]"));
  EXPECT_EQ(c_.run("a3 SUBSCRIBE Lists/imap"), "a3 OK Subscribe completed\r\n");
  EXPECT_EQ(c_.run("a4 LSUB \"\" %"),
            "* LSUB () \"/\" Archive\r\n"
            "* LSUB () \"/\" Drafts\r\n"
            "* LSUB () \"/\" INBOX\r\n"
            "* LSUB () \"/\" Junk\r\n"
            "* LSUB (\\Noselect) \"/\" Lists\r\n"
            "* LSUB () \"/\" Trash\r\n"
            "a4 OK Lsub completed\r\n");
  // A subscribed name that does not exist is \Noselect.
  EXPECT_EQ(c_.run("a5 LSUB Lists/ *"),
            "* LSUB (\\Noselect) \"/\" Lists/imap\r\na5 OK Lsub completed\r\n");
  EXPECT_EQ(c_.run("a6 SUBSCRIBE &Jjo"),
            "a6 NO [CANNOT] Mailbox name is not valid modified UTF-7\r\n");
  EXPECT_EQ(c_.run("a7 LIST (SUBSCRIBED) \"\" L*"),
            "* LIST (\\NonExistent \\Subscribed) \"/\" Lists/imap\r\na7 OK List completed\r\n");
  EXPECT_EQ(
      c_.run("a8 LIST \"\" T* RETURN (SUBSCRIBED)"),
      "* LIST (\\HasNoChildren \\Trash \\Subscribed) \"/\" Trash\r\na8 OK List completed\r\n");
}

TEST_F(MailboxTest, ListPatterns) {
  ASSERT_EQ(c_.run("a1 CREATE Work/2024/Q1"), "a1 OK Create completed\r\n");
  ASSERT_EQ(c_.run("a2 CREATE INBOX/Sub"), "a2 OK Create completed\r\n");
  EXPECT_EQ(c_.run("a3 LIST \"\" Work/%"),
            "* LIST (\\Noselect \\HasChildren) \"/\" Work/2024\r\na3 OK List completed\r\n");
  EXPECT_EQ(c_.run("a4 LIST Work/ *"),
            "* LIST (\\Noselect \\HasChildren) \"/\" Work/2024\r\n"
            "* LIST (\\HasNoChildren) \"/\" Work/2024/Q1\r\n"
            "a4 OK List completed\r\n");
  EXPECT_EQ(c_.run("a5 LIST \"\" inbox"),
            "* LIST (\\HasChildren) \"/\" INBOX\r\na5 OK List completed\r\n");
  EXPECT_EQ(c_.run("a6 LIST \"\" Inbox/%"),
            "* LIST (\\HasNoChildren) \"/\" INBOX/Sub\r\na6 OK List completed\r\n");
  EXPECT_EQ(c_.run("a7 LIST \"\" *Q?"), "a7 OK List completed\r\n");
  EXPECT_EQ(c_.run("a8 LIST \"\" %/%/%"),
            "* LIST (\\HasNoChildren) \"/\" Work/2024/Q1\r\na8 OK List completed\r\n");
  EXPECT_EQ(c_.run("a9 LIST (SPECIAL-USE) \"\" *"),
            "* LIST (\\HasNoChildren \\Archive) \"/\" Archive\r\n"
            "* LIST (\\HasNoChildren \\Drafts) \"/\" Drafts\r\n"
            "* LIST (\\HasNoChildren \\Junk) \"/\" Junk\r\n"
            "* LIST (\\HasNoChildren \\Sent) \"/\" Sent\r\n"
            "* LIST (\\HasNoChildren \\Trash) \"/\" Trash\r\n"
            "a9 OK List completed\r\n");
  EXPECT_EQ(c_.run("b1 LIST (RECURSIVEMATCH) \"\" *"),
            "b1 BAD LIST selection option RECURSIVEMATCH is not supported\r\n");
  EXPECT_EQ(c_.run("b2 LIST \"\" (Sent Trash)"),
            "* LIST (\\HasNoChildren \\Sent) \"/\" Sent\r\n"
            "* LIST (\\HasNoChildren \\Trash) \"/\" Trash\r\n"
            "b2 OK List completed\r\n");
  std::string long_pattern(5000, '%');
  EXPECT_EQ(c_.run("b3 LIST \"\" " + long_pattern), "b3 OK List completed\r\n");
}

TEST_F(MailboxTest, Status) {
  c_.append("INBOX", message("one"), "\\Seen");
  c_.append("INBOX", message("two"), "\\Deleted");
  EXPECT_THAT(c_.run("a1 STATUS INBOX (MESSAGES RECENT UIDNEXT UNSEEN DELETED)"),
              StartsWith("* STATUS INBOX (MESSAGES 2 RECENT 2 UIDNEXT 3 UNSEEN 1 DELETED 1)\r\n"
                         "a1 OK Status completed\r\n"));
  EXPECT_THAT(c_.run("a2 STATUS inbox (UIDVALIDITY SIZE)"), HasSubstr("SIZE "));
  EXPECT_THAT(tagged_line(c_.run("a3 STATUS Nope (MESSAGES)")), StartsWith("a3 NO [NONEXISTENT]"));
  EXPECT_EQ(c_.run("a4 STATUS INBOX (BOGUS)"), "a4 BAD STATUS: unknown status item BOGUS\r\n");
}

TEST_F(MailboxTest, Append) {
  EXPECT_EQ(c_.run("a1 APPEND INBOX {13}"), "+ Ready for literal data\r\n");
  EXPECT_THAT(c_.run("Subject: x\r\n"), StartsWith("a1 OK [APPENDUID "));
  std::string one = message("one");
  std::string two = message("two");
  std::string out = c_.run("a2 APPEND INBOX (\\Flagged kw1) \"05-Mar-2021 08:09:10 +0200\" {" +
                           std::to_string(one.size()) + "+}\r\n" + one + " {" +
                           std::to_string(two.size()) + "+}\r\n" + two);
  EXPECT_THAT(out, HasSubstr(" 2:3] Append completed\r\n"));
  ASSERT_THAT(tagged_line(c_.run("a3 SELECT INBOX")), StartsWith("a3 OK"));
  EXPECT_THAT(c_.run("a4 FETCH 2:3 (FLAGS INTERNALDATE)"),
              ::testing::ContainsRegex("^\\* 2 FETCH \\(FLAGS \\(\\\\Flagged kw1 \\\\Recent\\) "
                                       "INTERNALDATE \"05-Mar-2021 08:09:10 \\+0200\"\\)\r\n"
                                       "\\* 3 FETCH \\(FLAGS \\(\\\\Recent\\) INTERNALDATE "
                                       "\"[^\"]+ \\+0000\"\\)\r\na4 OK Fetch completed\r\n$"));
  EXPECT_EQ(c_.run("a5 APPEND Nope {1+}\r\nx"), "a5 NO [TRYCREATE] no such mailbox Nope\r\n");
  EXPECT_EQ(c_.run("a6 APPEND INBOX (\\Bogus) {1+}\r\nx"),
            "a6 BAD invalid system flag \\Bogus\r\n");
  EXPECT_EQ(c_.run("a7 APPEND INBOX {0+}\r\n"), "a7 NO [CANNOT] empty message\r\n");
  EXPECT_THAT(c_.run("a8 APPEND INBOX \"31-Feb-2021 08:09:10 +0200\" {1+}\r\nx"),
              StartsWith("a8 BAD APPEND: "));
  // Appending to the selected mailbox: EXISTS comes before the tagged OK.
  EXPECT_THAT(c_.run("a9 APPEND INBOX {5+}\r\nhello"),
              ::testing::MatchesRegex("\\* 4 EXISTS\r\n\\* 4 RECENT\r\na9 OK \\[APPENDUID [0-9]+ "
                                      "4\\] Append completed\r\n"));
}

TEST_F(MailboxTest, CloseExpungesSilentlyUnselectDoesNot) {
  c_.append("INBOX", message("one"), "\\Deleted");
  c_.append("INBOX", message("two"));
  ASSERT_THAT(tagged_line(c_.run("a1 SELECT INBOX")), StartsWith("a1 OK"));
  EXPECT_EQ(c_.run("a2 CHECK"), "a2 OK Check completed\r\n");
  EXPECT_EQ(c_.run("a3 UNSELECT"), "a3 OK Unselect completed\r\n");
  EXPECT_EQ(c_.session().state(), SessionState::kAuthenticated);
  EXPECT_THAT(c_.run("a4 STATUS INBOX (MESSAGES)"), StartsWith("* STATUS INBOX (MESSAGES 2)"));
  ASSERT_THAT(tagged_line(c_.run("a5 SELECT INBOX")), StartsWith("a5 OK"));
  EXPECT_EQ(c_.run("a6 CLOSE"), "a6 OK Close completed\r\n");
  EXPECT_EQ(c_.session().state(), SessionState::kAuthenticated);
  EXPECT_THAT(c_.run("a7 STATUS INBOX (MESSAGES)"), StartsWith("* STATUS INBOX (MESSAGES 1)"));
}

TEST_F(MailboxTest, ExpungeAndUidExpunge) {
  for (int i = 1; i <= 5; ++i) {
    c_.append("INBOX", message("m" + std::to_string(i)), i == 3 ? "" : "\\Deleted");
  }
  ASSERT_THAT(tagged_line(c_.run("a1 SELECT INBOX")), StartsWith("a1 OK"));
  EXPECT_EQ(c_.run("a2 UID EXPUNGE 2:4"),
            "* 2 EXPUNGE\r\n* 3 EXPUNGE\r\na2 OK Expunge completed\r\n");
  EXPECT_EQ(
      c_.run("a3 FETCH 1:* UID"),
      "* 1 FETCH (UID 1)\r\n* 2 FETCH (UID 3)\r\n* 3 FETCH (UID 5)\r\na3 OK Fetch completed\r\n");
  EXPECT_EQ(c_.run("a4 EXPUNGE"), "* 1 EXPUNGE\r\n* 2 EXPUNGE\r\na4 OK Expunge completed\r\n");
  EXPECT_EQ(c_.run("a5 UID EXPUNGE 1:*"), "a5 OK Expunge completed\r\n");
  EXPECT_EQ(c_.run("a6 UID EXPUNGE x"), "a6 BAD UID EXPUNGE: invalid sequence set\r\n");
}

}  // namespace
}  // namespace peregrine::imap::testing
