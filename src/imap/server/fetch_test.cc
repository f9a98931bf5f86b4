// FETCH and UID FETCH: every item, sections and partials, \Seen, BINARY,
// NUL bytes, and long output in pieces.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "imap/server/test_harness.h"

namespace peregrine::imap::testing {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

// A multipart message: a text part, a base64 attachment holding NUL bytes
// ("a\0b" = "YQBi"), an x-unknown encoded part and an attached message.
const std::string kMultipart =
    "From: Alice <alice@example.com>\r\n"
    "To: Bob <bob@example.com>\r\n"
    "Subject: parts\r\n"
    "Date: Mon, 7 Feb 1994 21:52:25 -0800\r\n"
    "MIME-Version: 1.0\r\n"
    "Content-Type: multipart/mixed; boundary=xyz\r\n"
    "\r\n"
    "--xyz\r\n"
    "Content-Type: text/plain\r\n"
    "\r\n"
    "First part.\r\n"
    "--xyz\r\n"
    "Content-Type: application/octet-stream\r\n"
    "Content-Transfer-Encoding: base64\r\n"
    "\r\n"
    "YQBi\r\n"
    "--xyz\r\n"
    "Content-Type: application/x-odd\r\n"
    "Content-Transfer-Encoding: x-uuencode\r\n"
    "\r\n"
    "begin\r\n"
    "--xyz\r\n"
    "Content-Type: message/rfc822\r\n"
    "\r\n"
    "Subject: inner\r\n"
    "\r\n"
    "Inner body.\r\n"
    "--xyz--\r\n";

class FetchTest : public ::testing::Test {
 protected:
  FetchTest() : c_(server_) {
    c_.login();
    c_.append("INBOX", message("plain"));
    c_.append("INBOX", kMultipart);
    std::string out = c_.run("s1 SELECT INBOX");
    EXPECT_THAT(out, HasSubstr("s1 OK")) << out;
  }

