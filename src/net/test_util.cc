#include "net/test_util.h"

#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>

#include <asio/co_spawn.hpp>
#include <asio/experimental/as_tuple.hpp>
#include <asio/experimental/awaitable_operators.hpp>
#include <asio/read.hpp>
#include <asio/steady_timer.hpp>
#include <asio/use_awaitable.hpp>
#include <asio/write.hpp>
#include <charconv>
#include <cstdio>
#include <future>
#include <stdexcept>

namespace peregrine::net::test {
namespace {

constexpr auto kAwait = asio::experimental::as_tuple(asio::use_awaitable);

std::size_t to_number(std::string_view text) {
  std::size_t value = 0;
  std::from_chars(text.data(), text.data() + text.size(), value);
  return value;
}

}  // namespace

// ---- Certificates ----

CertFiles make_self_signed_cert(const std::filesystem::path& dir, const std::string& name) {
  CertFiles files{dir / (name + ".crt"), dir / (name + ".key")};
  EVP_PKEY* key = EVP_EC_gen("P-256");
  X509* cert = X509_new();
  if (key == nullptr || cert == nullptr) {
    throw std::runtime_error("cannot make a key");
  }
  X509_set_version(cert, 2);
  ASN1_INTEGER_set(X509_get_serialNumber(cert), 1);
  X509_gmtime_adj(X509_getm_notBefore(cert), -60);
  X509_gmtime_adj(X509_getm_notAfter(cert), 24 * 3600);
  X509_set_pubkey(cert, key);
  X509_NAME* subject = X509_get_subject_name(cert);
  X509_NAME_add_entry_by_txt(subject, "CN", MBSTRING_ASC,
                             reinterpret_cast<const unsigned char*>("localhost"), -1, -1, 0);
  X509_set_issuer_name(cert, subject);
  if (X509_sign(cert, key, EVP_sha256()) == 0) {
    throw std::runtime_error("cannot sign");
  }
  FILE* out = std::fopen(files.cert.c_str(), "w");
  PEM_write_X509(out, cert);
  std::fclose(out);
  out = std::fopen(files.key.c_str(), "w");
  PEM_write_PrivateKey(out, key, nullptr, nullptr, 0, nullptr, nullptr);
  std::fclose(out);
  X509_free(cert);
  EVP_PKEY_free(key);
  return files;
}

// ---- sleep_ms ----

asio::awaitable<void> sleep_ms(int ms) {
  asio::steady_timer timer(co_await asio::this_coro::executor, std::chrono::milliseconds(ms));
  co_await timer.async_wait(asio::use_awaitable);
}

// ---- run_bounded ----

bool run_bounded(std::function<asio::awaitable<void>()> body, std::chrono::milliseconds limit) {
  asio::io_context ioc;
  bool finished = false;
  std::exception_ptr error;
  asio::co_spawn(ioc, body(), [&](std::exception_ptr e) {
    finished = true;
    error = e;
    ioc.stop();  // do not wait for stray work (a client's leftover operation)
  });
  ioc.run_for(limit);
  if (error) {
    std::rethrow_exception(error);
  }
  return finished;
}

// ---- Client ----

Client::Client(const asio::any_io_executor& executor) : socket_(executor) {
  ssl_context_.set_verify_mode(asio::ssl::verify_none);
}

Client::~Client() { close(); }

asio::awaitable<bool> Client::connect(const std::string& host, std::uint16_t port) {
  asio::error_code ec;
  auto address = asio::ip::make_address(host, ec);
  if (ec) {
    co_return false;
  }
  auto [connect_ec] = co_await socket_.async_connect({address, port}, kAwait);
  co_return !connect_ec;
}

asio::awaitable<bool> Client::send(std::string_view bytes) {
  asio::error_code ec;
  if (tls_) {
    std::tie(ec, std::ignore) = co_await asio::async_write(*tls_, asio::buffer(bytes), kAwait);
  } else {
    std::tie(ec, std::ignore) = co_await asio::async_write(socket_, asio::buffer(bytes), kAwait);
  }
  co_return !ec;
}

asio::awaitable<std::size_t> Client::read_more() {
  char buf[16384];
  asio::error_code ec;
  std::size_t n = 0;
  if (tls_) {
    std::tie(ec, n) = co_await tls_->async_read_some(asio::buffer(buf), kAwait);
  } else {
    std::tie(ec, n) = co_await socket_.async_read_some(asio::buffer(buf), kAwait);
  }
  if (ec) {
    co_return 0;
  }
  in_.append(buf, n);
  co_return n;
}

asio::awaitable<std::optional<std::string>> Client::line() {
  for (;;) {
    auto lf = in_.find('\n');
    if (lf != std::string::npos) {
      std::string result = in_.substr(0, lf);
      in_.erase(0, lf + 1);
      if (!result.empty() && result.back() == '\r') {
        result.pop_back();
      }
      co_return result;
    }
    if (co_await read_more() == 0) {
      co_return std::nullopt;
    }
  }
}

asio::awaitable<std::optional<std::string>> Client::read_n(std::size_t n) {
  while (in_.size() < n) {
    if (co_await read_more() == 0) {
      co_return std::nullopt;
    }
  }
  std::string result = in_.substr(0, n);
  in_.erase(0, n);
  co_return result;
}

asio::awaitable<std::optional<std::string>> Client::rest() {
  for (;;) {
    char buf[16384];
    asio::error_code ec;
    std::size_t n = 0;
    if (tls_) {
      std::tie(ec, n) = co_await tls_->async_read_some(asio::buffer(buf), kAwait);
    } else {
      std::tie(ec, n) = co_await socket_.async_read_some(asio::buffer(buf), kAwait);
    }
    in_.append(buf, n);
    if (ec == asio::error::eof || ec == asio::ssl::error::stream_truncated ||
        ec == asio::error::connection_reset) {
      co_return std::exchange(in_, {});
    }
    if (ec) {
      co_return std::nullopt;
    }
  }
}

asio::awaitable<bool> Client::handshake() {
  tls_ = std::make_unique<asio::ssl::stream<asio::ip::tcp::socket&>>(socket_, ssl_context_);
  auto [ec] = co_await tls_->async_handshake(asio::ssl::stream_base::client, kAwait);
  co_return !ec;
}

std::string Client::tls_version() const {
  return tls_ ? SSL_get_version(tls_->native_handle()) : "";
}

std::string Client::tls_cipher() const {
  return tls_ ? SSL_CIPHER_get_name(SSL_get_current_cipher(tls_->native_handle())) : "";
}

void Client::close() {
  asio::error_code ignored;
  socket_.close(ignored);
}

// ---- LineHandler ----

asio::awaitable<void> LineHandler::serve(Connection& connection) {
  using namespace asio::experimental::awaitable_operators;
  served.fetch_add(1);
  const std::thread::id home = std::this_thread::get_id();
  {
    std::lock_guard lock(mu);
    threads.insert(home);
  }
  auto reply = [&connection](std::string text) -> asio::awaitable<bool> {
    text += "\r\n";
    co_return (co_await connection.write(text)).has_value();
  };
  if (!co_await reply("* HELLO")) {
    co_return;
  }
  for (;;) {
    auto line = co_await connection.read_line(kMaxLine, {.stop_point = true});
    if (std::this_thread::get_id() != home) {
      thread_changes.fetch_add(1);
    }
    if (!line) {
      switch (line.error()) {
        case NetError::kTooLong:
          if (!co_await reply("ERR too long")) {
            co_return;
          }
          continue;
        case NetError::kTimeout:
          co_await reply("* TIMEOUT");
          co_return;
        case NetError::kShutdown:
          co_await reply("* BYE shutdown");
          co_return;
        default:
          co_return;
      }
    }
    std::string command(*line);
    std::string verb = command.substr(0, command.find(' '));
    std::string arg = command.size() > verb.size() ? command.substr(verb.size() + 1) : "";
    bool ok = true;
    if (verb == "ECHO") {
      ok = co_await reply(arg);
    } else if (verb == "EXACT") {
      auto data = co_await connection.read_exact(to_number(arg));
      ok = data ? co_await reply("GOT " + std::string(*data))
                : co_await reply(std::string("ERR ") + to_string(data.error()));
    } else if (verb == "SOME") {
      auto data = co_await connection.read_some(to_number(arg));
      ok = data && co_await reply("SOME " + std::string(*data));
    } else if (verb == "SLOW") {
      slow_started.fetch_add(1);
      asio::steady_timer timer(connection.executor(), std::chrono::milliseconds(to_number(arg)));
      co_await timer.async_wait(kAwait);
      ok = co_await reply("DONE");
    } else if (verb == "RAW") {
      auto raw = co_await connection.read_line(kMaxLine);
      ok = raw && co_await reply("RAW " + std::string(*raw));
    } else if (verb == "TIMEOUT") {
      connection.set_read_timeout(std::chrono::milliseconds(to_number(arg)));
      ok = co_await reply("OK");
    } else if (verb == "WTIMEOUT") {
      connection.set_write_timeout(std::chrono::milliseconds(to_number(arg)));
      ok = co_await reply("OK");
    } else if (verb == "BIG") {
      std::string big(to_number(arg), 'x');
      big += "\r\n";
      auto written = co_await connection.write(big);
      if (written) {
        big_done.fetch_add(1);
      } else if (written.error() == NetError::kTimeout) {
        big_failed_timeout.fetch_add(1);
      }
      ok = written.has_value();
    } else if (verb == "STARTTLS") {
      if (!co_await reply("OK begin TLS")) {
        co_return;
      }
      discarded_before_tls.fetch_add(connection.buffered());
      auto started = co_await connection.start_tls();
      if (!started) {
        std::lock_guard lock(mu);
        tls_failures.push_back(to_string(started.error()));
        co_return;
      }
    } else if (verb == "TLS") {
      ok = co_await reply(connection.is_tls() ? "TLS yes" : "TLS no");
    } else if (verb == "PEER") {
      const PeerAddress& peer = connection.peer();
      ok = co_await reply("PEER " + peer.address + (peer.loopback ? " loopback" : " remote"));
    } else if (verb == "IDLE") {
      Notifier changed(connection.executor());
      {
        std::lock_guard lock(mu);
        idle_handles.push_back(changed.handle());
      }
      idling.fetch_add(1);
      if (!co_await reply("+ idling")) {
        co_return;
      }
      auto quiet = std::chrono::milliseconds(to_number(arg));
      for (;;) {
        auto result =
            co_await (connection.read_line(kMaxLine, {.stop_point = true}) || changed.wait(quiet));
        if (result.index() == 1) {
          if (!co_await reply(std::get<1>(result) ? "* WOKE" : "* TICK")) {
            co_return;
          }
          continue;
        }
        auto done = std::get<0>(result);
        if (!done) {
          if (done.error() == NetError::kShutdown) {
            co_await reply("* BYE shutdown");
          }
          co_return;
        }
        ok = co_await reply(*done == "DONE" ? "OK idle done" : "BAD expected DONE");
        break;
      }
    } else if (verb == "QUIT") {
      co_await reply("BYE");
      co_return;
    } else {
      ok = co_await reply("BAD " + verb);
    }
    if (!ok) {
      co_return;
    }
  }
}

asio::awaitable<void> LineHandler::refuse(Connection& connection, Refusal reason) {
  refused.fetch_add(1);
  if (reason == Refusal::kPerIpLimit) {
    co_await connection.write("* BYE too many connections\r\n");
  }
}

void LineHandler::notify_idlers() {
  std::lock_guard lock(mu);
  for (const auto& handle : idle_handles) {
    handle.notify();
  }
}

// ---- TestServer ----

TestServer::TestServer(TestServerOptions options) : runtime(options.runtime) {
  if (options.tls) {
    runtime.set_tls(options.tls);
  }
  // Port 0 (any free port) is not valid configuration, so no parse_endpoint().
  bool ipv6 = options.host.find(':') != std::string::npos;
  auto endpoint = config::Endpoint{
      options.host, 0, ipv6 ? config::Endpoint::Kind::kIpv6 : config::Endpoint::Kind::kIpv4};
  std::shared_ptr<Handler> serving =
      options.serve_with ? options.serve_with : std::shared_ptr<Handler>(handler);
  if (options.plain) {
    auto bound = runtime.listen({.name = "line", .endpoint = endpoint, .handler = serving});
    if (!bound) {
      throw std::runtime_error(bound.error().message);
    }
    port = *bound;
  }
  if (options.implicit_tls) {
    auto bound = runtime.listen(
        {.name = "lines", .endpoint = endpoint, .implicit_tls = true, .handler = serving});
    if (!bound) {
      throw std::runtime_error(bound.error().message);
    }
    tls_port = *bound;
  }
  runtime.start();
}

TestServer::~TestServer() {
  runtime.stop();
  wait_stopped();
}

bool TestServer::wait_stopped(std::chrono::milliseconds limit) {
  auto done = std::async(std::launch::async, [this] { runtime.wait(); });
  if (done.wait_for(limit) == std::future_status::ready) {
    return true;
  }
  runtime.stop();
  return false;
}

bool eventually(const std::function<bool()>& done, std::chrono::milliseconds limit) {
  auto deadline = std::chrono::steady_clock::now() + limit;
  while (!done()) {
    if (std::chrono::steady_clock::now() >= deadline) {
      return false;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return true;
}

}  // namespace peregrine::net::test
