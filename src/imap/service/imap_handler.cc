#include "imap/service/imap_handler.h"

#include <any>
#include <asio/experimental/as_tuple.hpp>
#include <asio/experimental/awaitable_operators.hpp>
#include <asio/steady_timer.hpp>
#include <asio/use_awaitable.hpp>
#include <exception>
#include <memory>
#include <string>
#include <type_traits>
#include <utility>
#include <variant>

#include "base/log.h"
#include "net/notifier.h"

namespace peregrine::imap {
namespace {

constexpr std::string_view kByeShutdown = "* BYE Server shutting down\r\n";
constexpr std::string_view kByeAutologout = "* BYE Autologout; idle for too long\r\n";
constexpr std::string_view kByeTooMany = "* BYE Too many connections from your address\r\n";
// Read sizes: small while waiting for a command (most are short, and idle
// connections should stay small), larger inside a command (literals).
constexpr size_t kCommandReadBytes = 4096;
constexpr size_t kLiteralReadBytes = 64 * 1024;

enum class Step { kGo, kEnd };

// One connection's session and everything that drives it. Lives in the
// serve() coroutine's frame, on the connection's worker thread.
class SessionDriver {
 public:
  SessionDriver(net::Connection& conn, ServerContext& server, net::StoragePool& pool,
                const ImapHandlerOptions& options)
      : conn_(conn),
        pool_(pool),
        options_(options),
        session_(std::make_unique<Session>(server, connection_info(conn))),
        reader_(std::make_unique<CommandReader>(options.reader)),
        notifier_(conn.executor()),
        conn_key_("\x01imap-conn/" + std::to_string(conn.id())) {}

  // Greeting to end of connection. Exceptions escape (finish() still runs).
  asio::awaitable<void> run() {
    conn_.set_read_timeout(options_.autologout_unauthenticated);
    if (!co_await write(session_->greeting())) {
      co_return;
    }
    session_->set_wake([handle = notifier_.handle()] { handle.notify(); });
    for (;;) {
      if (co_await process_input() == Step::kEnd) {
        co_return;
      }
      Step step;
      if (session_->input_mode() == InputMode::kIdle) {
        if (!idling_) {
          idling_ = true;
          idle_deadline_ = std::chrono::steady_clock::now() + options_.idle_timeout;
        }
        step = co_await idle_wait();
      } else {
        idling_ = false;
        step = co_await read_more();
      }
      if (step == Step::kEnd) {
        co_return;
      }
    }
  }

  // Closes the session on its strand (leaving the mailbox, letting go of
  // the user's context there).
  asio::awaitable<void> finish() {
    co_await pool_.run(strand_key(), [this] {
      session_->close();
      session_.reset();
    });
  }

 private:
  static ConnectionInfo connection_info(const net::Connection& conn) {
    return ConnectionInfo{.tls = conn.is_tls(),
                          .tls_available = conn.can_start_tls(),
                          .loopback = conn.peer().loopback,
                          .peer = conn.peer().address};
  }

  // The strand the session's calls run on: the user's once logged in.
  std::string strand_key() const {
    if (UserContext* user = session_->user()) {
      if (const auto* key = std::any_cast<std::string>(&user->runtime())) {
        return *key;
      }
    }
    return conn_key_;
  }

  // Runs a session call on its strand; switches to the logged-in read
  // timeout when the call logged the user in.
  template <typename F>
  asio::awaitable<Reply> call(F fn) {
    Reply reply = co_await pool_.run(strand_key(), std::move(fn));
    if (!logged_in_ && session_->user() != nullptr) {
      logged_in_ = true;
      conn_.set_read_timeout(options_.autologout);
    }
    co_return reply;
  }

  asio::awaitable<bool> write(std::string_view bytes) {
    auto written = co_await conn_.write(bytes);
    co_return written.has_value();
  }

  // Hands every event the reader can frame to the session.
  asio::awaitable<Step> process_input() {
    for (;;) {
      ReaderEvent event = reader_->next();
      if (event.kind == ReaderEvent::Kind::kNeedMore) {
        co_return Step::kGo;
      }
      Reply reply = co_await call([&] { return session_->on_input(event); });
      if (co_await deliver(std::move(reply)) == Step::kEnd) {
        co_return Step::kEnd;
      }
      // Stopping: the command that was running is done; pipelined ones
      // after it are not started.
      if (event.kind == ReaderEvent::Kind::kCommand && conn_.stopping()) {
        co_await write(kByeShutdown);
        co_return Step::kEnd;
      }
    }
  }