  TestServer server_;
  TestClient c_;
};

TEST_F(FetchTest, MetadataItems) {
  std::string plain = message("plain");
  EXPECT_THAT(c_.run("a1 FETCH 1 (UID FLAGS RFC822.SIZE INTERNALDATE MODSEQ)"),
              ::testing::MatchesRegex("\\* 1 FETCH \\(UID 1 FLAGS \\(\\\\Recent\\) RFC822.SIZE " +
                                      std::to_string(plain.size()) +
                                      " INTERNALDATE \"[^\"]+\" MODSEQ \\([0-9]+\\)\\)\r\n"
                                      "a1 OK Fetch completed\r\n"));
  EXPECT_EQ(c_.run("a2 FETCH 1 ENVELOPE"),
            "* 1 FETCH (ENVELOPE (\"Mon, 7 Feb 1994 21:52:25 -0800\" \"plain\" ((\"Alice\" NIL "
            "\"alice\" \"example.com\")) ((\"Alice\" NIL \"alice\" \"example.com\")) ((\"Alice\" "
            "NIL \"alice\" \"example.com\")) ((\"Bob\" NIL \"bob\" \"example.com\")) NIL NIL NIL "
            "\"<plain@example.com>\"))\r\n"
            "a2 OK Fetch completed\r\n");
  EXPECT_EQ(c_.run("a3 FETCH 1 BODY"),
            "* 1 FETCH (BODY (\"text\" \"plain\" (\"charset\" \"us-ascii\") NIL NIL \"7bit\" 8 "
            "1))\r\na3 OK Fetch completed\r\n");
  std::string out = c_.run("a4 FETCH 2 BODYSTRUCTURE");
  EXPECT_THAT(out, StartsWith("* 2 FETCH (BODYSTRUCTURE ((\"text\" \"plain\""));
  EXPECT_THAT(out, HasSubstr("\"mixed\" (\"boundary\" \"xyz\") NIL NIL NIL))\r\n"));
  // Macros expand in the parser: FAST = FLAGS INTERNALDATE RFC822.SIZE.
  EXPECT_THAT(c_.run("a5 FETCH 1 FAST"), StartsWith("* 1 FETCH (FLAGS (\\Recent) INTERNALDATE"));
}

TEST_F(FetchTest, Sections) {
  std::string plain = message("plain");
  EXPECT_EQ(c_.run("a1 FETCH 1 BODY.PEEK[]"), "* 1 FETCH (BODY[] {" + std::to_string(plain.size()) +
                                                  "}\r\n" + plain +
                                                  ")\r\na1 OK Fetch completed\r\n");
  EXPECT_EQ(c_.run("a2 FETCH 1 BODY.PEEK[]<6.5>"),
            "* 1 FETCH (BODY[]<6> {5}\r\nAlice)\r\na2 OK Fetch completed\r\n");
  EXPECT_EQ(c_.run("a3 FETCH 1 BODY.PEEK[]<100000.5>"),
            "* 1 FETCH (BODY[]<100000> {0}\r\n)\r\na3 OK Fetch completed\r\n");
  EXPECT_EQ(c_.run("a4 FETCH 2 BODY.PEEK[1]"),
            "* 2 FETCH (BODY[1] {11}\r\nFirst part.)\r\na4 OK Fetch completed\r\n");
  EXPECT_EQ(c_.run("a5 FETCH 2 BODY.PEEK[2.MIME]"),
            "* 2 FETCH (BODY[2.MIME] {77}\r\nContent-Type: application/octet-stream\r\n"
            "Content-Transfer-Encoding: base64\r\n\r\n)\r\na5 OK Fetch completed\r\n");
  EXPECT_EQ(
      c_.run("a6 FETCH 2 BODY.PEEK[4.HEADER]"),
      "* 2 FETCH (BODY[4.HEADER] {18}\r\nSubject: inner\r\n\r\n)\r\na6 OK Fetch completed\r\n");
  EXPECT_EQ(c_.run("a7 FETCH 2 BODY.PEEK[4.TEXT]"),
            "* 2 FETCH (BODY[4.TEXT] {11}\r\nInner body.)\r\na7 OK Fetch completed\r\n");
  EXPECT_EQ(c_.run("a8 FETCH 2 BODY.PEEK[HEADER.FIELDS (subject to)]"),
            "* 2 FETCH (BODY[HEADER.FIELDS (subject to)] {45}\r\nTo: Bob <bob@example.com>\r\n"
            "Subject: parts\r\n\r\n)\r\na8 OK Fetch completed\r\n");
  EXPECT_EQ(c_.run("a9 FETCH 1 BODY.PEEK[HEADER.FIELDS.NOT (From To Date Message-ID)]<0.9>"),
            "* 1 FETCH (BODY[HEADER.FIELDS.NOT (From To Date Message-ID)]<0> {9}\r\nSubject: )\r\n"
            "a9 OK Fetch completed\r\n");
  EXPECT_EQ(c_.run("b1 FETCH 2 BODY.PEEK[9]"),
            "* 2 FETCH (BODY[9] {0}\r\n)\r\nb1 OK Fetch completed\r\n");
  EXPECT_EQ(c_.run("b2 FETCH 1 RFC822.HEADER"),
            "* 1 FETCH (RFC822.HEADER {" + std::to_string(plain.size() - 8) + "}\r\n" +
                plain.substr(0, plain.size() - 8) + ")\r\nb2 OK Fetch completed\r\n");
  // None of these set \Seen.
  EXPECT_EQ(c_.run("b3 FETCH 1:2 FLAGS"),
            "* 1 FETCH (FLAGS (\\Recent))\r\n* 2 FETCH (FLAGS (\\Recent))\r\n"
            "b3 OK Fetch completed\r\n");
}

TEST_F(FetchTest, BodyFetchSetsSeen) {
  EXPECT_EQ(c_.run("a1 FETCH 1 BODY[TEXT]"),
            "* 1 FETCH (BODY[TEXT] {8}\r\nHello.\r\n FLAGS (\\Seen \\Recent))\r\n"
            "a1 OK Fetch completed\r\n");
  // Already seen: no FLAGS unless asked.
  EXPECT_EQ(c_.run("a2 FETCH 1 RFC822.TEXT"),
            "* 1 FETCH (RFC822.TEXT {8}\r\nHello.\r\n)\r\na2 OK Fetch completed\r\n");
  std::string out = c_.run("a3 UID FETCH 2 (RFC822)");
  EXPECT_THAT(out, StartsWith("* 2 FETCH (UID 2 RFC822 {" + std::to_string(kMultipart.size()) +
                              "}\r\n" + kMultipart + " FLAGS (\\Seen \\Recent))\r\n"));
  // Another session of the user hears of the \Seen at its next command.
  TestClient other(server_);
  other.login();
  EXPECT_THAT(other.run("b1 SELECT INBOX"), HasSubstr("b1 OK"));
  EXPECT_EQ(
      other.run("b2 FETCH 1:2 FLAGS"),
      "* 1 FETCH (FLAGS (\\Seen))\r\n* 2 FETCH (FLAGS (\\Seen))\r\nb2 OK Fetch completed\r\n");
}

TEST_F(FetchTest, Binary) {
  EXPECT_EQ(c_.run("a1 FETCH 2 (BINARY.PEEK[2] BINARY.SIZE[2])"),
            std::string("* 2 FETCH (BINARY[2] ~{3}\r\na\0b BINARY.SIZE[2] 3)\r\n", 50) +
                "a1 OK Fetch completed\r\n");
  EXPECT_EQ(c_.run("a2 FETCH 2 BINARY.PEEK[1]<0.5>"),
            "* 2 FETCH (BINARY[1]<0> {5}\r\nFirst)\r\na2 OK Fetch completed\r\n");
  EXPECT_EQ(c_.run("a3 FETCH 2 BINARY.PEEK[3]"),
            "a3 NO [UNKNOWN-CTE] Cannot decode the content transfer encoding of a part\r\n");
  EXPECT_EQ(c_.run("a4 FETCH 2 BINARY.SIZE[9]"),
            "* 2 FETCH (BINARY.SIZE[9] 0)\r\na4 OK Fetch completed\r\n");
  // The BODY of the same part is the encoded text.
  EXPECT_EQ(c_.run("a5 FETCH 2 BODY.PEEK[2]"),
            "* 2 FETCH (BODY[2] {4}\r\nYQBi)\r\na5 OK Fetch completed\r\n");
}

// The whole message (BODY[], RFC822, BINARY[] and their SIZE) is read from
// the file alone, without the cache record; beside an item that needs the
// record, both come out as they should.
TEST_F(FetchTest, WholeMessageItems) {
  const std::string size = std::to_string(kMultipart.size());
  EXPECT_EQ(c_.run("a1 FETCH 2 (BINARY.PEEK[] BINARY.SIZE[])"),
            "* 2 FETCH (BINARY[] {" + size + "}\r\n" + kMultipart + " BINARY.SIZE[] " + size +
                ")\r\na1 OK Fetch completed\r\n");
  EXPECT_EQ(c_.run("a2 FETCH 2 BINARY.PEEK[]<2.3>"), "* 2 FETCH (BINARY[]<2> {3}\r\n" +
                                                         kMultipart.substr(2, 3) +
                                                         ")\r\na2 OK Fetch completed\r\n");
  const std::string both = c_.run("a3 FETCH 2 (BODY.PEEK[] BODY.PEEK[1] RFC822.SIZE)");
  EXPECT_EQ(both, "* 2 FETCH (BODY[] {" + size + "}\r\n" + kMultipart +
                      " BODY[1] {11}\r\nFirst part. RFC822.SIZE " + size +
                      ")\r\na3 OK Fetch completed\r\n");
}

TEST_F(FetchTest, NulBytesOutsideBinaryAreReplaced) {
  std::string with_nul = std::string("Subject: nul\r\n\r\nA\0B\r\n", 21);
  c_.append("INBOX", with_nul);
  EXPECT_EQ(c_.run("a1 FETCH 3 BODY.PEEK[TEXT]"),
            "* 3 FETCH (BODY[TEXT] {5}\r\nA\x80"
            "B\r\n)\r\na1 OK Fetch completed\r\n");
  EXPECT_EQ(c_.run("a2 FETCH 3 BINARY.PEEK[TEXT]"),
            "a2 BAD FETCH: invalid binary section TEXT\r\n");
  EXPECT_EQ(
      c_.run("a3 FETCH 3 BINARY.PEEK[1]"),
      std::string("* 3 FETCH (BINARY[1] ~{5}\r\nA\0B\r\n)\r\n", 35) + "a3 OK Fetch completed\r\n");
}

TEST_F(FetchTest, UidFetch) {
  EXPECT_EQ(c_.run("a1 UID FETCH 2 FLAGS"),
            "* 2 FETCH (UID 2 FLAGS (\\Recent))\r\na1 OK Fetch completed\r\n");
  EXPECT_EQ(c_.run("a2 UID FETCH 3:10 FLAGS"), "a2 OK Fetch completed\r\n");
  // "559:*" always includes the last message (RFC 3501 §6.4.8).
  EXPECT_EQ(c_.run("a3 UID FETCH 559:* UID"), "* 2 FETCH (UID 2)\r\na3 OK Fetch completed\r\n");
  EXPECT_EQ(c_.run("a4 UID FETCH 1,2 (UID)"),
            "* 1 FETCH (UID 1)\r\n* 2 FETCH (UID 2)\r\na4 OK Fetch completed\r\n");
  EXPECT_EQ(c_.run("a5 FETCH 2:1 UID"),
            "* 1 FETCH (UID 1)\r\n* 2 FETCH (UID 2)\r\na5 OK Fetch completed\r\n");
  EXPECT_EQ(c_.run("a6 FETCH 1 (FLAGS BOGUS)"), "a6 BAD FETCH: unknown item BOGUS\r\n");
  EXPECT_EQ(c_.run("a7 FETCH 1:3 UID"),
            "a7 BAD invalid message sequence number 3 (2 messages)\r\n");
  EXPECT_EQ(c_.run("a8 FETCH 2:* UID"), "* 2 FETCH (UID 2)\r\na8 OK Fetch completed\r\n");
  EXPECT_EQ(c_.run("a9 FETCH 5:* UID"), "* 2 FETCH (UID 2)\r\na9 OK Fetch completed\r\n");
  EXPECT_EQ(c_.run("b1 FETCH 1 BODY[]<0.0>"), "b1 BAD FETCH: invalid partial length 0\r\n");
}

TEST_F(FetchTest, LongOutputComesInPieces) {
  std::string big = message("big", std::string(40000, 'x') + "\r\n");
  for (int i = 0; i < 10; ++i) {
    c_.append("INBOX", big);
  }
  (void)c_.run("n1 NOOP");
  Reply first = c_.first_reply("a1 FETCH 1:* BODY.PEEK[]");
  EXPECT_TRUE(first.more);
  EXPECT_TRUE(c_.session().busy());
  EXPECT_EQ(c_.run("a2 NOOP"), "a2 BAD Another command is in progress\r\n");
  std::string all = first.out;
  for (int rounds = 0; rounds < 100; ++rounds) {
    Reply r = c_.session().resume();
    all += r.out;
    if (!r.more) {
      break;
    }
  }
  EXPECT_FALSE(c_.session().busy());
  EXPECT_THAT(all, HasSubstr("* 12 FETCH (BODY[] {"));
  EXPECT_EQ(tagged_line(all), "a1 OK Fetch completed");
  EXPECT_EQ(c_.run("a3 NOOP"), "a3 OK NOOP completed\r\n");
}

}  // namespace
}  // namespace peregrine::imap::testing
