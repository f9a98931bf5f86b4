#pragma once

// The server's runtime: N worker threads, each running its own event loop,
// and the listeners that feed them.
//
// A listener accepts on a control thread and hands each new connection to
// the next worker in turn; the connection then lives on that worker for its
// whole life, as one coroutine running Handler::serve(). Connections from one
// address over max_connections_per_ip go to Handler::refuse() instead.
//
//   net::Runtime runtime(net::runtime_options(settings));
//   runtime.set_tls(*net::TlsContext::load(settings.tls));
//   runtime.listen({.name = "imap", .endpoint = ep, .handler = imap});
//   runtime.start();
//   runtime.stop_on_signals();  // SIGTERM/SIGINT -> stop()
//   runtime.wait();             // returns once stopped
//
// Graceful stop (stop()): the listeners close; every live connection is told
// to finish its current command and end (Connection::stopping(), stop-point
// reads fail with kShutdown); after shutdown_grace, connections still open
// are closed by force, and the workers exit.
//
// Thread safety
// -------------
// set_tls(), listen() and start() are called from one thread, before
// start() for the first two. stop() may be called from any thread (also a
// worker's), any number of times. wait() is called from one thread, not a
// worker.

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>

#include "base/result.h"
#include "config/config.h"
#include "config/endpoint.h"
#include "net/connection.h"
#include "net/handler.h"
#include "net/tls_context.h"

namespace peregrine::net {

struct RuntimeOptions {
  unsigned workers = 1;  // event-loop threads, at least 1
  // Open connections from one client address, over all listeners; zero
  // means no limit.
  std::uint32_t max_connections_per_ip = 50;
  // How long stop() lets connections finish before closing them by force.
  std::chrono::milliseconds shutdown_grace{std::chrono::seconds(10)};
  // The read timeout of a refused connection (Handler::refuse()).
  std::chrono::milliseconds refuse_timeout{std::chrono::seconds(5)};
  ConnectionOptions connection;
};

// The options the configuration asks for: [server] workers, [limits]
// max_connections_per_ip, max_line_bytes (the read buffer: a line plus its
// CRLF) and autologout_unauthenticated (the initial read timeout; protocol
// handlers set their own per state).
RuntimeOptions runtime_options(const config::Settings& settings);

struct ListenerOptions {
  std::string name;  // "imap", "imaps", "pop3", ...: for logs and Connection::listener_name()
  config::Endpoint endpoint;
  bool implicit_tls = false;  // handshake before serve() (IMAPS, POP3S); needs set_tls()
  // When not empty, listen on this unix-domain socket instead of `endpoint`
  // (mode 0666; an old socket file there is replaced). Its peers are
  // PeerAddress{"unix", 0, loopback = true}, outside the per-IP limit.
  std::filesystem::path unix_path = {};
  std::shared_ptr<Handler> handler;
};

class Runtime {
 public:
  explicit Runtime(RuntimeOptions options);
  // Stops (as stop()) and waits if still running.
  ~Runtime();
  Runtime(const Runtime&) = delete;
  Runtime& operator=(const Runtime&) = delete;

  // The TLS context for implicit-TLS listeners and STARTTLS. Without it,
  // Connection::can_start_tls() is false.
  void set_tls(std::shared_ptr<TlsContext> tls);

  // Binds a listener now (SO_REUSEADDR; an IPv6 address listens on IPv6
  // only, so "0.0.0.0:143" and "[::]:143" can both be given); it accepts
  // after start(). A host name binds every address it resolves to, all on
  // one port. Returns the port bound (the ephemeral one for port 0).
  // Errors: kBadInput for an implicit-TLS listener without set_tls() or a
  // name that does not resolve; kTemporary when the bind fails (in use,
  // no permission), the message naming the endpoint.
  base::Result<std::uint16_t> listen(const ListenerOptions& listener);

  // Starts the worker threads and the control thread, and begins accepting.
  void start();

  // Begins a graceful stop (see the file comment); returns at once.
  void stop();

  // Calls stop() when SIGTERM or SIGINT arrives (Asio's signal_set; the
  // signals are handled until the runtime has stopped). After start().
  void stop_on_signals();

  // Blocks until the stop is complete and every thread has exited.
  void wait();

  // Live connections now (refused ones included), for tests and metrics.
  std::size_t connections() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace peregrine::net
