#include "net/runtime.h"

#include <unistd.h>

#include <asio/co_spawn.hpp>
#include <asio/detached.hpp>
#include <asio/executor_work_guard.hpp>
#include <asio/experimental/as_tuple.hpp>
#include <asio/io_context.hpp>
#include <asio/ip/tcp.hpp>
#include <asio/ip/v6_only.hpp>
#include <asio/local/stream_protocol.hpp>
#include <asio/post.hpp>
#include <asio/signal_set.hpp>
#include <asio/steady_timer.hpp>
#include <asio/use_awaitable.hpp>
#include <atomic>
#include <csignal>
#include <filesystem>
#include <list>
#include <optional>
#include <thread>
#include <unordered_set>
#include <vector>

#include "base/log.h"
#include "net/connection_impl.h"
#include "net/ip_limiter.h"

namespace peregrine::net {
namespace {

using base::LogLevel;
using Guard = asio::executor_work_guard<asio::io_context::executor_type>;

constexpr auto kAwait = asio::experimental::as_tuple(asio::use_awaitable);
// After the grace period, forced closes get this long before the loops stop.
constexpr std::chrono::milliseconds kForceWait{2000};
// Accepting pauses this long when the process is out of descriptors or memory.
constexpr std::chrono::milliseconds kAcceptBackoff{100};

PeerAddress to_peer(const asio::ip::tcp::endpoint& endpoint) {
  asio::ip::address address = endpoint.address();
  if (address.is_v6() && address.to_v6().is_v4_mapped()) {
    address = asio::ip::make_address_v4(asio::ip::v4_mapped, address.to_v6());
  }
  return PeerAddress{address.to_string(), endpoint.port(), address.is_loopback()};
}

bool out_of_resources(const asio::error_code& ec) {
  return ec == asio::error::no_descriptors || ec == asio::error::no_buffer_space ||
         ec == asio::error::no_memory || ec == std::errc::too_many_files_open_in_system;
}

void run_loop(asio::io_context& ioc, const char* name) {
  for (;;) {
    try {
      ioc.run();
      return;
    } catch (const std::exception& e) {
      base::log(LogLevel::kError, "loop.exception", {{"loop", name}, {"what", e.what()}});
    }
  }
}

}  // namespace

asio::awaitable<void> Handler::refuse(Connection&, Refusal) { co_return; }

RuntimeOptions runtime_options(const config::Settings& settings) {
  RuntimeOptions options;
  options.workers = std::max(1u, settings.server.workers);
  options.max_connections_per_ip = settings.limits.max_connections_per_ip;
  options.connection.max_buffer_bytes =
      std::max<std::size_t>(4096, static_cast<std::size_t>(settings.limits.max_line_bytes) + 2);
  options.connection.read_timeout = settings.limits.autologout_unauthenticated;
  return options;
}

struct Worker {
  asio::io_context ioc{1};
  std::optional<Guard> guard{ioc.get_executor()};
  std::thread thread;
  // The connections living here; touched on this worker's thread only.
  std::unordered_set<Connection::Impl*> live;
};

struct Listener {
  ListenerOptions options;
  std::vector<asio::ip::tcp::acceptor> acceptors;
  std::optional<asio::local::stream_protocol::acceptor> unix_acceptor;
};

struct Runtime::Impl {
  explicit Impl(RuntimeOptions opts)
      : options(std::move(opts)), limiter(options.max_connections_per_ip) {
    options.workers = std::max(1u, options.workers);
    for (unsigned i = 0; i < options.workers; ++i) {
      workers.push_back(std::make_unique<Worker>());
    }
  }

