// ImapHandler over real sockets on a loopback port: the session loop, IDLE
// woken by another session, the shutdown BYE and the per-IP refusal.

#include "imap/service/imap_handler.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "auth/authenticator.h"
#include "net/runtime.h"
#include "store/maildir/maildir_store.h"
#include "test_support/temp_dir.h"

namespace peregrine::imap {
namespace {

// A blocking test client; every read gives up after five seconds.
class Client {
 public:
  explicit Client(std::uint16_t port) {
    fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
    timeval timeout{.tv_sec = 5, .tv_usec = 0};
    ::setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof timeout);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(port);
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    connected_ = ::connect(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0;
  }
  ~Client() { ::close(fd_); }

  bool connected() const { return connected_; }
  void send(std::string_view bytes) {
    ASSERT_EQ(::send(fd_, bytes.data(), bytes.size(), MSG_NOSIGNAL),
              static_cast<ssize_t>(bytes.size()));
  }
  // One line without CRLF; nullopt on EOF or timeout.
  std::optional<std::string> line() {
    for (;;) {
      if (auto end = buffer_.find("\r\n"); end != std::string::npos) {
        std::string out = buffer_.substr(0, end);
        buffer_.erase(0, end + 2);
        return out;
      }
      char chunk[4096];
      ssize_t n = ::recv(fd_, chunk, sizeof chunk, 0);
      if (n <= 0) {
        return std::nullopt;
      }
      buffer_.append(chunk, static_cast<size_t>(n));
    }
  }
  // Lines up to and including the one starting with `prefix`; the last line.
  std::string until(std::string_view prefix) {
    while (auto l = line()) {
      if (l->starts_with(prefix)) {
        return *l;
      }
    }
    return "<eof>";
  }

 private:
  int fd_ = -1;
  bool connected_ = false;
  std::string buffer_;
};

class ImapServiceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_FALSE(dir_.empty());
    std::ofstream(dir_ / "users") << "demo:{PLAIN}demo::::::\n";
    authenticator_ = std::make_unique<auth::Authenticator>(dir_ / "users");
    store::maildir::MaildirOptions store_options;
    store_options.data_dir = dir_ / "data";
    store_ = std::make_unique<store::maildir::MaildirStore>(store_options);
    pool_ = std::make_unique<net::StoragePool>(2);
    users_ = std::make_unique<UserRegistry>(*store_);
    server_ =
        std::make_unique<ServerContext>(ServerContext{.authenticator = *authenticator_,
                                                      .users = *users_,
                                                      .plaintext = config::PlaintextAuth::kAlways});
    net::RuntimeOptions options;
    options.workers = 2;
    options.max_connections_per_ip = 3;
    options.shutdown_grace = std::chrono::seconds(2);
    runtime_ = std::make_unique<net::Runtime>(options);
    // IDLE's own look at the Maildir comes far later than any read of the
    // test client gives up (five seconds), so a change an idler sees was
    // pushed to it.
    ImapHandlerOptions handler_options;
    handler_options.idle_check_interval = std::chrono::hours(1);
    auto handler = std::make_shared<ImapHandler>(*server_, *pool_, handler_options);
    auto port = runtime_->listen(
        {.name = "imap",
         .endpoint = {.host = "127.0.0.1", .port = 0, .kind = config::Endpoint::Kind::kIpv4},
         .handler = handler});
    ASSERT_TRUE(port.has_value());
    port_ = *port;
    runtime_->start();
  }

  void TearDown() override {
    if (runtime_) {
      runtime_->stop();
      runtime_->wait();
    }
    runtime_.reset();
    users_.reset();
    pool_.reset();
  }

  // A client past the greeting and LOGIN.
  std::unique_ptr<Client> logged_in() {
    auto client = std::make_unique<Client>(port_);
    EXPECT_TRUE(client->connected());
    EXPECT_TRUE(client->line().value_or("").starts_with("* OK [CAPABILITY"));
    client->send("l LOGIN demo demo\r\n");
    EXPECT_TRUE(client->until("l ").starts_with("l OK"));
    return client;
  }

