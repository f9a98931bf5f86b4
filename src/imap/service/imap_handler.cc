#include "imap/service/imap_handler.h"

#include <algorithm>
#include <asio/experimental/awaitable_operators.hpp>
#include <memory>
#include <span>
#include <utility>
#include <variant>

#include "net/notifier.h"
#include "service/session_driver.h"

namespace peregrine::imap {
namespace {

// Read sizes: small while waiting for a command (most are short, and idle
// connections should stay small), larger inside a command (literals).
constexpr size_t kCommandReadBytes = 4096;
constexpr size_t kLiteralReadBytes = 64 * 1024;

service::Protocol imap_protocol() {
  return service::Protocol{.name = "imap",
                           .shutdown_line = "* BYE Server shutting down\r\n",
                           .timeout_line = "* BYE Autologout; idle for too long\r\n",
                           .too_many_line = "* BYE Too many connections from your address\r\n",
                           .tls_failed_event = "imap.starttls_failed"};
}

// One connection's session and everything that drives it. Lives in the
// serve() coroutine's frame, on the connection's worker thread.
class ImapDriver final : public service::SessionDriver {
 public:
  ImapDriver(net::Connection& conn, ServerContext& server, net::StoragePool& pool,
             const service::Protocol& protocol, const ImapHandlerOptions& options)
      : SessionDriver(conn, pool, protocol,
                      {.before_login = options.autologout_unauthenticated,
                       .after_login = options.autologout}),
        options_(options),
        session_(std::make_unique<Session>(server, service::connection_info(conn))),
        reader_(std::make_unique<CommandReader>(options.reader)),
        notifier_(conn.executor()) {}

 private:
  // Greeting to end of connection.
  asio::awaitable<void> run() override {
    if (!co_await write(session_->greeting())) {
      co_return;
    }
    session_->set_wake([handle = notifier_.handle()] { handle.notify(); });
    for (;;) {
      if (!co_await process_input()) {
        co_return;
      }
      bool go;
      if (session_->input_mode() == InputMode::kIdle) {
        if (!idling_) {
          idling_ = true;
          idle_deadline_ = std::chrono::steady_clock::now() + options_.idle_timeout;
        }
        go = co_await idle_wait();
      } else {
        idling_ = false;
        // Waiting for a new command is a stop point: a stopping server ends
        // the session there.
        const bool between_commands = reader_->buffered() == 0;
        go = co_await read_into(*reader_, between_commands ? kCommandReadBytes : kLiteralReadBytes,
                                true);
      }
      if (!go) {
        co_return;
      }
    }
  }

  UserContext* user() const override { return session_->user(); }
  bool logged_in() const override { return session_->user() != nullptr; }
  Reply resume() override { return session_->resume(); }
  void tls_started() override { session_->on_tls_started(); }
  // Leaves the mailbox and lets go of the user's context, on its strand.
  void end_session() override {
    session_->close();
    session_.reset();
  }
  // Anything the client sent after STARTTLS came in plaintext: drop it
  // (start_tls() dropped the connection's buffer, this is ours).
  void after_handshake() override { reader_ = std::make_unique<CommandReader>(options_.reader); }

  // Hands every event the reader can frame to the session; false when the
  // connection is to end.
  asio::awaitable<bool> process_input() {
    for (;;) {
      ReaderEvent event = reader_->next();
      if (event.kind == ReaderEvent::Kind::kNeedMore) {
        co_return true;
      }
      Reply reply = co_await call([&] { return session_->on_input(event); });
      if (!co_await deliver(std::move(reply))) {
        co_return false;
      }
      // Stopping: the command that was running is done; pipelined ones
      // after it are not started.
      if (event.kind == ReaderEvent::Kind::kCommand && conn().stopping()) {
        co_await goodbye(net::NetError::kShutdown);
        co_return false;
      }
    }
  }

  // IDLE: waits for the client's DONE, a change to report, or the next
  // periodic check, whichever comes first.
  asio::awaitable<bool> idle_wait() {
    using namespace asio::experimental::awaitable_operators;
    const auto now = std::chrono::steady_clock::now();
    if (now >= idle_deadline_) {
      co_await goodbye(net::NetError::kTimeout);
      co_return false;
    }
    const auto wait_for = std::min<std::chrono::milliseconds>(
        options_.idle_check_interval,
        std::chrono::ceil<std::chrono::milliseconds>(idle_deadline_ - now));
    const bool between_commands = reader_->buffered() == 0;
    std::span<char> space = reader_->prepare(kCommandReadBytes);
    auto first =
        co_await (conn().read_into(space, net::ReadOptions{.timeout = std::chrono::milliseconds(0),
                                                           .stop_point = between_commands}) ||
                  notifier_.wait(wait_for));
    if (first.index() == 0) {
      const auto& got = std::get<0>(first);
      reader_->commit(got ? *got : 0);
      if (!got) {
        co_await goodbye(got.error());
        co_return false;
      }
      co_return true;
    }
    reader_->commit(0);
    const bool notified = std::get<1>(first);
    Reply reply =
        co_await call([&] { return notified ? session_->poll_updates() : session_->idle_check(); });
    co_return co_await deliver(std::move(reply));
  }

  const ImapHandlerOptions& options_;
  std::unique_ptr<Session> session_;
  std::unique_ptr<CommandReader> reader_;
  net::Notifier notifier_;
  bool idling_ = false;
  std::chrono::steady_clock::time_point idle_deadline_;
};

}  // namespace

ImapHandlerOptions imap_handler_options(const config::Settings& settings) {
  const config::LimitSettings& limits = settings.limits;
  ImapHandlerOptions options;
  options.reader.max_line_bytes = limits.max_line_bytes;
  options.reader.max_literal_bytes = limits.max_literal_bytes;
  options.autologout = limits.autologout;
  options.autologout_unauthenticated = limits.autologout_unauthenticated;
  options.idle_timeout = limits.idle_timeout;
  return options;
}

ImapHandler::ImapHandler(ServerContext& server, net::StoragePool& pool, ImapHandlerOptions options)
    : ProtocolHandler(imap_protocol()),
      server_(server),
      pool_(pool),
      options_(std::move(options)) {}

asio::awaitable<void> ImapHandler::serve(net::Connection& connection) {
  ImapDriver driver(connection, server_, pool_, protocol(), options_);
  co_await driver.serve();
}

}  // namespace peregrine::imap
