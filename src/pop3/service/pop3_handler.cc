#include "pop3/service/pop3_handler.h"

#include <algorithm>
#include <memory>
#include <utility>

#include "service/session_driver.h"

namespace peregrine::pop3 {
namespace {

service::Protocol pop3_protocol() {
  return service::Protocol{
      .name = "pop3",
      .shutdown_line = "-ERR [SYS/TEMP] Server shutting down\r\n",
      .timeout_line = "-ERR Autologout; idle for too long\r\n",
      .too_many_line = "-ERR [SYS/TEMP] Too many connections from your address\r\n",
      .tls_failed_event = "pop3.stls_failed"};
}

// One connection's session and what drives it. Lives in the serve()
// coroutine's frame, on the connection's worker thread.
class Pop3Driver final : public service::SessionDriver {
 public:
  Pop3Driver(net::Connection& conn, ServerContext& server, net::StoragePool& pool,
             const service::Protocol& protocol, const Pop3HandlerOptions& options)
      : SessionDriver(conn, pool, protocol,
                      {.before_login = options.autologout_unauthenticated,
                       .after_login = options.autologout}),
        options_(options),
        session_(std::make_unique<Session>(server, service::connection_info(conn))) {}

 private:
  // Greeting to end of connection.
  asio::awaitable<void> run() override {
    if (!co_await write(session_->greeting())) {
      co_return;
    }
    for (;;) {
      auto line =
          co_await conn().read_line(options_.max_line_bytes, net::ReadOptions{.stop_point = true});
      Reply reply;
      if (line) {
        if (auto quick = session_->on_line_without_store(*line)) {
          reply = std::move(*quick);
        } else {
          reply = co_await call([&] { return session_->on_line(*line); });
        }
      } else if (line.error() == net::NetError::kTooLong) {
        reply = co_await call([&] { return session_->on_line_too_long(); });
      } else {
        co_await goodbye(line.error());
        co_return;
      }
      if (!co_await deliver(std::move(reply))) {
        co_return;
      }
    }
  }

  session::UserContext* user() const override { return session_->user(); }
  // The longer timeout applies once the session is in the TRANSACTION state.
  bool logged_in() const override { return session_->state() == State::kTransaction; }
  Reply resume() override { return session_->resume(); }
  std::optional<Reply> resume_without_store() override { return session_->resume_without_store(); }
  void written(std::string&& out) override { session_->recycle(std::move(out)); }
  void tls_started() override { session_->on_tls_started(); }
  // The maildrop lock and the user's context are let go on its strand.
  void end_session() override {
    session_->close();
    session_.reset();
  }

  const Pop3HandlerOptions& options_;
  std::unique_ptr<Session> session_;
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
    : ProtocolHandler(pop3_protocol()),
      server_(server),
      pool_(pool),
      options_(std::move(options)) {}

asio::awaitable<void> Pop3Handler::serve(net::Connection& connection) {
  Pop3Driver driver(connection, server_, pool_, protocol(), options_);
  co_await driver.serve();
}

}  // namespace peregrine::pop3
