#pragma once

// A ConnectionDriver for the protocol sessions that answer every call with
// a session::Reply (imap::Session, pop3::Session): the strand each call
// runs on, the read timeout before and after login, and the loop that
// writes a Reply and acts on it (delay, STARTTLS/STLS, close, resume).
//
// Where session calls run: every call goes through the StoragePool, so
// password hashing and store I/O never block an event loop. Before login on
// the connection's own strand; once the session has a user, on the user's
// strand, whose key is the user name (DESIGN.md: one strand per user), so
// all of a user's IMAP, POP3 and LMTP work is serialized.
//
// Thread safety: as ConnectionDriver. The session hooks below are called on
// the session's strand, except user() and logged_in(), which the driver
// reads on the connection's thread between calls.

#include <asio/awaitable.hpp>
#include <chrono>
#include <optional>
#include <string>

#include "service/connection_driver.h"
#include "session/session_io.h"

namespace peregrine::session {
class UserContext;
}

namespace peregrine::service {

struct SessionTimeouts {
  std::chrono::milliseconds before_login{std::chrono::minutes(3)};
  std::chrono::milliseconds after_login{std::chrono::minutes(30)};
};

class SessionDriver : public ConnectionDriver {
 public:
  SessionDriver(net::Connection& conn, net::StoragePool& pool, const Protocol& protocol,
                SessionTimeouts timeouts);

 protected:
  // ---- The session, as the protocol drives it ----

  // The logged-in user's context, or null: it chooses the strand.
  virtual session::UserContext* user() const = 0;
  // Whether the session is past login (the longer read timeout applies).
  virtual bool logged_in() const = 0;
  // Continues the unfinished command (after a Reply with `more`).
  virtual session::Reply resume() = 0;
  // The same when the session can continue without its strand, on the
  // connection's thread (a POP3 RETR reading its next piece from an open
  // file); nothing to go to resume() on the strand. Nothing by default.
  virtual std::optional<session::Reply> resume_without_store() { return std::nullopt; }
  // The handshake of a kStartTls reply succeeded.
  virtual void tls_started() = 0;
  // Closes and destroys the session (at the end, on its strand).
  virtual void end_session() = 0;
  // On the connection's thread, right after a successful handshake: drop
  // whatever the protocol read ahead in plaintext. Nothing by default.
  virtual void after_handshake() {}

  // Takes back the bytes of a Reply once they are written, so the session
  // may reuse the buffer for its next reply (a POP3 download writes a
  // message-sized reply for every RETR). Called on the connection's thread
  // between session calls. Drops them by default.
  virtual void written(std::string&& /*out*/) {}

  // ---- For the protocol's run() ----

  // The strand the session's calls run on: the user's once logged in.
  std::string strand_key() const;

  // Runs a session call on strand_key()'s strand; switches to the
  // logged-in read timeout when the call logged the user in.
  template <typename F>
  asio::awaitable<session::Reply> call(F fn);

  // Writes a Reply and acts on it, resuming the command until it is done.
  // False when the connection is to end (closed, failed, or the handshake
  // failed).
  asio::awaitable<bool> deliver(session::Reply reply);

  // end_session() on the session's strand.
  asio::awaitable<void> finish() override;

 private:
  const SessionTimeouts timeouts_;
  bool logged_in_ = false;
};

template <typename F>
asio::awaitable<session::Reply> SessionDriver::call(F fn) {
  session::Reply reply = co_await pool().run(strand_key(), std::move(fn));
  if (!logged_in_ && logged_in()) {
    logged_in_ = true;
    conn().set_read_timeout(timeouts_.after_login);
  }
  co_return reply;
}

}  // namespace peregrine::service
