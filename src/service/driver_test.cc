// The shared connection drivers over real loopback connections, with a
// small scripted protocol standing in for IMAP and POP3: which strand each
// session call runs on, the read timeout before and after login, the Reply
// loop (resume, delay, STARTTLS, close), the protocol's goodbye and refusal
// lines, and finish() after every kind of end.

#include <gtest/gtest.h>

#include <asio/this_coro.hpp>
#include <atomic>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>

#include "net/runtime.h"
#include "net/test_util.h"
#include "net/tls_context.h"
#include "service/session_driver.h"
#include "session/user_registry.h"
#include "store/maildir/maildir_store.h"
#include "test_support/temp_dir.h"

namespace peregrine::service {
namespace {

using net::test::Client;
using net::test::run_bounded;

// Framing for ConnectionDriver::read_into: CRLF lines in a string.
class LineReader {
 public:
  std::span<char> prepare(std::size_t n) {
    prepared_at_ = buffer_.size();
    buffer_.resize(prepared_at_ + n);
    return {buffer_.data() + prepared_at_, n};
  }
  void commit(std::size_t n) { buffer_.resize(prepared_at_ + n); }
  std::size_t buffered() const { return buffer_.size(); }
  std::optional<std::string> next_line() {
    const auto end = buffer_.find("\r\n");
    if (end == std::string::npos) {
      return std::nullopt;
    }
    std::string line = buffer_.substr(0, end);
    buffer_.erase(0, end + 2);
    return line;
  }

 private:
  std::string buffer_;
  std::size_t prepared_at_ = 0;
};

// What the drivers did, for the assertions (any thread).
struct Observed {
  std::atomic<int> ended{0};
  std::atomic<int> handshakes{0};
};

constexpr SessionTimeouts kTimeouts{.before_login = std::chrono::seconds(40),
                                    .after_login = std::chrono::seconds(90)};

// The scripted protocol, one command a line:
//   LOGIN <user>  -> "OK", the session holds <user>'s context from then on
//   KEY           -> "KEY <the strand key of this call>"
//   RT            -> "RT <the connection's read timeout in ms>"
//   INFO          -> the ConnectionInfo the session was given
//   MORE <n>      -> "PART 1" .. "PART <n>", one resume() each
//   DELAY         -> "DELAYED", after the reply's delay
//   STARTTLS      -> "OK begin TLS", then the handshake
//   TLS           -> "TLS yes" once tls_started() was called, else "TLS no"
//   THROW         -> the session call throws
//   QUIT          -> "BYE" and close
class ScriptDriver final : public SessionDriver {
 public:
  ScriptDriver(net::Connection& conn, net::StoragePool& pool, const Protocol& protocol,
               SessionTimeouts timeouts, session::UserRegistry& users, Observed& observed)
      : SessionDriver(conn, pool, protocol, timeouts),
        users_(users),
        observed_(observed),
        info_(connection_info(conn)) {}

 private:
  asio::awaitable<void> run() override {
    if (!co_await write("* HELLO\r\n")) {
      co_return;
    }
    for (;;) {
      std::optional<std::string> line = reader_.next_line();
      if (!line) {
        if (!co_await read_into(reader_, 4096, true)) {
          co_return;
        }
        continue;
      }
      const std::string key = strand_key();
      session::Reply reply = co_await call([&] { return on_line(*line, key); });
      if (!co_await deliver(std::move(reply))) {
        co_return;
      }
    }
  }

