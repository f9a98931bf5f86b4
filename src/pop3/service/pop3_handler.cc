#include "pop3/service/pop3_handler.h"

#include <algorithm>
#include <asio/experimental/as_tuple.hpp>
#include <asio/steady_timer.hpp>
#include <asio/use_awaitable.hpp>
#include <exception>
#include <memory>
#include <string>
#include <utility>

#include "base/log.h"

namespace peregrine::pop3 {
namespace {

constexpr std::string_view kShutdown = "-ERR [SYS/TEMP] Server shutting down\r\n";
constexpr std::string_view kAutologout = "-ERR Autologout; idle for too long\r\n";
constexpr std::string_view kTooMany = "-ERR [SYS/TEMP] Too many connections from your address\r\n";

// One connection's session and what drives it. Lives in the serve()
// coroutine's frame, on the connection's worker thread.
class SessionDriver {
 public:
  SessionDriver(net::Connection& conn, ServerContext& server, net::StoragePool& pool,
                const Pop3HandlerOptions& options)
      : conn_(conn),
        pool_(pool),
        options_(options),
        session_(std::make_unique<Session>(server, connection_info(conn))),
        conn_key_("\x01pop3-conn/" + std::to_string(conn.id())) {}

  // Greeting to end of connection. Exceptions escape (finish() still runs).
  asio::awaitable<void> run() {
    conn_.set_read_timeout(options_.autologout_unauthenticated);
    if (!(co_await conn_.write(session_->greeting()))) {
      co_return;
    }
    for (;;) {
      auto line =
          co_await conn_.read_line(options_.max_line_bytes, net::ReadOptions{.stop_point = true});
      Reply reply;
      if (line) {
        reply = co_await call([&] { return session_->on_line(*line); });
      } else if (line.error() == net::NetError::kTooLong) {
        reply = co_await call([&] { return session_->on_line_too_long(); });
      } else {
        if (line.error() == net::NetError::kShutdown) {
          co_await conn_.write(kShutdown);
        } else if (line.error() == net::NetError::kTimeout) {
          co_await conn_.write(kAutologout);
        }
        co_return;
      }
      if (!co_await deliver(std::move(reply))) {
        co_return;
      }
    }
  }

  // Ends the session on its strand (the maildrop lock and the user's
  // context are let go there).
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

  std::string strand_key() const {
    if (session::UserContext* user = session_->user()) {
      return user->user();
    }
    return conn_key_;
  }

  // Runs a session call on its strand; switches to the logged-in read
  // timeout once the session is in the TRANSACTION state.
  template <typename F>
  asio::awaitable<Reply> call(F fn) {
    Reply reply = co_await pool_.run(strand_key(), std::move(fn));
    if (!logged_in_ && session_->state() == State::kTransaction) {
      logged_in_ = true;
      conn_.set_read_timeout(options_.autologout);
    }
    co_return reply;
  }

  // Writes a reply and acts on it, resuming the command until it is done.
  // False when the connection is to end.
  asio::awaitable<bool> deliver(Reply reply) {
    for (;;) {
      if (reply.delay.count() > 0) {
        asio::steady_timer timer(conn_.executor(), reply.delay);
        co_await timer.async_wait(asio::experimental::as_tuple(asio::use_awaitable));
      }
      if (!reply.out.empty() && !(co_await conn_.write(reply.out))) {
        co_return false;
      }
      if (reply.action == Action::kClose) {
        co_return false;
      }
      if (reply.action == Action::kStartTls) {
        auto started = co_await conn_.start_tls();
        if (!started) {
          base::log(base::LogLevel::kInfo, "pop3.stls_failed",
                    {{"id", static_cast<unsigned long long>(conn_.id())},
                     {"error", net::to_string(started.error())}});
          co_return false;
        }
        co_await pool_.run(strand_key(), [this] { session_->on_tls_started(); });
      }
      if (!reply.more) {
        co_return true;
      }
      reply = co_await call([this] { return session_->resume(); });
    }
  }

  net::Connection& conn_;
  net::StoragePool& pool_;
  const Pop3HandlerOptions& options_;
  std::unique_ptr<Session> session_;
  const std::string conn_key_;
  bool logged_in_ = false;
};

}  // namespace

Pop3HandlerOptions pop3_handler_options(const config::Settings& settings) {
  const config::LimitSettings& limits = settings.limits;
  Pop3HandlerOptions options;
  // RFC 1939 §3: the autologout timer is at least 10 minutes.
  options.autologout =
      std::max<std::chrono::milliseconds>(limits.autologout, std::chrono::minutes(10));
  options.autologout_unauthenticated = limits.autologout_unauthenticated;
  return options;
}

Pop3Handler::Pop3Handler(ServerContext& server, net::StoragePool& pool, Pop3HandlerOptions options)
    : server_(server), pool_(pool), options_(std::move(options)) {}

asio::awaitable<void> Pop3Handler::serve(net::Connection& connection) {
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

asio::awaitable<void> Pop3Handler::refuse(net::Connection& connection, net::Refusal) {
  co_await connection.write(kTooMany);
}

}  // namespace peregrine::pop3
