#pragma once

// The POP3 protocol on the network runtime: one pop3::Session per
// connection, driven as session.h describes. Lines are read with
// Connection::read_line (bounded: a longer line is answered with -ERR and
// skipped); each goes to the session and the Reply is written back (its
// delay honoured, STLS and close acted on, RETR streamed piece by piece).
//
// Where session calls run: as service::SessionDriver says (the
// connection's strand before login; once the password is accepted, the
// user's), so a user's POP3, IMAP and LMTP work is serialized on one strand.
//
// Timeouts: autologout_unauthenticated before login, autologout after it
// (RFC 1939 §3: at least 10 minutes). A stopping server ends a session
// between commands with "-ERR [SYS/TEMP] Server shutting down" and no
// UPDATE state (deletions are not applied, RFC 1939 §6).
//
// Thread safety: serve() and refuse() run concurrently on every worker; the
// handler holds only references to thread-safe objects.

#include <asio/awaitable.hpp>
#include <chrono>
#include <cstddef>

#include "config/config.h"
#include "net/storage_pool.h"
#include "pop3/server/session.h"
#include "service/connection_driver.h"

namespace peregrine::pop3 {

struct Pop3HandlerOptions {
  // The longest line read; longer ones are answered with -ERR. Commands are
  // at most 255 octets (RFC 2449 §4), AUTH responses up to 4 KiB.
  std::size_t max_line_bytes = 8192;
  std::chrono::milliseconds autologout{std::chrono::minutes(30)};
  std::chrono::milliseconds autologout_unauthenticated{std::chrono::minutes(3)};
};

// The options [limits] asks for.
Pop3HandlerOptions pop3_handler_options(const config::Settings& settings);

class Pop3Handler final : public service::ProtocolHandler {
 public:
  // `server` and `pool` must outlive every connection (destroy them after
  // Runtime::wait()).
  Pop3Handler(ServerContext& server, net::StoragePool& pool, Pop3HandlerOptions options);

  // refuse() says "-ERR [SYS/TEMP] Too many connections from your address".
  asio::awaitable<void> serve(net::Connection& connection) override;

 private:
  ServerContext& server_;
  net::StoragePool& pool_;
  const Pop3HandlerOptions options_;
};

}  // namespace peregrine::pop3