  // On the strand.
  session::Reply on_line(const std::string& line, const std::string& key) {
    if (line.starts_with("LOGIN ")) {
      auto user = users_.acquire(line.substr(6), "");
      if (!user) {
        return {.out = "NO\r\n"};
      }
      user_ = std::move(*user);
      return {.out = "OK\r\n"};
    }
    if (line == "KEY") {
      return {.out = "KEY " + key + "\r\n"};
    }
    if (line == "RT") {
      return {.out = "RT " + std::to_string(conn().read_timeout().count()) + "\r\n"};
    }
    if (line == "INFO") {
      return {.out = std::string("INFO tls=") + (info_.tls ? "yes" : "no") +
                     " available=" + (info_.tls_available ? "yes" : "no") + " loopback=" +
                     (info_.loopback ? "yes" : "no") + " peer=" + info_.peer + "\r\n"};
    }
    if (line.starts_with("MORE ")) {
      parts_left_ = std::stoi(line.substr(5));
      return {.out = "", .more = true};
    }
    if (line == "DELAY") {
      return {.out = "DELAYED\r\n", .delay = std::chrono::milliseconds(1)};
    }
    if (line == "STARTTLS") {
      return {.out = "OK begin TLS\r\n", .action = session::Action::kStartTls};
    }
    if (line == "TLS") {
      return {.out = tls_ ? "TLS yes\r\n" : "TLS no\r\n"};
    }
    if (line == "THROW") {
      throw std::runtime_error("scripted failure");
    }
    if (line == "QUIT") {
      return {.out = "BYE\r\n", .action = session::Action::kClose};
    }
    return {.out = "BAD\r\n"};
  }

  session::UserContext* user() const override { return user_.get(); }
  bool logged_in() const override { return user_ != nullptr; }
  session::Reply resume() override {
    ++part_;
    return {.out = "PART " + std::to_string(part_) + "\r\n", .more = part_ < parts_left_};
  }
  void tls_started() override { tls_ = true; }
  void end_session() override {
    user_.reset();
    observed_.ended.fetch_add(1);
  }
  void after_handshake() override {
    reader_ = LineReader{};
    observed_.handshakes.fetch_add(1);
  }

  session::UserRegistry& users_;
  Observed& observed_;
  const session::ConnectionInfo info_;
  LineReader reader_;
  std::shared_ptr<session::UserContext> user_;
  int parts_left_ = 0;
  int part_ = 0;
  bool tls_ = false;
};

class ScriptHandler final : public ProtocolHandler {
 public:
  ScriptHandler(net::StoragePool& pool, session::UserRegistry& users)
      : ProtocolHandler(Protocol{.name = "script",
                                 .shutdown_line = "* BYE stopping\r\n",
                                 .timeout_line = "* BYE silent\r\n",
                                 .too_many_line = "* BYE too many\r\n",
                                 .tls_failed_event = "script.starttls_failed"}),
        pool_(pool),
        users_(users) {}

  asio::awaitable<void> serve(net::Connection& connection) override {
    ScriptDriver driver(connection, pool_, protocol(), timeouts, users_, observed);
    co_await driver.serve();
  }

  SessionTimeouts timeouts = kTimeouts;  // set before the runtime starts
  Observed observed;

 private:
  net::StoragePool& pool_;
  session::UserRegistry& users_;
};

class DriverTest : public ::testing::Test {
 protected:
  DriverTest() : store_(store_options(dir_.path())), users_(store_) {}

  static store::maildir::MaildirOptions store_options(const std::filesystem::path& dir) {
    store::maildir::MaildirOptions options;
    options.data_dir = dir / "data";
    return options;
  }

  // Starts a runtime with the scripted protocol on a loopback port.
  void start(net::RuntimeOptions options = {}, bool tls = false) {
    net::test::TestServerOptions server_options;
    server_options.serve_with = handler_;
    server_options.runtime = options;
    if (tls) {
      auto files = net::test::make_self_signed_cert(dir_.path());
      auto context = net::TlsContext::load(files.cert, files.key);
      ASSERT_TRUE(context) << context.error().message;
      server_options.tls = *context;
    }
    server_ = std::make_unique<net::test::TestServer>(server_options);
    port_ = server_->port;
  }

