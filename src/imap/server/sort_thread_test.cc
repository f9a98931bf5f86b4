// SORT, ESORT, SORT=DISPLAY and THREAD through a session: keys from the
// cache records the store built at APPEND, UID forms, search criteria,
// charsets and errors.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "imap/server/test_harness.h"

namespace peregrine::imap::testing {
namespace {

using ::testing::HasSubstr;

class SortThreadTest : public ::testing::Test {
 protected:
  SortThreadTest() : c_(server_) {
    c_.login();
    // A message expunged first, so UIDs (2-5) differ from sequence numbers (1-4).
    append("01-Jan-2020 00:00:00 +0000", "Subject: gone\r\n\r\nx\r\n");
    append("10-Jan-2020 00:00:00 +0000",
           "From: Zoe Z <zoe@x.org>\r\nTo: bob@x.org\r\nSubject: Re: apples\r\n"
           "Date: Fri, 3 Jan 2020 00:00:00 +0000\r\nMessage-ID: <1@x.org>\r\n\r\n" +
               std::string(400, 'a') + "\r\n");
    append("09-Jan-2020 00:00:00 +0000",
           "From: alice@x.org\r\nTo: Carl <carl@x.org>\r\nCc: dan@x.org\r\nSubject: Bananas\r\n"
           "Date: Wed, 1 Jan 2020 00:00:00 +0000\r\nMessage-ID: <2@x.org>\r\n\r\n" +
               std::string(100, 'b') + "\r\n");
    // No Date header: its internal date is its sent date.
    append("02-Jan-2020 12:00:00 +0000",
           "From: Zed <bob@x.org>\r\nTo: amy@x.org\r\n"
           "Subject: =?UTF-8?Q?=5Blist=5D_Apples?= (fwd)\r\n"
           "Message-ID: <3@x.org>\r\nReferences: <1@x.org>\r\n\r\n" +
               std::string(300, 'c') + "\r\n");
    append("11-Jan-2020 00:00:00 +0000",
           "From: carol <Carol@x.org>\r\nSubject: cherries\r\n"
           "Date: Thu, 2 Jan 2020 01:00:00 +0100\r\nMessage-ID: <4@x.org>\r\n"
           "In-Reply-To: <2@x.org>\r\n\r\n" +
               std::string(200, 'd') + "\r\n");
    EXPECT_THAT(c_.run("s1 SELECT INBOX"), HasSubstr("s1 OK"));
    EXPECT_THAT(c_.run("s2 STORE 1 +FLAGS (\\Deleted)"), HasSubstr("s2 OK"));
    EXPECT_THAT(c_.run("s3 EXPUNGE"), HasSubstr("s3 OK"));
  }

  void append(std::string_view date, const std::string& message) {
    std::string cmd = "A0 APPEND INBOX \"" + std::string(date) + "\" {" +
                      std::to_string(message.size()) + "+}\r\n" + message;
    ASSERT_THAT(c_.run(cmd), HasSubstr("A0 OK"));
  }

  // The first line of the answer to `command`, which must end in OK.
  std::string first_line(const std::string& command) {
    std::string out = c_.run("x " + command);
    EXPECT_THAT(tagged_line(out), ::testing::StartsWith("x OK")) << command << ": " << out;
    return out.substr(0, out.find("\r\n"));
  }
  std::string sort(const std::string& args) { return first_line("SORT " + args); }

  // The line of `client`'s answer to `command` that starts with `prefix`
  // (untagged updates may come first); the command must end in OK.
  static std::string line_of(TestClient& client, const std::string& command,
                             std::string_view prefix) {
    std::string out = client.run("y " + command);
    EXPECT_THAT(tagged_line(out), ::testing::StartsWith("y OK")) << command << ": " << out;
    size_t at = out.find(prefix);
    return at == std::string::npos ? out : out.substr(at, out.find("\r\n", at) - at);
  }
  std::string sort_of(TestClient& client, const std::string& args) {
    return line_of(client, "SORT " + args, "* SORT");
  }
  std::string thread_of(TestClient& client, const std::string& args) {
    return line_of(client, "THREAD " + args, "* THREAD");
  }