  base::Result<std::uint16_t> listen(const ListenerOptions& listener);
  base::Result<std::uint16_t> listen_unix(const ListenerOptions& listener);
  // Accepts on a TCP or unix-socket acceptor until it closes.
  template <typename Acceptor>
  asio::awaitable<void> accept_loop(Acceptor& acceptor, Listener& listener);
  void admit(Worker& worker, asio::ip::tcp::socket socket, Listener& listener);
  void admit(Worker& worker, asio::local::stream_protocol::socket local, Listener& listener);
  void spawn(Worker& worker, asio::ip::tcp::socket socket, Listener& listener, PeerAddress peer,
             bool admitted);
  asio::awaitable<void> serve(Worker& worker, asio::ip::tcp::socket socket, Listener& listener,
                              PeerAddress peer, bool admitted, std::uint64_t id);
  void connection_ended();
  // Control thread only:
  void begin_stop();
  void force_close();
  void finish(bool hard);
  void wait_signal();

  RuntimeOptions options;
  IpLimiter limiter;
  std::shared_ptr<TlsContext> tls;

  asio::io_context control{1};
  std::optional<Guard> control_guard{control.get_executor()};
  std::thread control_thread;
  std::vector<std::unique_ptr<Worker>> workers;
  std::list<Listener> listeners;  // stable addresses for the accept loops

  std::atomic<std::size_t> live{0};
  std::atomic<std::uint64_t> next_id{1};
  std::atomic<bool> stopping{false};
  bool started = false;  // owner thread
  bool joined = false;   // owner thread

