#include "service/connection_driver.h"

#include <exception>
#include <utility>

namespace peregrine::service {

session::ConnectionInfo connection_info(const net::Connection& conn) {
  return session::ConnectionInfo{.tls = conn.is_tls(),
                                 .tls_available = conn.can_start_tls(),
                                 .loopback = conn.peer().loopback,
                                 .peer = conn.peer().address};
}

asio::awaitable<void> ProtocolHandler::refuse(net::Connection& connection, net::Refusal) {
  co_await connection.write(protocol_.too_many_line);
}

ConnectionDriver::ConnectionDriver(net::Connection& conn, net::StoragePool& pool,
                                   const Protocol& protocol, std::chrono::milliseconds read_timeout)
    : conn_(conn),
      pool_(pool),
      protocol_(protocol),
      connection_key_("\x01" + protocol.name + "-conn/" + std::to_string(conn.id())) {
  conn_.set_read_timeout(read_timeout);
}

asio::awaitable<void> ConnectionDriver::serve() {
  std::exception_ptr error;
  try {
    co_await run();
  } catch (...) {
    error = std::current_exception();
  }
  co_await finish();
  if (error) {
    std::rethrow_exception(error);
  }
}

asio::awaitable<bool> ConnectionDriver::write(std::string_view bytes) {
  auto written = co_await conn_.write(bytes);
  co_return written.has_value();
}

asio::awaitable<void> ConnectionDriver::goodbye(net::NetError error) {
  switch (error) {
    case net::NetError::kShutdown:
      co_await conn_.write(protocol_.shutdown_line);
      break;
    case net::NetError::kTimeout:
      co_await conn_.write(protocol_.timeout_line);
      break;
    default:
      break;
  }
}

}  // namespace peregrine::service
