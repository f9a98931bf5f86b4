// The POP3 session driven in-process, the way the network layer drives it
// (resume() while a reply says `more`), over a real MaildirStore in a temp
// dir.

#include "pop3/server/session.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "auth/authenticator.h"
#include "store/api/user_store.h"
#include "store/maildir/maildir_store.h"
#include "test_support/temp_dir.h"

namespace peregrine::pop3 {
namespace {

class Pop3SessionTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_FALSE(dir_.empty());
    std::ofstream(dir_ / "users") << "alice:{PLAIN}secret::::::\nbob:{PLAIN}hunter2::::::\n";
    store::maildir::MaildirOptions options;
    options.data_dir = dir_ / "data";
    store_ = std::make_unique<store::maildir::MaildirStore>(options);
    authenticator_ = std::make_unique<auth::Authenticator>(dir_ / "users");
    users_ = std::make_unique<session::UserRegistry>(*store_);
    server_ = std::make_unique<ServerContext>(
        ServerContext{.authenticator = *authenticator_, .users = *users_});
  }
  void TearDown() override {
    server_.reset();
    users_.reset();
    store_.reset();
  }

  // Appends to alice's INBOX through the shared registry.
  void deliver(std::string_view message, std::string_view user = "alice") {
    auto context = users_->acquire(user, "");
    ASSERT_TRUE(context.has_value());
    store::AppendMessage append;
    append.bytes = message;
    ASSERT_TRUE((*context)->store().append(store::kInbox, append));
  }

  std::unique_ptr<Session> connect(ConnectionInfo info = loopback()) {
    return std::make_unique<Session>(*server_, std::move(info));
  }
  static ConnectionInfo loopback() {
    return ConnectionInfo{.tls_available = true, .loopback = true, .peer = "127.0.0.1"};
  }

  // One line in, everything written until the session waits for input;
  // like the network layer, tries on_line_without_store() and
  // resume_without_store() first. `hops`, when given, counts the calls that
  // needed the store (on_line(), resume()).
  static std::string run(Session& session, std::string_view line, Action* action = nullptr,
                         int* hops = nullptr) {
    std::optional<Reply> quick = session.on_line_without_store(line);
    int store_calls = quick ? 0 : 1;
    Reply reply = quick ? std::move(*quick) : session.on_line(line);
    std::string out = reply.out;
    while (reply.more) {
      session.recycle(std::move(reply.out));
      std::optional<Reply> next = session.resume_without_store();
      store_calls += next ? 0 : 1;
      reply = next ? std::move(*next) : session.resume();
      out += reply.out;
    }
    if (hops != nullptr) {
      *hops = store_calls;
    }
    session.recycle(std::move(reply.out));
    if (action != nullptr) {
      *action = reply.action;
    }
    return out;
  }

  static void login(Session& session, std::string_view user = "alice",
                    std::string_view password = "secret") {
    ASSERT_EQ(run(session, "USER " + std::string(user)), "+OK Send your password\r\n");
    std::string reply = run(session, "PASS " + std::string(password));
    ASSERT_TRUE(reply.starts_with("+OK Logged in")) << reply;
  }

  test_support::TempDir tmp_{"peregrine-pop3"};
  std::filesystem::path dir_ = tmp_.path();
  std::unique_ptr<store::maildir::MaildirStore> store_;
  std::unique_ptr<auth::Authenticator> authenticator_;
  std::unique_ptr<session::UserRegistry> users_;
  std::unique_ptr<ServerContext> server_;
};

