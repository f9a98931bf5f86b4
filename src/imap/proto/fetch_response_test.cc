#include "imap/proto/fetch_response.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "imap/proto/parser_test_util.h"
#include "mime/imap_output.h"

namespace peregrine::imap {
namespace {

// The items of "a1 FETCH 1 (<items>)".
std::vector<FetchItem> items_of(const std::string& items) {
  testing::WireParse p("a1 FETCH 1 (" + items + ")");
  EXPECT_TRUE(p.result().ok()) << p.result().error().message;
  return std::get<Fetch>(p.result()->args).items;
}

TEST(FetchResponse, SimpleItems) {
  std::string out;
  const std::vector<std::string> flags = {"\\Seen", "$Junk"};
  FetchResponse r(out, 12);
  r.uid(4827313)
      .flags(flags)
      .internal_date(mime::DateTime{837596665, -420})
      .rfc822_size(44827)
      .modseq(12121231000ull);
  r.finish();
  EXPECT_EQ(out,
            "* 12 FETCH (UID 4827313 FLAGS (\\Seen $Junk) INTERNALDATE \"17-Jul-1996 02:44:25 "
            "-0700\" RFC822.SIZE 44827 MODSEQ (12121231000))\r\n");
}

TEST(FetchResponse, EmptyFlagsAndNoItems) {
  std::string out;
  FetchResponse r(out, 1);
  r.flags({});
  r.finish();
  FetchResponse e(out, 2);
  e.finish();
  EXPECT_EQ(out, "* 1 FETCH (FLAGS ())\r\n* 2 FETCH ()\r\n");
}

TEST(FetchResponse, Sections) {
  std::vector<FetchItem> items = items_of(
      "BODY.PEEK[HEADER.FIELDS (From To)] BODY[]<5.3> RFC822.HEADER BINARY[1] BINARY.PEEK[2] "
      "BINARY.SIZE[1] BODY[3.MIME] RFC822 RFC822.TEXT");
  ASSERT_EQ(items.size(), 9u);
  const std::string message = "From: a\r\n\r\nhello";
  std::string out;
  FetchResponse r(out, 3);
  r.section(items[0], "From: a\r\n\r\n");
  r.section(items[1], apply_partial(message, items[1].partial));
  r.section(items[2], "From: a\r\n\r\n");
  r.section(items[3], "plain");
  r.section(items[4], std::string_view("a\0b", 3));
  r.binary_size(items[5], 2047);
  r.section_nil(items[6]);
  r.section(items[7], message);
  r.section(items[8], "");
  r.finish();
  using namespace std::string_literals;
  EXPECT_EQ(out,
            "* 3 FETCH (BODY[HEADER.FIELDS (From To)] {11}\r\nFrom: a\r\n\r\n "
            "BODY[]<5> {3}\r\n a\r RFC822.HEADER {11}\r\nFrom: a\r\n\r\n "
            "BINARY[1] {5}\r\nplain BINARY[2] ~{3}\r\na\0b "
            "BINARY.SIZE[1] 2047 BODY[3.MIME] NIL RFC822 {16}\r\n"
            "From: a\r\n\r\nhello RFC822.TEXT {0}\r\n)\r\n"s);
}

TEST(FetchResponse, StreamedLiteral) {
  std::vector<FetchItem> items = items_of("BODY[]");
  std::string out;
  FetchResponse r(out, 1);
  r.uid(7);
  r.begin_literal(items[0], 5, false);
  out += "hello";
  r.finish();
  EXPECT_EQ(out, "* 1 FETCH (UID 7 BODY[] {5}\r\nhello)\r\n");
}

TEST(FetchResponse, ApplyPartial) {
  EXPECT_EQ(apply_partial("hello", std::nullopt), "hello");
  EXPECT_EQ(apply_partial("hello", FetchPartial{1, 3}), "ell");
  EXPECT_EQ(apply_partial("hello", FetchPartial{3, 100}), "lo");
  EXPECT_EQ(apply_partial("hello", FetchPartial{5, 1}), "");
  EXPECT_EQ(apply_partial("hello", FetchPartial{0xffffffffffffull, 1}), "");
}

TEST(FetchResponse, EnvelopeAndBodyStructureComeFromMime) {
  const std::string message =
      "From: Ann <ann@example.com>\r\nSubject: hi\r\nContent-Type: text/plain\r\n\r\nbody\r\n";
  mime::Part root = mime::parse_message(message);
  mime::Envelope env = mime::build_envelope(mime::Header::parse(message));
  std::string expected = "* 1 FETCH (ENVELOPE ";
  mime::append_envelope(expected, env);
  expected += " BODY ";
  mime::append_body_structure(expected, root, false);
  expected += " BODYSTRUCTURE ";
  mime::append_body_structure(expected, root, true);
  expected += ")\r\n";
  std::string out;
  FetchResponse r(out, 1);
  r.envelope(env).body_structure(root, false).body_structure(root, true);
  r.finish();
  EXPECT_EQ(out, expected);
  EXPECT_NE(out.find("ENVELOPE (NIL \"hi\" ((\"Ann\" NIL \"ann\" \"example.com\"))"),
            std::string::npos)
      << out;
}

}  // namespace
}  // namespace peregrine::imap