  TestServer server_;
  TestClient c_;
};

TEST_F(SortThreadTest, EveryKey) {
  EXPECT_EQ(sort("(ARRIVAL) UTF-8 ALL"), "* SORT 3 2 1 4");
  EXPECT_EQ(sort("(DATE) UTF-8 ALL"), "* SORT 2 4 3 1");
  EXPECT_EQ(sort("(SUBJECT) UTF-8 ALL"), "* SORT 1 3 2 4");
  EXPECT_EQ(sort("(SUBJECT REVERSE DATE) US-ASCII ALL"), "* SORT 1 3 2 4");
  EXPECT_EQ(sort("(SUBJECT DATE) UTF-8 ALL"), "* SORT 3 1 2 4");
  EXPECT_EQ(sort("(FROM) UTF-8 ALL"), "* SORT 2 3 4 1");
  EXPECT_EQ(sort("(TO) UTF-8 ALL"), "* SORT 4 3 1 2");
  EXPECT_EQ(sort("(CC) UTF-8 ALL"), "* SORT 1 3 4 2");
  EXPECT_EQ(sort("(SIZE) UTF-8 ALL"), "* SORT 2 4 3 1");
  EXPECT_EQ(sort("(REVERSE SIZE) UTF-8 ALL"), "* SORT 1 3 4 2");
  EXPECT_EQ(sort("(reverse arrival) utf-8 ALL"), "* SORT 4 1 2 3");
}

TEST_F(SortThreadTest, Display) {
  // RFC 5957: the display name, or the addr-spec when there is none.
  EXPECT_EQ(sort("(DISPLAYFROM) UTF-8 ALL"), "* SORT 2 4 3 1");
  EXPECT_EQ(sort("(DISPLAYTO) UTF-8 ALL"), "* SORT 4 3 1 2");
  EXPECT_EQ(sort("(REVERSE DISPLAYFROM) UTF-8 ALL"), "* SORT 1 3 4 2");
}

TEST_F(SortThreadTest, CriteriaAndUid) {
  EXPECT_EQ(sort("(DATE) UTF-8 SUBJECT apples"), "* SORT 3 1");
  EXPECT_EQ(sort("(DATE) UTF-8 NOT FROM x.org"), "* SORT");
  EXPECT_EQ(sort("(DATE) UTF-8 2:3"), "* SORT 2 3");
  EXPECT_EQ(first_line("UID SORT (DATE) UTF-8 ALL"), "* SORT 3 5 4 2");
  EXPECT_EQ(first_line("UID SORT (DATE) UTF-8 UID 3:4"), "* SORT 3 4");
}

TEST_F(SortThreadTest, Esort) {
  EXPECT_EQ(sort("RETURN (MIN MAX COUNT) (DATE) UTF-8 ALL"),
            "* ESEARCH (TAG \"x\") MIN 2 MAX 1 COUNT 4");
  // ALL in sort order, consecutive runs as ranges.
  EXPECT_EQ(sort("RETURN (ALL) (REVERSE ARRIVAL) UTF-8 ALL"), "* ESEARCH (TAG \"x\") ALL 4,1:3");
  EXPECT_EQ(sort("RETURN () (DATE) UTF-8 ALL"), "* ESEARCH (TAG \"x\") ALL 2,4,3,1");
  EXPECT_EQ(first_line("UID SORT RETURN (COUNT ALL) (REVERSE ARRIVAL) UTF-8 ALL"),
            "* ESEARCH (TAG \"x\") UID COUNT 4 ALL 5,2:4");
  EXPECT_EQ(sort("RETURN (MIN MAX ALL) (DATE) UTF-8 SUBJECT nothing"), "* ESEARCH (TAG \"x\")");
  EXPECT_EQ(sort("RETURN (COUNT) (DATE) UTF-8 SUBJECT nothing"), "* ESEARCH (TAG \"x\") COUNT 0");
}

TEST_F(SortThreadTest, Thread) {
  EXPECT_EQ(first_line("THREAD REFERENCES UTF-8 ALL"), "* THREAD (2 4)(1 3)");
  EXPECT_EQ(first_line("THREAD ORDEREDSUBJECT UTF-8 ALL"), "* THREAD (2)(4)(3 1)");
  EXPECT_EQ(first_line("UID THREAD REFERENCES UTF-8 ALL"), "* THREAD (3 5)(2 4)");
  EXPECT_EQ(first_line("UID THREAD orderedsubject UTF-8 ALL"), "* THREAD (3)(5)(4 2)");
  // Only the selected messages are threaded: 3's parent is left out.
  EXPECT_EQ(first_line("THREAD REFERENCES UTF-8 NOT 1"), "* THREAD (2 4)(3)");
  EXPECT_EQ(first_line("THREAD REFERENCES UTF-8 SUBJECT nothing"), "* THREAD");
}

// The hub keeps the keys the first SORT read (sort_key_cache.h); later
// answers must follow appends and expunges as a fresh read would.
TEST_F(SortThreadTest, NewMessageAfterFirstSort) {
  EXPECT_EQ(sort_of(c_, "(DATE) UTF-8 ALL"), "* SORT 2 4 3 1");
  append("12-Jan-2020 00:00:00 +0000",
         "From: eve@x.org\r\nSubject: Re: Apples\r\nDate: Tue, 31 Dec 2019 00:00:00 +0000\r\n"
         "Message-ID: <5@x.org>\r\nReferences: <1@x.org> <3@x.org>\r\n\r\ne\r\n");
  EXPECT_EQ(sort_of(c_, "(DATE) UTF-8 ALL"), "* SORT 5 2 4 3 1");
  EXPECT_EQ(sort_of(c_, "(FROM) UTF-8 ALL"), "* SORT 2 3 4 5 1");
  EXPECT_EQ(thread_of(c_, "REFERENCES UTF-8 ALL"), "* THREAD (2 4)(1 3 5)");
}

TEST_F(SortThreadTest, ExpungeBetweenSorts) {
  // A subset first: the rest of the keys are read into the middle later.
  EXPECT_EQ(sort_of(c_, "(DATE) UTF-8 2:3"), "* SORT 2 3");
  EXPECT_EQ(sort_of(c_, "(DATE) UTF-8 ALL"), "* SORT 2 4 3 1");
  const std::string warm_thread = thread_of(c_, "REFERENCES UTF-8 ALL");
  EXPECT_EQ(warm_thread, "* THREAD (2 4)(1 3)");
  EXPECT_THAT(c_.run("d1 STORE 2 +FLAGS (\\Deleted)"), HasSubstr("d1 OK"));
  EXPECT_THAT(c_.run("d2 EXPUNGE"), HasSubstr("d2 OK"));
  // Old 4, 3, 1 are now 3, 2, 1.
  EXPECT_EQ(sort_of(c_, "(DATE) UTF-8 ALL"), "* SORT 3 2 1");
  EXPECT_EQ(sort_of(c_, "(SUBJECT) UTF-8 ALL"), "* SORT 1 2 3");
  const std::string after = thread_of(c_, "REFERENCES UTF-8 ALL");
  const std::string after_subject = sort_of(c_, "(CC) UTF-8 ALL");
  // Reopening the mailbox (this session was its only one) drops the hub and
  // its keys: the answers read afresh must be the same.
  EXPECT_THAT(c_.run("d3 UNSELECT"), HasSubstr("d3 OK"));
  EXPECT_THAT(c_.run("d4 SELECT INBOX"), HasSubstr("d4 OK"));
  EXPECT_EQ(thread_of(c_, "REFERENCES UTF-8 ALL"), after);
  EXPECT_EQ(sort_of(c_, "(CC) UTF-8 ALL"), after_subject);
  EXPECT_EQ(sort_of(c_, "(DATE) UTF-8 ALL"), "* SORT 3 2 1");
}

TEST_F(SortThreadTest, TwoSessionsInOneMailbox) {
  TestClient other(server_);
  other.login();
  EXPECT_THAT(other.run("o1 SELECT INBOX"), HasSubstr("o1 OK"));
  EXPECT_EQ(sort_of(c_, "(DATE) UTF-8 ALL"), "* SORT 2 4 3 1");
  EXPECT_EQ(sort_of(other, "(DATE) UTF-8 ALL"), "* SORT 2 4 3 1");
  // The other session appends one message and expunges its first.
  other.append("INBOX",
               "Subject: early\r\nDate: Mon, 30 Dec 2019 00:00:00 +0000\r\n"
               "Message-ID: <6@x.org>\r\n\r\nf\r\n");
  EXPECT_THAT(other.run("o2 STORE 1 +FLAGS (\\Deleted)"), HasSubstr("o2 OK"));
  EXPECT_THAT(other.run("o3 EXPUNGE"), HasSubstr("o3 OK"));
  // Old 2, 4, 3 are now 1, 3, 2; the new message is 4 and sorts first.
  EXPECT_EQ(sort_of(other, "(DATE) UTF-8 ALL"), "* SORT 4 1 3 2");
  EXPECT_THAT(c_.run("n1 NOOP"), HasSubstr("n1 OK"));
  EXPECT_EQ(sort_of(c_, "(DATE) UTF-8 ALL"), "* SORT 4 1 3 2");
  EXPECT_EQ(sort_of(c_, "(REVERSE DATE) UTF-8 ALL"), "* SORT 2 3 1 4");
}

TEST_F(SortThreadTest, Errors) {
  EXPECT_THAT(c_.run("e1 SORT (DATE) X-BOGUS ALL"),
              HasSubstr("e1 NO [BADCHARSET (US-ASCII UTF-8)]"));
  EXPECT_THAT(c_.run("e2 THREAD REFERENCES X-BOGUS ALL"),
              HasSubstr("e2 NO [BADCHARSET (US-ASCII UTF-8)]"));
  EXPECT_EQ(c_.run("e3 THREAD FOO UTF-8 ALL"), "e3 BAD unknown threading algorithm\r\n");
  EXPECT_THAT(c_.run("e4 SORT (NAME) UTF-8 ALL"), HasSubstr("e4 BAD"));
  EXPECT_THAT(c_.run("e5 SORT () UTF-8 ALL"), HasSubstr("e5 BAD"));
  EXPECT_THAT(c_.run("e6 SORT (DATE) ALL"), HasSubstr("e6 BAD"));
  EXPECT_THAT(c_.run("e7 SORT RETURN (SAVE) (DATE) UTF-8 ALL"), HasSubstr("e7 BAD"));
  // "$" with no saved result is the empty set (RFC 5182 §2.1).
  EXPECT_EQ(c_.run("e8 SORT (DATE) UTF-8 $"), "* SORT\r\ne8 OK Sort completed\r\n");
  c_.run("u1 UNSELECT");
  EXPECT_EQ(c_.run("e9 SORT (DATE) UTF-8 ALL"), "e9 BAD SORT needs a selected mailbox\r\n");
}

}  // namespace
}  // namespace peregrine::imap::testing
