#pragma once

// The LMTP server (RFC 2033) on the network runtime: one session per
// connection, from the 220 greeting to QUIT.
//
// What it offers in the LHLO reply: PIPELINING (RFC 2920), ENHANCEDSTATUSCODES
// (RFC 2034, codes of RFC 3463), 8BITMIME (RFC 6152), SMTPUTF8 (RFC 6531)
// and SIZE (RFC 1870). Replies to pipelined commands are sent together when
// the client has sent nothing more to read.
//
// Delivery: a RCPT names a passwd-file user by delivery::resolve_recipient
// (user@any.domain and a bare user both reach `user`, unless the file holds
// the whole address); after DATA each accepted recipient gets its own reply,
// in RCPT order (RFC 2033 §4.2). A 250 is sent only after the message is
// durable in that recipient's INBOX: the delivery runs on the user's strand
// through the shared UserRegistry, so IMAP sessions of the user see the new
// message at once (an IDLE gets its EXISTS). Deliveries to one user that
// wait at the same time, from any connections, are stored in one batch
// (delivery/batch.h: one directory fsync and one index commit for all).
// A recipient's store is opened at RCPT and kept until the connection ends.
// An address the connection resolved before is accepted at RCPT from memory,
// without the passwd-file lookup's hop, and looked up again on the user's
// strand just before its delivery (a user removed meanwhile: 550 5.1.1 after
// DATA, and the address is forgotten).
//
// Bounds: a command line is at most max_line_bytes (longer: 500 5.5.2); the
// message at most max_message_bytes (larger: read to its end, not kept, and
// 552 5.3.4 for every recipient); at most max_recipients per transaction;
// after max_errors refused commands in a row the connection is closed
// (421 4.7.0). Stopping the server ends a session between commands with
// 421 4.3.2.
//
// Thread safety: serve() and refuse() run concurrently on every worker; the
// handler holds references to thread-safe objects only.

#include <asio/awaitable.hpp>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <string>

#include "auth/authenticator.h"
#include "config/config.h"
#include "net/storage_pool.h"
#include "service/connection_driver.h"
#include "session/user_registry.h"

namespace peregrine::delivery {
class DeliveryQueue;
}

namespace peregrine::lmtp {

struct LmtpOptions {
  std::string hostname;  // in the greeting and the LHLO reply; empty: gethostname()
  std::size_t max_line_bytes = 2048;
  std::uint64_t max_message_bytes = 64ull * 1024 * 1024;
  std::uint64_t quota_bytes = 0;  // per user; 0: none
  std::size_t max_recipients = 1000;
  int max_errors = 20;
  // How long the client may stay silent (RFC 5321 §4.5.3.2: at least 5 min).
  std::chrono::milliseconds timeout{std::chrono::minutes(5)};
};

// The options [lmtp] and [limits] ask for.
LmtpOptions lmtp_options(const config::Settings& settings);

class LmtpHandler final : public service::ProtocolHandler {
 public:
  // Everything referenced must outlive every connection (destroy it after
  // Runtime::wait()). `users` is the registry IMAP shares.
  LmtpHandler(auth::Authenticator& authenticator, session::UserRegistry& users,
              net::StoragePool& pool, LmtpOptions options);

  ~LmtpHandler() override;

  // refuse() says "421 4.7.0 Too many connections from your address".
  asio::awaitable<void> serve(net::Connection& connection) override;

 private:
  friend class LmtpSession;
  auth::Authenticator& authenticator_;
  session::UserRegistry& users_;
  net::StoragePool& pool_;
  const LmtpOptions options_;
  // Deliveries waiting for their users' strands, shared by all connections
  // so that concurrent deliveries to one user commit together.
  std::unique_ptr<delivery::DeliveryQueue> queue_;
  // Open LMTP connections: a delivery runs on its connection's thread only
  // when its connection is the only one (LmtpSession::deliver).
  std::atomic<int> connections_{0};
};

}  // namespace peregrine::lmtp