  test_support::TempDir dir_{"peregrine-service"};
  store::maildir::MaildirStore store_;
  session::UserRegistry users_;
  net::StoragePool pool_{2};
  std::shared_ptr<ScriptHandler> handler_ = std::make_shared<ScriptHandler>(pool_, users_);
  std::unique_ptr<net::test::TestServer> server_;  // stops and waits when destroyed
  std::uint16_t port_ = 0;
};

TEST_F(DriverTest, CallsRunOnTheConnectionsStrandUntilLoginThenOnTheUsers) {
  start();
  EXPECT_TRUE(run_bounded([&]() -> asio::awaitable<void> {
    Client client(co_await asio::this_coro::executor);
    EXPECT_TRUE(co_await client.connect("127.0.0.1", port_));
    EXPECT_EQ(co_await client.line(), "* HELLO");
    co_await client.send("KEY\r\n");
    const std::string before = (co_await client.line()).value_or("");
    EXPECT_TRUE(before.starts_with("KEY \x01script-conn/")) << before;
    co_await client.send("LOGIN alice\r\nKEY\r\n");
    EXPECT_EQ(co_await client.line(), "OK");
    EXPECT_EQ(co_await client.line(), "KEY alice");
  }));
}

TEST_F(DriverTest, ReadTimeoutIsTheLoginOneUntilLogin) {
  start();
  EXPECT_TRUE(run_bounded([&]() -> asio::awaitable<void> {
    Client client(co_await asio::this_coro::executor);
    EXPECT_TRUE(co_await client.connect("127.0.0.1", port_));
    EXPECT_EQ(co_await client.line(), "* HELLO");
    co_await client.send("RT\r\nLOGIN bob\r\nRT\r\n");
    EXPECT_EQ(co_await client.line(), "RT 40000");
    EXPECT_EQ(co_await client.line(), "OK");
    EXPECT_EQ(co_await client.line(), "RT 90000");
  }));
}

TEST_F(DriverTest, ResumesAnUnfinishedReplyAndHonoursTheDelay) {
  start();
  EXPECT_TRUE(run_bounded([&]() -> asio::awaitable<void> {
    Client client(co_await asio::this_coro::executor);
    EXPECT_TRUE(co_await client.connect("127.0.0.1", port_));
    EXPECT_EQ(co_await client.line(), "* HELLO");
    co_await client.send("MORE 3\r\nDELAY\r\n");
    EXPECT_EQ(co_await client.line(), "PART 1");
    EXPECT_EQ(co_await client.line(), "PART 2");
    EXPECT_EQ(co_await client.line(), "PART 3");
    EXPECT_EQ(co_await client.line(), "DELAYED");
  }));
}

TEST_F(DriverTest, SessionIsToldTheConnectionsFacts) {
  start({}, /*tls=*/true);
  EXPECT_TRUE(run_bounded([&]() -> asio::awaitable<void> {
    Client client(co_await asio::this_coro::executor);
    EXPECT_TRUE(co_await client.connect("127.0.0.1", port_));
    EXPECT_EQ(co_await client.line(), "* HELLO");
    co_await client.send("INFO\r\n");
    EXPECT_EQ(co_await client.line(), "INFO tls=no available=yes loopback=yes peer=127.0.0.1");
  }));
}

TEST_F(DriverTest, StartTlsHandshakesDropsPlaintextReadAheadAndTellsTheSession) {
  start({}, /*tls=*/true);
  EXPECT_TRUE(run_bounded([&]() -> asio::awaitable<void> {
    Client client(co_await asio::this_coro::executor);
    EXPECT_TRUE(co_await client.connect("127.0.0.1", port_));
    EXPECT_EQ(co_await client.line(), "* HELLO");
    // A command injected after STARTTLS in the same packet must not run.
    co_await client.send("TLS\r\nSTARTTLS\r\nQUIT\r\n");
    EXPECT_EQ(co_await client.line(), "TLS no");
    EXPECT_EQ(co_await client.line(), "OK begin TLS");
    EXPECT_TRUE(co_await client.handshake());
    co_await client.send("TLS\r\n");
    EXPECT_EQ(co_await client.line(), "TLS yes");
  }));
  EXPECT_EQ(handler_->observed.handshakes.load(), 1);
}

TEST_F(DriverTest, FailedStartTlsEndsTheConnection) {
  start();  // no TLS configured: the handshake cannot start
  EXPECT_TRUE(run_bounded([&]() -> asio::awaitable<void> {
    Client client(co_await asio::this_coro::executor);
    EXPECT_TRUE(co_await client.connect("127.0.0.1", port_));
    EXPECT_EQ(co_await client.line(), "* HELLO");
    co_await client.send("STARTTLS\r\n");
    EXPECT_EQ(co_await client.line(), "OK begin TLS");
    EXPECT_EQ(co_await client.rest(), "");
  }));
  EXPECT_EQ(handler_->observed.handshakes.load(), 0);
  EXPECT_TRUE(net::test::eventually([&] { return handler_->observed.ended.load() == 1; }));
}

TEST_F(DriverTest, FinishLetsGoOfTheUserAfterCloseAndAfterAnException) {
  start();
  EXPECT_TRUE(run_bounded([&]() -> asio::awaitable<void> {
    Client quitter(co_await asio::this_coro::executor);
    EXPECT_TRUE(co_await quitter.connect("127.0.0.1", port_));
    EXPECT_EQ(co_await quitter.line(), "* HELLO");
    co_await quitter.send("LOGIN carol\r\nQUIT\r\n");
    EXPECT_EQ(co_await quitter.line(), "OK");
    EXPECT_EQ(co_await quitter.line(), "BYE");
    EXPECT_EQ(co_await quitter.rest(), "");

    Client thrower(co_await asio::this_coro::executor);
    EXPECT_TRUE(co_await thrower.connect("127.0.0.1", port_));
    EXPECT_EQ(co_await thrower.line(), "* HELLO");
    co_await thrower.send("LOGIN dave\r\nTHROW\r\n");
    EXPECT_EQ(co_await thrower.line(), "OK");
    EXPECT_EQ(co_await thrower.rest(), "");  // the runtime closed it
  }));
  EXPECT_TRUE(net::test::eventually([&] { return handler_->observed.ended.load() == 2; }));
  EXPECT_TRUE(net::test::eventually([&] { return users_.open_users() == 0; }));
}

TEST_F(DriverTest, SilentClientGetsTheTimeoutLine) {
  handler_->timeouts.before_login = std::chrono::milliseconds(200);
  start();
  EXPECT_TRUE(run_bounded([&]() -> asio::awaitable<void> {
    Client client(co_await asio::this_coro::executor);
    EXPECT_TRUE(co_await client.connect("127.0.0.1", port_));
    EXPECT_EQ(co_await client.line(), "* HELLO");
    EXPECT_EQ(co_await client.line(), "* BYE silent");
    EXPECT_EQ(co_await client.rest(), "");
  }));
  EXPECT_TRUE(net::test::eventually([&] { return handler_->observed.ended.load() == 1; }));
}

TEST_F(DriverTest, StoppingServerSaysTheShutdownLine) {
  start();
  EXPECT_TRUE(run_bounded([&]() -> asio::awaitable<void> {
    Client client(co_await asio::this_coro::executor);
    EXPECT_TRUE(co_await client.connect("127.0.0.1", port_));
    EXPECT_EQ(co_await client.line(), "* HELLO");
    co_await client.send("LOGIN frank\r\n");
    EXPECT_EQ(co_await client.line(), "OK");
    server_->runtime.stop();
    EXPECT_EQ(co_await client.line(), "* BYE stopping");
    EXPECT_EQ(co_await client.rest(), "");
  }));
  EXPECT_TRUE(net::test::eventually([&] { return users_.open_users() == 0; }));
}

TEST_F(DriverTest, RefusesOverThePerIpLimitWithTheProtocolsLine) {
  net::RuntimeOptions options;
  options.max_connections_per_ip = 1;
  start(options);
  EXPECT_TRUE(run_bounded([&]() -> asio::awaitable<void> {
    Client first(co_await asio::this_coro::executor);
    EXPECT_TRUE(co_await first.connect("127.0.0.1", port_));
    EXPECT_EQ(co_await first.line(), "* HELLO");
    Client second(co_await asio::this_coro::executor);
    EXPECT_TRUE(co_await second.connect("127.0.0.1", port_));
    EXPECT_EQ(co_await second.line(), "* BYE too many");
    EXPECT_EQ(co_await second.rest(), "");
  }));
}

}  // namespace
}  // namespace peregrine::service
