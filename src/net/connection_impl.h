#pragma once

// Internal to src/net: the state behind a Connection, shared by
// connection.cc (the I/O) and runtime.cc (which creates connections, shakes
// hands for implicit TLS and tells them to stop). Includes Asio's socket and
// SSL headers: keep it out of public headers.

#include <asio/ip/tcp.hpp>
#include <asio/ssl/stream.hpp>
#include <asio/steady_timer.hpp>
#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "net/connection.h"
#include "net/tls_context.h"

namespace peregrine::net {

struct Connection::Impl : std::enable_shared_from_this<Connection::Impl> {
  Impl(asio::ip::tcp::socket socket, ConnectionOptions options,
       std::shared_ptr<TlsContext> tls_context, PeerAddress peer, std::string listener_name,
       std::uint64_t id);

  // The server side of the TLS handshake, bounded by handshake_timeout.
  // Used for implicit TLS and by start_tls().
  asio::awaitable<NetResult<void>> handshake();
  // Tells the connection the server is stopping: stop-point reads fail
  // with kShutdown from now on, and one that is waiting is interrupted
  // (by cancelling the socket's operations: a write in flight at the same
  // time fails with kCancelled).
  void request_stop();
  // Closes the socket at once (no TLS close_notify): every pending
  // operation fails. For the forced end of a shutdown.
  void force_close();

  // Reads more bytes from the socket into the buffer: at least one, or an
  // error. First makes the buffer hold at least `need` bytes from `begin`
  // (capped by max_buffer_bytes), growing it by doubling.
  asio::awaitable<NetResult<void>> fill(std::size_t need, const ReadOptions& options);
  // Reads up to out.size() bytes from the socket straight into `out`.
  asio::awaitable<NetResult<std::size_t>> socket_read(std::span<char> out,
                                                      const ReadOptions& options);
  asio::awaitable<NetResult<void>> write_piece(std::string_view piece);
  NetResult<void> check_readable(const ReadOptions& options) const;
  std::string_view take(std::size_t n);
  // Bounds the next read (or write) by `timeout` (zero: unbounded) until
  // disarm(); see read_timer.
  void arm(bool write, std::chrono::milliseconds timeout);
  void disarm(bool write);
  // Starts a wait of the read (write) timer that ends at `at`, replacing the
  // pending one; and what happens when a wait ends.
  void wait_until(bool write, std::chrono::steady_clock::time_point at);
  void on_timer(bool write, std::uint64_t wait, const asio::error_code& ec);
  NetError map_error(const asio::error_code& ec, bool write);

  asio::any_io_executor executor;
  asio::ip::tcp::socket socket;
  std::unique_ptr<asio::ssl::stream<asio::ip::tcp::socket&>> tls;
  std::shared_ptr<TlsContext> tls_context;  // null: TLS not configured
  ConnectionOptions options;
  PeerAddress peer;
  std::string listener_name;
  std::uint64_t id;

  // Input: bytes [begin, end) of buf are received and not yet returned.
  std::vector<char> buf;
  std::size_t begin = 0;
  std::size_t end = 0;
  // After kTooLong from read_line: drop input up to and including the next
  // LF before reading the next line.
  bool skip_line = false;

  std::chrono::milliseconds read_timeout;
  std::chrono::milliseconds write_timeout;
  // Each timer bounds one kind of operation; when the running operation's
  // deadline passes it sets its flag and cancels the socket's operations.
  // The timer is lazy: an operation only records its deadline, and the
  // timer is set again only when its pending wait would end after that
  // deadline (a shorter timeout). A wait that ends before the deadline (later
  // operations moved it on) waits again for the rest; one that ends with no
  // operation running lets the timer rest. So a connection that reads and
  // writes all the time sets its timers about once a timeout, not once an
  // operation (each setting can be a timerfd_settime call).
  asio::steady_timer read_timer;
  asio::steady_timer write_timer;
  bool read_timed_out = false;
  bool write_timed_out = false;
  using TimePoint = std::chrono::steady_clock::time_point;
  // The running operation's deadline; max(): none (unbounded, or idle).
  TimePoint read_deadline = TimePoint::max();
  TimePoint write_deadline = TimePoint::max();
  // When the timer's pending wait ends; max(): no wait pending.
  TimePoint read_timer_at = TimePoint::max();
  TimePoint write_timer_at = TimePoint::max();
  // Numbers the waits, so that the handler of a replaced wait does nothing.
  std::uint64_t read_wait = 0;
  std::uint64_t write_wait = 0;
  // wait_stopping() waits on this; request_stop() cancels it.
  asio::steady_timer stop_timer;

  bool open = true;
  bool peer_closed = false;
  bool stopping = false;
  bool stop_point_read_pending = false;
  bool stop_interrupted = false;
};

}  // namespace peregrine::net