  test_support::TempDir tmp_{"peregrine-imap-service"};
  std::filesystem::path dir_ = tmp_.path();
  std::unique_ptr<auth::Authenticator> authenticator_;
  std::unique_ptr<store::maildir::MaildirStore> store_;
  std::unique_ptr<net::StoragePool> pool_;
  std::unique_ptr<UserRegistry> users_;
  std::unique_ptr<ServerContext> server_;
  std::unique_ptr<net::Runtime> runtime_;
  std::uint16_t port_ = 0;
};

TEST_F(ImapServiceTest, LoginAppendFetchLogout) {
  auto client = logged_in();
  client->send("a APPEND INBOX {21+}\r\nSubject: hi\r\n\r\nhello\r\n");
  EXPECT_TRUE(client->until("a ").starts_with("a OK [APPENDUID"));
  // A synchronizing literal waits for the continuation.
  client->send("b APPEND INBOX {8}\r\n");
  EXPECT_TRUE(client->line().value_or("").starts_with("+ "));
  client->send("S: x\r\n\r\n\r\n");
  EXPECT_TRUE(client->until("b ").starts_with("b OK"));
  client->send("c SELECT INBOX\r\n");
  EXPECT_EQ(client->until("* 2 EXISTS"), "* 2 EXISTS");
  EXPECT_TRUE(client->until("c ").starts_with("c OK"));
  client->send("d FETCH 1 BODY[HEADER.FIELDS (SUBJECT)]\r\n");
  EXPECT_TRUE(client->until("d ").starts_with("d OK"));
  client->send("e LOGOUT\r\n");
  EXPECT_TRUE(client->until("* BYE").starts_with("* BYE"));
  EXPECT_TRUE(client->until("e ").starts_with("e OK"));
  EXPECT_EQ(client->line(), std::nullopt);  // closed
}

// Lines up to and including the tagged line of `tag`, with every
// APPENDUID's UIDVALIDITY (which differs between mailboxes) made "V".
std::vector<std::string> transcript(Client& client, std::string_view tag) {
  std::vector<std::string> out;
  const std::string prefix = std::string(tag) + " ";
  while (auto l = client.line()) {
    if (auto at = l->find("[APPENDUID "); at != std::string::npos) {
      const size_t from = at + 11;
      l->replace(from, l->find(' ', from) - from, "V");
    }
    out.push_back(*l);
    if (l->starts_with(prefix)) {
      return out;
    }
  }
  out.push_back("<eof>");
  return out;
}

// A LITERAL+ APPEND of `message` to `mailbox`, with what goes before it.
std::string append_command(std::string_view tag, std::string_view mailbox, std::string_view message,
                           std::string_view flags = "") {
  std::string out = std::string(tag) + " APPEND " + std::string(mailbox) + " ";
  if (!flags.empty()) {
    out += std::string(flags) + " ";
  }
  return out + "{" + std::to_string(message.size()) + "+}\r\n" + std::string(message) + "\r\n";
}

