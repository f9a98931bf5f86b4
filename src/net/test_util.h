#pragma once

// Test helpers for net_test: a self-signed certificate, an asynchronous test
// client (plain or TLS, verification off), a line-protocol handler that
// exercises the Connection API, and a server wrapper. Every wait is bounded.

#include <asio/awaitable.hpp>
#include <asio/io_context.hpp>
#include <asio/ip/tcp.hpp>
#include <asio/ssl/context.hpp>
#include <asio/ssl/stream.hpp>
#include <asio/streambuf.hpp>
#include <atomic>
#include <chrono>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "net/handler.h"
#include "net/notifier.h"
#include "net/runtime.h"

namespace peregrine::net::test {

// A P-256 key and a self-signed certificate for "localhost", valid for a
// day, made with OpenSSL's API and written as PEM files into `dir`.
struct CertFiles {
  std::filesystem::path cert;
  std::filesystem::path key;
};
CertFiles make_self_signed_cert(const std::filesystem::path& dir,
                                const std::string& name = "server");

// Runs the coroutine `body()` on a fresh io_context until it returns, for at
// most `limit`. Returns false if it did not finish in time. An exception the
// body throws fails the test (reported by the caller's EXPECT).
bool run_bounded(std::function<asio::awaitable<void>()> body,
                 std::chrono::milliseconds limit = std::chrono::seconds(20));

// Waits `ms` milliseconds on the calling coroutine's executor.
asio::awaitable<void> sleep_ms(int ms);

// A client connection, plain or TLS (no certificate verification).
class Client {
 public:
  explicit Client(const asio::any_io_executor& executor);
  ~Client();

  asio::awaitable<bool> connect(const std::string& host, std::uint16_t port);
  asio::awaitable<bool> send(std::string_view bytes);
  // One line without its CRLF, or nullopt at EOF or on an error.
  asio::awaitable<std::optional<std::string>> line();
  // Exactly n bytes, or nullopt.
  asio::awaitable<std::optional<std::string>> read_n(std::size_t n);
  // Everything until the peer closes; nullopt on an error other than EOF.
  asio::awaitable<std::optional<std::string>> rest();
  // The client side of a TLS handshake (after STARTTLS or at once for
  // implicit TLS). Input buffered before it is kept for TLS (none expected).
  asio::awaitable<bool> handshake();
  void close();
  bool is_tls() const { return tls_ != nullptr; }
  // Set before handshake() to restrict versions or ciphers.
  asio::ssl::context& ssl_context() { return ssl_context_; }
  // After handshake(): "TLSv1.3", and the cipher suite's OpenSSL name.
  std::string tls_version() const;
  std::string tls_cipher() const;

 private:
  asio::awaitable<std::size_t> read_more();

  asio::ip::tcp::socket socket_;
  asio::ssl::context ssl_context_{asio::ssl::context::tls_client};
  std::unique_ptr<asio::ssl::stream<asio::ip::tcp::socket&>> tls_;
  std::string in_;
};

// A line protocol over Connection, one command a line ("VERB args"):
//   ECHO <text>      -> <text>
//   EXACT <n>        -> read_exact(n) -> "GOT <bytes>"
//   SOME <n>         -> read_some(n)  -> "SOME <bytes>"
//   SLOW <ms>        -> waits, then "DONE" (a command in progress)
//   RAW              -> reads one line that is not a stop point -> "RAW <line>"
//   TIMEOUT <ms>     -> set_read_timeout -> "OK"
//   WTIMEOUT <ms>    -> set_write_timeout -> "OK"
//   BIG <n>          -> n bytes of 'x' then CRLF, one write(); big_done set after
//   STARTTLS         -> "OK begin TLS", then start_tls()
//   TLS              -> "TLS yes" / "TLS no"
//   PEER             -> "PEER <address> <loopback|remote>"
//   IDLE <ms>        -> "+ idling"; then until "DONE": each notify -> "* WOKE",
//                       each <ms> of quiet -> "* TICK"; "DONE" -> "OK idle done"
//   QUIT             -> "BYE", ends
// Read errors: kTooLong -> "ERR too long" and go on; kTimeout -> "* TIMEOUT"
// and end; kShutdown -> "* BYE shutdown" and end; others end quietly.
// Command reads are stop points; line length bound: kMaxLine.
class LineHandler : public Handler {
 public:
  static constexpr std::size_t kMaxLine = 100;

  asio::awaitable<void> serve(Connection& connection) override;
  asio::awaitable<void> refuse(Connection& connection, Refusal reason) override;

  // What the handler saw, for assertions (any thread).
  std::atomic<int> served{0};
  std::atomic<int> refused{0};
  std::atomic<int> slow_started{0};
  std::atomic<int> thread_changes{0};  // a connection that ran on two threads
  std::atomic<int> idling{0};
  std::atomic<int> big_done{0};
  std::atomic<int> big_failed_timeout{0};
  std::atomic<std::size_t> discarded_before_tls{0};
  std::mutex mu;
  std::set<std::thread::id> threads;           // guarded by mu
  std::vector<Notifier::Handle> idle_handles;  // guarded by mu
  std::vector<std::string> tls_failures;       // guarded by mu

  void notify_idlers();
};

// A Runtime with LineHandler listeners on 127.0.0.1, started.
struct TestServerOptions {
  // Serves with this handler instead of `TestServer::handler` (other
  // libraries' tests: a protocol's own handler).
  std::shared_ptr<Handler> serve_with;
  RuntimeOptions runtime;
  bool plain = true;                // a plain listener (port)
  bool implicit_tls = false;        // an implicit-TLS listener (tls_port)
  std::shared_ptr<TlsContext> tls;  // set_tls() if given
  std::string host = "127.0.0.1";
};

class TestServer {
 public:
  explicit TestServer(TestServerOptions options);
  ~TestServer();

  std::uint16_t port = 0;
  std::uint16_t tls_port = 0;
  std::shared_ptr<LineHandler> handler = std::make_shared<LineHandler>();
  Runtime runtime;

  // runtime.wait(), bounded; false if it did not return in `limit`.
  bool wait_stopped(std::chrono::milliseconds limit = std::chrono::seconds(15));
};

// Polls `done` every 5 ms for at most `limit`; returns its last value.
bool eventually(const std::function<bool()>& done,
                std::chrono::milliseconds limit = std::chrono::seconds(10));

}  // namespace peregrine::net::test
