#include "service/session_driver.h"

#include <asio/experimental/as_tuple.hpp>
#include <asio/steady_timer.hpp>
#include <asio/use_awaitable.hpp>
#include <utility>

#include "base/log.h"
#include "session/user_registry.h"

namespace peregrine::service {

SessionDriver::SessionDriver(net::Connection& conn, net::StoragePool& pool,
                             const Protocol& protocol, SessionTimeouts timeouts)
    : ConnectionDriver(conn, pool, protocol, timeouts.before_login), timeouts_(timeouts) {}

std::string SessionDriver::strand_key() const {
  if (const session::UserContext* context = user()) {
    return context->user();
  }
  return connection_key();
}

asio::awaitable<bool> SessionDriver::deliver(session::Reply reply) {
  for (;;) {
    if (reply.delay.count() > 0) {
      asio::steady_timer timer(conn().executor(), reply.delay);
      co_await timer.async_wait(asio::experimental::as_tuple(asio::use_awaitable));
    }
    if (!reply.out.empty() && !co_await write(reply.out)) {
      co_return false;
    }
    if (reply.action == session::Action::kClose) {
      co_return false;
    }
    if (reply.action == session::Action::kStartTls) {
      auto started = co_await conn().start_tls();
      if (!started) {
        base::log(base::LogLevel::kInfo, protocol().tls_failed_event,
                  {{"id", static_cast<unsigned long long>(conn().id())},
                   {"error", net::to_string(started.error())}});
        co_return false;
      }
      after_handshake();
      co_await pool().run(strand_key(), [this] { tls_started(); });
    }
    const bool more = reply.more;
    written(std::move(reply.out));
    if (!more) {
      co_return true;
    }
    if (auto quick = resume_without_store()) {
      reply = std::move(*quick);
    } else {
      reply = co_await call([this] { return resume(); });
    }
  }
}

asio::awaitable<void> SessionDriver::finish() {
  co_await pool().run(strand_key(), [this] { end_session(); });
}

}  // namespace peregrine::service
