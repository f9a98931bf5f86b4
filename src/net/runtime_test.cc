// The Runtime: many clients over several workers, the per-IP limit,
// graceful and forced shutdown, signals, listen errors.

#include "net/runtime.h"

#include <gtest/gtest.h>

#include <asio/co_spawn.hpp>
#include <asio/detached.hpp>
#include <asio/this_coro.hpp>
#include <asio/use_awaitable.hpp>
#include <csignal>
#include <future>

#include "net/test_util.h"

namespace peregrine::net {
namespace {

using test::Client;
using test::LineHandler;
using test::run_bounded;
using test::sleep_ms;
using test::TestServer;
using test::TestServerOptions;

config::Endpoint loopback_any_port() {
  return config::Endpoint{"127.0.0.1", 0, config::Endpoint::Kind::kIpv4};
}

TEST(RuntimeTest, ManyConcurrentClientsEachStayOnOneThread) {
  TestServerOptions options;
  options.runtime.workers = 4;
  options.runtime.max_connections_per_ip = 0;  // no limit
  TestServer server(options);
  constexpr int kClients = 100;
  constexpr int kLines = 20;
  std::atomic<int> good_clients{0};
  EXPECT_TRUE(run_bounded([&]() -> asio::awaitable<void> {
    auto executor = co_await asio::this_coro::executor;
    std::atomic<int> finished{0};
    for (int c = 0; c < kClients; ++c) {
      asio::co_spawn(
          executor,
          [&, c]() -> asio::awaitable<void> {
            Client client(co_await asio::this_coro::executor);
            bool good = co_await client.connect("127.0.0.1", server.port) &&
                        co_await client.line() == "* HELLO";
            for (int i = 0; good && i < kLines; ++i) {
              std::string text = "client " + std::to_string(c) + " line " + std::to_string(i);
              // Pipelining: send two, read two.
              good = co_await client.send("ECHO " + text + "\r\nECHO again\r\n") &&
                     co_await client.line() == text && co_await client.line() == "again";
            }
            good = good && co_await client.send("QUIT\r\n") && co_await client.line() == "BYE";
            if (good) {
              good_clients.fetch_add(1);
            }
            finished.fetch_add(1);
          },
          asio::detached);
    }
    while (finished.load() < kClients) {
      co_await sleep_ms(10);
    }
  }));
  EXPECT_EQ(good_clients.load(), kClients);
  EXPECT_EQ(server.handler->served.load(), kClients);
  EXPECT_EQ(server.handler->thread_changes.load(), 0);
  std::lock_guard lock(server.handler->mu);
  EXPECT_EQ(server.handler->threads.size(), 4u);  // round robin reaches every worker
}

TEST(RuntimeTest, PerIpLimitCountsAcrossListenersAndRefuses) {
  RuntimeOptions options;
  options.workers = 2;
  options.max_connections_per_ip = 2;
  Runtime runtime(options);
  auto handler = std::make_shared<LineHandler>();
  auto port_a = runtime.listen({.name = "a", .endpoint = loopback_any_port(), .handler = handler});
  auto port_b = runtime.listen({.name = "b", .endpoint = loopback_any_port(), .handler = handler});
  ASSERT_TRUE(port_a && port_b);
  runtime.start();
  EXPECT_TRUE(run_bounded([&]() -> asio::awaitable<void> {
    auto executor = co_await asio::this_coro::executor;
    Client first(executor), second(executor), third(executor), fourth(executor);
    EXPECT_TRUE(co_await first.connect("127.0.0.1", *port_a));
    EXPECT_EQ(co_await first.line(), "* HELLO");
    EXPECT_TRUE(co_await second.connect("127.0.0.1", *port_b));
    EXPECT_EQ(co_await second.line(), "* HELLO");
    // The third, on either listener, is over the limit.
    EXPECT_TRUE(co_await third.connect("127.0.0.1", *port_a));
    EXPECT_EQ(co_await third.line(), "* BYE too many connections");
    EXPECT_EQ(co_await third.rest(), "");
    // The admitted ones are unaffected.
    co_await first.send("ECHO still here\r\n");
    EXPECT_EQ(co_await first.line(), "still here");
    // When one leaves, a new one is admitted.
    co_await second.send("QUIT\r\n");
    EXPECT_EQ(co_await second.line(), "BYE");
    EXPECT_EQ(co_await second.rest(), "");
    for (int i = 0; i < 200 && runtime.connections() > 1; ++i) {
      co_await sleep_ms(10);
    }
    EXPECT_TRUE(co_await fourth.connect("127.0.0.1", *port_b));
    EXPECT_EQ(co_await fourth.line(), "* HELLO");
  }));
  EXPECT_EQ(handler->refused.load(), 1);
  EXPECT_EQ(handler->served.load(), 3);
  runtime.stop();
  runtime.wait();
  EXPECT_EQ(runtime.connections(), 0u);
}

TEST(RuntimeTest, GracefulStopFinishesTheCommandInProgress) {
  TestServerOptions options;
  options.runtime.workers = 2;
  TestServer server(options);
  std::promise<void> stop_now;
  std::thread stopper([&] {
    stop_now.get_future().wait();
    server.runtime.stop();
  });
  EXPECT_TRUE(run_bounded([&]() -> asio::awaitable<void> {
    auto executor = co_await asio::this_coro::executor;
    Client busy(executor), idle(executor);
    EXPECT_TRUE(co_await idle.connect("127.0.0.1", server.port));
    EXPECT_EQ(co_await idle.line(), "* HELLO");
    EXPECT_TRUE(co_await busy.connect("127.0.0.1", server.port));
    EXPECT_EQ(co_await busy.line(), "* HELLO");
    // A command in progress, and one pipelined after it that must not run.
    co_await busy.send("SLOW 400\r\nECHO never\r\n");
    for (int i = 0; i < 200 && server.handler->slow_started.load() == 0; ++i) {
      co_await sleep_ms(5);
    }
    stop_now.set_value();
    // The idle connection is told at once.
    EXPECT_EQ(co_await idle.line(), "* BYE shutdown");
    EXPECT_EQ(co_await idle.rest(), "");
    // The busy one finishes its command, then is told.
    EXPECT_EQ(co_await busy.line(), "DONE");
    EXPECT_EQ(co_await busy.line(), "* BYE shutdown");
    EXPECT_EQ(co_await busy.rest(), "");
  }));
  stopper.join();
  EXPECT_TRUE(server.wait_stopped());
  EXPECT_EQ(server.runtime.connections(), 0u);
}

TEST(RuntimeTest, NewConnectionsAreNotAcceptedAfterStop) {
  TestServer server({});
  std::uint16_t port = server.port;
  server.runtime.stop();
  EXPECT_TRUE(server.wait_stopped());
  EXPECT_TRUE(run_bounded([&]() -> asio::awaitable<void> {
    Client client(co_await asio::this_coro::executor);
    EXPECT_FALSE(co_await client.connect("127.0.0.1", port));
  }));
}

TEST(RuntimeTest, StopClosesByForceAfterTheGracePeriod) {
  TestServerOptions options;
  options.runtime.shutdown_grace = std::chrono::milliseconds(200);
  TestServer server(options);
  EXPECT_TRUE(run_bounded([&]() -> asio::awaitable<void> {
    Client client(co_await asio::this_coro::executor);
    EXPECT_TRUE(co_await client.connect("127.0.0.1", server.port));
    EXPECT_EQ(co_await client.line(), "* HELLO");
    // RAW reads a line that is not a stop point: the stop cannot end it.
    co_await client.send("RAW\r\n");
    co_await sleep_ms(50);
    server.runtime.stop();
    EXPECT_EQ(co_await client.rest(), "");  // closed by force
  }));
  EXPECT_TRUE(server.wait_stopped());
  EXPECT_EQ(server.runtime.connections(), 0u);
}

TEST(RuntimeTest, SigtermStopsTheRuntime) {
  TestServer server({});
  server.runtime.stop_on_signals();
  EXPECT_TRUE(run_bounded([&]() -> asio::awaitable<void> {
    Client client(co_await asio::this_coro::executor);
    EXPECT_TRUE(co_await client.connect("127.0.0.1", server.port));
    EXPECT_EQ(co_await client.line(), "* HELLO");
    std::raise(SIGTERM);
    EXPECT_EQ(co_await client.line(), "* BYE shutdown");
  }));
  EXPECT_TRUE(server.wait_stopped());
}

TEST(RuntimeTest, ListensOnIpv6Loopback) {
  TestServerOptions options;
  options.host = "::1";
  std::unique_ptr<TestServer> server;
  try {
    server = std::make_unique<TestServer>(options);
  } catch (const std::exception& e) {
    GTEST_SKIP() << "no IPv6 loopback here: " << e.what();
  }
  EXPECT_TRUE(run_bounded([&]() -> asio::awaitable<void> {
    Client client(co_await asio::this_coro::executor);
    EXPECT_TRUE(co_await client.connect("::1", server->port));
    EXPECT_EQ(co_await client.line(), "* HELLO");
    co_await client.send("PEER\r\n");
    EXPECT_EQ(co_await client.line(), "PEER ::1 loopback");
  }));
}

TEST(RuntimeTest, ListenErrorsNameTheEndpoint) {
  Runtime runtime(RuntimeOptions{});
  auto handler = std::make_shared<LineHandler>();
  auto first =
      runtime.listen({.name = "imap", .endpoint = loopback_any_port(), .handler = handler});
  ASSERT_TRUE(first);
  // The same port again: in use (SO_REUSEADDR does not allow two listeners).
  config::Endpoint taken = loopback_any_port();
  taken.port = *first;
  auto again = runtime.listen({.name = "imap", .endpoint = taken, .handler = handler});
  ASSERT_FALSE(again);
  EXPECT_EQ(again.error().code, base::MailError::kTemporary);
  EXPECT_NE(again.error().message.find("imap 127.0.0.1:" + std::to_string(*first)),
            std::string::npos)
      << again.error().message;
  // Implicit TLS without a TLS context.
  auto tls = runtime.listen(
      {.name = "imaps", .endpoint = loopback_any_port(), .implicit_tls = true, .handler = handler});
  ASSERT_FALSE(tls);
  EXPECT_EQ(tls.error().code, base::MailError::kBadInput);
  // A host name that resolves binds.
  auto named =
      runtime.listen({.name = "named",
                      .endpoint = config::Endpoint{"localhost", 0, config::Endpoint::Kind::kName},
                      .handler = handler});
  EXPECT_TRUE(named) << named.error().message;
}

TEST(RuntimeTest, OptionsComeFromTheConfiguration) {
  config::Settings settings;
  settings.server.workers = 3;
  settings.limits.max_connections_per_ip = 7;
  settings.limits.max_line_bytes = 10000;
  settings.limits.autologout_unauthenticated = std::chrono::seconds(42);
  RuntimeOptions options = runtime_options(settings);
  EXPECT_EQ(options.workers, 3u);
  EXPECT_EQ(options.max_connections_per_ip, 7u);
  EXPECT_EQ(options.connection.max_buffer_bytes, 10002u);
  EXPECT_EQ(options.connection.read_timeout, std::chrono::seconds(42));
}

TEST(RuntimeTest, NeverStartedRuntimeStopsCleanly) {
  Runtime runtime(RuntimeOptions{});
  auto handler = std::make_shared<LineHandler>();
  ASSERT_TRUE(runtime.listen({.name = "x", .endpoint = loopback_any_port(), .handler = handler}));
  runtime.stop();
  runtime.wait();
}

}  // namespace
}  // namespace peregrine::net