// Commands sent in one write after APPENDs (so the driver frames them ahead)
// get exactly the replies, in the same order, as the same commands sent one
// at a time: a NOOP and a FETCH between APPENDs, an APPEND refused with
// NO [TRYCREATE], one with BAD flags, a synchronizing literal, and EXISTS
// before each tagged OK in the selected mailbox.
TEST_F(ImapServiceTest, CommandsFramedAheadOfAppendsRunInOrderWithTheSameReplies) {
  const std::vector<std::string> messages = {
      "Subject: one\r\n\r\nfirst body\r\n", "From: b@example.org\nSubject: bare LF\n\nsecond\n",
      "Subject: three\r\nMIME-Version: 1.0\r\nContent-Type: multipart/mixed; boundary=x\r\n\r\n"
      "--x\r\nContent-Type: text/plain\r\n\r\npart\r\n--x--\r\n",
      "Subject: four\r\n\r\n" + std::string(100000, 'w') + "\r\n", "Subject: five\r\n\r\nlast\r\n"};
  // The script for mailbox `box`, and the tag of its last command.
  auto script = [&](std::string_view box) {
    std::vector<std::string> commands = {
        append_command("a1", box, messages[0]),
        append_command("a2", box, messages[1], "(\\Seen)"),
        "n1 NOOP\r\n",
        append_command("a3", "NoSuchBox", messages[2]),
        append_command("a4", box, messages[2], "(\\Bogus)"),
        append_command("a5", box, messages[2]),
        "f1 FETCH 1:* (UID FLAGS RFC822.SIZE)\r\n",
        append_command("a6", box, messages[3]),
        append_command("a7", box, messages[4]),
        "f2 UID FETCH 1:* (BODY.PEEK[])\r\n",
        "s1 SEARCH BODY last\r\n",
    };
    return commands;
  };
  auto prepare = [&](Client& client, std::string_view box) {
    client.send("c CREATE " + std::string(box) + "\r\n");
    EXPECT_TRUE(client.until("c ").starts_with("c OK"));
    client.send("s SELECT " + std::string(box) + "\r\n");
    EXPECT_TRUE(client.until("s ").starts_with("s OK"));
  };

  auto one_by_one = logged_in();
  prepare(*one_by_one, "One");
  std::vector<std::string> expected;
  for (const std::string& command : script("One")) {
    one_by_one->send(command);
    const std::string tag = command.substr(0, command.find(' '));
    for (std::string& l : transcript(*one_by_one, tag)) {
      expected.push_back(std::move(l));
    }
  }

  auto pipelined = logged_in();
  prepare(*pipelined, "Two");
  std::string all;
  for (const std::string& command : script("Two")) {
    all += command;
  }
  // A synchronizing literal at the end: its "+" comes only after every
  // reply before it.
  const std::string sync_message = "Subject: sync\r\n\r\nwaited\r\n";
  all += "a8 APPEND Two {" + std::to_string(sync_message.size()) + "}\r\n";
  pipelined->send(all);
  const std::vector<std::string> got = transcript(*pipelined, "s1");
  EXPECT_EQ(got, expected);
  EXPECT_TRUE(pipelined->line().value_or("").starts_with("+ "));
  pipelined->send(sync_message + "\r\n");
  const std::vector<std::string> last = transcript(*pipelined, "a8");
  ASSERT_FALSE(last.empty());
  EXPECT_EQ(last.back(), "a8 OK [APPENDUID V 6] Append completed");

  // What the transcript must hold, whichever way it was sent.
  auto has = [&](std::string_view line) {
    return std::find(expected.begin(), expected.end(), line) != expected.end();
  };
  EXPECT_TRUE(has("a1 OK [APPENDUID V 1] Append completed"));
  EXPECT_TRUE(has("a2 OK [APPENDUID V 2] Append completed"));
  EXPECT_TRUE(has("a5 OK [APPENDUID V 3] Append completed"));
  EXPECT_TRUE(has("a7 OK [APPENDUID V 5] Append completed"));
  EXPECT_TRUE(has("* SEARCH 5"));
  auto starts = [&](std::string_view prefix) {
    return std::find_if(expected.begin(), expected.end(),
                        [&](const std::string& l) { return l.starts_with(prefix); });
  };
  EXPECT_TRUE(starts("a3 NO [TRYCREATE]") != expected.end());
  EXPECT_TRUE(starts("a4 BAD") != expected.end());
  // EXISTS before the tagged OK of the APPEND that made it.
  EXPECT_LT(starts("* 1 EXISTS"), starts("a1 OK"));
  EXPECT_LT(starts("* 5 EXISTS"), starts("a7 OK"));
}

