#pragma once

// One POP3 connection's protocol state (RFC 1939 §3): AUTHORIZATION, then
// TRANSACTION on the user's maildrop, then UPDATE at QUIT. Bytes-free and
// synchronous like imap::Session: the network layer reads a line, hands it
// to the session and writes the Reply it gets back.
//
//   write(session.greeting());
//   for each line (without its CRLF):
//     Reply r = session.on_line_without_store(line)   // on any thread, or
//               ?: session.on_line(line);             // on strand_key()'s strand
//     loop: sleep r.delay; write r.out; act on r.action;
//           if (!r.more) break;
//           r = session.resume_without_store()          // on any thread, or
//               ?: session.resume();                    // on strand_key()'s strand
//
// `more` is used twice: a login that checked the password continues on the
// user's strand (taking the maildrop lock and reading INBOX there), and
// RETR/TOP stream a message in bounded pieces, so a 25 MB message never
// sits in memory whole.
//
// Actions: kStartTls — after writing, do the TLS handshake, then call
// on_tls_started() (a failed handshake ends the connection); kClose — after
// writing, close the connection.
//
// Thread safety
// -------------
// None: one call at a time. Before login the session may run anywhere (the
// network layer uses a strand of the connection's own). Once user() is set,
// every call that may touch the store (on_line, resume, close, the
// destructor) must run on that user's strand: the session shares the
// user's store and maildrop lock with the user's other sessions.
// on_line_without_store() and resume_without_store() touch only the
// session's own state (and open message files through a
// store::BodySource, which is thread-safe), so they may run on any thread,
// between those calls.

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "config/config.h"
#include "session/session_io.h"
#include "session/user_registry.h"

namespace peregrine::auth {
class Authenticator;
class FailureTracker;
}  // namespace peregrine::auth

namespace peregrine::pop3 {

struct SessionData;

// What every POP3 session of a server shares. The referenced objects must
// outlive the sessions; they are thread-safe.
struct ServerContext {
  auth::Authenticator& authenticator;
  session::UserRegistry& users;
  auth::FailureTracker* failures = nullptr;  // null: failed logins are answered at once
  config::PlaintextAuth plaintext = config::PlaintextAuth::kLoopback;
  std::string server_name = "Peregrine";
};

enum class State : std::uint8_t { kAuthorization, kTransaction, kClosed };

// The connection's facts, the Reply of every call and its action, as for
// IMAP (session/session_io.h).
using session::ConnectionInfo;
using session::Reply;
using Action = session::Action;

// Bounds on what one resume() of RETR/TOP reads from the message.
inline constexpr std::size_t kRetrChunkBytes = 128 * 1024;

class Session {
 public:
  Session(ServerContext& server, ConnectionInfo connection);
  ~Session();
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;

  // "+OK Peregrine POP3 server ready".
  std::string greeting() const;
  // One input line, without its line end: a command, or the client's
  // response in an AUTH exchange.
  Reply on_line(std::string_view line);
  // The answer to `line` when it needs neither the store nor the user's
  // shared state: in the TRANSACTION state STAT, LIST, UIDL, DELE, RSET,
  // NOOP, and a line that does not parse. Those only read or mark the
  // session's snapshot of the maildrop, so the network layer answers them
  // without a hop to the user's strand (DELE follows every RETR of a
  // download). RETR and TOP too, reading the message's file where it was at
  // login (store::BodySource), unless it is no longer there. Nothing for any
  // other line: it goes to on_line().
  std::optional<Reply> on_line_without_store(std::string_view line);
  // The client sent a line longer than the network layer reads: it was
  // dropped; answers -ERR (and ends an AUTH exchange).
  Reply on_line_too_long();
  // Continues the unfinished command (after a Reply with `more`).
  Reply resume();
  // The same when it needs no store: the next piece of a message RETR or
  // TOP is sending (it reads an open file). Nothing otherwise: call
  // resume(). Like on_line_without_store(), on any thread.
  std::optional<Reply> resume_without_store();
  // Gives back a Reply's `out` once it is written: its buffer is reused for
  // the next message RETR or TOP sends, so a download does not allocate
  // (and fault in) a message-sized buffer for every message. Touches only
  // the session's own state, like on_line_without_store().
  void recycle(std::string&& out);
  // The STLS handshake succeeded: the connection is now TLS.
  void on_tls_started();
  // Ends the session without the UPDATE state (the connection dropped or
  // the server stops): lets go of the maildrop lock and the user's context.
  // Call on the user's strand; the destructor does it too.
  void close();

  State state() const;
  // The user's context once the password was accepted, until close() (QUIT
  // keeps it, so the user's store closes after the reply is written), else
  // null: meanwhile the session runs on the strand of user()->user().
  session::UserContext* user() const;

 private:
  std::unique_ptr<SessionData> data_;
};

}  // namespace peregrine::pop3
