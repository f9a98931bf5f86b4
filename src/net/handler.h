#pragma once

// The seam between the runtime and a protocol: one Handler per listener
// kind (IMAP, POP3, LMTP), shared by every connection that listener accepts.
//
// Thread safety
// -------------
// serve() and refuse() run concurrently on every worker thread, one call per
// connection; a Handler keeps per-connection state in the coroutine frame and
// synchronizes whatever else it shares.

#include <asio/awaitable.hpp>

#include "net/connection.h"

namespace peregrine::net {

// Why a connection is refused.
enum class Refusal {
  kPerIpLimit,  // the client's address holds max_connections_per_ip already
};

class Handler {
 public:
  virtual ~Handler() = default;

  // Runs one connection from greeting to end. The connection is on the
  // worker thread it lives on and, for implicit-TLS listeners, the TLS
  // handshake is done. Return to end the connection; the Runtime then closes
  // it. An exception that escapes is logged and ends the connection.
  virtual asio::awaitable<void> serve(Connection& connection) = 0;

  // Called instead of serve() for a connection over a limit (the per-IP
  // connection limit): send the protocol's refusal (IMAP "* BYE Too many
  // connections", POP3 "-ERR [SYS/TEMP] ...") and return. The default sends
  // nothing. The connection's read timeout is short here; keep it brief.
  virtual asio::awaitable<void> refuse(Connection& connection, Refusal reason);
};

}  // namespace peregrine::net
