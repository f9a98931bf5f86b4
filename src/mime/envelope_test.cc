#include "mime/envelope.h"

#include <gtest/gtest.h>

#include <string>
#include <string_view>
#include <vector>

namespace peregrine::mime {
namespace {

using std::nullopt;

Address mbox(std::optional<std::string> name, std::string mailbox, std::string host) {
  return Address{std::move(name), nullopt, std::move(mailbox), std::move(host)};
}

TEST(BuildEnvelope, AllFields) {
  const std::string msg =
      "Date:  Mon, 1 Jan 2024 10:00:00 +0000  \r\n"
      "Subject:   hello\r\n   world  \r\n"
      "From: Joe <joe@example.com>\r\n"
      "Sender: secretary@example.com\r\n"
      "Reply-To: list@example.com\r\n"
      "To: a@b, Team: c@d;\r\n"
      "Cc: e@f\r\n"
      "Bcc: g@h\r\n"
      "In-Reply-To: <p@q>\r\n <r@s>\r\n"
      "Message-ID:   <x@y> (comment)\r\n"
      "\r\n"
      "body\r\n";
  Header header = Header::parse(msg);
  Envelope e = build_envelope(header);
  EXPECT_EQ(e.date, "Mon, 1 Jan 2024 10:00:00 +0000");
  EXPECT_EQ(e.subject, "hello   world");
  EXPECT_EQ(e.from, std::vector<Address>{mbox("Joe", "joe", "example.com")});
  EXPECT_EQ(e.sender, std::vector<Address>{mbox(nullopt, "secretary", "example.com")});
  EXPECT_EQ(e.reply_to, std::vector<Address>{mbox(nullopt, "list", "example.com")});
  EXPECT_EQ(e.to, (std::vector<Address>{mbox(nullopt, "a", "b"),
                                        Address{nullopt, nullopt, "Team", nullopt},
                                        mbox(nullopt, "c", "d"), Address{}}));
  EXPECT_EQ(e.cc, std::vector<Address>{mbox(nullopt, "e", "f")});
  EXPECT_EQ(e.bcc, std::vector<Address>{mbox(nullopt, "g", "h")});
  EXPECT_EQ(e.in_reply_to, "<p@q> <r@s>");
  EXPECT_EQ(e.message_id, "<x@y> (comment)");
}

TEST(BuildEnvelope, SenderAndReplyToDefaultToFrom) {
  Envelope e = build_envelope(Header::parse("From: a@b\nSender: \nReply-To: (nobody)\n\n"));
  const std::vector<Address> from = {mbox(nullopt, "a", "b")};
  EXPECT_EQ(e.from, from);
  EXPECT_EQ(e.sender, from);
  EXPECT_EQ(e.reply_to, from);

  Envelope none = build_envelope(Header::parse("Subject: x\n\n"));
  EXPECT_TRUE(none.from.empty());
  EXPECT_TRUE(none.sender.empty());
  EXPECT_TRUE(none.reply_to.empty());
}

TEST(BuildEnvelope, AbsentIsNilAndEmptyIsEmpty) {
  Envelope absent = build_envelope(Header::parse("X-Other: y\n\nbody"));
  EXPECT_EQ(absent, Envelope{});

  Envelope empty =
      build_envelope(Header::parse("Date:\nSubject:  \nMessage-ID:\nIn-Reply-To:\n\n"));
  EXPECT_EQ(empty.date, "");
  EXPECT_EQ(empty.subject, "");
  EXPECT_EQ(empty.message_id, "");
  EXPECT_EQ(empty.in_reply_to, "");
}

TEST(BuildEnvelope, FirstFieldWinsAndNamesAreCaseInsensitive) {
  Envelope e = build_envelope(
      Header::parse("SUBJECT: first\nsubject: second\nfrom: x@y\nFROM: z@w\nmessage-id: <1@a>\n"
                    "MESSAGE-ID: <2@a>\ncc: c@c\n\n"));
  EXPECT_EQ(e.subject, "first");
  EXPECT_EQ(e.from, std::vector<Address>{mbox(nullopt, "x", "y")});
  EXPECT_EQ(e.message_id, "<1@a>");
  EXPECT_EQ(e.cc, std::vector<Address>{mbox(nullopt, "c", "c")});
}

TEST(BuildEnvelope, EncodedWordsAndEightBitKeptRaw) {
  Envelope e =
      build_envelope(Header::parse("Subject: =?utf-8?q?h=C3=A9llo?= there\n"
                                   "From: =?utf-8?q?J=C3=B6rg?= <j@x.de>\n"
                                   "To: J\xC3\xB6rg <j@x.de>\n\n"));
  EXPECT_EQ(e.subject, "=?utf-8?q?h=C3=A9llo?= there");
  ASSERT_EQ(e.from.size(), 1u);
  EXPECT_EQ(e.from[0].name, "=?utf-8?q?J=C3=B6rg?=");
  ASSERT_EQ(e.to.size(), 1u);
  EXPECT_EQ(e.to[0].name, "J\xC3\xB6rg");
}

struct IdCase {
  std::string_view wire;
  std::vector<std::string> expected;
};

TEST(ParseMessageIds, Table) {
  const std::vector<IdCase> cases = {
      {"", {}},
      {"   ", {}},
      {"<a@b>", {"<a@b>"}},
      {"  <a@b>  ", {"<a@b>"}},
      {"<a@b> <c@d>", {"<a@b>", "<c@d>"}},
      {"<a@b>\r\n <c@d>\r\n\t<e@f>", {"<a@b>", "<c@d>", "<e@f>"}},
      {"<a@b>,<c@d>", {"<a@b>", "<c@d>"}},
      {"<a@b><c@d>", {"<a@b>", "<c@d>"}},
      {"<a@b> (comment <x@y>)", {"<a@b>"}},
      {"(c) < a @ b >", {"<a@b>"}},
      {"<a(inner)@b>", {"<a@b>"}},
      {"<a@\r\n b>", {"<a@b>"}},
      {"a@b", {"<a@b>"}},
      {"a@b c@d", {"<a@b>", "<c@d>"}},
      {"message from joe@example.com of Monday <id@x>", {"<id@x>"}},
      {"Your message of \"Mon, 1 Jan <q@r>\" <id@x>", {"<id@x>"}},
      {"<>", {}},
      {"<abc>", {"<abc>"}},
      {"<abc", {}},
      {"<abc@def", {"<abc@def>"}},
      {"<abc <def@x>", {"<def@x>"}},
      {"no ids here", {}},
      {"<\xC3\xA9@x>", {"<\xC3\xA9@x>"}},
      {"((((", {}},
      {"\"unterminated <a@b>", {}},
      {">>><<<", {}},
  };
  for (const IdCase& c : cases) {
    EXPECT_EQ(parse_message_ids(c.wire), c.expected) << c.wire;
  }
}

TEST(ParseMessageIds, EveryPrefixIsSafe) {
  const std::string wire = "<a@b> (c <x@y>) \"q <z@w>\" <c@d>\r\n <e (f) @g> h@i <j@k";
  for (size_t n = 0; n <= wire.size(); ++n) {
    std::string prefix = wire.substr(0, n);
    std::vector<std::string> ids = parse_message_ids(prefix);
    EXPECT_LE(ids.size(), prefix.size()) << prefix;
    for (const std::string& id : ids) {
      EXPECT_TRUE(id.starts_with('<') && id.ends_with('>')) << prefix;
      EXPECT_GT(id.size(), 2u) << prefix;
      EXPECT_EQ(id.find_first_of(" \t\r\n"), std::string::npos) << prefix;
    }
  }
  EXPECT_EQ(parse_message_ids(wire),
            (std::vector<std::string>{"<a@b>", "<c@d>", "<e@g>", "<j@k>"}));
}

TEST(ParseMessageIds, Bounded) {
  std::string many;
  for (size_t i = 0; i < kMaxMessageIds + 100; ++i) {
    many += "<" + std::to_string(i) + "@x> ";
  }
  std::vector<std::string> ids = parse_message_ids(many);
  ASSERT_EQ(ids.size(), kMaxMessageIds);
  EXPECT_EQ(ids.front(), "<0@x>");

  std::string bare;
  for (size_t i = 0; i < kMaxMessageIds + 100; ++i) {
    bare += "a@b ";
  }
  EXPECT_EQ(parse_message_ids(bare).size(), kMaxMessageIds);

  for (char c : {'<', '(', '"', '@', '>'}) {
    EXPECT_LE(parse_message_ids(std::string(100000, c)).size(), kMaxMessageIds);
  }
}

}  // namespace
}  // namespace peregrine::mime
