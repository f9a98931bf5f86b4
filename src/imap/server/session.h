#pragma once

// One IMAP connection's protocol state: the state machine of RFC 3501 §3
// (not authenticated, authenticated, selected, logout), the command table,
// and the continuation exchanges of AUTHENTICATE and IDLE. Bytes-free and
// synchronous: the network layer frames input with a CommandReader, hands
// each event to the session, and writes the Reply it gets back.
//
//   write(session.greeting());
//   for each ReaderEvent ev (until kNeedMore):
//     Reply r = session.on_input(ev);   // on the user's strand once user() is set
//     loop: sleep r.delay; write r.out; act on r.action;
//           if (!r.more) break; r = session.resume();
//
// Actions: kStartTls — after writing, do the TLS handshake, then call
// on_tls_started() (a failed handshake ends the connection); kClose — after
// writing, close the connection.
//
// IDLE: after "+ idling" the session's input_mode() is kIdle. Updates for
// the client then arrive at any time: the session calls the wake callback
// (set_wake) from the user's strand; the network layer then calls
// poll_updates() on that strand and writes what it returns. While idling the
// network layer may also call idle_check() now and then (say every 30
// seconds) to fold in changes other programs made to the Maildir. The
// client's "DONE" line comes in through on_input like any other line.
//
// Thread safety
// -------------
// None. Before login the session may be used from the connection's thread.
// Once user() is non-null, every call (on_input, resume, poll_updates,
// idle_check, close and the destructor) must run on that user's strand, one
// at a time: the session then shares its mailbox state with the user's
// other sessions (user_context.h). The wake callback is the exception: it
// is called on the strand and must only post work elsewhere.

#include <chrono>
#include <functional>
#include <memory>
#include <span>
#include <string>

#include "config/config.h"
#include "imap/proto/command.h"
#include "imap/proto/command_reader.h"
#include "session/session_io.h"
#include "store/api/types.h"

namespace peregrine::auth {
class Authenticator;
class FailureTracker;
}  // namespace peregrine::auth

namespace peregrine::session {
class UserContext;
class UserRegistry;
}  // namespace peregrine::session

namespace peregrine::imap {

using session::UserContext;
using session::UserRegistry;
struct SessionData;

// What every session of a server shares. The referenced objects must
// outlive the sessions; they are thread-safe (authenticator, registry,
// failure tracker).
struct ServerContext {
  auth::Authenticator& authenticator;
  UserRegistry& users;
  auth::FailureTracker* failures = nullptr;  // null: failed logins are answered at once
  config::PlaintextAuth plaintext = config::PlaintextAuth::kLoopback;
  std::string server_name = "Peregrine";
  std::string server_version = "0.1.0";
};

enum class SessionState : uint8_t { kNotAuthenticated, kAuthenticated, kSelected, kLogout };
// How the next input line is read.
enum class InputMode : uint8_t {
  kCommand,       // a command
  kAuthResponse,  // a client response of AUTHENTICATE (base64 or "*")
  kIdle,          // IDLE: "DONE"
};

// The connection's facts, the Reply of every call and its action: one
// shape for every protocol session (session/session_io.h).
using session::ConnectionInfo;
using session::Reply;
using SessionAction = session::Action;

class Session {
 public:
  Session(ServerContext& server, ConnectionInfo connection);
  ~Session();
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;

  // "* OK [CAPABILITY ...] Peregrine ready."
  std::string greeting() const;

  // Any reader event: kCommand goes to feed(); kContinue answers "+ Ready
  // for literal data"; kError answers BAD (and, when fatal, BYE and kClose).
  // kNeedMore gives an empty reply. `prepared`: analyses of the command's
  // literals the network layer started ahead (UserStore::prepare_messages,
  // for an APPEND it framed while an earlier command ran); APPEND hands
  // each message's own to the store. Not kept past the call.
  Reply on_input(const ReaderEvent& event,
                 std::span<const std::unique_ptr<store::PreparedMessage>> prepared = {});
  // A framed line, read as input_mode() says: a command (parsed, then
  // handle()), an AUTHENTICATE response, or IDLE's DONE.
  Reply feed(const FramedCommand& framed);
  // Runs a parsed command (input_mode() must be kCommand and no command
  // unfinished).
  Reply handle(const Command& command);
  // Continues the unfinished command (after a Reply with `more`).
  Reply resume();

  // The STARTTLS handshake succeeded: the connection is now TLS.
  void on_tls_started();

  // IDLE support (see the file comment).
  void set_wake(std::function<void()> wake);
  Reply poll_updates();
  Reply idle_check();

  // Leaves the selected mailbox and lets go of the user's context. Call on
  // the user's strand before destroying a logged-in session (the destructor
  // does it too, on whatever thread runs it).
  void close();

  SessionState state() const;
  InputMode input_mode() const;
  // Whether a command is unfinished (resume() pending).
  bool busy() const;
  // The logged-in user's context, or null (its user() names the strand).
  UserContext* user() const;
  const ConnectionInfo& connection() const;

 private:
  std::unique_ptr<SessionData> data_;
};

}  // namespace peregrine::imap
