// SEARCH and UID SEARCH over every RFC 3501 key, CHARSET and ESEARCH.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "imap/server/test_harness.h"

namespace peregrine::imap::testing {
namespace {

using ::testing::HasSubstr;

class SearchTest : public ::testing::Test {
 protected:
  SearchTest() : c_(server_) {
    c_.login();
    append("\"01-Feb-2020 10:00:00 +0000\"", "\\Seen \\Answered",
           "From: Alice <alice@example.com>\r\nTo: bob@example.com\r\n"
           "Subject: Lunch plans\r\nDate: Sat, 1 Feb 2020 09:00:00 +0000\r\n"
           "X-Priority: 1\r\n\r\nLet's meet at noon.\r\n");
    append("\"15-Mar-2021 23:30:00 -0500\"", "\\Flagged $Work",
           "From: Bob <bob@example.com>\r\nTo: alice@example.com\r\nCc: carol@example.com\r\n"
           "Subject: Report Q3\r\nDate: Mon, 15 Mar 2021 23:30:00 -0500\r\n\r\n"
           "The numbers are ready.\r\n");
    append("\"01-Jan-2022 00:00:00 +0100\"", "\\Deleted \\Draft",
           "From: =?UTF-8?Q?Zo=C3=AB?= <zoe@example.com>\r\nTo: alice@example.com\r\n"
           "Subject: =?UTF-8?Q?Gr=C3=BC=C3=9Fe?=\r\nDate: Sat, 1 Jan 2022 00:00:00 +0100\r\n"
           "MIME-Version: 1.0\r\nContent-Type: text/plain; charset=utf-8\r\n"
           "Content-Transfer-Encoding: quoted-printable\r\n\r\nGr=C3=BC=C3=9Fe aus der "
           "Stra=C3=9Fe.\r\n");
    append("\"10-Jun-2023 12:00:00 +0000\"", "",
           "From: dave@example.com\r\nBcc: erin@example.com\r\nSubject: big\r\n\r\n" +
               std::string(20000, 'z') + "\r\n");
    std::string out = c_.run("s1 SELECT INBOX");
    EXPECT_THAT(out, HasSubstr("s1 OK")) << out;
    // All four arrived before this SELECT: all are \Recent here.
  }

  void append(std::string_view date, std::string_view flags, const std::string& message) {
    std::string cmd = "A0 APPEND INBOX (" + std::string(flags) + ") " + std::string(date) + " {" +
                      std::to_string(message.size()) + "+}\r\n" + message;
    std::string out = c_.run(cmd);
    ASSERT_THAT(out, HasSubstr("A0 OK")) << out;
  }

  // The "* SEARCH ..." line of a SEARCH.
  std::string search(std::string_view criteria) {
    std::string out = c_.run("x SEARCH " + std::string(criteria));
    EXPECT_THAT(tagged_line(out), ::testing::StartsWith("x OK")) << criteria << ": " << out;
    return out.substr(0, out.find("\r\n"));
  }