TEST_F(Pop3SessionTest, LoginStatListRetrQuit) {
  deliver("Subject: one\r\n\r\nbody one\r\n");
  deliver("Subject: two\n\n.dot line\n..x\nno end");
  auto s = connect();
  EXPECT_EQ(s->greeting(), "+OK Peregrine POP3 server ready\r\n");
  login(*s);
  EXPECT_EQ(s->state(), State::kTransaction);
  // The second message was stored with CRLF line ends: 38 octets.
  EXPECT_EQ(run(*s, "STAT"), "+OK 2 64\r\n");
  EXPECT_EQ(run(*s, "LIST"), "+OK 2 messages (64 octets)\r\n1 26\r\n2 38\r\n.\r\n");
  EXPECT_EQ(run(*s, "LIST 2"), "+OK 2 38\r\n");
  EXPECT_EQ(run(*s, "LIST 3"), "-ERR No such message\r\n");
  EXPECT_EQ(run(*s, "RETR 1"), "+OK 26 octets\r\nSubject: one\r\n\r\nbody one\r\n.\r\n");
  EXPECT_EQ(run(*s, "RETR 2"),
            "+OK 38 octets\r\nSubject: two\r\n\r\n..dot line\r\n...x\r\nno end\r\n.\r\n");
  EXPECT_EQ(run(*s, "TOP 2 1"),
            "+OK Top of message follows\r\nSubject: two\r\n\r\n..dot line\r\n.\r\n");
  EXPECT_EQ(run(*s, "NOOP"), "+OK \r\n");
  Action action;
  EXPECT_EQ(run(*s, "QUIT", &action),
            "+OK Peregrine POP3 server signing off (2 messages left)\r\n");
  EXPECT_EQ(action, Action::kClose);
}

// A download reads the message files where they were at login, without the
// store (no hop to the user's strand), in every piece of a long message.
TEST_F(Pop3SessionTest, RetrReadsTheFileWithoutTheStore) {
  std::string big = "Subject: big\r\n\r\n";
  while (big.size() < 3 * kRetrChunkBytes) {
    big += ".line starting with a dot, stuffed on the wire\r\n";
  }
  deliver(big);
  deliver("Subject: small\r\n\r\nbody\r\n");
  auto s = connect();
  login(*s);
  int hops = -1;
  std::string wire = run(*s, "RETR 1", nullptr, &hops);
  EXPECT_EQ(hops, 0);
  std::string stuffed;
  for (std::size_t at = 0; at < big.size();) {
    std::size_t end = big.find("\r\n", at) + 2;
    std::string_view line(big.data() + at, end - at);
    stuffed += line.starts_with(".") ? "." + std::string(line) : std::string(line);
    at = end;
  }
  EXPECT_EQ(wire, "+OK " + std::to_string(big.size()) + " octets\r\n" + stuffed + ".\r\n");
  EXPECT_EQ(run(*s, "TOP 2 0", nullptr, &hops),
            "+OK Top of message follows\r\nSubject: small\r\n\r\n.\r\n");
  EXPECT_EQ(hops, 0);
  EXPECT_EQ(run(*s, "RETR 3", nullptr, &hops), "-ERR No such message\r\n");
  EXPECT_EQ(hops, 0);
  EXPECT_EQ(run(*s, "QUIT").substr(0, 3), "+OK");
}

// A file renamed since login (another program set a flag): the session
// does not find it where it was, and reads it through the store.
TEST_F(Pop3SessionTest, RetrOfAFileRenamedSinceLoginGoesThroughTheStore) {
  deliver("Subject: renamed\r\n\r\nstill here\r\n");
  auto s = connect();
  login(*s);
  const std::filesystem::path cur = dir_ / "data" / "alice" / "Maildir" / "cur";
  std::vector<std::filesystem::path> files;
  for (const auto& e : std::filesystem::directory_iterator(cur)) {
    files.push_back(e.path());
  }
  ASSERT_EQ(files.size(), 1u);
  const std::string name = files[0].filename().string();
  std::filesystem::rename(files[0], cur / (name.substr(0, name.find(":2,")) + ":2,S"));
  int hops = -1;
  EXPECT_EQ(run(*s, "RETR 1", nullptr, &hops),
            "+OK 32 octets\r\nSubject: renamed\r\n\r\nstill here\r\n.\r\n");
  EXPECT_EQ(hops, 1);
  EXPECT_EQ(run(*s, "QUIT").substr(0, 3), "+OK");
}