// A connection that ends with APPENDs framed ahead (their analyses
// running): LOGOUT framed ahead ends it after the APPENDs before it; a
// client that goes away leaves the server well, with whole messages only.
TEST_F(ImapServiceTest, ConnectionEndsWithAppendsFramedAhead) {
  auto batch = [](std::string_view prefix) {
    std::string all;
    for (int i = 0; i < 8; ++i) {
      all += append_command(std::string(prefix) + std::to_string(i), "INBOX",
                            "Subject: m" + std::to_string(i) + "\r\n\r\n" +
                                std::string(20000, static_cast<char>('a' + i)) + "\r\n");
    }
    return all;
  };
  {
    auto client = logged_in();
    client->send(batch("a") + "z LOGOUT\r\n");
    EXPECT_TRUE(client->until("a7 ").starts_with("a7 OK [APPENDUID"));
    EXPECT_TRUE(client->until("z ").starts_with("z OK"));
    EXPECT_EQ(client->line(), std::nullopt);  // closed
  }
  {
    auto client = logged_in();
    client->send(batch("b"));
  }  // gone without reading a reply
  auto client = logged_in();
  client->send("s SELECT INBOX\r\n");
  int count = -1;
  for (const std::string& l : transcript(*client, "s")) {
    if (l.ends_with(" EXISTS")) {
      count = std::stoi(l.substr(2));
    }
  }
  EXPECT_GE(count, 8);
  EXPECT_LE(count, 16);
  client->send("f FETCH 1:* (RFC822.SIZE)\r\n");
  for (int i = 1; i <= count; ++i) {
    EXPECT_EQ(client->line().value_or(""), "* " + std::to_string(i) + " FETCH (RFC822.SIZE 20017)");
  }
  EXPECT_TRUE(client->until("f ").starts_with("f OK"));
}

TEST_F(ImapServiceTest, IdleSeesAnotherSessionsAppendAtOnce) {
  auto idler = logged_in();
  idler->send("s SELECT INBOX\r\n");
  EXPECT_TRUE(idler->until("s ").starts_with("s OK"));
  idler->send("i IDLE\r\n");
  EXPECT_TRUE(idler->line().value_or("").starts_with("+ "));

  auto other = logged_in();
  other->send("a APPEND INBOX {9+}\r\nS: x\r\n\r\nx\r\n");
  EXPECT_TRUE(other->until("a ").starts_with("a OK"));
  // Within one read of the client, long before IDLE's own check: pushed.
  EXPECT_EQ(idler->until("* 1 EXISTS"), "* 1 EXISTS");
  idler->send("DONE\r\n");
  EXPECT_TRUE(idler->until("i ").starts_with("i OK"));
}

TEST_F(ImapServiceTest, StopSaysByeToIdleAndWaitingSessions) {
  auto idler = logged_in();
  idler->send("s SELECT INBOX\r\ni IDLE\r\n");
  EXPECT_TRUE(idler->until("+ ").starts_with("+ "));
  Client fresh(port_);
  EXPECT_TRUE(fresh.line().value_or("").starts_with("* OK"));
  runtime_->stop();
  EXPECT_EQ(idler->until("* BYE"), "* BYE Server shutting down");
  EXPECT_EQ(fresh.line(), "* BYE Server shutting down");
  runtime_->wait();
}

TEST_F(ImapServiceTest, RefusesConnectionsOverThePerIpLimit) {
  Client a(port_), b(port_), c(port_);
  for (Client* client : {&a, &b, &c}) {
    EXPECT_TRUE(client->line().value_or("").starts_with("* OK"));
  }
  Client d(port_);
  EXPECT_EQ(d.line(), "* BYE Too many connections from your address");
  EXPECT_EQ(d.line(), std::nullopt);
}

}  // namespace
}  // namespace peregrine::imap
