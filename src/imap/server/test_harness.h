#pragma once

// In-process IMAP session harness (no sockets): a MaildirStore in a temp
// dir, a passwd-file with users alice/secret and bob/hunter2, and clients
// that drive a Session through a CommandReader the way the network layer
// does:
//
//   TestServer server;
//   TestClient a(server);
//   a.login();
//   EXPECT_EQ(a.run("a1 UID FETCH 1:* FLAGS"), "* 1 FETCH (UID 4 FLAGS ())\r\na1 OK ...\r\n");

#include <chrono>
#include <filesystem>
#include <memory>
#include <string>
#include <string_view>

#include "auth/authenticator.h"
#include "auth/failure_tracker.h"
#include "imap/proto/command_reader.h"
#include "imap/server/session.h"
#include "imap/server/user_context.h"
#include "store/maildir/maildir_store.h"
#include "test_support/temp_dir.h"

namespace peregrine::imap::testing {

struct TestServerOptions {
  config::PlaintextAuth plaintext = config::PlaintextAuth::kAlways;
  bool failure_tracker = false;
};

class TestServer {
 public:
  explicit TestServer(TestServerOptions options = {});
  ~TestServer();

  const std::filesystem::path& dir() const { return dir_; }
  // alice's Maildir (exists once she has logged in).
  std::filesystem::path maildir(std::string_view user = "alice") const;
  ServerContext& context() { return *context_; }
  UserRegistry& users() { return *users_; }

 private:
  test_support::TempDir tmp_{"peregrine-imap"};
  std::filesystem::path dir_ = tmp_.path();
  std::unique_ptr<store::maildir::MaildirStore> store_;
  std::unique_ptr<auth::Authenticator> authenticator_;
  std::unique_ptr<auth::FailureTracker> failures_;
  std::unique_ptr<UserRegistry> users_;
  std::unique_ptr<ServerContext> context_;
};

class TestClient {
 public:
  explicit TestClient(TestServer& server, ConnectionInfo connection = loopback());
  ~TestClient();

  static ConnectionInfo loopback() {
    ConnectionInfo c;
    c.loopback = true;
    c.tls_available = true;
    c.peer = "127.0.0.1";
    return c;
  }

  // Sends one line (CRLF added) and returns all the server wrote until it
  // waits for input again: continuation requests ("+ ..."), resumed output,
  // everything. Literals can be embedded: "a1 APPEND INBOX {3+}\r\nabc".
  std::string run(std::string_view line);
  // Sends bytes as they are.
  std::string send(std::string_view bytes);
  // Sends one whole command line and returns the session's first reply as
  // is, without resuming an unfinished command.
  Reply first_reply(std::string_view line);
  // LOGIN as alice; fails the test unless it succeeds.
  void login(std::string_view user = "alice", std::string_view password = "secret");
  // Appends a message to `mailbox` with APPEND (LITERAL+).
  void append(std::string_view mailbox, std::string_view message, std::string_view flags = "");
  // What an IDLE session would be sent now (Session::poll_updates).
  std::string poll();

  Session& session() { return *session_; }
  const std::string& greeting() const { return greeting_; }
  // How often the wake callback ran; the last reply's action and delay.
  int wakes() const { return wakes_; }
  SessionAction last_action() const { return last_action_; }
  std::chrono::milliseconds last_delay() const { return last_delay_; }

 private:
  CommandReader reader_;
  std::unique_ptr<Session> session_;
  std::string greeting_;
  int wakes_ = 0;
  SessionAction last_action_ = SessionAction::kNone;
  std::chrono::milliseconds last_delay_{0};
};

// A small RFC 5322 message.
std::string message(std::string_view subject, std::string_view body = "Hello.\r\n",
                    std::string_view from = "Alice <alice@example.com>");

// The tagged line of a transcript (the last line), without CRLF.
std::string tagged_line(std::string_view transcript);

}  // namespace peregrine::imap::testing
