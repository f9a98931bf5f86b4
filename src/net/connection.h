#pragma once

// A client connection as protocol code sees it: buffered reads (a line, n
// bytes, whatever arrived), back-pressured writes, STARTTLS, timeouts and the
// server's shutdown signal, the same whether the bytes travel in TLS or not.
//
// Reads go through an internal buffer of bounded size
// (ConnectionOptions::max_buffer_bytes); nothing a client sends can make it
// grow past that. A view a read returns points into that buffer and stays
// valid until the next read, start_tls() or close() on the connection.
//
// Timeouts: every read waits at most the connection's read timeout
// (set_read_timeout(), per protocol state: e.g. IMAP's 30-minute autologout
// once logged in, shorter before) or the one given in ReadOptions. A write
// fails with kTimeout when the peer takes no bytes for the write timeout.
// After a read timeout the connection still writes (say goodbye: IMAP's
// "* BYE Autologout"); after a write timeout it is unusable: close it.
//
// Shutdown: when the server stops (Runtime::stop()), every connection is
// told to finish its current command and end. A read marked as a stop point
// (ReadOptions::stop_point: it waits for the start of a new command) then
// fails with kShutdown, at once if it was already waiting; stopping() polls,
// wait_stopping() awaits. The handler answers (IMAP "* BYE") and returns.
//
// Cancellation: reads and writes honour Asio's per-operation cancellation,
// so `co_await (conn.read_line(n) || notifier.wait(t))` (awaitable_operators)
// works; a cancelled read fails with kCancelled and keeps every byte it had
// buffered for the next read.
//
// Thread safety
// -------------
// None: a Connection lives on one worker thread (executor()) for its life and
// is used by one coroutine at a time, except that one read and one write may
// be in flight together. It is created by the Runtime and destroyed after the
// handler's serve() returns.

#include <asio/any_io_executor.hpp>
#include <asio/awaitable.hpp>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <expected>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace peregrine::net {

// Why a read or write failed. These stay inside the network layer and the
// protocol handlers (which answer or just close); they are not MailErrors.
enum class NetError {
  kEof,        // the peer closed its side (or sent TLS close_notify)
  kTimeout,    // the read or write timeout passed (see the file comment)
  kTooLong,    // a line longer than allowed, or a read_exact larger than the buffer
  kShutdown,   // a stop-point read while the server is stopping
  kCancelled,  // the operation was cancelled (per-operation cancellation)
  kTls,        // TLS handshake or record error, or start_tls() where TLS is not possible
  kClosed,     // close() was called, or the server closed the connection
  kIo,         // any other socket error (reset by peer, ...)
};
const char* to_string(NetError error);

template <typename T>
using NetResult = std::expected<T, NetError>;

struct ReadOptions {
  // Overrides the connection's read timeout for this read; zero means none.
  std::optional<std::chrono::milliseconds> timeout = std::nullopt;
  // This read waits for the start of a new command: once the server is
  // stopping it fails with kShutdown instead of waiting (and is interrupted
  // with kShutdown if it is waiting when the stop comes). Input already
  // buffered is not returned then: pipelined commands after the current one
  // are not started.
  bool stop_point = false;
};

// Limits and defaults for each connection; see runtime.h for where they
// come from (config::LimitSettings).
struct ConnectionOptions {
  // The read buffer never grows past this: the longest line read_line() can
  // return, the largest read_exact(). At least 4096.
  std::size_t max_buffer_bytes = 64 * 1024 + 2;
  // The initial read timeout (before login, for IMAP); zero means none.
  std::chrono::milliseconds read_timeout{std::chrono::minutes(3)};
  // A write that makes no progress for this long fails; zero means none.
  std::chrono::milliseconds write_timeout{std::chrono::minutes(5)};
  // The most a TLS handshake (implicit TLS or STARTTLS) may take.
  std::chrono::milliseconds handshake_timeout{std::chrono::seconds(30)};
  // Writes go out in pieces of at most this many bytes; the write timeout
  // applies to each piece, so a slow but live reader is not cut off.
  std::size_t write_piece_bytes = 256 * 1024;
};

