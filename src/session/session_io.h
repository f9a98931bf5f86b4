#pragma once

// What a protocol session (imap::Session, pop3::Session) and the network
// layer that drives it (service::SessionDriver) hand each other: the facts
// of the connection the session is told at its start, and the Reply each
// call gives back. Both sessions are bytes-free and synchronous; the driver
// writes the Reply and acts on it.

#include <chrono>
#include <cstdint>
#include <string>

namespace peregrine::session {

struct ConnectionInfo {
  bool tls = false;            // the connection is TLS already (implicit-TLS listener)
  bool tls_available = false;  // STARTTLS (POP3: STLS) can be offered ([tls] is configured)
  bool loopback = false;       // the peer is 127.0.0.0/8 or ::1
  std::string peer;            // the peer's address, for the failed-login back-off and logs
};

// What the driver does after writing a Reply.
enum class Action : std::uint8_t {
  kNone,
  kStartTls,  // the TLS handshake, then the session's on_tls_started(); a failure ends
  kClose,     // close the connection
};

struct Reply {
  std::string out;                     // bytes to write, whole responses
  std::chrono::milliseconds delay{0};  // wait this long before writing (failed login)
  Action action = Action::kNone;
  bool more = false;  // the command is not finished: call resume() after writing
};

}  // namespace peregrine::session
