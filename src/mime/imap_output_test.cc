#include "mime/imap_output.h"

#include <gtest/gtest.h>

#include <string>
#include <string_view>
#include <vector>

namespace peregrine::mime {
namespace {

using std::nullopt;

std::string imap_string(std::string_view s) {
  std::string out;
  append_imap_string(out, s);
  return out;
}

std::string envelope(const Envelope& e) {
  std::string out;
  append_envelope(out, e);
  return out;
}

std::string body(const Part& p) {
  std::string out;
  append_body_structure(out, p, /*extended=*/false);
  return out;
}

std::string bodystructure(const Part& p) {
  std::string out;
  append_body_structure(out, p, /*extended=*/true);
  return out;
}

Address mbox(std::optional<std::string> name, std::string mailbox, std::string host) {
  return Address{std::move(name), nullopt, std::move(mailbox), std::move(host)};
}

Part leaf(std::string type, std::string subtype, std::vector<Param> params = {}) {
  Part p;
  p.content_type.type = std::move(type);
  p.content_type.subtype = std::move(subtype);
  p.content_type.params = std::move(params);
  p.content_type_present = true;
  return p;
}

// Part is move-only (it owns the envelope of an encapsulated message).
Part multipart(std::string subtype, Part child1 = {}, Part child2 = {}, int count = 0) {
  Part p = leaf("multipart", std::move(subtype), {{"boundary", "b1", false}});
  p.kind = PartKind::kMultipart;
  if (count >= 1) {
    p.children.push_back(std::move(child1));
  }
  if (count >= 2) {
    p.children.push_back(std::move(child2));
  }
  return p;
}

TEST(ImapString, QuotedWhenSevenBitWithoutLineEnds) {
  EXPECT_EQ(imap_string("abc"), "\"abc\"");
  EXPECT_EQ(imap_string(""), "\"\"");
  EXPECT_EQ(imap_string("a b\tc"), "\"a b\tc\"");
  EXPECT_EQ(imap_string(R"(a"b\c)"), R"("a\"b\\c")");
  EXPECT_EQ(imap_string("\x01\x7f"), "\"\x01\x7f\"");
}

TEST(ImapString, LiteralOtherwise) {
  EXPECT_EQ(imap_string("caf\xC3\xA9"), "{5}\r\ncaf\xC3\xA9");
  EXPECT_EQ(imap_string("a\r\nb"), "{4}\r\na\r\nb");
  EXPECT_EQ(imap_string("a\nb"), "{3}\r\na\nb");
  EXPECT_EQ(imap_string("a\rb"), "{3}\r\na\rb");
  EXPECT_EQ(imap_string("\"\xC3\xA9\""), "{4}\r\n\"\xC3\xA9\"");  // no escaping in literals
  // NUL cannot travel in a literal: U+FFFD instead.
  EXPECT_EQ(imap_string(std::string("a\0b", 3)),
            "{5}\r\na\xEF\xBF\xBD"
            "b");
  EXPECT_EQ(imap_string(std::string("\0\0", 2)), "{6}\r\n\xEF\xBF\xBD\xEF\xBF\xBD");
}

TEST(ImapString, LongStringsAreLiterals) {
  std::string at_limit(4096, 'a');
  EXPECT_EQ(imap_string(at_limit), "\"" + at_limit + "\"");
  std::string over(4097, 'a');
  EXPECT_EQ(imap_string(over), "{4097}\r\n" + over);
}

TEST(ImapString, NString) {
  std::string out;
  append_imap_nstring(out, nullopt);
  out += ' ';
  append_imap_nstring(out, std::string("x"));
  out += ' ';
  append_imap_nstring(out, std::string());
  EXPECT_EQ(out, "NIL \"x\" \"\"");
}

TEST(ImapEnvelope, Empty) {
  EXPECT_EQ(envelope(Envelope{}), "(NIL NIL NIL NIL NIL NIL NIL NIL NIL NIL)");
}

TEST(ImapEnvelope, AllFields) {
  Envelope e;
  e.date = "Mon, 1 Jan 2024 10:00:00 +0000";
  e.subject = "hello \"world\"";
  e.from = {mbox("Joe Q. Public", "joe", "example.com")};
  e.sender = e.from;
  e.reply_to = {mbox(nullopt, "list", "example.com"), mbox(nullopt, "root", "")};
  e.to = {Address{nullopt, nullopt, "Team", nullopt}, mbox(nullopt, "a", "b"), Address{}};
  e.cc = {Address{nullopt, "@r1,@r2", "user", "host"}};
  e.in_reply_to = "<p@q>";
  e.message_id = "<x@y>";
  EXPECT_EQ(envelope(e),
            "(\"Mon, 1 Jan 2024 10:00:00 +0000\" \"hello \\\"world\\\"\" "
            "((\"Joe Q. Public\" NIL \"joe\" \"example.com\")) "
            "((\"Joe Q. Public\" NIL \"joe\" \"example.com\")) "
            "((NIL NIL \"list\" \"example.com\")(NIL NIL \"root\" \"\")) "
            "((NIL NIL \"Team\" NIL)(NIL NIL \"a\" \"b\")(NIL NIL NIL NIL)) "
            "((NIL \"@r1,@r2\" \"user\" \"host\")) "
            "NIL \"<p@q>\" \"<x@y>\")");
}

TEST(ImapEnvelope, EightBitNamesAreLiterals) {
  Envelope e;
  e.subject = "";
  e.from = {mbox("J\xC3\xB6rg", "j", "x.de")};
  EXPECT_EQ(envelope(e),
            "(NIL \"\" (({5}\r\nJ\xC3\xB6rg NIL \"j\" \"x.de\")) NIL NIL NIL NIL NIL NIL NIL)");
}

TEST(ImapEnvelope, FromParsedHeader) {
  // Dovecot 2.3 sends the same, except that it takes the comment in
  // "(Real Name)" as the name and sends literals for quoted specials.
  Header h = Header::parse(
      "From: user@host (Real Name)\r\n"
      "To: \"john doe\"@example.com, Team: a@b, c@d;, undisclosed-recipients:;\r\n"
      "Cc: <@r1,@r2:user@host>\r\n"
      "Subject: test\r\n\r\nhello\r\n");
  EXPECT_EQ(envelope(build_envelope(h)),
            "(NIL \"test\" ((NIL NIL \"user\" \"host\")) ((NIL NIL \"user\" \"host\")) "
            "((NIL NIL \"user\" \"host\")) ((NIL NIL \"john doe\" \"example.com\")"
            "(NIL NIL \"Team\" NIL)(NIL NIL \"a\" \"b\")(NIL NIL \"c\" \"d\")(NIL NIL NIL NIL)"
            "(NIL NIL \"undisclosed-recipients\" NIL)(NIL NIL NIL NIL)) "
            "((NIL \"@r1,@r2\" \"user\" \"host\")) NIL NIL NIL)");
}

TEST(ImapBody, TextPartGetsDefaultCharsetAndLines) {
  Part p = leaf("text", "plain");
  p.body_size = 7;
  p.body_lines = 1;
  EXPECT_EQ(body(p), "(\"text\" \"plain\" (\"charset\" \"us-ascii\") NIL NIL \"7bit\" 7 1)");
  EXPECT_EQ(bodystructure(p),
            "(\"text\" \"plain\" (\"charset\" \"us-ascii\") NIL NIL \"7bit\" 7 1 NIL NIL NIL NIL)");
}

TEST(ImapBody, CharsetDefaultGoesLastAndCaseIsKept) {
  Part p = leaf("TEXT", "Plain", {{"format", "flowed", false}});
  p.content_id = "<cid@x>";
  p.content_description = "some text";
  p.content_transfer_encoding = "Quoted-Printable";
  p.content_md5 = "abc==";
  p.content_language = {"en", "de"};
  p.content_location = "http://x/y";
  p.body_size = 12;
  p.body_lines = 1;
  EXPECT_EQ(body(p),
            "(\"TEXT\" \"Plain\" (\"format\" \"flowed\" \"charset\" \"us-ascii\") \"<cid@x>\" "
            "\"some text\" \"Quoted-Printable\" 12 1)");
  EXPECT_EQ(bodystructure(p),
            "(\"TEXT\" \"Plain\" (\"format\" \"flowed\" \"charset\" \"us-ascii\") \"<cid@x>\" "
            "\"some text\" \"Quoted-Printable\" 12 1 \"abc==\" NIL (\"en\" \"de\") "
            "\"http://x/y\")");
}

TEST(ImapBody, ExistingCharsetIsNotDuplicated) {
  Part p = leaf("text", "html", {{"Charset", "UTF-8", false}});
  EXPECT_EQ(body(p), "(\"text\" \"html\" (\"Charset\" \"UTF-8\") NIL NIL \"7bit\" 0 0)");
}

TEST(ImapBody, BasicPartWithDisposition) {
  Part p = leaf("application", "pdf", {{"name", "a b.pdf", false}});
  p.content_transfer_encoding = "base64";
  p.disposition = Disposition{"attachment", {{"filename", "a b.pdf", false}, {"size", "3", false}}};
  p.content_language = {"fr"};
  p.body_size = 4;
  p.body_lines = 1;  // no lines for a non-text part
  EXPECT_EQ(body(p), "(\"application\" \"pdf\" (\"name\" \"a b.pdf\") NIL NIL \"base64\" 4)");
  EXPECT_EQ(bodystructure(p),
            "(\"application\" \"pdf\" (\"name\" \"a b.pdf\") NIL NIL \"base64\" 4 NIL "
            "(\"attachment\" (\"filename\" \"a b.pdf\" \"size\" \"3\")) (\"fr\") NIL)");
}

TEST(ImapBody, NoParamsIsNilAndDispositionWithoutParams) {
  Part p = leaf("image", "png");
  p.disposition = Disposition{"inline", {}};
  p.body_size = 2;
  p.content_transfer_encoding = "";  // present but empty: the default
  EXPECT_EQ(bodystructure(p),
            "(\"image\" \"png\" NIL NIL NIL \"7bit\" 2 NIL (\"inline\" NIL) NIL NIL)");
}

TEST(ImapBody, EmptyStringsStayStrings) {
  Part p = leaf("text", "plain", {{"name", "=?utf-8?q?a?=", false}});
  p.content_id = "";
  p.content_description = "";
  p.content_md5 = "";
  p.content_location = "";
  p.disposition = Disposition{"ATTACHMENT", {}};
  p.body_size = 3;
  p.body_lines = 1;
  EXPECT_EQ(bodystructure(p),
            "(\"text\" \"plain\" (\"name\" \"=?utf-8?q?a?=\" \"charset\" \"us-ascii\") \"\" \"\" "
            "\"7bit\" 3 1 \"\" (\"ATTACHMENT\" NIL) NIL \"\")");
}

TEST(ImapBody, Rfc2231ValuesAreSentEncoded) {
  Part p = leaf("application", "x");
  p.disposition =
      Disposition{"attachment", {{"x", "1", false}, {"filename", "\xE2\x82\xAC a;b.txt", true}}};
  EXPECT_EQ(bodystructure(p),
            "(\"application\" \"x\" NIL NIL NIL \"7bit\" 0 NIL (\"attachment\" (\"x\" \"1\" "
            "\"filename*\" \"UTF-8''%E2%82%AC%20a%3Bb.txt\")) NIL NIL)");
}

TEST(ImapBody, Rfc2231LanguageIsKept) {
  Part p = leaf("application", "x");
  Param name{"name", "\xE6\x97\xA5.bin", true};
  name.language = "en-us";
  p.content_type.params = {name};
  p.disposition = Disposition{"attachment", {name}};
  p.disposition->params[0].name = "filename";
  EXPECT_EQ(bodystructure(p),
            "(\"application\" \"x\" (\"name*\" \"UTF-8'en-us'%E6%97%A5.bin\") NIL NIL \"7bit\" 0 "
            "NIL (\"attachment\" (\"filename*\" \"UTF-8'en-us'%E6%97%A5.bin\")) NIL NIL)");
}

TEST(ImapBody, PlainAndRfc2231ParametersAreBothSent) {
  // rw-29 and edge-33 (part 2), as Dovecot answers them.
  Part root = parse_message(
      "Content-Type: application/pdf; name=\"=?ISO-2022-JP?B?GyRCOCtAUT1xGyhC?=\"\r\n"
      "Content-Disposition: attachment; filename=\"=?ISO-2022-JP?B?GyRCOCtAUT1xGyhC?=\";\r\n"
      " filename*=UTF-8'en-us'%E8%A6%8B%E7%A9%8D.pdf\r\n\r\nx\r\n");
  EXPECT_EQ(bodystructure(root),
            R"(("application" "pdf" ("name" "=?ISO-2022-JP?B?GyRCOCtAUT1xGyhC?=") NIL NIL "7bit" )"
            R"(3 NIL ("attachment" ("filename" "=?ISO-2022-JP?B?GyRCOCtAUT1xGyhC?=" )"
            R"("filename*" "UTF-8'en-us'%E8%A6%8B%E7%A9%8D.pdf")) NIL NIL))");
}

TEST(ImapBody, InvalidContentTypeGetsTheDefault) {
  // rw-34: RFC 2045 §5.2 default, where Dovecot answers an empty media type.
  Part root = parse_message(
      "Content-Type: text/html/plain; charset=utf-8; charset=iso-8859-1 (comment\r\n"
      "\r\nx\r\n");
  EXPECT_EQ(body(root), R"(("text" "plain" ("charset" "us-ascii") NIL NIL "7bit" 3 1))");
}

TEST(ImapBody, EightBitDescriptionIsALiteral) {
  Part p = leaf("text", "plain", {{"name", "a\\b", false}});
  p.content_description = "caf\xC3\xA9";
  p.body_size = 3;
  p.body_lines = 1;
  EXPECT_EQ(body(p),
            "(\"text\" \"plain\" (\"name\" \"a\\\\b\" \"charset\" \"us-ascii\") NIL "
            "{5}\r\ncaf\xC3\xA9 \"7bit\" 3 1)");
}

TEST(ImapBody, Multipart) {
  Part text = leaf("text", "plain");
  text.body_size = 1;
  Part related = multipart("related", leaf("text", "html"), {}, 1);
  related.content_type.params = {{"boundary", "C", false}};
  related.children[0].body_size = 3;
  Part root = multipart("alternative", std::move(text), std::move(related), 2);
  root.content_type.params = {{"boundary", "B", false}};
  EXPECT_EQ(body(root),
            "((\"text\" \"plain\" (\"charset\" \"us-ascii\") NIL NIL \"7bit\" 1 0)"
            "((\"text\" \"html\" (\"charset\" \"us-ascii\") NIL NIL \"7bit\" 3 0) \"related\") "
            "\"alternative\")");
  EXPECT_EQ(bodystructure(root),
            "((\"text\" \"plain\" (\"charset\" \"us-ascii\") NIL NIL \"7bit\" 1 0 NIL NIL NIL NIL)"
            "((\"text\" \"html\" (\"charset\" \"us-ascii\") NIL NIL \"7bit\" 3 0 NIL NIL NIL NIL) "
            "\"related\" (\"boundary\" \"C\") NIL NIL NIL) \"alternative\" (\"boundary\" \"B\") "
            "NIL NIL NIL)");
}

TEST(ImapBody, MultipartExtensionData) {
  Part root = multipart("Mixed", leaf("text", "plain"), {}, 1);
  root.content_type.params = {{"boundary", "B", false}, {"foo", "bar", false}};
  root.disposition = Disposition{"inline", {{"x", "y", false}}};
  root.content_language = {"en"};
  root.content_location = "loc";
  EXPECT_EQ(bodystructure(root),
            "((\"text\" \"plain\" (\"charset\" \"us-ascii\") NIL NIL \"7bit\" 0 0 NIL NIL NIL NIL) "
            "\"Mixed\" (\"boundary\" \"B\" \"foo\" \"bar\") (\"inline\" (\"x\" \"y\")) (\"en\") "
            "\"loc\")");
}

TEST(ImapBody, MultipartWithoutChildrenGetsAnEmptyTextPart) {
  Part root = multipart("mixed");
  EXPECT_EQ(body(root),
            "((\"text\" \"plain\" (\"charset\" \"us-ascii\") NIL NIL \"7bit\" 0 0) \"mixed\")");
  EXPECT_EQ(bodystructure(root),
            "((\"text\" \"plain\" (\"charset\" \"us-ascii\") NIL NIL \"7bit\" 0 0 NIL NIL NIL NIL) "
            "\"mixed\" (\"boundary\" \"b1\") NIL NIL NIL)");
}

TEST(ImapBody, MessageRfc822) {
  Part inner = leaf("text", "html", {{"charset", "UTF-8", false}});
  inner.body_size = 9;
  Part msg = leaf("message", "RFC822", {{"x", "y", false}});
  msg.kind = PartKind::kMessage;
  msg.content_transfer_encoding = "8bit";
  msg.content_language = {"en"};
  msg.body_size = 82;
  msg.body_lines = 4;
  msg.envelope = std::make_unique<Envelope>();
  msg.envelope->subject = "inner";
  msg.envelope->from = {mbox(nullopt, "inner", "x")};
  msg.envelope->sender = msg.envelope->from;
  msg.envelope->reply_to = msg.envelope->from;
  msg.children.push_back(std::move(inner));
  const std::string env =
      "(NIL \"inner\" ((NIL NIL \"inner\" \"x\")) ((NIL NIL \"inner\" \"x\")) "
      "((NIL NIL \"inner\" \"x\")) NIL NIL NIL NIL NIL)";
  EXPECT_EQ(body(msg), "(\"message\" \"rfc822\" (\"x\" \"y\") NIL NIL \"8bit\" 82 " + env +
                           " (\"text\" \"html\" (\"charset\" \"UTF-8\") NIL NIL \"7bit\" 9 0) 4)");
  EXPECT_EQ(bodystructure(msg),
            "(\"message\" \"rfc822\" (\"x\" \"y\") NIL NIL \"8bit\" 82 " + env +
                " (\"text\" \"html\" (\"charset\" \"UTF-8\") NIL NIL \"7bit\" 9 0 NIL NIL NIL NIL)"
                " 4 NIL NIL (\"en\") NIL)");
}

TEST(ImapBody, UnparsedMessageRfc822StillHasTheMessageForm) {
  Part msg = leaf("message", "rfc822");
  msg.content_transfer_encoding = "base64";
  msg.body_size = 22;
  msg.body_lines = 1;
  EXPECT_EQ(bodystructure(msg),
            "(\"message\" \"rfc822\" NIL NIL NIL \"base64\" 22 "
            "(NIL NIL NIL NIL NIL NIL NIL NIL NIL NIL) "
            "(\"text\" \"plain\" (\"charset\" \"us-ascii\") NIL NIL \"7bit\" 0 0 NIL NIL NIL NIL) "
            "1 NIL NIL NIL NIL)");
}

TEST(ImapBody, MessageGlobalIsABasicPart) {
  Part msg = leaf("message", "global");
  msg.kind = PartKind::kMessage;
  msg.children.push_back(leaf("text", "plain"));
  msg.envelope = std::make_unique<Envelope>();
  msg.body_size = 17;
  EXPECT_EQ(body(msg), "(\"message\" \"global\" NIL NIL NIL \"7bit\" 17)");
}

// Whole messages through parse_message, expected bytes taken from Dovecot 2.3's
// answers to FETCH (ENVELOPE BODY BODYSTRUCTURE) for the same messages.
struct MessageCase {
  std::string_view message;
  std::string_view body;
  std::string_view bodystructure;
};

TEST(ImapBody, ParsedMessagesMatchDovecot) {
  const std::vector<MessageCase> cases = {
      {"From: a@b\r\nSubject: x\r\n\r\nhello\r\n",
       R"(("text" "plain" ("charset" "us-ascii") NIL NIL "7bit" 7 1))",
       R"(("text" "plain" ("charset" "us-ascii") NIL NIL "7bit" 7 1 NIL NIL NIL NIL))"},
      {"Content-Type: text/plain; charset=ISO-8859-1; Format=Flowed\r\n"
       "Content-Disposition: attachment\r\n\r\nx\r\n",
       R"(("text" "plain" ("charset" "ISO-8859-1" "Format" "Flowed") NIL NIL "7bit" 3 1))",
       R"(("text" "plain" ("charset" "ISO-8859-1" "Format" "Flowed") NIL NIL "7bit" 3 1 NIL )"
       R"(("attachment" NIL) NIL NIL))"},
      {"Content-Type: application/octet-stream\r\nContent-Transfer-Encoding: 8BIT\r\n\r\nx\r\n",
       R"(("application" "octet-stream" NIL NIL NIL "8BIT" 3))",
       R"(("application" "octet-stream" NIL NIL NIL "8BIT" 3 NIL NIL NIL NIL))"},
      {"Content-Type: multipart/mixed; boundary=B\r\n\r\nno parts at all\r\n",
       R"((("text" "plain" ("charset" "us-ascii") NIL NIL "7bit" 0 0) "mixed"))",
       R"((("text" "plain" ("charset" "us-ascii") NIL NIL "7bit" 0 0 NIL NIL NIL NIL) "mixed" )"
       R"(("boundary" "B") NIL NIL NIL))"},
      {"Content-Type: message/rfc822\r\n\r\nSubject: inner only\r\n",
       R"(("message" "rfc822" NIL NIL NIL "7bit" 21 (NIL "inner only" NIL NIL NIL NIL NIL NIL )"
       R"(NIL NIL) ("text" "plain" ("charset" "us-ascii") NIL NIL "7bit" 0 0) 1))",
       R"(("message" "rfc822" NIL NIL NIL "7bit" 21 (NIL "inner only" NIL NIL NIL NIL NIL NIL )"
       R"(NIL NIL) ("text" "plain" ("charset" "us-ascii") NIL NIL "7bit" 0 0 NIL NIL NIL NIL) 1 )"
       R"(NIL NIL NIL NIL))"},
      {"Content-Type: message/rfc822\r\nContent-Transfer-Encoding: base64\r\n\r\n"
       "U3ViamVjdDogeAoKeQo=\r\n",
       R"(("message" "rfc822" NIL NIL NIL "base64" 22 (NIL NIL NIL NIL NIL NIL NIL NIL NIL NIL) )"
       R"(("text" "plain" ("charset" "us-ascii") NIL NIL "7bit" 0 0) 1))",
       R"(("message" "rfc822" NIL NIL NIL "base64" 22 (NIL NIL NIL NIL NIL NIL NIL NIL NIL NIL) )"
       R"(("text" "plain" ("charset" "us-ascii") NIL NIL "7bit" 0 0 NIL NIL NIL NIL) 1 NIL NIL )"
       R"(NIL NIL))"},
      {"Content-Type: text/plain; name=\"=?utf-8?q?a?=\"\r\nContent-Disposition: ATTACHMENT\r\n"
       "Content-Language: \r\nContent-Location: \r\nContent-MD5:\r\nContent-ID:\r\n"
       "Content-Description:\r\n\r\nx\r\n",
       R"(("text" "plain" ("name" "=?utf-8?q?a?=" "charset" "us-ascii") "" "" "7bit" 3 1))",
       R"(("text" "plain" ("name" "=?utf-8?q?a?=" "charset" "us-ascii") "" "" "7bit" 3 1 "" )"
       R"(("ATTACHMENT" NIL) NIL ""))"},
  };
  for (const MessageCase& c : cases) {
    Part root = parse_message(c.message);
    EXPECT_EQ(body(root), c.body) << c.message;
    EXPECT_EQ(bodystructure(root), c.bodystructure) << c.message;
  }
}

}  // namespace
}  // namespace peregrine::mime