// The client's address. IPv4-mapped IPv6 addresses (::ffff:192.0.2.1) are
// given as the IPv4 address.
struct PeerAddress {
  std::string address;  // "192.0.2.1", "2001:db8::1"
  std::uint16_t port = 0;
  bool loopback = false;  // 127.0.0.0/8 or ::1
};

class Connection {
 public:
  struct Impl;  // runtime and connection internals (connection_impl.h)

  explicit Connection(std::shared_ptr<Impl> impl);
  ~Connection();
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;

  // ---- Reading ----

  // One line, without its line end (CRLF, or a bare LF; a CR before the LF
  // is dropped). kTooLong as soon as more than `max_bytes` bytes precede the
  // line end (max_bytes is capped by max_buffer_bytes - 2): what was buffered
  // of the long line is dropped, and the next read_line() first skips the
  // rest of it, up to and including its LF, so a line protocol can answer an
  // error and go on. kEof if the peer closes, even mid-line.
  asio::awaitable<NetResult<std::string_view>> read_line(std::size_t max_bytes,
                                                         ReadOptions options = {});
  // Exactly `n` bytes. kTooLong at once if n > max_buffer_bytes: read large
  // payloads (literals, message data) in pieces with read_some() instead.
  asio::awaitable<NetResult<std::string_view>> read_exact(std::size_t n, ReadOptions options = {});
  // At least one and at most `max_bytes` bytes: what is buffered, else what
  // the next socket read brings.
  asio::awaitable<NetResult<std::string_view>> read_some(std::size_t max_bytes,
                                                         ReadOptions options = {});
  // As read_some(), into the caller's memory (no copy through the buffer
  // when it is empty). Returns the number of bytes written to `out`, >= 1.
  asio::awaitable<NetResult<std::size_t>> read_into(std::span<char> out, ReadOptions options = {});
  // Bytes received and not yet returned by a read.
  std::size_t buffered() const;

  // ---- Writing ----

  // Completes when the socket (the kernel) has taken every byte, so a
  // handler producing a large response in pieces never holds more than one
  // piece in memory. On failure an unknown part was sent; close.
  asio::awaitable<NetResult<void>> write(std::string_view bytes);

  // ---- TLS ----

  // Upgrades a plain connection to TLS in place (STARTTLS, RFC 3207 / RFC
  // 2595 / RFC 3501 §6.2.1): call it after writing the protocol's go-ahead.
  // Any input buffered before the handshake is discarded (it came in
  // plaintext after the command and may be an injection, CVE-2011-0411).
  // kTls if TLS is not configured, the connection is already TLS, or the
  // handshake fails (the connection is then unusable); kTimeout if the
  // handshake takes longer than handshake_timeout.
  asio::awaitable<NetResult<void>> start_tls();
  bool is_tls() const;
  // True when start_tls() can succeed: TLS is configured and not yet on.
  bool can_start_tls() const;

  // ---- Ending ----

  // Ends TLS (close_notify, bounded by a short wait) and closes the socket.
  // Reads and writes fail with kClosed afterwards. Idempotent. The Runtime
  // closes the connection after serve() returns in any case.
  asio::awaitable<void> close();
  bool is_open() const;

  // True once the server is stopping (see the file comment).
  bool stopping() const;
  // Completes when the server starts stopping (at once if it has). Cancel
  // it with per-operation cancellation (e.g. `||`) to stop waiting.
  asio::awaitable<void> wait_stopping();

  // ---- Settings and facts ----

  void set_read_timeout(std::chrono::milliseconds timeout);  // zero: none
  std::chrono::milliseconds read_timeout() const;
  void set_write_timeout(std::chrono::milliseconds timeout);  // zero: none

  const PeerAddress& peer() const;
  // The name of the listener that accepted it (ListenerOptions::name).
  const std::string& listener_name() const;
  // A process-unique number for logs.
  std::uint64_t id() const;
  // The worker's executor this connection lives on.
  const asio::any_io_executor& executor() const;

 private:
  std::shared_ptr<Impl> impl_;
};

}  // namespace peregrine::net
