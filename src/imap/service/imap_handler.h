#pragma once

// The IMAP protocol on the network runtime: one imap::Session per
// connection, driven as session.h describes. Bytes from the socket are
// framed by a CommandReader; each event goes to the session and the Reply
// is written back (its delay honoured, STARTTLS and close acted on,
// unfinished commands resumed).
//
// Where session calls run: as service::SessionDriver says (the
// connection's strand before login, the user's after), so that all
// sessions of one user are serialized as user_context.h requires.
//
// Timeouts: autologout_unauthenticated before login, autologout after it
// (RFC 3501 §5.4: at least 30 minutes); an IDLE lasts at most idle_timeout.
// Each ends with "* BYE Autologout". When the server stops, a session
// finishes its current command, says "* BYE Server shutting down" and ends.
//
// Thread safety: serve() and refuse() run concurrently on every worker; the
// handler itself holds only references to thread-safe objects.

#include <asio/awaitable.hpp>
#include <chrono>

#include "config/config.h"
#include "imap/proto/command_reader.h"
#include "imap/server/session.h"
#include "imap/server/user_context.h"
#include "net/storage_pool.h"
#include "service/connection_driver.h"

namespace peregrine::imap {

struct ImapHandlerOptions {
  ReaderLimits reader;
  std::chrono::milliseconds autologout{std::chrono::minutes(30)};
  std::chrono::milliseconds autologout_unauthenticated{std::chrono::minutes(3)};
  std::chrono::milliseconds idle_timeout{std::chrono::minutes(30)};
  // How often an IDLE looks for changes other programs made to the Maildir.
  std::chrono::milliseconds idle_check_interval{std::chrono::seconds(30)};
};

// The options [limits] asks for.
ImapHandlerOptions imap_handler_options(const config::Settings& settings);

class ImapHandler final : public service::ProtocolHandler {
 public:
  // `server` and `pool` must outlive every connection (destroy them after
  // Runtime::wait()).
  ImapHandler(ServerContext& server, net::StoragePool& pool, ImapHandlerOptions options);

  // refuse() says "* BYE Too many connections from your address".
  asio::awaitable<void> serve(net::Connection& connection) override;

 private:
  ServerContext& server_;
  net::StoragePool& pool_;
  const ImapHandlerOptions options_;
};

}  // namespace peregrine::imap
