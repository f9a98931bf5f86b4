#include "bench/loadgen/response.h"

#include <gtest/gtest.h>

namespace peregrine::bench {
namespace {

Response parse(std::string_view wire) {
  Response r;
  std::string error;
  EXPECT_TRUE(parse_response(wire, r, error)) << wire << ": " << error;
  return r;
}

std::string parse_error(std::string_view wire) {
  Response r;
  std::string error;
  EXPECT_FALSE(parse_response(wire, r, error)) << wire;
  return error;
}

TEST(Framer, WholeLine) {
  Framer f(1000);
  EXPECT_EQ(f.next("* 3 EXISTS\r\n* 1 RECENT\r\n").length, 12u);
}

TEST(Framer, LiteralSpansLines) {
  std::string wire = "* 1 FETCH (BODY[] {5}\r\na\r\nb\r UID 7)\r\nrest";
  Framer f(1000);
  Frame fr = f.next(wire);
  EXPECT_EQ(fr.status, FrameStatus::kComplete);
  EXPECT_EQ(wire.substr(0, fr.length), "* 1 FETCH (BODY[] {5}\r\na\r\nb\r UID 7)\r\n");
}

TEST(Framer, ByteAtATime) {
  std::string wire = "* 1 FETCH (BODY[] {12}\r\nline\r\n{3}\r\nxx UID 9)\r\n";
  Framer f(1000);
  for (std::size_t n = 0; n < wire.size(); ++n) {
    ASSERT_EQ(f.next(std::string_view(wire).substr(0, n)).status, FrameStatus::kNeedMore) << n;
  }
  Frame fr = f.next(wire);
  EXPECT_EQ(fr.status, FrameStatus::kComplete);
  EXPECT_EQ(fr.length, wire.size());
}

TEST(Framer, Limits) {
  Framer f(100);
  EXPECT_EQ(f.next("* 1 FETCH (BODY[] {1000}\r\n").status, FrameStatus::kMalformed);
  Framer g(100);
  EXPECT_EQ(g.next(std::string(200, 'a')).status, FrameStatus::kMalformed);
  Framer h(100);
  EXPECT_EQ(h.next("* OK {12x}\r\n").status, FrameStatus::kMalformed);
}

TEST(Parse, TaggedAndCode) {
  Response r = parse("a1 OK [APPENDUID 38505 3955] APPEND completed\r\n");
  EXPECT_EQ(r.kind, Kind::kTagged);
  EXPECT_EQ(r.tag, "a1");
  EXPECT_EQ(r.status, Status::kOk);
  EXPECT_EQ(r.code, "APPENDUID 38505 3955");
  EXPECT_EQ(r.text, "APPEND completed");
  EXPECT_EQ(parse("a2 no nope\r\n").status, Status::kNo);
  EXPECT_EQ(parse("a3 BAD [PARSE] x\r\n").status, Status::kBad);
}

TEST(Parse, Numbered) {
  Response r = parse("* 23 EXISTS\r\n");
  EXPECT_EQ(r.data, Data::kExists);
  EXPECT_EQ(r.number, 23u);
  EXPECT_EQ(parse("* 5 RECENT\r\n").data, Data::kRecent);
  EXPECT_EQ(parse("* 4 EXPUNGE\r\n").data, Data::kExpunge);
}

TEST(Parse, Fetch) {
  Response r = parse(
      "* 12 FETCH (UID 40 FLAGS (\\Seen $Bench1 \\Recent) INTERNALDATE \"17-Jul-1996 02:44:25 "
      "-0700\" ENVELOPE (\"d\" \"s\" ((\"n\" NIL \"a\" \"b\")) NIL NIL NIL NIL NIL NIL "
      "\"<id>\") BODYSTRUCTURE (\"TEXT\" \"PLAIN\" (\"CHARSET\" \"US-ASCII\") NIL NIL \"7BIT\" "
      "3028 92 NIL NIL NIL NIL))\r\n");
  EXPECT_EQ(r.data, Data::kFetch);
  EXPECT_EQ(r.number, 12u);
  EXPECT_EQ(r.fetch.uid, 40u);
  ASSERT_EQ(r.fetch.flags.size(), 3u);
  EXPECT_EQ(r.fetch.flags[0], "\\Seen");
  EXPECT_EQ(r.fetch.flags[1], "$Bench1");
  EXPECT_TRUE(r.fetch.has_envelope);
  EXPECT_TRUE(r.fetch.has_bodystructure);
  EXPECT_TRUE(r.fetch.has_internaldate);
}

TEST(Parse, FetchMultipartBodystructure) {
  // Parts of a multipart follow each other with no space between them.
  Response r = parse(
      "* 3 FETCH (UID 9 BODYSTRUCTURE ((\"text\" \"plain\" (\"charset\" \"utf-8\") NIL NIL "
      "\"7bit\" 10 1 NIL NIL NIL NIL)(\"application\" \"pdf\" NIL NIL NIL \"base64\" 20 NIL "
      "(\"attachment\" NIL) NIL NIL) \"mixed\" (\"boundary\" \"x\") NIL NIL NIL))\r\n");
  EXPECT_TRUE(r.fetch.has_bodystructure);
  EXPECT_EQ(r.fetch.uid, 9u);
  parse_error("* 3 FETCH (ENVELOPE (\"a\"(\"b\")))\r\n");  // only a list may follow a list
}

TEST(Parse, FetchBody) {
  Response r = parse("* 2 FETCH (UID 7 BODY[] {10}\r\nHello\r\nWor)\r\n");
  EXPECT_TRUE(r.fetch.has_body);
  EXPECT_EQ(r.fetch.body_size, 10u);
  EXPECT_EQ(r.fetch.uid, 7u);
  r = parse("* 2 FETCH (BODY[HEADER.FIELDS (FROM \"X])\")]<0> \"ab\" FLAGS ())\r\n");
  EXPECT_EQ(r.fetch.body_size, 2u);
  EXPECT_TRUE(r.fetch.has_flags);
  EXPECT_TRUE(r.fetch.flags.empty());
}

TEST(Parse, OtherUntagged) {
  EXPECT_EQ(parse("* LIST (\\HasNoChildren) \"/\" INBOX\r\n").data, Data::kOther);
  EXPECT_EQ(parse("* FLAGS (\\Answered \\Flagged \\Deleted \\Seen \\Draft)\r\n").data,
            Data::kOther);
  EXPECT_EQ(parse("* CAPABILITY IMAP4rev1 AUTH=PLAIN LITERAL+\r\n").atom, "CAPABILITY");
  Response ok = parse("* OK [PERMANENTFLAGS (\\Seen \\*)] Limited\r\n");
  EXPECT_EQ(ok.data, Data::kStatus);
  EXPECT_EQ(ok.code, "PERMANENTFLAGS (\\Seen \\*)");
  EXPECT_EQ(parse("* BYE Logging out\r\n").status, Status::kBye);
  Response st = parse("* STATUS \"INBOX\" (MESSAGES 231 UNSEEN 3 RECENT 0)\r\n");
  EXPECT_EQ(st.data, Data::kMailboxStatus);
  EXPECT_EQ(st.status_messages, 231);
  Response s = parse("* SEARCH 2 84 882\r\n");
  EXPECT_EQ(s.search, (std::vector<std::uint32_t>{2, 84, 882}));
  EXPECT_TRUE(parse("* SEARCH\r\n").search.empty());
  EXPECT_EQ(parse("+ idling\r\n").kind, Kind::kContinuation);
  EXPECT_EQ(parse("+\r\n").kind, Kind::kContinuation);
}

TEST(Parse, Malformed) {
  parse_error("* 1 FETCH (UID)\r\n");
  parse_error("* 1 FETCH (UID 5\r\n");
  parse_error("* 1 FETCH (FLAGS (\\Seen)\r\n");
  parse_error("* 0 FETCH (UID 5)\r\n");
  parse_error("* 3 EXISTZ\r\n");
  parse_error("* 3 EXISTS junk\r\n");
  parse_error("a1 MAYBE done\r\n");
  parse_error("* SEARCH 1 x\r\n");
  parse_error("* LIST (\\Noselect \"/\" x\r\n");
  parse_error("* 1 FETCH (BODY[] {10}\r\nshort)\r\n");
  parse_error("no line end");
}

}  // namespace
}  // namespace peregrine::bench
