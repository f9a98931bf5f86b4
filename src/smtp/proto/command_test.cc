#include "smtp/proto/command.h"

#include <gtest/gtest.h>

namespace peregrine::smtp {
namespace {

Command parse_ok(std::string_view line) {
  ParseResult result = parse_command(line);
  EXPECT_TRUE(result.ok) << line << " -> " << result.error.code << " " << result.error.text;
  return result.command;
}

int error_code(std::string_view line) {
  ParseResult result = parse_command(line);
  EXPECT_FALSE(result.ok) << line;
  return result.error.code;
}

TEST(SmtpCommand, Greetings) {
  Command c = parse_ok("LHLO mx.example.org");
  EXPECT_EQ(c.verb, Verb::kLhlo);
  EXPECT_EQ(c.domain, "mx.example.org");
  EXPECT_EQ(parse_ok("lhlo [127.0.0.1]").domain, "[127.0.0.1]");
  EXPECT_EQ(parse_ok("HELO x").verb, Verb::kHelo);
  EXPECT_EQ(parse_ok("ehlo x").verb, Verb::kEhlo);
  EXPECT_EQ(error_code("LHLO"), 501);
  EXPECT_EQ(error_code("LHLO   "), 501);
}

TEST(SmtpCommand, MailFrom) {
  Command c = parse_ok("MAIL FROM:<alice@example.org>");
  EXPECT_EQ(c.verb, Verb::kMail);
  EXPECT_EQ(c.address.local, "alice");
  EXPECT_EQ(c.address.domain, "example.org");
  EXPECT_EQ(c.address.text, "alice@example.org");
  EXPECT_FALSE(c.size.has_value());
  EXPECT_EQ(c.body, BodyType::k7Bit);

  c = parse_ok("mail from:<> SIZE=1000 BODY=8BITMIME SMTPUTF8");
  EXPECT_TRUE(c.address.null());
  EXPECT_EQ(c.size, 1000u);
  EXPECT_EQ(c.body, BodyType::k8BitMime);
  EXPECT_TRUE(c.smtputf8);

  // One space after the colon, a source route, a quoted local part.
  EXPECT_EQ(parse_ok("MAIL FROM: <a@b>").address.text, "a@b");
  c = parse_ok("MAIL FROM:<@relay.example,@r2.example:bob@example.org>");
  EXPECT_EQ(c.address.text, "bob@example.org");
  c = parse_ok("MAIL FROM:<\"john \\\"q\\\" doe\"@example.org>");
  EXPECT_EQ(c.address.local, "john \"q\" doe");
  EXPECT_EQ(c.address.text, "\"john \\\"q\\\" doe\"@example.org");
  c = parse_ok("MAIL FROM:<j\xc3\xb6rg@example.org> SMTPUTF8");
  EXPECT_TRUE(c.address.utf8);
  EXPECT_EQ(parse_ok("MAIL FROM:<x@[192.0.2.1]>").address.domain, "[192.0.2.1]");
}

TEST(SmtpCommand, MailFromErrors) {
  EXPECT_EQ(error_code("MAIL alice@example.org"), 501);
  EXPECT_EQ(error_code("MAIL FROM:alice@example.org"), 501);
  EXPECT_EQ(error_code("MAIL FROM:<alice@example.org"), 501);
  EXPECT_EQ(error_code("MAIL FROM:<a..b@example.org>"), 501);
  EXPECT_EQ(error_code("MAIL FROM:<.a@example.org>"), 501);
  EXPECT_EQ(error_code("MAIL FROM:<a@example..org>"), 501);
  EXPECT_EQ(error_code("MAIL FROM:<a@>"), 501);
  EXPECT_EQ(error_code("MAIL FROM:<a b@c>"), 501);
  EXPECT_EQ(error_code("MAIL FROM:<a@b>junk"), 501);
  EXPECT_EQ(error_code("MAIL FROM:<" + std::string(65, 'a') + "@b>"), 501);
  EXPECT_EQ(error_code("MAIL FROM:<a@" + std::string(260, 'b') + ">"), 501);
  EXPECT_EQ(error_code("MAIL FROM:<a@b> SIZE=x"), 555);
  EXPECT_EQ(error_code("MAIL FROM:<a@b> SIZE=99999999999999999999"), 555);
  EXPECT_EQ(error_code("MAIL FROM:<a@b> SIZE=1 SIZE=2"), 555);
  EXPECT_EQ(error_code("MAIL FROM:<a@b> BODY=BINARYMIME"), 555);
  EXPECT_EQ(error_code("MAIL FROM:<a@b> RET=FULL"), 555);
  EXPECT_EQ(error_code("MAIL FROM:<a@b> SMTPUTF8=yes"), 555);
}

TEST(SmtpCommand, RcptTo) {
  Command c = parse_ok("RCPT TO:<bob@example.org>");
  EXPECT_EQ(c.verb, Verb::kRcpt);
  EXPECT_EQ(c.address.local, "bob");
  EXPECT_EQ(c.address.domain, "example.org");
  c = parse_ok("rcpt to:<bob>");
  EXPECT_EQ(c.address.local, "bob");
  EXPECT_EQ(c.address.domain, "");
  EXPECT_EQ(c.address.text, "bob");
  EXPECT_EQ(error_code("RCPT TO:<>"), 501);
  EXPECT_EQ(error_code("RCPT TO:<bob@x> NOTIFY=NEVER"), 555);
  EXPECT_EQ(error_code("RCPT FROM:<bob@x>"), 501);
}

TEST(SmtpCommand, SimpleVerbs) {
  EXPECT_EQ(parse_ok("DATA").verb, Verb::kData);
  EXPECT_EQ(parse_ok("rset").verb, Verb::kRset);
  EXPECT_EQ(parse_ok("NOOP anything").verb, Verb::kNoop);
  EXPECT_EQ(parse_ok("QUIT").verb, Verb::kQuit);
  EXPECT_EQ(parse_ok("HELP").verb, Verb::kHelp);
  EXPECT_EQ(parse_ok("VRFY bob").verb, Verb::kVrfy);
  EXPECT_EQ(error_code("DATA now"), 501);
  EXPECT_EQ(error_code("VRFY"), 501);
  EXPECT_EQ(error_code(""), 500);
  EXPECT_EQ(error_code("FOO"), 500);
  EXPECT_EQ(error_code("STARTTLS"), 500);
  EXPECT_EQ(error_code(std::string("\0\xff", 2)), 500);
}

TEST(SmtpCommand, ErrorsCarryEnhancedCodes) {
  EXPECT_EQ(parse_command("FOO").error.enhanced, "5.5.1");
  EXPECT_EQ(parse_command("MAIL x").error.enhanced, "5.5.4");
}

TEST(SmtpReply, Format) {
  EXPECT_EQ(format_reply(Reply{250, "2.1.5", "OK"}), "250 2.1.5 OK\r\n");
  EXPECT_EQ(format_reply(Reply{221, "", "Bye"}), "221 Bye\r\n");
  EXPECT_EQ(format_reply(Reply{550, "5.1.1", "a\r\nb"}), "550 5.1.1 a  b\r\n");
  EXPECT_EQ(format_multiline(250, {"host", "PIPELINING", "SIZE 10"}),
            "250-host\r\n250-PIPELINING\r\n250 SIZE 10\r\n");
}

}  // namespace
}  // namespace peregrine::smtp
