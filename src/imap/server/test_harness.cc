#include "imap/server/test_harness.h"

#include <gtest/gtest.h>

#include <fstream>

namespace peregrine::imap::testing {

TestServer::TestServer(TestServerOptions options) {
  {
    std::ofstream passwd(dir_ / "users");
    passwd << "alice:{PLAIN}secret::::::\n"
              "bob:{PLAIN}hunter2::::::\n";
  }
  store::maildir::MaildirOptions store_options;
  store_options.data_dir = dir_ / "data";
  store_options.max_message_size = 1 << 20;
  store_options.host_name = "test.host";
  store_ = std::make_unique<store::maildir::MaildirStore>(store_options);
  authenticator_ = std::make_unique<auth::Authenticator>(dir_ / "users");
  if (options.failure_tracker) {
    failures_ = std::make_unique<auth::FailureTracker>(auth::FailureTrackerOptions{});
  }
  users_ = std::make_unique<UserRegistry>(*store_);
  context_ = std::make_unique<ServerContext>(ServerContext{*authenticator_, *users_});
  context_->failures = failures_.get();
  context_->plaintext = options.plaintext;
}

TestServer::~TestServer() {
  context_.reset();
  users_.reset();
}

std::filesystem::path TestServer::maildir(std::string_view user) const {
  return dir_ / "data" / std::string(user) / "Maildir";
}

TestClient::TestClient(TestServer& server, ConnectionInfo connection)
    : session_(std::make_unique<Session>(server.context(), std::move(connection))) {
  greeting_ = session_->greeting();
  session_->set_wake([this] { ++wakes_; });
}

TestClient::~TestClient() { session_->close(); }

std::string TestClient::send(std::string_view bytes) {
  std::string transcript;
  reader_.feed(bytes);
  for (ReaderEvent ev = reader_.next(); ev.kind != ReaderEvent::Kind::kNeedMore;
       ev = reader_.next()) {
    Reply reply = session_->on_input(ev);
    for (;;) {
      transcript += reply.out;
      last_action_ = reply.action;
      last_delay_ = reply.delay;
      if (!reply.more) {
        break;
      }
      reply = session_->resume();
    }
  }
  return transcript;
}

Reply TestClient::first_reply(std::string_view line) {
  reader_.feed(std::string(line) + "\r\n");
  ReaderEvent ev = reader_.next();
  EXPECT_EQ(ev.kind, ReaderEvent::Kind::kCommand);
  return session_->on_input(ev);
}

std::string TestClient::run(std::string_view line) { return send(std::string(line) + "\r\n"); }

void TestClient::login(std::string_view user, std::string_view password) {
  std::string out = run("L0 LOGIN " + std::string(user) + " " + std::string(password));
  ASSERT_TRUE(tagged_line(out).starts_with("L0 OK")) << out;
}

void TestClient::append(std::string_view mailbox, std::string_view message,
                        std::string_view flags) {
  std::string cmd = "A0 APPEND " + std::string(mailbox) + " ";
  if (!flags.empty()) {
    cmd += "(" + std::string(flags) + ") ";
  }
  cmd += "{" + std::to_string(message.size()) + "+}\r\n" + std::string(message);
  std::string out = run(cmd);
  ASSERT_TRUE(tagged_line(out).starts_with("A0 OK")) << out;
}

std::string TestClient::poll() { return session_->poll_updates().out; }

std::string message(std::string_view subject, std::string_view body, std::string_view from) {
  return "From: " + std::string(from) +
         "\r\nTo: Bob <bob@example.com>\r\nSubject: " + std::string(subject) +
         "\r\nDate: Mon, 7 Feb 1994 21:52:25 -0800\r\nMessage-ID: <" + std::string(subject) +
         "@example.com>\r\n\r\n" + std::string(body);
}

std::string tagged_line(std::string_view transcript) {
  if (transcript.ends_with("\r\n")) {
    transcript.remove_suffix(2);
  }
  size_t nl = transcript.rfind("\r\n");
  return std::string(nl == std::string_view::npos ? transcript : transcript.substr(nl + 2));
}

}  // namespace peregrine::imap::testing