  // Writes a reply and acts on it, resuming the command until it is done.
  asio::awaitable<Step> deliver(Reply reply) {
    for (;;) {
      if (reply.delay.count() > 0) {
        asio::steady_timer timer(conn_.executor(), reply.delay);
        co_await timer.async_wait(asio::experimental::as_tuple(asio::use_awaitable));
      }
      if (!reply.out.empty() && !co_await write(reply.out)) {
        co_return Step::kEnd;
      }
      if (reply.action == SessionAction::kClose) {
        co_return Step::kEnd;
      }
      if (reply.action == SessionAction::kStartTls) {
        auto started = co_await conn_.start_tls();
        if (!started) {
          base::log(base::LogLevel::kInfo, "imap.starttls_failed",
                    {{"id", static_cast<unsigned long long>(conn_.id())},
                     {"error", net::to_string(started.error())}});
          co_return Step::kEnd;
        }
        // Anything the client sent after STARTTLS came in plaintext: drop it
        // (start_tls() dropped the connection's buffer, this is ours).
        reader_ = std::make_unique<CommandReader>(options_.reader);
        co_await pool_.run(strand_key(), [this] { session_->on_tls_started(); });
      }
      if (!reply.more) {
        co_return Step::kGo;
      }
      reply = co_await call([this] { return session_->resume(); });
    }
  }

  // Reads more input into the reader. Waiting for a new command is a stop
  // point: a stopping server ends the session there.
  asio::awaitable<Step> read_more() {
    const bool between_commands = reader_->buffered() == 0;
    std::span<char> space =
        reader_->prepare(between_commands ? kCommandReadBytes : kLiteralReadBytes);
    auto got = co_await conn_.read_into(space, net::ReadOptions{.stop_point = between_commands});
    reader_->commit(got ? *got : 0);
    if (!got) {
      co_return co_await on_read_error(got.error());
    }
    co_return Step::kGo;
  }

  // IDLE: waits for the client's DONE, a change to report, or the next
  // periodic check, whichever comes first.
  asio::awaitable<Step> idle_wait() {
    using namespace asio::experimental::awaitable_operators;
    const auto now = std::chrono::steady_clock::now();
    if (now >= idle_deadline_) {
      co_await write(kByeAutologout);
      co_return Step::kEnd;
    }
    const auto wait_for = std::min<std::chrono::milliseconds>(
        options_.idle_check_interval,
        std::chrono::ceil<std::chrono::milliseconds>(idle_deadline_ - now));
    const bool between_commands = reader_->buffered() == 0;
    std::span<char> space = reader_->prepare(kCommandReadBytes);
    auto first =
        co_await (conn_.read_into(space, net::ReadOptions{.timeout = std::chrono::milliseconds(0),
                                                          .stop_point = between_commands}) ||
                  notifier_.wait(wait_for));
    if (first.index() == 0) {
      const auto& got = std::get<0>(first);
      reader_->commit(got ? *got : 0);
      if (!got) {
        co_return co_await on_read_error(got.error());
      }
      co_return Step::kGo;
    }
    reader_->commit(0);
    const bool notified = std::get<1>(first);
    Reply reply =
        co_await call([&] { return notified ? session_->poll_updates() : session_->idle_check(); });
    co_return co_await deliver(std::move(reply));
  }

  asio::awaitable<Step> on_read_error(net::NetError error) {
    switch (error) {
      case net::NetError::kShutdown:
        co_await write(kByeShutdown);
        break;
      case net::NetError::kTimeout:
        co_await write(kByeAutologout);
        break;
      default:
        break;
    }
    co_return Step::kEnd;
  }

  net::Connection& conn_;
  net::StoragePool& pool_;
  const ImapHandlerOptions& options_;
  std::unique_ptr<Session> session_;
  std::unique_ptr<CommandReader> reader_;
  net::Notifier notifier_;
  const std::string conn_key_;
  bool logged_in_ = false;
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

UserRegistry::Options imap_registry_options() {
  return UserRegistry::Options{
      .make_runtime = [](std::string_view user) { return std::any(std::string(user)); }};
}

ImapHandler::ImapHandler(ServerContext& server, net::StoragePool& pool, ImapHandlerOptions options)
    : server_(server), pool_(pool), options_(std::move(options)) {}

asio::awaitable<void> ImapHandler::serve(net::Connection& connection) {
  SessionDriver driver(connection, server_, pool_, options_);
  std::exception_ptr error;
  try {
    co_await driver.run();
  } catch (...) {
    error = std::current_exception();
  }
  co_await driver.finish();
  if (error) {
    std::rethrow_exception(error);  // the runtime logs it
  }
}

asio::awaitable<void> ImapHandler::refuse(net::Connection& connection, net::Refusal) {
  co_await connection.write(kByeTooMany);
}

}  // namespace peregrine::imap
