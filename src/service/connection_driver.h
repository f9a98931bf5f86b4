#pragma once

// What every protocol's connection handling (IMAP, POP3, LMTP) does the
// same way, below the protocols and above net/ and session/:
//
// - ProtocolHandler: a net::Handler that refuses a connection over a limit
//   with the protocol's own line.
// - ConnectionDriver: one connection from greeting to end. serve() runs the
//   protocol's run(), then its finish() however run() ended, so a session
//   always lets go of the user's context on the user's strand. It keeps the
//   connection's own strand key (for work before login) and says the
//   protocol's goodbye when a read fails because the server stops or the
//   client stayed silent.
// - SessionDriver (session_driver.h): a ConnectionDriver for the sessions
//   that answer with a session::Reply (IMAP, POP3).
//
// Thread safety
// -------------
// A ProtocolHandler is shared by the workers and holds only constants. A
// driver lives in one serve() coroutine's frame, on the connection's worker
// thread, and is used by that coroutine only.

#include <asio/awaitable.hpp>
#include <chrono>
#include <cstddef>
#include <span>
#include <string>
#include <string_view>

#include "net/connection.h"
#include "net/handler.h"
#include "net/storage_pool.h"
#include "session/session_io.h"

namespace peregrine::service {

// How a protocol names itself and the lines the drivers write for it.
struct Protocol {
  std::string name;              // "imap", "pop3", "lmtp": strand keys, log events
  std::string shutdown_line;     // when a read fails because the server stops
  std::string timeout_line;      // when the client stayed silent too long
  std::string too_many_line;     // refusing a connection over the per-IP limit
  std::string tls_failed_event;  // logged when a STARTTLS/STLS handshake fails
};

// The facts a protocol session is told about its connection.
session::ConnectionInfo connection_info(const net::Connection& conn);

class ProtocolHandler : public net::Handler {
 public:
  explicit ProtocolHandler(Protocol protocol) : protocol_(std::move(protocol)) {}

  // Writes protocol().too_many_line.
  asio::awaitable<void> refuse(net::Connection& connection, net::Refusal reason) override;

  const Protocol& protocol() const { return protocol_; }

 private:
  const Protocol protocol_;
};

class ConnectionDriver {
 public:
  // `conn`, `pool` and `protocol` must outlive the driver. Sets the
  // connection's read timeout to `read_timeout`.
  ConnectionDriver(net::Connection& conn, net::StoragePool& pool, const Protocol& protocol,
                   std::chrono::milliseconds read_timeout);
  virtual ~ConnectionDriver() = default;
  ConnectionDriver(const ConnectionDriver&) = delete;
  ConnectionDriver& operator=(const ConnectionDriver&) = delete;

  // run(), then finish() in every case. An exception run() threw is
  // rethrown after finish() (the runtime logs it and closes the connection).
  asio::awaitable<void> serve();

 protected:
  // Greeting to end of connection.
  virtual asio::awaitable<void> run() = 0;
  // Lets go of what the session holds, each thing on its strand.
  virtual asio::awaitable<void> finish() = 0;

  net::Connection& conn() const { return conn_; }
  net::StoragePool& pool() const { return pool_; }
  const Protocol& protocol() const { return protocol_; }
  // The strand of this connection's own work (before login, lookups):
  // "\x01<protocol>-conn/<connection id>", never a user's name.
  const std::string& connection_key() const { return connection_key_; }

  // Writes `bytes`; false when the connection failed (end it).
  asio::awaitable<bool> write(std::string_view bytes);
  // The protocol's goodbye for a read that failed: shutdown_line for
  // kShutdown, timeout_line for kTimeout, nothing for the others (the
  // connection is gone or unusable).
  asio::awaitable<void> goodbye(net::NetError error);

  // Reads at most `bytes` into `reader` (a framing reader with
  // prepare(n) -> std::span<char>, commit(n) and buffered()). The read is a
  // stop point when `stop_point` is set and nothing is buffered. False when
  // the read failed; goodbye() has been said then.
  template <typename Reader>
  asio::awaitable<bool> read_into(Reader& reader, std::size_t bytes, bool stop_point);

 private:
  net::Connection& conn_;
  net::StoragePool& pool_;
  const Protocol& protocol_;
  const std::string connection_key_;
};

template <typename Reader>
asio::awaitable<bool> ConnectionDriver::read_into(Reader& reader, std::size_t bytes,
                                                  bool stop_point) {
  const bool waits_for_command = stop_point && reader.buffered() == 0;
  std::span<char> space = reader.prepare(bytes);
  auto got = co_await conn_.read_into(space, net::ReadOptions{.stop_point = waits_for_command});
  reader.commit(got ? *got : 0);
  if (!got) {
    co_await goodbye(got.error());
    co_return false;
  }
  co_return true;
}

}  // namespace peregrine::service