TEST_F(Pop3SessionTest, UidlIsStableAcrossSessions) {
  deliver("A: 1\r\n\r\na\r\n");
  deliver("A: 2\r\n\r\nb\r\n");
  std::string first;
  {
    auto s = connect();
    login(*s);
    first = run(*s, "UIDL");
    EXPECT_EQ(run(*s, "DELE 1"), "+OK Message 1 deleted\r\n");
    EXPECT_TRUE(run(*s, "QUIT").starts_with("+OK"));
  }
  // "N uidvalidity.uid" lines.
  ASSERT_TRUE(first.starts_with("+OK Unique-ID listing follows\r\n1 ")) << first;
  const size_t second_line = first.find("\r\n2 ");
  ASSERT_NE(second_line, std::string::npos);
  const std::string uid2 =
      first.substr(second_line + 4, first.find("\r\n", second_line + 2) - second_line - 4);
  auto s = connect();
  login(*s);
  EXPECT_EQ(run(*s, "UIDL"), "+OK Unique-ID listing follows\r\n1 " + uid2 + "\r\n.\r\n");
  EXPECT_EQ(run(*s, "UIDL 1"), "+OK 1 " + uid2 + "\r\n");
}

TEST_F(Pop3SessionTest, DeleRsetAndUpdate) {
  deliver("A: 1\r\n\r\na\r\n");
  deliver("A: 2\r\n\r\nb\r\n");
  deliver("A: 3\r\n\r\nc\r\n");
  auto s = connect();
  login(*s);
  EXPECT_EQ(run(*s, "DELE 2"), "+OK Message 2 deleted\r\n");
  EXPECT_EQ(run(*s, "DELE 2"), "-ERR No such message\r\n");
  EXPECT_EQ(run(*s, "RETR 2"), "-ERR No such message\r\n");
  EXPECT_EQ(run(*s, "STAT"), "+OK 2 22\r\n");
  EXPECT_EQ(run(*s, "LIST"), "+OK 2 messages (22 octets)\r\n1 11\r\n3 11\r\n.\r\n");
  EXPECT_EQ(run(*s, "RSET"), "+OK Maildrop has 3 messages (33 octets)\r\n");
  EXPECT_EQ(run(*s, "DELE 1"), "+OK Message 1 deleted\r\n");
  EXPECT_EQ(run(*s, "DELE 3"), "+OK Message 3 deleted\r\n");
  EXPECT_EQ(run(*s, "QUIT"), "+OK Peregrine POP3 server signing off (1 messages left)\r\n");
  s.reset();
  auto context = users_->acquire("alice", "");
  ASSERT_TRUE(context.has_value());
  auto snapshot = (*context)->store().open_mailbox(store::kInbox);
  ASSERT_TRUE(snapshot.has_value());
  ASSERT_EQ(snapshot->messages.size(), 1u);
  auto body = (*context)->store().open_body(store::kInbox, snapshot->messages[0].uid);
  ASSERT_TRUE(body.has_value());
  EXPECT_EQ((*body)->read_all().value(), "A: 2\r\n\r\nb\r\n");
}

// The commands that only read or mark the session's maildrop, or read a
// message's file (RETR, TOP), are answered without the store, and the same
// as on_line() answers them; everything else, and everything before
// login, goes to on_line().
TEST_F(Pop3SessionTest, OnlyMaildropCommandsAreAnsweredWithoutTheStore) {
  deliver("A: 1\r\n\r\na\r\n");
  deliver("A: 2\r\n\r\nb\r\n");
  auto s = connect();
  for (std::string_view line : {"USER alice", "PASS secret", "STAT", "NOOP", "CAPA"}) {
    EXPECT_FALSE(s->on_line_without_store(line)) << line;
  }
  login(*s);
  for (std::string_view line : {"QUIT", "CAPA", "USER bob", "STLS"}) {
    EXPECT_FALSE(s->on_line_without_store(line)) << line;
  }
  struct Case {
    std::string_view line;
    std::string_view out;
  };
  for (const Case& c :
       {Case{"STAT", "+OK 2 22\r\n"}, Case{"LIST 2", "+OK 2 11\r\n"},
        Case{"RETR 1", "+OK 11 octets\r\nA: 1\r\n\r\na\r\n.\r\n"},
        Case{"TOP 2 0", "+OK Top of message follows\r\nA: 2\r\n\r\n.\r\n"},
        Case{"DELE 1", "+OK Message 1 deleted\r\n"}, Case{"DELE 1", "-ERR No such message\r\n"},
        Case{"LIST", "+OK 1 messages (11 octets)\r\n2 11\r\n.\r\n"}, Case{"NOOP", "+OK \r\n"},
        Case{"RSET", "+OK Maildrop has 2 messages (22 octets)\r\n"},
        Case{"DELE 9", "-ERR No such message\r\n"}}) {
    std::optional<Reply> reply = s->on_line_without_store(c.line);
    ASSERT_TRUE(reply) << c.line;
    EXPECT_EQ(reply->out, c.out) << c.line;
    EXPECT_FALSE(reply->more);
  }
  std::optional<Reply> bad = s->on_line_without_store("XYZZY");
  ASSERT_TRUE(bad);
  EXPECT_TRUE(bad->out.starts_with("-ERR ")) << bad->out;
  // UIDL without the store gives what on_line() gives.
  std::optional<Reply> uidl = s->on_line_without_store("UIDL");
  ASSERT_TRUE(uidl);
  EXPECT_EQ(uidl->out, s->on_line("UIDL").out);
  // The marks made without the store count at QUIT.
  ASSERT_TRUE(s->on_line_without_store("DELE 2"));
  EXPECT_EQ(run(*s, "QUIT"), "+OK Peregrine POP3 server signing off (1 messages left)\r\n");
}

