#pragma once

// The IMAP protocol on the network runtime: one imap::Session per
// connection, driven as session.h describes. Bytes from the socket are
// framed by a CommandReader; each event goes to the session and the Reply
// is written back (its delay honoured, STARTTLS and close acted on,
// unfinished commands resumed).
//
// Where session calls run: every call goes through the StoragePool, so
// password hashing and store I/O never block an event loop. Before login a
// session runs on a strand of its own (keyed by the connection); once
// logged in, on its user's strand, so that all sessions of one user are
// serialized as user_context.h requires. The user's key is what the
// UserRegistry's make_runtime stashed: build the registry with
// imap_registry_options().
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
#include "net/handler.h"
#include "net/storage_pool.h"

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

// Registry options that stash each user's strand key (the user name) in
// UserContext::runtime(), where ImapHandler finds it.
UserRegistry::Options imap_registry_options();

class ImapHandler final : public net::Handler {
 public:
  // `server` and `pool` must outlive every connection (destroy them after
  // Runtime::wait()).
  ImapHandler(ServerContext& server, net::StoragePool& pool, ImapHandlerOptions options);

  asio::awaitable<void> serve(net::Connection& connection) override;
  // "* BYE Too many connections from your address".
  asio::awaitable<void> refuse(net::Connection& connection, net::Refusal reason) override;

 private:
  ServerContext& server_;
  net::StoragePool& pool_;
  const ImapHandlerOptions options_;
};

}  // namespace peregrine::imap
