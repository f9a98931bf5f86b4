#include "net/connection.h"

#include <algorithm>
#include <asio/buffer.hpp>
#include <asio/experimental/as_tuple.hpp>
#include <asio/ssl/error.hpp>
#include <asio/use_awaitable.hpp>
#include <asio/write.hpp>
#include <cstring>

#include "base/log.h"
#include "net/connection_impl.h"
#include "net/tls_context_impl.h"

namespace peregrine::net {
namespace {

constexpr auto kAwait = asio::experimental::as_tuple(asio::use_awaitable);
// The buffer a connection starts with and shrinks back to when it is empty.
constexpr std::size_t kInitialBuffer = 4096;
// Compact the buffer rather than read into less free space than this.
constexpr std::size_t kMinReadRoom = 512;
// How long close() waits for the peer's TLS close_notify.
constexpr std::chrono::milliseconds kTlsCloseWait{1000};

std::unexpected<NetError> fail(NetError error) { return std::unexpected<NetError>(error); }

}  // namespace

const char* to_string(NetError error) {
  switch (error) {
    case NetError::kEof:
      return "eof";
    case NetError::kTimeout:
      return "timeout";
    case NetError::kTooLong:
      return "too-long";
    case NetError::kShutdown:
      return "shutdown";
    case NetError::kCancelled:
      return "cancelled";
    case NetError::kTls:
      return "tls";
    case NetError::kClosed:
      return "closed";
    case NetError::kIo:
      return "io";
  }
  return "io";
}

// ---- Impl ----

Connection::Impl::Impl(asio::ip::tcp::socket s, ConnectionOptions opts,
                       std::shared_ptr<TlsContext> tls_ctx, PeerAddress peer_address,
                       std::string listener, std::uint64_t connection_id)
    : executor(s.get_executor()),
      socket(std::move(s)),
      tls_context(std::move(tls_ctx)),
      options(opts),
      peer(std::move(peer_address)),
      listener_name(std::move(listener)),
      id(connection_id),
      read_timeout(opts.read_timeout),
      write_timeout(opts.write_timeout),
      read_timer(executor),
      write_timer(executor),
      stop_timer(executor) {
  options.max_buffer_bytes = std::max<std::size_t>(options.max_buffer_bytes, 4096);
  options.write_piece_bytes = std::max<std::size_t>(options.write_piece_bytes, 1024);
}

void Connection::Impl::arm(bool write, std::chrono::milliseconds timeout) {
  (write ? write_timed_out : read_timed_out) = false;
  TimePoint& deadline = write ? write_deadline : read_deadline;
  if (timeout.count() <= 0) {
    deadline = TimePoint::max();
    return;
  }
  deadline = std::chrono::steady_clock::now() + timeout;
  if ((write ? write_timer_at : read_timer_at) > deadline) {
    wait_until(write, deadline);
  }
}

void Connection::Impl::disarm(bool write) {
  // The pending wait stays: the next operation will most likely use it.
  (write ? write_deadline : read_deadline) = TimePoint::max();
}

void Connection::Impl::wait_until(bool write, TimePoint at) {
  asio::steady_timer& timer = write ? write_timer : read_timer;
  timer.expires_at(at);  // ends a pending wait (its handler sees a later wait number)
  (write ? write_timer_at : read_timer_at) = at;
  const std::uint64_t wait = ++(write ? write_wait : read_wait);
  timer.async_wait([weak = weak_from_this(), write, wait](const asio::error_code& ec) {
    if (auto self = weak.lock()) {
      self->on_timer(write, wait, ec);
    }
  });
}

void Connection::Impl::on_timer(bool write, std::uint64_t wait, const asio::error_code& ec) {
  if (wait != (write ? write_wait : read_wait)) {
    return;  // replaced by a later wait
  }
  (write ? write_timer_at : read_timer_at) = TimePoint::max();
  const TimePoint deadline = write ? write_deadline : read_deadline;
  if (ec || deadline == TimePoint::max()) {
    return;  // cancelled (the connection closes), or no operation runs: rest
  }
  if (std::chrono::steady_clock::now() < deadline) {
    wait_until(write, deadline);  // the running operation started after this wait did
    return;
  }
  (write ? write_timed_out : read_timed_out) = true;
  asio::error_code ignored;
  socket.cancel(ignored);
}

NetError Connection::Impl::map_error(const asio::error_code& ec, bool write) {
  if (write ? write_timed_out : read_timed_out) {
    return NetError::kTimeout;
  }
  if (!open) {
    return NetError::kClosed;
  }
  if (ec == asio::error::eof || ec == asio::ssl::error::stream_truncated) {
    peer_closed = true;
    return NetError::kEof;
  }
  if (ec == asio::error::operation_aborted) {
    return NetError::kCancelled;
  }
  if (ec.category() == asio::error::get_ssl_category()) {
    return NetError::kTls;
  }
  return NetError::kIo;
}

NetResult<void> Connection::Impl::check_readable(const ReadOptions& read_options) const {
  if (!open) {
    return fail(NetError::kClosed);
  }
  if (write_timed_out) {
    return fail(NetError::kTimeout);
  }
  if (read_options.stop_point && stopping) {
    return fail(NetError::kShutdown);
  }
  return {};
}

asio::awaitable<NetResult<std::size_t>> Connection::Impl::socket_read(
    std::span<char> out, const ReadOptions& read_options) {
  if (auto ok = check_readable(read_options); !ok) {
    co_return fail(ok.error());
  }
  if (peer_closed) {
    co_return fail(NetError::kEof);
  }
  arm(false, read_options.timeout.value_or(read_timeout));
  stop_point_read_pending = read_options.stop_point;
  asio::error_code ec;
  std::size_t n = 0;
  if (tls) {
    std::tie(ec, n) = co_await tls->async_read_some(asio::buffer(out.data(), out.size()), kAwait);
  } else {
    std::tie(ec, n) = co_await socket.async_read_some(asio::buffer(out.data(), out.size()), kAwait);
  }
  stop_point_read_pending = false;
  disarm(false);
  if (read_options.stop_point && stop_interrupted) {
    stop_interrupted = false;
    if (open && !read_timed_out) {
      // The stop wins at a stop point, even over bytes that arrived just
      // then: input after the current command is not read.
      co_return fail(NetError::kShutdown);
    }
  }
  if (!ec) {
    co_return n;
  }
  co_return fail(map_error(ec, false));
}

asio::awaitable<NetResult<void>> Connection::Impl::fill(std::size_t need,
                                                        const ReadOptions& read_options) {
  std::size_t avail = end - begin;
  if (avail == 0) {
    begin = end = 0;
    if (buf.size() > kInitialBuffer) {
      std::vector<char>().swap(buf);  // give a large buffer back once it is drained
    }
  }
  need = std::min(std::max(need, avail + 1), options.max_buffer_bytes);
  if (begin > 0 && (buf.size() - begin < need || buf.size() - end < kMinReadRoom)) {
    std::memmove(buf.data(), buf.data() + begin, avail);
    begin = 0;
    end = avail;
  }
  if ((buf.size() < need || buf.size() - end < kMinReadRoom) &&
      buf.size() < options.max_buffer_bytes) {
    std::size_t grown = std::max(need, std::max(kInitialBuffer, buf.size() * 2));
    buf.resize(std::min(grown, options.max_buffer_bytes));
  }
  if (end >= buf.size()) {
    co_return fail(NetError::kTooLong);  // callers never ask for more than the buffer holds
  }
  auto n = co_await socket_read(std::span<char>(buf.data() + end, buf.size() - end), read_options);
  if (!n) {
    co_return fail(n.error());
  }
  end += *n;
  co_return NetResult<void>{};
}

std::string_view Connection::Impl::take(std::size_t n) {
  std::string_view view(buf.data() + begin, n);
  begin += n;
  return view;
}

asio::awaitable<NetResult<void>> Connection::Impl::write_piece(std::string_view piece) {
  if (!open) {
    co_return fail(NetError::kClosed);
  }
  if (write_timed_out) {
    co_return fail(NetError::kTimeout);
  }
  arm(true, write_timeout);
  asio::error_code ec;
  if (tls) {
    std::tie(ec, std::ignore) =
        co_await asio::async_write(*tls, asio::buffer(piece.data(), piece.size()), kAwait);
  } else {
    std::tie(ec, std::ignore) =
        co_await asio::async_write(socket, asio::buffer(piece.data(), piece.size()), kAwait);
  }
  disarm(true);
  if (ec) {
    co_return fail(map_error(ec, true));
  }
  co_return NetResult<void>{};
}

asio::awaitable<NetResult<void>> Connection::Impl::handshake() {
  if (!tls_context) {
    co_return fail(NetError::kTls);
  }
  tls = std::make_unique<asio::ssl::stream<asio::ip::tcp::socket&>>(socket,
                                                                    tls_context->impl().context);
  arm(false, options.handshake_timeout);
  auto [ec] = co_await tls->async_handshake(asio::ssl::stream_base::server, kAwait);
  disarm(false);
  if (!ec) {
    co_return NetResult<void>{};
  }
  NetError error = read_timed_out ? NetError::kTimeout : NetError::kTls;
  if (base::log_enabled(base::LogLevel::kDebug)) {
    base::log(base::LogLevel::kDebug, "tls.handshake_failed",
              {{"conn", id}, {"peer", peer.address}, {"reason", ec.message()}});
  }
  force_close();  // nothing sane can follow a failed handshake
  co_return fail(error);
}

void Connection::Impl::request_stop() {
  if (stopping) {
    return;
  }
  stopping = true;
  stop_timer.cancel();
  if (stop_point_read_pending) {
    stop_interrupted = true;
    asio::error_code ignored;
    socket.cancel(ignored);
  }
}

void Connection::Impl::force_close() {
  open = false;
  asio::error_code ignored;
  socket.shutdown(asio::ip::tcp::socket::shutdown_both, ignored);
  socket.close(ignored);
  read_timer.cancel();
  write_timer.cancel();
}

// ---- Connection ----

Connection::Connection(std::shared_ptr<Impl> impl) : impl_(std::move(impl)) {}
Connection::~Connection() = default;

asio::awaitable<NetResult<std::string_view>> Connection::read_line(std::size_t max_bytes,
                                                                   ReadOptions options) {
  Impl& d = *impl_;
  if (auto ok = d.check_readable(options); !ok) {
    co_return fail(ok.error());
  }
  max_bytes = std::min(max_bytes, d.options.max_buffer_bytes - 2);
  // The rest of a line that was too long.
  while (d.skip_line) {
    const char* start = d.buf.data() + d.begin;
    const void* lf = std::memchr(start, '\n', d.end - d.begin);
    if (lf != nullptr) {
      d.begin += static_cast<const char*>(lf) - start + 1;
      d.skip_line = false;
      break;
    }
    d.begin = d.end = 0;
    if (auto ok = co_await d.fill(1, options); !ok) {
      co_return fail(ok.error());
    }
  }
  std::size_t scanned = 0;
  for (;;) {
    const char* start = d.buf.data() + d.begin;
    std::size_t avail = d.end - d.begin;
    const void* lf =
        scanned < avail ? std::memchr(start + scanned, '\n', avail - scanned) : nullptr;
    if (lf != nullptr) {
      std::size_t length = static_cast<const char*>(lf) - start;
      std::size_t content = length;
      if (content > 0 && start[content - 1] == '\r') {
        --content;
      }
      d.begin += length + 1;
      if (content > max_bytes) {
        co_return fail(NetError::kTooLong);
      }
      co_return std::string_view(start, content);
    }
    scanned = avail;
    // More than max_bytes before the line end, even if the next byte is LF.
    if (avail > max_bytes + 1 || (avail == max_bytes + 1 && start[avail - 1] != '\r')) {
      d.begin = d.end = 0;
      d.skip_line = true;
      co_return fail(NetError::kTooLong);
    }
    if (auto ok = co_await d.fill(avail + 1, options); !ok) {
      co_return fail(ok.error());
    }
  }
}

asio::awaitable<NetResult<std::string_view>> Connection::read_exact(std::size_t n,
                                                                    ReadOptions options) {
  Impl& d = *impl_;
  if (auto ok = d.check_readable(options); !ok) {
    co_return fail(ok.error());
  }
  if (n > d.options.max_buffer_bytes) {
    co_return fail(NetError::kTooLong);
  }
  while (d.end - d.begin < n) {
    if (auto ok = co_await d.fill(n, options); !ok) {
      co_return fail(ok.error());
    }
  }
  co_return d.take(n);
}

asio::awaitable<NetResult<std::string_view>> Connection::read_some(std::size_t max_bytes,
                                                                   ReadOptions options) {
  Impl& d = *impl_;
  if (auto ok = d.check_readable(options); !ok) {
    co_return fail(ok.error());
  }
  if (max_bytes == 0) {
    co_return std::string_view();
  }
  if (d.end == d.begin) {
    if (auto ok = co_await d.fill(1, options); !ok) {
      co_return fail(ok.error());
    }
  }
  co_return d.take(std::min(max_bytes, d.end - d.begin));
}

asio::awaitable<NetResult<std::size_t>> Connection::read_into(std::span<char> out,
                                                              ReadOptions options) {
  Impl& d = *impl_;
  if (auto ok = d.check_readable(options); !ok) {
    co_return fail(ok.error());
  }
  if (out.empty()) {
    co_return 0;
  }
  if (d.end > d.begin) {
    std::size_t n = std::min(out.size(), d.end - d.begin);
    std::memcpy(out.data(), d.buf.data() + d.begin, n);
    d.begin += n;
    co_return n;
  }
  co_return co_await d.socket_read(out, options);
}

std::size_t Connection::buffered() const { return impl_->end - impl_->begin; }

asio::awaitable<NetResult<void>> Connection::write(std::string_view bytes) {
  while (!bytes.empty()) {
    std::string_view piece = bytes.substr(0, impl_->options.write_piece_bytes);
    if (auto ok = co_await impl_->write_piece(piece); !ok) {
      co_return ok;
    }
    bytes.remove_prefix(piece.size());
  }
  if (!impl_->open) {
    co_return fail(NetError::kClosed);
  }
  co_return NetResult<void>{};
}

asio::awaitable<NetResult<void>> Connection::start_tls() {
  Impl& d = *impl_;
  if (!d.open) {
    co_return fail(NetError::kClosed);
  }
  if (d.tls || !d.tls_context) {
    co_return fail(NetError::kTls);
  }
  if (d.end > d.begin && base::log_enabled(base::LogLevel::kInfo)) {
    base::log(base::LogLevel::kInfo, "tls.plaintext_discarded",
              {{"conn", d.id}, {"peer", d.peer.address}, {"bytes", d.end - d.begin}});
  }
  d.begin = d.end = 0;
  d.skip_line = false;
  co_return co_await d.handshake();
}

bool Connection::is_tls() const { return impl_->tls != nullptr; }

bool Connection::can_start_tls() const {
  return impl_->open && !impl_->tls && impl_->tls_context != nullptr;
}

asio::awaitable<void> Connection::close() {
  Impl& d = *impl_;
  if (!d.open) {
    co_return;
  }
  if (d.tls && !d.peer_closed && !d.write_timed_out) {
    // Sends close_notify; waits briefly for the peer's.
    d.arm(false, kTlsCloseWait);
    co_await d.tls->async_shutdown(kAwait);
    d.disarm(false);
  }
  d.force_close();
}

bool Connection::is_open() const { return impl_->open; }

bool Connection::stopping() const { return impl_->stopping; }

asio::awaitable<void> Connection::wait_stopping() {
  Impl& d = *impl_;
  if (d.stopping) {
    co_return;
  }
  d.stop_timer.expires_at(asio::steady_timer::time_point::max());
  co_await d.stop_timer.async_wait(kAwait);
}

void Connection::set_read_timeout(std::chrono::milliseconds timeout) {
  impl_->read_timeout = timeout;
}

std::chrono::milliseconds Connection::read_timeout() const { return impl_->read_timeout; }

void Connection::set_write_timeout(std::chrono::milliseconds timeout) {
  impl_->write_timeout = timeout;
}

const PeerAddress& Connection::peer() const { return impl_->peer; }

const std::string& Connection::listener_name() const { return impl_->listener_name; }

std::uint64_t Connection::id() const { return impl_->id; }

const asio::any_io_executor& Connection::executor() const { return impl_->executor; }

}  // namespace peregrine::net