TEST_F(Pop3SessionTest, DroppedConnectionDoesNotExpunge) {
  deliver("A: 1\r\n\r\na\r\n");
  auto s = connect();
  login(*s);
  EXPECT_EQ(run(*s, "DELE 1"), "+OK Message 1 deleted\r\n");
  s->close();
  s.reset();
  auto again = connect();
  login(*again);
  EXPECT_EQ(run(*again, "STAT"), "+OK 1 11\r\n");
}

TEST_F(Pop3SessionTest, SecondSessionGetsInUse) {
  auto first = connect();
  login(*first);
  auto second = connect();
  run(*second, "USER alice");
  EXPECT_EQ(run(*second, "PASS secret"),
            "-ERR [IN-USE] Your maildrop is in use by another POP3 session\r\n");
  EXPECT_EQ(second->user(), nullptr);
  EXPECT_EQ(second->state(), State::kAuthorization);
  // Another user is not affected.
  auto bob = connect();
  login(*bob, "bob", "hunter2");
  // Once the first lets go, the maildrop is free.
  EXPECT_TRUE(run(*first, "QUIT").starts_with("+OK"));
  run(*second, "USER alice");
  EXPECT_TRUE(run(*second, "PASS secret").starts_with("+OK Logged in"));
}

TEST_F(Pop3SessionTest, AuthPlainAndLogin) {
  auto s = connect();
  // "\0alice\0secret"
  EXPECT_TRUE(run(*s, "AUTH PLAIN AGFsaWNlAHNlY3JldA==").starts_with("+OK Logged in"));
  auto t = connect();
  EXPECT_EQ(run(*t, "AUTH PLAIN"), "+ \r\n");
  EXPECT_EQ(run(*t, "AGJvYgBodW50ZXIy"), "+OK Logged in, 0 messages (0 octets)\r\n");
  auto u = connect();
  EXPECT_EQ(run(*u, "AUTH LOGIN"), "+ VXNlcm5hbWU6\r\n");
  EXPECT_EQ(run(*u, "*"), "-ERR [AUTH] Authentication cancelled\r\n");
  EXPECT_EQ(run(*u, "AUTH PLAIN AGFsaWNlAHdyb25n"), "-ERR [AUTH] Authentication failed\r\n");
  EXPECT_EQ(run(*u, "AUTH PLAIN !!!"),
            "-ERR [AUTH] Invalid authentication response: bad base64\r\n");
  EXPECT_EQ(run(*u, "AUTH CRAM-MD5"), "-ERR Unsupported authentication mechanism\r\n");
  EXPECT_EQ(run(*u, "AUTH"), "+OK\r\nPLAIN\r\nLOGIN\r\n.\r\n");
}

