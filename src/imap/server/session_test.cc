// The session state machine, capabilities, authentication and the commands
// valid in any state; bad input and commands in the wrong state.

#include <gtest/gtest.h>

#include <vector>

#include "auth/sasl.h"
#include "imap/server/test_harness.h"

namespace peregrine::imap::testing {
namespace {

constexpr std::string_view kCaps =
    "IMAP4rev1 LITERAL+ SASL-IR ID ENABLE IDLE UIDPLUS MOVE UNSELECT NAMESPACE CHILDREN "
    "SPECIAL-USE MULTIAPPEND ESEARCH SEARCHRES SORT SORT=DISPLAY ESORT THREAD=ORDEREDSUBJECT "
    "THREAD=REFERENCES";

std::string plain_ir(std::string_view user, std::string_view password) {
  return auth::encode_base64(std::string("\0", 1) + std::string(user) + std::string("\0", 1) +
                             std::string(password));
}

TEST(SessionTest, GreetingAndCapabilityBeforeLogin) {
  TestServer server;
  TestClient c(server);
  EXPECT_EQ(c.greeting(), "* OK [CAPABILITY " + std::string(kCaps) +
                              " STARTTLS AUTH=PLAIN AUTH=LOGIN] Peregrine ready\r\n");
  EXPECT_EQ(c.run("a1 CAPABILITY"), "* CAPABILITY " + std::string(kCaps) +
                                        " STARTTLS AUTH=PLAIN AUTH=LOGIN\r\n"
                                        "a1 OK Capability completed\r\n");
}

TEST(SessionTest, LoginThenCapabilityHasNoAuthMechanisms) {
  TestServer server;
  TestClient c(server);
  EXPECT_EQ(c.run("a1 LOGIN alice secret"),
            "a1 OK [CAPABILITY " + std::string(kCaps) + "] Logged in\r\n");
  EXPECT_EQ(c.session().state(), SessionState::kAuthenticated);
  EXPECT_NE(c.session().user(), nullptr);
  EXPECT_EQ(c.run("a2 CAPABILITY"),
            "* CAPABILITY " + std::string(kCaps) + "\r\na2 OK Capability completed\r\n");
}

TEST(SessionTest, LoginFailures) {
  TestServer server({.failure_tracker = true});
  TestClient c(server);
  EXPECT_EQ(c.run("a1 LOGIN alice wrong"),
            "a1 NO [AUTHENTICATIONFAILED] Authentication failed\r\n");
  EXPECT_GT(c.last_delay().count(), 0);  // the back-off delays the answer
  EXPECT_EQ(c.run("a2 LOGIN nobody secret"),
            "a2 NO [AUTHENTICATIONFAILED] Authentication failed\r\n");
  EXPECT_EQ(c.session().state(), SessionState::kNotAuthenticated);
  EXPECT_EQ(c.run("a3 LOGIN alice"), "a3 BAD LOGIN: missing password\r\n");
  EXPECT_EQ(c.run("a4 LOGIN alice secret"),
            "a4 OK [CAPABILITY " + std::string(kCaps) + "] Logged in\r\n");
  EXPECT_EQ(c.run("a5 LOGIN alice secret"), "a5 BAD LOGIN is not allowed after logging in\r\n");
}

TEST(SessionTest, PlaintextPolicy) {
  TestServer tls_only({.plaintext = config::PlaintextAuth::kTlsOnly});
  TestClient c(tls_only);
  EXPECT_NE(c.greeting().find("STARTTLS LOGINDISABLED]"), std::string::npos) << c.greeting();
  EXPECT_EQ(c.greeting().find("AUTH="), std::string::npos);
  EXPECT_EQ(c.run("a1 LOGIN alice secret"),
            "a1 NO [PRIVACYREQUIRED] Plaintext authentication is not allowed on this "
            "connection; use STARTTLS\r\n");
  EXPECT_EQ(tagged_line(c.run("a2 AUTHENTICATE PLAIN " + plain_ir("alice", "secret"))),
            "a2 NO [PRIVACYREQUIRED] Plaintext authentication is not allowed on this "
            "connection; use STARTTLS");
  EXPECT_EQ(c.run("a3 STARTTLS"), "a3 OK Begin TLS negotiation now\r\n");
  EXPECT_EQ(c.last_action(), SessionAction::kStartTls);
  c.session().on_tls_started();
  std::string caps = c.run("a4 CAPABILITY");
  EXPECT_EQ(caps.find("STARTTLS"), std::string::npos);
  EXPECT_NE(caps.find("AUTH=PLAIN AUTH=LOGIN"), std::string::npos);
  EXPECT_EQ(c.run("a5 STARTTLS"), "a5 BAD TLS is already active\r\n");
  c.login();

  // loopback: allowed from 127.0.0.1, not from elsewhere.
  TestServer loopback({.plaintext = config::PlaintextAuth::kLoopback});
  TestClient local(loopback);
  local.login();
  ConnectionInfo remote;
  remote.peer = "192.0.2.1";
  TestClient far(loopback, remote);
  EXPECT_NE(far.greeting().find("LOGINDISABLED"), std::string::npos);
  EXPECT_EQ(far.greeting().find("STARTTLS"), std::string::npos);  // no TLS configured
  EXPECT_EQ(far.run("a1 STARTTLS"), "a1 BAD TLS is not available on this server\r\n");
  EXPECT_TRUE(tagged_line(far.run("a2 LOGIN alice secret")).starts_with("a2 NO [PRIVACY"));
}

TEST(SessionTest, AuthenticatePlainWithInitialResponse) {
  TestServer server;
  TestClient c(server);
  EXPECT_EQ(c.run("a1 AUTHENTICATE PLAIN " + plain_ir("alice", "secret")),
            "a1 OK [CAPABILITY " + std::string(kCaps) + "] Logged in\r\n");
  EXPECT_EQ(c.session().state(), SessionState::kAuthenticated);
}

TEST(SessionTest, AuthenticatePlainWithContinuation) {
  TestServer server;
  TestClient c(server);
  EXPECT_EQ(c.run("a1 AUTHENTICATE PLAIN"), "+ \r\n");
  EXPECT_EQ(c.session().input_mode(), InputMode::kAuthResponse);
  EXPECT_EQ(c.run(plain_ir("alice", "wrong")),
            "a1 NO [AUTHENTICATIONFAILED] Authentication failed\r\n");
  EXPECT_EQ(c.session().input_mode(), InputMode::kCommand);
  // Empty initial response ("="): the server asks for the real one.
  EXPECT_EQ(c.run("a2 AUTHENTICATE PLAIN ="),
            "a2 BAD Invalid authentication response: "
            "PLAIN message needs authzid NUL authcid NUL password\r\n");
}

TEST(SessionTest, AuthenticateLogin) {
  TestServer server;
  TestClient c(server);
  EXPECT_EQ(c.run("a1 AUTHENTICATE LOGIN"), "+ VXNlcm5hbWU6\r\n");  // "Username:"
  EXPECT_EQ(c.run(auth::encode_base64("alice")), "+ UGFzc3dvcmQ6\r\n");
  EXPECT_EQ(tagged_line(c.run(auth::encode_base64("secret"))),
            "a1 OK [CAPABILITY " + std::string(kCaps) + "] Logged in");
}

TEST(SessionTest, AuthenticateErrors) {
  TestServer server;
  TestClient c(server);
  EXPECT_EQ(c.run("a1 AUTHENTICATE CRAM-MD5"),
            "a1 NO Unsupported authentication mechanism CRAM-MD5\r\n");
  EXPECT_EQ(c.run("a2 AUTHENTICATE PLAIN"), "+ \r\n");
  EXPECT_EQ(c.run("*"), "a2 BAD Authentication cancelled\r\n");
  EXPECT_EQ(c.run("a3 AUTHENTICATE PLAIN"), "+ \r\n");
  EXPECT_EQ(c.run("not base64!"), "a3 BAD invalid base64 in authentication response\r\n");
  // Another user's identity as authzid is refused.
  std::string ir = auth::encode_base64(std::string("bob\0alice\0secret", 16));
  EXPECT_EQ(c.run("a4 AUTHENTICATE PLAIN " + ir),
            "a4 NO [AUTHORIZATIONFAILED] Logging in as another user is not allowed\r\n");
  // The same identity is fine.
  ir = auth::encode_base64(std::string("alice\0alice\0secret", 18));
  EXPECT_TRUE(tagged_line(c.run("a5 AUTHENTICATE PLAIN " + ir)).starts_with("a5 OK"));
}

TEST(SessionTest, CommandsInTheWrongState) {
  TestServer server;
  TestClient c(server);
  EXPECT_EQ(c.run("a1 SELECT INBOX"), "a1 BAD SELECT is not allowed before logging in\r\n");
  EXPECT_EQ(c.run("a2 FETCH 1 FLAGS"), "a2 BAD FETCH is not allowed before logging in\r\n");
  EXPECT_EQ(c.run("a3 APPEND INBOX {1+}\r\nx"),
            "a3 BAD APPEND is not allowed before logging in\r\n");
  EXPECT_EQ(c.run("a4 IDLE"), "a4 BAD IDLE is not allowed before logging in\r\n");
  c.login();
  EXPECT_EQ(c.run("a5 FETCH 1 FLAGS"), "a5 BAD FETCH needs a selected mailbox\r\n");
  EXPECT_EQ(c.run("a6 UID STORE 1 +FLAGS (\\Seen)"), "a6 BAD STORE needs a selected mailbox\r\n");
  EXPECT_EQ(c.run("a7 CLOSE"), "a7 BAD CLOSE needs a selected mailbox\r\n");
  EXPECT_EQ(c.run("a8 EXPUNGE"), "a8 BAD EXPUNGE needs a selected mailbox\r\n");
  EXPECT_EQ(c.run("a9 STARTTLS"), "a9 BAD STARTTLS is not allowed after logging in\r\n");
  EXPECT_EQ(c.run("b1 AUTHENTICATE PLAIN"),
            "b1 BAD AUTHENTICATE is not allowed after logging in\r\n");
}

TEST(SessionTest, GarbageAndParseErrors) {
  TestServer server;
  TestClient c(server);
  EXPECT_EQ(c.run("a1 FROB"), "a1 BAD unknown command FROB\r\n");
  EXPECT_EQ(c.run(""), "* BAD empty command line\r\n");
  EXPECT_EQ(c.run("+++"), "* BAD invalid tag\r\n");
  EXPECT_EQ(c.run("a2 UID NOOP"), "a2 BAD UID NOOP is not a command\r\n");
  EXPECT_EQ(c.run("a3 NOOP extra"), "a3 BAD NOOP: unexpected extra\r\n");
  c.login();
  EXPECT_EQ(c.run("a4 SELECT INBOX"), c.run("a4 SELECT INBOX"));
  EXPECT_EQ(c.run("a5 FETCH 1:x FLAGS"), "a5 BAD FETCH: invalid sequence set 1:x\r\n");
  EXPECT_EQ(c.run("a6 FETCH 0 FLAGS"), "a6 BAD FETCH: invalid sequence set 0\r\n");
  EXPECT_EQ(c.run("a7 FETCH 3 FLAGS"), "a7 BAD invalid message sequence number 3 (0 messages)\r\n");
  EXPECT_EQ(c.run("a8 FETCH 1:* FLAGS"), "a8 OK Fetch completed\r\n");
  EXPECT_EQ(c.run("a9 SORT (DATE) UTF-8 ALL"), "* SORT\r\na9 OK Sort completed\r\n");
  // No SEARCH saved a result yet: "$" is empty (RFC 5182 §2.1).
  EXPECT_EQ(c.run("b1 FETCH $ FLAGS"), "b1 OK Fetch completed\r\n");
  // A huge synchronizing literal is refused before it is sent, and the
  // session goes on.
  EXPECT_EQ(c.run("b2 APPEND INBOX {99999999999}"), "b2 BAD bad literal size\r\n");
  EXPECT_TRUE(tagged_line(c.run("b3 APPEND INBOX {999999999}")).starts_with("b3 BAD literal"));
  EXPECT_EQ(c.run("b4 NOOP"), "b4 OK NOOP completed\r\n");
}

TEST(SessionTest, AnyStateCommands) {
  TestServer server;
  TestClient c(server);
  EXPECT_EQ(c.run("a1 NOOP"), "a1 OK NOOP completed\r\n");
  EXPECT_EQ(c.run("a2 ID (\"name\" \"test\")"),
            "* ID (\"name\" \"Peregrine\" \"version\" \"0.1.0\")\r\na2 OK ID completed\r\n");
  EXPECT_EQ(c.run("a3 NAMESPACE"), "a3 BAD NAMESPACE is not allowed before logging in\r\n");
  c.login();
  EXPECT_EQ(c.run("a4 NAMESPACE"),
            "* NAMESPACE ((\"\" \"/\")) NIL NIL\r\na4 OK Namespace completed\r\n");
  EXPECT_EQ(c.run("a5 ENABLE CONDSTORE"), "* ENABLED\r\na5 OK Enabled\r\n");
  EXPECT_EQ(c.run("a6 ID NIL"),
            "* ID (\"name\" \"Peregrine\" \"version\" \"0.1.0\")\r\na6 OK ID completed\r\n");
  EXPECT_EQ(c.run("a7 LOGOUT"), "* BYE Logging out\r\na7 OK Logout completed\r\n");
  EXPECT_EQ(c.last_action(), SessionAction::kClose);
  EXPECT_EQ(c.session().state(), SessionState::kLogout);
  EXPECT_EQ(c.run("a8 NOOP"), "a8 BAD the session is logging out\r\n");
}

TEST(SessionTest, OneUserContextPerUser) {
  TestServer server;
  {
    TestClient a(server);
    TestClient b(server);
    a.login();
    b.login();
    EXPECT_EQ(a.session().user(), b.session().user());
    TestClient other(server);
    other.login("bob", "hunter2");
    EXPECT_NE(other.session().user(), a.session().user());
    EXPECT_EQ(server.users().open_users(), 2u);
  }
  EXPECT_EQ(server.users().open_users(), 0u);
}

}  // namespace
}  // namespace peregrine::imap::testing