  TestServer server_;
  TestClient c_;
};

TEST_F(SearchTest, FlagKeys) {
  EXPECT_EQ(search("ALL"), "* SEARCH 1 2 3 4");
  EXPECT_EQ(search("ANSWERED"), "* SEARCH 1");
  EXPECT_EQ(search("UNANSWERED"), "* SEARCH 2 3 4");
  EXPECT_EQ(search("DELETED"), "* SEARCH 3");
  EXPECT_EQ(search("UNDELETED"), "* SEARCH 1 2 4");
  EXPECT_EQ(search("DRAFT"), "* SEARCH 3");
  EXPECT_EQ(search("UNDRAFT"), "* SEARCH 1 2 4");
  EXPECT_EQ(search("FLAGGED"), "* SEARCH 2");
  EXPECT_EQ(search("UNFLAGGED"), "* SEARCH 1 3 4");
  EXPECT_EQ(search("SEEN"), "* SEARCH 1");
  EXPECT_EQ(search("UNSEEN"), "* SEARCH 2 3 4");
  EXPECT_EQ(search("RECENT"), "* SEARCH 1 2 3 4");
  EXPECT_EQ(search("NEW"), "* SEARCH 2 3 4");
  EXPECT_EQ(search("OLD"), "* SEARCH");
  EXPECT_EQ(search("KEYWORD $work"), "* SEARCH 2");
  EXPECT_EQ(search("UNKEYWORD $Work"), "* SEARCH 1 3 4");
}

TEST_F(SearchTest, TextKeys) {
  EXPECT_EQ(search("FROM alice"), "* SEARCH 1");
  EXPECT_EQ(search("FROM \"BOB\""), "* SEARCH 2");
  EXPECT_EQ(search("TO alice"), "* SEARCH 2 3");
  EXPECT_EQ(search("CC carol"), "* SEARCH 2");
  EXPECT_EQ(search("BCC erin"), "* SEARCH 4");
  EXPECT_EQ(search("SUBJECT lunch"), "* SEARCH 1");
  EXPECT_EQ(search("SUBJECT q3"), "* SEARCH 2");
  EXPECT_EQ(search("BODY numbers"), "* SEARCH 2");
  EXPECT_EQ(search("BODY lunch"), "* SEARCH");
  EXPECT_EQ(search("TEXT lunch"), "* SEARCH 1");
  EXPECT_EQ(search("TEXT noon"), "* SEARCH 1");
  EXPECT_EQ(search("HEADER X-Priority 1"), "* SEARCH 1");
  EXPECT_EQ(search("HEADER x-priority \"\""), "* SEARCH 1");
  EXPECT_EQ(search("HEADER Cc example"), "* SEARCH 2");
  // Decoded, and case-folded beyond ASCII.
  EXPECT_EQ(search("CHARSET UTF-8 FROM \"zo\xc3\xab\""), "* SEARCH 3");
  EXPECT_EQ(search("CHARSET UTF-8 SUBJECT \"GR\xc3\x9c\""), "* SEARCH 3");
  EXPECT_EQ(search("CHARSET UTF-8 BODY {7+}\r\nstra\xc3\x9f"
                   "e"),
            "* SEARCH 3");
  EXPECT_EQ(search("CHARSET ISO-8859-1 SUBJECT {3+}\r\ngr\xfc"), "* SEARCH 3");
  EXPECT_EQ(c_.run("x1 SEARCH CHARSET X-BOGUS BODY a"),
            "x1 NO [BADCHARSET (US-ASCII UTF-8)] unknown charset X-BOGUS\r\n");
}

TEST_F(SearchTest, DateSizeAndNumberKeys) {
  EXPECT_EQ(search("BEFORE 1-Feb-2020"), "* SEARCH");
  EXPECT_EQ(search("ON 1-Feb-2020"), "* SEARCH 1");
  EXPECT_EQ(search("SINCE 1-Feb-2020"), "* SEARCH 1 2 3 4");
  // Internal dates count in their own zone: 15-Mar-2021 23:30 -0500.
  EXPECT_EQ(search("ON 15-Mar-2021"), "* SEARCH 2");
  EXPECT_EQ(search("ON 1-Jan-2022"), "* SEARCH 3");
  EXPECT_EQ(search("SINCE 1-Jan-2022"), "* SEARCH 3 4");
  EXPECT_EQ(search("SENTBEFORE 15-Mar-2021"), "* SEARCH 1");
  EXPECT_EQ(search("SENTON 15-Mar-2021"), "* SEARCH 2");
  EXPECT_EQ(search("SENTSINCE 15-Mar-2021"), "* SEARCH 2 3 4");
  EXPECT_EQ(search("LARGER 10000"), "* SEARCH 4");
  EXPECT_EQ(search("SMALLER 10000"), "* SEARCH 1 2 3");
  EXPECT_EQ(search("UID 2:3"), "* SEARCH 2 3");
  EXPECT_EQ(search("UID *"), "* SEARCH 4");
  EXPECT_EQ(search("2,4"), "* SEARCH 2 4");
  EXPECT_EQ(search("3:*"), "* SEARCH 3 4");
  EXPECT_EQ(search("YOUNGER 1000"), "* SEARCH");
  EXPECT_EQ(search("OLDER 1000"), "* SEARCH 1 2 3 4");
  EXPECT_EQ(search("MODSEQ 1"), "* SEARCH 1 2 3 4");
}

TEST_F(SearchTest, Combinations) {
  EXPECT_EQ(search("NOT SEEN"), "* SEARCH 2 3 4");
  EXPECT_EQ(search("OR SEEN FLAGGED"), "* SEARCH 1 2");
  EXPECT_EQ(search("UNSEEN UNDELETED"), "* SEARCH 2 4");
  EXPECT_EQ(search("(FROM bob) (TO alice)"), "* SEARCH 2");
  EXPECT_EQ(search("OR (SUBJECT lunch SEEN) NOT OR DELETED 4"), "* SEARCH 1 2");
  EXPECT_EQ(c_.run("x2 SEARCH BOGUS"), "x2 BAD SEARCH: unknown search key BOGUS\r\n");
  // No result saved yet: "$" is empty (RFC 5182 §2.1).
  EXPECT_EQ(c_.run("x3 SEARCH $"), "* SEARCH\r\nx3 OK Search completed\r\n");
  EXPECT_EQ(c_.run("x4 SEARCH ON 31-Feb-2020"), "x4 BAD SEARCH: invalid date 31-Feb-2020\r\n");
}

TEST_F(SearchTest, UidSearchAndEsearch) {
  c_.run("e1 STORE 1 +FLAGS (\\Deleted)");
  // 1 and 3 had \Deleted: UIDs 2 and 4 stay, numbered 1 and 2.
  EXPECT_EQ(c_.run("e2 EXPUNGE"), "* 1 EXPUNGE\r\n* 2 EXPUNGE\r\ne2 OK Expunge completed\r\n");
  EXPECT_EQ(c_.run("x1 UID SEARCH ALL"), "* SEARCH 2 4\r\nx1 OK Search completed\r\n");
  EXPECT_EQ(c_.run("x2 SEARCH ALL"), "* SEARCH 1 2\r\nx2 OK Search completed\r\n");
  EXPECT_EQ(c_.run("x3 UID SEARCH UID 1:2"), "* SEARCH 2\r\nx3 OK Search completed\r\n");
  EXPECT_EQ(c_.run("x4 SEARCH RETURN (MIN MAX COUNT) UNSEEN"),
            "* ESEARCH (TAG \"x4\") MIN 1 MAX 2 COUNT 2\r\nx4 OK Search completed\r\n");
  EXPECT_EQ(c_.run("x5 UID SEARCH RETURN () ALL"),
            "* ESEARCH (TAG \"x5\") UID ALL 2,4\r\nx5 OK Search completed\r\n");
  EXPECT_EQ(c_.run("x6 SEARCH RETURN (COUNT) SEEN"),
            "* ESEARCH (TAG \"x6\") COUNT 0\r\nx6 OK Search completed\r\n");
}

TEST_F(SearchTest, SearchResSavesAndReuses) {
  // SAVE alone answers no ESEARCH (RFC 5182 §2.1).
  EXPECT_EQ(c_.run("r1 SEARCH RETURN (SAVE) UNSEEN"), "r1 OK Search completed, result saved\r\n");
  EXPECT_EQ(search("$"), "* SEARCH 2 3 4");
  EXPECT_EQ(search("$ FLAGGED"), "* SEARCH 2");
  EXPECT_EQ(search("UID $"), "* SEARCH 2 3 4");
  EXPECT_EQ(search("OR $ SEEN"), "* SEARCH 1 2 3 4");
  std::string fetch = c_.run("r2 FETCH $ (UID)");
  EXPECT_EQ(fetch,
            "* 2 FETCH (UID 2)\r\n* 3 FETCH (UID 3)\r\n* 4 FETCH (UID 4)\r\n"
            "r2 OK Fetch completed\r\n");
  // With MIN and MAX only those two are saved; with other options, all.
  EXPECT_EQ(c_.run("r3 UID SEARCH RETURN (SAVE MIN MAX) UNSEEN"),
            "* ESEARCH (TAG \"r3\") UID MIN 2 MAX 4\r\nr3 OK Search completed\r\n");
  EXPECT_EQ(search("$"), "* SEARCH 2 4");
  EXPECT_EQ(c_.run("r4 SEARCH RETURN (SAVE COUNT) $ SEEN"),
            "* ESEARCH (TAG \"r4\") COUNT 0\r\nr4 OK Search completed\r\n");
  EXPECT_EQ(search("$"), "* SEARCH");
  c_.run("r5 SEARCH RETURN (SAVE) ALL");
  // A failed SEARCH with SAVE empties it.
  EXPECT_THAT(c_.run("r6 SEARCH RETURN (SAVE) CHARSET X-BOGUS BODY a"), HasSubstr("r6 NO"));
  EXPECT_EQ(search("$"), "* SEARCH");
  // Expunged messages leave it; a new SELECT forgets it.
  c_.run("r7 SEARCH RETURN (SAVE) ALL");
  c_.run("r8 STORE 1 +FLAGS (\\Deleted)");
  c_.run("r9 EXPUNGE");
  // (3 had \Deleted too.)
  EXPECT_EQ(c_.run("r10 UID SEARCH $"), "* SEARCH 2 4\r\nr10 OK Search completed\r\n");
  c_.run("r11 SELECT INBOX");
  EXPECT_EQ(search("$"), "* SEARCH");
}

TEST_F(SearchTest, SubstringCases) {
  append("\"10-Jun-2023 12:00:00 +0000\"", "",
         "From: =?UTF-8?Q?=C3=89COLE?= Admin <admin@ecole.example>\r\n"
         "Subject: =?UTF-8?Q?Perfor?= =?UTF-8?Q?mance_notes?=\r\n"
         "MIME-Version: 1.0\r\nContent-Type: multipart/mixed; boundary=b\r\n\r\n"
         "--b\r\nContent-Type: text/plain; charset=utf-8\r\n"
         "Content-Transfer-Encoding: quoted-printable\r\n\r\n"
         "Bienvenue =C3=A0 l'=C3=A9cole, supercali=\r\nfragilistic.\r\n"
         "--b\r\nContent-Type: text/plain; charset=utf-8\r\n"
         "Content-Transfer-Encoding: base64\r\n\r\n"
         "SGlkZGVuIHRyZWFzdXJlIG1hcA==\r\n--b--\r\n");
  c_.run("s2 NOOP");
  EXPECT_EQ(search("SUBJECT perf"), "* SEARCH 5");          // prefix
  EXPECT_EQ(search("SUBJECT formance"), "* SEARCH 5");      // across encoded words
  EXPECT_EQ(search("TEXT \"ormance not\""), "* SEARCH 5");  // infix
  EXPECT_EQ(search("BODY califragil"), "* SEARCH 5");       // QP soft line break
  EXPECT_EQ(search("BODY \"treasure ma\""), "* SEARCH 5");  // base64 body
  EXPECT_EQ(search("BODY SGlkZGVu"), "* SEARCH");           // not the encoded form
  EXPECT_EQ(search("CHARSET UTF-8 FROM {6+}\r\n\xc3\xa9"
                   "cole"),
            "* SEARCH 5");  // école ~ ÉCOLE
  EXPECT_EQ(search("CHARSET UTF-8 BODY {6+}\r\n\xc3\x89"
                   "COLE"),
            "* SEARCH 5");                                                  // ÉCOLE ~ école
  EXPECT_EQ(search("CHARSET UTF-8 BODY {3+}\r\n\xc3\xa0 "), "* SEARCH 5");  // short: scanned
}

}  // namespace
}  // namespace peregrine::imap::testing