  // Control thread only:
  std::size_t next_worker = 0;
  bool stop_begun = false;
  bool finished = false;
  asio::steady_timer stop_timer{control};
  std::optional<asio::signal_set> signals;
};

// A unix-domain socket at opts.unix_path, mode 0666 (who may connect is
// decided by the directory's permissions). A file left there by an earlier
// run is replaced if it is a socket; anything else there is an error.
base::Result<std::uint16_t> Runtime::Impl::listen_unix(const ListenerOptions& opts) {
  const std::string where = opts.name + " unix:" + opts.unix_path.string();
  if (opts.implicit_tls) {
    return base::fail(base::MailError::kBadInput, where + ": no implicit TLS on a unix socket");
  }
  if (!opts.handler) {
    return base::fail(base::MailError::kInternal, where + ": no handler");
  }
  std::error_code fs_ec;
  if (std::filesystem::is_socket(std::filesystem::symlink_status(opts.unix_path, fs_ec))) {
    std::filesystem::remove(opts.unix_path, fs_ec);
  }
  asio::error_code ec;
  asio::local::stream_protocol::acceptor acceptor(control);
  asio::local::stream_protocol::endpoint endpoint(opts.unix_path.string());
  acceptor.open(endpoint.protocol(), ec);
  if (!ec) {
    acceptor.bind(endpoint, ec);
  }
  if (!ec) {
    std::filesystem::permissions(opts.unix_path, std::filesystem::perms(0666), fs_ec);
    acceptor.listen(asio::socket_base::max_listen_connections, ec);
  }
  if (ec) {
    return base::fail(base::MailError::kTemporary, where + ": cannot listen: " + ec.message());
  }
  base::log(LogLevel::kInfo, "listen",
            {{"listener", opts.name}, {"unix", opts.unix_path.string()}});
  Listener listener{opts, {}, std::move(acceptor)};
  listeners.push_back(std::move(listener));
  return 0;
}

base::Result<std::uint16_t> Runtime::Impl::listen(const ListenerOptions& opts) {
  if (!opts.unix_path.empty()) {
    return listen_unix(opts);
  }
  const std::string where = opts.name + " " + opts.endpoint.to_string();
  if (opts.implicit_tls && !tls) {
    return base::fail(base::MailError::kBadInput,
                      where + ": implicit TLS needs [tls] cert and key");
  }
  if (!opts.handler) {
    return base::fail(base::MailError::kInternal, where + ": no handler");
  }
  std::vector<asio::ip::address> addresses;
  asio::error_code ec;
  if (opts.endpoint.kind == config::Endpoint::Kind::kName) {
    asio::ip::tcp::resolver resolver(control);
    auto results = resolver.resolve(opts.endpoint.host, "", asio::ip::resolver_base::passive, ec);
    if (ec) {
      return base::fail(base::MailError::kBadInput, where + ": cannot resolve: " + ec.message());
    }
    for (const auto& entry : results) {
      asio::ip::address address = entry.endpoint().address();
      if (std::find(addresses.begin(), addresses.end(), address) == addresses.end()) {
        addresses.push_back(address);
      }
    }
  } else {
    addresses.push_back(asio::ip::make_address(opts.endpoint.host, ec));
    if (ec) {
      return base::fail(base::MailError::kBadInput, where + ": bad address: " + ec.message());
    }
  }

  Listener listener{opts, {}, std::nullopt};
  std::uint16_t port = opts.endpoint.port;
  for (const asio::ip::address& address : addresses) {
    asio::ip::tcp::endpoint endpoint(address, port);
    asio::ip::tcp::acceptor acceptor(control);
    acceptor.open(endpoint.protocol(), ec);
    if (!ec) {
      acceptor.set_option(asio::socket_base::reuse_address(true), ec);
    }
    if (!ec && address.is_v6()) {
      acceptor.set_option(asio::ip::v6_only(true), ec);
    }
    if (!ec) {
      acceptor.bind(endpoint, ec);
    }
    if (!ec) {
      acceptor.listen(asio::socket_base::max_listen_connections, ec);
    }
    if (!ec) {
      port = acceptor.local_endpoint(ec).port();
    }
    if (ec) {
      return base::fail(base::MailError::kTemporary,
                        where + ": cannot listen on " + address.to_string() + ": " + ec.message());
    }
    listener.acceptors.push_back(std::move(acceptor));
  }
  config::Endpoint bound = opts.endpoint;
  bound.port = port;
  base::log(LogLevel::kInfo, "listen",
            {{"listener", opts.name}, {"endpoint", bound.to_string()}, {"tls", opts.implicit_tls}});
  listeners.push_back(std::move(listener));
  return port;
}

template <typename Acceptor>
asio::awaitable<void> Runtime::Impl::accept_loop(Acceptor& acceptor, Listener& listener) {
  for (;;) {
    Worker& worker = *workers[next_worker++ % workers.size()];
    asio::any_io_executor worker_executor = worker.ioc.get_executor();
    auto [ec, socket] = co_await acceptor.async_accept(worker_executor, kAwait);
    if (stopping.load() || !acceptor.is_open()) {
      co_return;  // a socket accepted just now closes as it goes out of scope
    }
    if (ec) {
      if (ec == asio::error::operation_aborted) {
        co_return;
      }
      base::log(LogLevel::kWarn, "accept.error",
                {{"listener", listener.options.name}, {"error", ec.message()}});
      if (out_of_resources(ec)) {
        asio::steady_timer pause(control, kAcceptBackoff);
        co_await pause.async_wait(kAwait);
      }
      continue;
    }
    admit(worker, std::move(socket), listener);
  }
}

// Connections on a unix socket come from this host: they are served as
// loopback peers named "unix", outside the per-IP limit. The descriptor is
// driven through a tcp::socket, whose reads and writes are plain stream
// socket calls (nothing TCP-specific is set on it), so Connection needs no
// second socket type.
void Runtime::Impl::admit(Worker& worker, asio::local::stream_protocol::socket local,
                          Listener& listener) {
  asio::error_code ec;
  const int fd = local.release(ec);
  if (ec) {
    return;
  }
  asio::ip::tcp::socket socket(worker.ioc);
  socket.assign(asio::ip::tcp::v6(), fd, ec);
  if (ec) {
    ::close(fd);
    return;
  }
  spawn(worker, std::move(socket), listener, PeerAddress{"unix", 0, true}, true);
}

void Runtime::Impl::admit(Worker& worker, asio::ip::tcp::socket socket, Listener& listener) {
  asio::error_code ec;
  asio::ip::tcp::endpoint remote = socket.remote_endpoint(ec);
  if (ec) {
    return;  // gone already
  }
  socket.set_option(asio::ip::tcp::no_delay(true), ec);
  PeerAddress peer = to_peer(remote);
  bool admitted = limiter.acquire(peer.address);
  spawn(worker, std::move(socket), listener, std::move(peer), admitted);
}

void Runtime::Impl::spawn(Worker& worker, asio::ip::tcp::socket socket, Listener& listener,
                          PeerAddress peer, bool admitted) {
  live.fetch_add(1);
  std::uint64_t id = next_id.fetch_add(1);
  asio::co_spawn(worker.ioc,
                 serve(worker, std::move(socket), listener, std::move(peer), admitted, id),
                 asio::detached);
}

asio::awaitable<void> Runtime::Impl::serve(Worker& worker, asio::ip::tcp::socket socket,
                                           Listener& listener, PeerAddress peer, bool admitted,
                                           std::uint64_t id) {
  ConnectionOptions conn_options = options.connection;
  if (!admitted) {
    conn_options.read_timeout = options.refuse_timeout;
    conn_options.handshake_timeout =
        std::min(conn_options.handshake_timeout, options.refuse_timeout);
  }
  auto impl = std::make_shared<Connection::Impl>(std::move(socket), conn_options, tls, peer,
                                                 listener.options.name, id);
  Connection connection(impl);
  worker.live.insert(impl.get());
  if (stopping.load()) {
    impl->request_stop();
  }
  if (base::log_enabled(LogLevel::kDebug)) {
    base::log(LogLevel::kDebug, "conn.open",
              {{"conn", id},
               {"listener", listener.options.name},
               {"peer", peer.address},
               {"port", static_cast<unsigned>(peer.port)}});
  }
  try {
    bool ready = true;
    if (listener.options.implicit_tls) {
      ready = (co_await impl->handshake()).has_value();
    }
    if (ready && admitted) {
      co_await listener.options.handler->serve(connection);
    } else if (ready) {
      base::log(LogLevel::kInfo, "conn.refused",
                {{"conn", id},
                 {"listener", listener.options.name},
                 {"peer", peer.address},
                 {"reason", "per-ip-limit"}});
      co_await listener.options.handler->refuse(connection, Refusal::kPerIpLimit);
    }
  } catch (const std::exception& e) {
    base::log(LogLevel::kError, "conn.handler_exception",
              {{"conn", id}, {"listener", listener.options.name}, {"what", e.what()}});
  }
  try {
    co_await connection.close();
  } catch (const std::exception&) {
    impl->force_close();
  }
  worker.live.erase(impl.get());
  if (admitted && !listener.unix_acceptor) {
    limiter.release(peer.address);
  }
  if (base::log_enabled(LogLevel::kDebug)) {
    base::log(LogLevel::kDebug, "conn.close", {{"conn", id}, {"peer", peer.address}});
  }
  connection_ended();
}

void Runtime::Impl::connection_ended() {
  if (live.fetch_sub(1) == 1 && stopping.load()) {
    asio::post(control, [this] {
      if (stop_begun && live.load() == 0) {
        finish(false);
      }
    });
  }
}

void Runtime::Impl::begin_stop() {
  if (stop_begun) {
    return;
  }
  stop_begun = true;
  base::log(LogLevel::kInfo, "server.stopping", {{"connections", live.load()}});
  asio::error_code ignored;
  for (Listener& listener : listeners) {
    for (auto& acceptor : listener.acceptors) {
      acceptor.close(ignored);
    }
    if (listener.unix_acceptor) {
      listener.unix_acceptor->close(ignored);
    }
  }
  for (auto& worker : workers) {
    asio::post(worker->ioc, [w = worker.get()] {
      for (Connection::Impl* connection : w->live) {
        connection->request_stop();
      }
    });
  }
  if (live.load() == 0) {
    finish(false);
    return;
  }
  stop_timer.expires_after(options.shutdown_grace);
  stop_timer.async_wait([this](const asio::error_code& ec) {
    if (!ec) {
      force_close();
    }
  });
}

void Runtime::Impl::force_close() {
  if (finished) {
    return;
  }
  base::log(LogLevel::kWarn, "server.force_close", {{"connections", live.load()}});
  for (auto& worker : workers) {
    asio::post(worker->ioc, [w = worker.get()] {
      for (Connection::Impl* connection : w->live) {
        connection->force_close();
      }
    });
  }
  stop_timer.expires_after(kForceWait);
  stop_timer.async_wait([this](const asio::error_code& ec) {
    if (!ec) {
      finish(true);
    }
  });
}

void Runtime::Impl::finish(bool hard) {
  if (finished) {
    return;
  }
  finished = true;
  stop_timer.cancel();
  if (signals) {
    asio::error_code ignored;
    signals->cancel(ignored);
  }
  for (auto& worker : workers) {
    worker->guard.reset();
    if (hard) {
      worker->ioc.stop();  // what is still pending is destroyed with the loop
    }
  }
  control_guard.reset();
  base::log(LogLevel::kInfo, "server.stopped", {{"connections", live.load()}, {"forced", hard}});
}

void Runtime::Impl::wait_signal() {
  signals->async_wait([this](const asio::error_code& ec, int signal) {
    if (ec) {
      return;
    }
    base::log(LogLevel::kInfo, "signal", {{"signal", signal == SIGTERM ? "SIGTERM" : "SIGINT"}});
    if (!stopping.exchange(true)) {
      begin_stop();
    } else if (stop_begun) {
      force_close();  // a second signal: do not wait for the grace period
    }
    if (!finished) {
      wait_signal();
    }
  });
}

Runtime::Runtime(RuntimeOptions options) : impl_(std::make_unique<Impl>(std::move(options))) {}

Runtime::~Runtime() {
  stop();
  wait();
}

void Runtime::set_tls(std::shared_ptr<TlsContext> tls) { impl_->tls = std::move(tls); }

base::Result<std::uint16_t> Runtime::listen(const ListenerOptions& listener) {
  return impl_->listen(listener);
}

void Runtime::start() {
  Impl& d = *impl_;
  if (d.started) {
    return;
  }
  d.started = true;
  for (Listener& listener : d.listeners) {
    for (auto& acceptor : listener.acceptors) {
      asio::co_spawn(d.control, d.accept_loop(acceptor, listener), asio::detached);
    }
    if (listener.unix_acceptor) {
      asio::co_spawn(d.control, d.accept_loop(*listener.unix_acceptor, listener), asio::detached);
    }
  }
  for (std::size_t i = 0; i < d.workers.size(); ++i) {
    Worker* worker = d.workers[i].get();
    worker->thread = std::thread([worker] { run_loop(worker->ioc, "worker"); });
  }
  d.control_thread = std::thread([&d] { run_loop(d.control, "control"); });
  base::log(LogLevel::kInfo, "server.started",
            {{"workers", d.workers.size()}, {"listeners", d.listeners.size()}});
}

void Runtime::stop() {
  Impl& d = *impl_;
  if (d.stopping.exchange(true)) {
    return;
  }
  asio::post(d.control, [&d] { d.begin_stop(); });
}

void Runtime::stop_on_signals() {
  Impl& d = *impl_;
  d.signals.emplace(d.control, SIGINT, SIGTERM);
  d.wait_signal();
}

void Runtime::wait() {
  Impl& d = *impl_;
  if (d.joined) {
    return;
  }
  d.joined = true;
  if (!d.started) {
    // Never started: nothing runs; let the queued stop work run here.
    d.control.poll();
    return;
  }
  if (d.control_thread.joinable()) {
    d.control_thread.join();
  }
  for (auto& worker : d.workers) {
    if (worker->thread.joinable()) {
      worker->thread.join();
    }
  }
}

std::size_t Runtime::connections() const { return impl_->live.load(); }

}  // namespace peregrine::net