TEST_F(Pop3SessionTest, CommandsOutOfState) {
  auto s = connect();
  EXPECT_EQ(run(*s, "STAT"), "-ERR Log in first\r\n");
  EXPECT_EQ(run(*s, "RETR 1"), "-ERR Log in first\r\n");
  EXPECT_EQ(run(*s, "PASS secret"), "-ERR Send USER first\r\n");
  EXPECT_EQ(run(*s, "USER alice"), "+OK Send your password\r\n");
  EXPECT_EQ(run(*s, "PASS wrong"), "-ERR [AUTH] Authentication failed\r\n");
  // A failed PASS forgets the USER.
  EXPECT_EQ(run(*s, "PASS secret"), "-ERR Send USER first\r\n");
  EXPECT_EQ(run(*s, "garbage \x01"), "-ERR Control characters are not allowed in a command\r\n");
  EXPECT_EQ(run(*s, "FOO"), "-ERR Unknown command\r\n");
  EXPECT_EQ(s->on_line_too_long().out, "-ERR Line too long\r\n");
  login(*s);
  EXPECT_EQ(run(*s, "USER bob"), "-ERR Already logged in\r\n");
  EXPECT_EQ(run(*s, "STLS"), "-ERR STLS is only allowed before logging in\r\n");
  EXPECT_EQ(run(*s, "RETR 0"), "-ERR Invalid message number\r\n");
}

TEST_F(Pop3SessionTest, PlaintextPolicyAndCapa) {
  server_->plaintext = config::PlaintextAuth::kTlsOnly;
  auto s = connect(ConnectionInfo{.tls_available = true, .peer = "192.0.2.1"});
  EXPECT_EQ(run(*s, "CAPA"),
            "+OK Capability list follows\r\nTOP\r\nUIDL\r\nRESP-CODES\r\nAUTH-RESP-CODE\r\n"
            "PIPELINING\r\nSTLS\r\nIMPLEMENTATION Peregrine\r\n.\r\n");
  EXPECT_EQ(run(*s, "USER alice"),
            "-ERR Plaintext authentication is not allowed on this connection; use STLS\r\n");
  Action action;
  EXPECT_EQ(run(*s, "STLS", &action), "+OK Begin TLS negotiation\r\n");
  EXPECT_EQ(action, Action::kStartTls);
  s->on_tls_started();
  EXPECT_EQ(run(*s, "STLS"), "-ERR TLS is already active\r\n");
  EXPECT_EQ(run(*s, "CAPA"),
            "+OK Capability list follows\r\nTOP\r\nUIDL\r\nRESP-CODES\r\nAUTH-RESP-CODE\r\n"
            "PIPELINING\r\nUSER\r\nSASL PLAIN LOGIN\r\nIMPLEMENTATION Peregrine\r\n.\r\n");
  login(*s);
}

TEST_F(Pop3SessionTest, LargeMessageIsStreamedInBoundedPieces) {
  std::string message = "Subject: big\r\n\r\n";
  while (message.size() < 3 * kRetrChunkBytes + 100) {
    message += ".line starting with a dot\r\n";
  }
  deliver(message);
  deliver("Subject: small\r\n\r\nx\r\n");
  auto s = connect();
  login(*s);
  Reply reply = s->on_line("RETR 1");
  std::string out = reply.out;
  int pieces = 0;
  while (reply.more) {
    reply = s->resume();
    // A piece is at most a chunk, doubled at worst by stuffing.
    EXPECT_LE(reply.out.size(), 2 * kRetrChunkBytes + 8);
    out += reply.out;
    ++pieces;
    // As the network layer does: the written piece's buffer is reused.
    s->recycle(std::move(reply.out));
  }
  EXPECT_GE(pieces, 3);  // the first piece comes with the +OK line
  std::string expected =
      "+OK " + std::to_string(message.size()) + " octets\r\nSubject: big\r\n\r\n";
  for (size_t pos = 16; pos < message.size();) {
    size_t end = message.find("\r\n", pos) + 2;
    expected += "." + message.substr(pos, end - pos);
    pos = end;
  }
  expected += ".\r\n";
  EXPECT_EQ(out, expected);
  // The reused buffer holds nothing of the big message after a small one.
  EXPECT_EQ(run(*s, "RETR 2"), "+OK 21 octets\r\nSubject: small\r\n\r\nx\r\n.\r\n");
}

}  // namespace
}  // namespace peregrine::pop3
