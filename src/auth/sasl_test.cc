#include "auth/sasl.h"

#include <gtest/gtest.h>

#include <string>

namespace peregrine::auth {
namespace {

using base::MailError;

TEST(Base64, EncodesRfc4648Vectors) {
  // RFC 4648 section 10.
  EXPECT_EQ(encode_base64(""), "");
  EXPECT_EQ(encode_base64("f"), "Zg==");
  EXPECT_EQ(encode_base64("fo"), "Zm8=");
  EXPECT_EQ(encode_base64("foo"), "Zm9v");
  EXPECT_EQ(encode_base64("foob"), "Zm9vYg==");
  EXPECT_EQ(encode_base64("fooba"), "Zm9vYmE=");
  EXPECT_EQ(encode_base64("foobar"), "Zm9vYmFy");
  EXPECT_EQ(encode_base64(std::string("\0\xff\xfe", 3)), "AP/+");
  EXPECT_EQ(encode_base64("Username:"), "VXNlcm5hbWU6");
  EXPECT_EQ(encode_base64("Password:"), "UGFzc3dvcmQ6");
}

TEST(Base64, DecodesWhatItEncodes) {
  for (const char* s : {"", "f", "fo", "foo", "foob", "fooba", "foobar"}) {
    auto r = decode_base64(encode_base64(s));
    ASSERT_TRUE(r) << s;
    EXPECT_EQ(*r, s);
  }
  std::string all;
  for (int i = 0; i < 256; ++i) {
    all += static_cast<char>(i);
  }
  for (std::size_t n = 0; n <= all.size(); n += 7) {
    auto r = decode_base64(encode_base64(all.substr(0, n)));
    ASSERT_TRUE(r);
    EXPECT_EQ(*r, all.substr(0, n));
  }
}

TEST(Base64, RejectsNonCanonicalInput) {
  for (const char* bad : {
           "Zg",         // missing padding
           "Zg=",        // short padding
           "Zg===",      // too much padding
           "Z===",       // one symbol is not a byte
           "====",       // only padding
           "Zm9v YmFy",  // whitespace
           "Zm9v\r\n",   // line break
           "Zm=v",       // '=' inside
           "Zg==Zg==",   // padding before the end
           "Zh==",       // non-zero unused bits
           "Zm9=",       // non-zero unused bits
           "Zm-v",       // base64url alphabet
           "Zm_v",       // base64url alphabet
           "Zm9v\xC3\xA4",
       }) {
    auto r = decode_base64(bad);
    ASSERT_FALSE(r) << bad;
    EXPECT_EQ(r.error().code, MailError::kBadInput);
    EXPECT_EQ(r.error().message, "bad base64");
  }
}

struct PlainCase {
  std::string message;  // before base64
  const char* authzid;
  const char* authcid;
  const char* password;
};

TEST(SaslPlain, DecodesMessages) {
  const PlainCase cases[] = {
      {std::string("\0tim\0tanstaaftanstaaf", 21), "", "tim", "tanstaaftanstaaf"},  // RFC 4616
      {std::string("Ursel\0Kurt\0xipj3plmq", 20), "Ursel", "Kurt", "xipj3plmq"},    // RFC 4616
      {std::string("\0alice@example.org\0p a:ss", 25), "", "alice@example.org", "p a:ss"},
      {std::string("\0J\xC3\xBCrgen\0\xE9t\xE9", 12), "", "J\xC3\xBCrgen", "\xE9t\xE9"},
  };
  for (const PlainCase& c : cases) {
    auto r = decode_sasl_plain(encode_base64(c.message));
    ASSERT_TRUE(r) << c.authcid << ": " << r.error().message;
    EXPECT_EQ(r->authzid, c.authzid);
    EXPECT_EQ(r->authcid, c.authcid);
    EXPECT_EQ(r->password, c.password);
  }
}

TEST(SaslPlain, AcceptsFieldsUpTo255AndBeyondToTheBound) {
  std::string user(255, 'u');
  std::string password(kMaxSaslFieldBytes, 'p');
  auto r = decode_sasl_plain(encode_base64(user + '\0' + user + '\0' + password));
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(r->password.size(), kMaxSaslFieldBytes);
}

TEST(SaslPlain, RejectsBadMessages) {
  struct Case {
    std::string message;
    const char* error;
  };
  const Case cases[] = {
      {"", "PLAIN message needs authzid NUL authcid NUL password"},
      {"timpassword", "PLAIN message needs authzid NUL authcid NUL password"},
      {std::string("tim\0pw", 6), "PLAIN message needs authzid NUL authcid NUL password"},
      {std::string("\0tim\0pw\0", 8), "PLAIN message has more than two NULs"},
      {std::string("\0\0pw", 4), "PLAIN message has an empty user name"},
      {std::string("\0tim\0", 5), "PLAIN message has an empty password"},
      {std::string("\0tim\0", 5) + std::string(kMaxSaslFieldBytes + 1, 'p'),
       "PLAIN field longer than 1024 bytes"},
      {std::string("\0\xE9t\xE9\0pw", 7), "PLAIN user name is not UTF-8"},
      {std::string("\xC0\xAF\0tim\0pw", 9), "PLAIN user name is not UTF-8"},   // overlong '/'
      {std::string("\0\xED\xA0\x80\0pw", 7), "PLAIN user name is not UTF-8"},  // surrogate
  };
  for (const Case& c : cases) {
    auto r = parse_sasl_plain(c.message);
    ASSERT_FALSE(r) << c.error;
    EXPECT_EQ(r.error().code, MailError::kBadInput);
    EXPECT_EQ(r.error().message, c.error);
  }
}

TEST(SaslPlain, RejectsBadBase64AndOverlongResponses) {
  auto bad = decode_sasl_plain("AHRpbQB0YW5zdGFhZnRhbnN0YWFm=");  // stray '='
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().message, "bad base64");
  auto spaced = decode_sasl_plain(" AHRpbQB0YW5zdGFhZnRhbnN0YWFm");
  ASSERT_FALSE(spaced);
  EXPECT_EQ(spaced.error().code, MailError::kBadInput);
  auto huge = decode_sasl_plain(std::string(kMaxSaslResponseBytes + 4, 'A'));
  ASSERT_FALSE(huge);
  EXPECT_EQ(huge.error().code, MailError::kTooBig);
  EXPECT_TRUE(decode_sasl_plain("AHRpbQB0YW5zdGFhZnRhbnN0YWFm"));
}

TEST(SaslServer, MakesKnownMechanismsOnly) {
  ASSERT_NE(make_sasl_server("PLAIN"), nullptr);
  ASSERT_NE(make_sasl_server("plain"), nullptr);
  ASSERT_NE(make_sasl_server("Login"), nullptr);
  EXPECT_STREQ(make_sasl_server("plain")->mechanism(), "PLAIN");
  EXPECT_STREQ(make_sasl_server("login")->mechanism(), "LOGIN");
  EXPECT_EQ(make_sasl_server("CRAM-MD5"), nullptr);
  EXPECT_EQ(make_sasl_server(""), nullptr);
  EXPECT_EQ(make_sasl_server("PLAINX"), nullptr);
}

TEST(SaslServer, PlainInOneStep) {
  auto server = make_sasl_server("PLAIN");
  EXPECT_EQ(server->initial_challenge().base64, "");  // "+ " then the client's message
  auto step = server->step("AHRpbQB0YW5zdGFhZnRhbnN0YWFm");
  ASSERT_TRUE(step) << step.error().message;
  const auto* credentials = std::get_if<Credentials>(&*step);
  ASSERT_NE(credentials, nullptr);
  EXPECT_EQ(credentials->authcid, "tim");
  EXPECT_EQ(credentials->password, "tanstaaftanstaaf");
  auto again = server->step("AHRpbQB0YW5zdGFhZnRhbnN0YWFm");
  ASSERT_FALSE(again);
  EXPECT_EQ(again.error().code, MailError::kInternal);
}

TEST(SaslServer, PlainEmptyResponseFails) {
  // SASL-IR "=" (an empty initial response) arrives here as "".
  auto server = make_sasl_server("PLAIN");
  auto step = server->step("");
  ASSERT_FALSE(step);
  EXPECT_EQ(step.error().code, MailError::kBadInput);
}

TEST(SaslServer, LoginAsksForUserThenPassword) {
  auto server = make_sasl_server("LOGIN");
  EXPECT_EQ(server->initial_challenge().base64, "VXNlcm5hbWU6");  // "Username:"
  auto first = server->step(encode_base64("alice"));
  ASSERT_TRUE(first) << first.error().message;
  const auto* challenge = std::get_if<SaslChallenge>(&*first);
  ASSERT_NE(challenge, nullptr);
  EXPECT_EQ(challenge->base64, "UGFzc3dvcmQ6");  // "Password:"
  auto second = server->step(encode_base64("s3cret pass"));
  ASSERT_TRUE(second) << second.error().message;
  const auto* credentials = std::get_if<Credentials>(&*second);
  ASSERT_NE(credentials, nullptr);
  EXPECT_EQ(credentials->authzid, "");
  EXPECT_EQ(credentials->authcid, "alice");
  EXPECT_EQ(credentials->password, "s3cret pass");
  auto third = server->step(encode_base64("x"));
  ASSERT_FALSE(third);
  EXPECT_EQ(third.error().code, MailError::kInternal);
}

TEST(SaslServer, LoginRejectsBadResponsesAndEndsTheExchange) {
  struct Case {
    std::string first;   // user name response (base64 text)
    std::string second;  // password response, if the first is fine
    MailError code;
    const char* message;
  };
  const Case cases[] = {
      {"!!!!", "", MailError::kBadInput, "bad base64"},
      {"", "", MailError::kBadInput, "empty LOGIN user name"},
      {encode_base64(std::string("a\0b", 3)), "", MailError::kBadInput, "LOGIN field contains NUL"},
      {encode_base64("\xFF"), "", MailError::kBadInput, "LOGIN user name is not UTF-8"},
      {encode_base64(std::string(kMaxSaslFieldBytes + 1, 'u')), "", MailError::kBadInput,
       "LOGIN field longer than 1024 bytes"},
      {std::string(kMaxSaslResponseBytes + 4, 'A'), "", MailError::kTooBig,
       "SASL response longer than 4096 bytes"},
      {encode_base64("alice"), "", MailError::kBadInput, "empty LOGIN password"},
      {encode_base64("alice"), "UGFzc3dvcmQ", MailError::kBadInput, "bad base64"},
  };
  for (const Case& c : cases) {
    auto server = make_sasl_server("LOGIN");
    auto step = server->step(c.first);
    if (step) {
      step = server->step(c.second);
    }
    ASSERT_FALSE(step) << c.message;
    EXPECT_EQ(step.error().code, c.code);
    EXPECT_EQ(step.error().message, c.message);
    auto after = server->step(encode_base64("x"));
    ASSERT_FALSE(after);
    EXPECT_EQ(after.error().code, MailError::kInternal);
  }
}

}  // namespace
}  // namespace peregrine::auth
