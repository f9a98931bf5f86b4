// Connection reads, writes, bounds and timeouts, through a real Runtime on
// 127.0.0.1 and the LineHandler of test_util.h.

#include <gtest/gtest.h>

#include <asio/this_coro.hpp>
#include <asio/use_awaitable.hpp>

#include "net/test_util.h"

namespace peregrine::net {
namespace {

using test::Client;
using test::LineHandler;
using test::run_bounded;
using test::sleep_ms;
using test::TestServer;
using test::TestServerOptions;

TEST(ConnectionTest, LinesEndWithCrlfOrBareLf) {
  TestServer server({});
  EXPECT_TRUE(run_bounded([&]() -> asio::awaitable<void> {
    Client client(co_await asio::this_coro::executor);
    EXPECT_TRUE(co_await client.connect("127.0.0.1", server.port));
    EXPECT_EQ(co_await client.line(), "* HELLO");
    co_await client.send("ECHO one\r\nECHO two\nECHO th");
    co_await sleep_ms(20);
    co_await client.send("ree\r\nECHO \r\n");
    EXPECT_EQ(co_await client.line(), "one");
    EXPECT_EQ(co_await client.line(), "two");
    EXPECT_EQ(co_await client.line(), "three");
    EXPECT_EQ(co_await client.line(), "");
    co_await client.send("QUIT\r\n");
    EXPECT_EQ(co_await client.line(), "BYE");
    EXPECT_EQ(co_await client.rest(), "");
  }));
}

TEST(ConnectionTest, OverlongLineIsRefusedAndSkipped) {
  TestServerOptions options;
  options.runtime.connection.max_buffer_bytes = 4096;
  TestServer server(options);
  EXPECT_TRUE(run_bounded([&]() -> asio::awaitable<void> {
    Client client(co_await asio::this_coro::executor);
    EXPECT_TRUE(co_await client.connect("127.0.0.1", server.port));
    EXPECT_EQ(co_await client.line(), "* HELLO");
    // Exactly the bound (100 bytes before CRLF) passes.
    std::string exact = "ECHO " + std::string(LineHandler::kMaxLine - 5, 'a');
    co_await client.send(exact + "\r\n");
    EXPECT_EQ(co_await client.line(), std::string(LineHandler::kMaxLine - 5, 'a'));
    // One more byte is too long, whole in the buffer.
    co_await client.send(exact + "b\r\nECHO next\r\n");
    EXPECT_EQ(co_await client.line(), "ERR too long");
    EXPECT_EQ(co_await client.line(), "next");
    // A line far longer than the whole buffer, sent in pieces: one error,
    // then the rest of it is skipped.
    for (int i = 0; i < 10; ++i) {
      co_await client.send(std::string(3000, 'z'));
    }
    co_await client.send("\r\nECHO after\r\n");
    EXPECT_EQ(co_await client.line(), "ERR too long");
    EXPECT_EQ(co_await client.line(), "after");
  }));
}

TEST(ConnectionTest, ReadExactAndReadSomeAcrossPackets) {
  TestServer server({});
  EXPECT_TRUE(run_bounded([&]() -> asio::awaitable<void> {
    Client client(co_await asio::this_coro::executor);
    EXPECT_TRUE(co_await client.connect("127.0.0.1", server.port));
    EXPECT_EQ(co_await client.line(), "* HELLO");
    co_await client.send("EXACT 11\r\nhel");
    co_await sleep_ms(20);
    co_await client.send("lo wo");
    co_await sleep_ms(20);
    co_await client.send("rldECHO x\r\n");
    EXPECT_EQ(co_await client.line(), "GOT hello world");
    EXPECT_EQ(co_await client.line(), "x");
    // read_some returns at most what was asked, from the buffer first.
    co_await client.send("SOME 3\r\nabcdefECHO y\r\n");
    EXPECT_EQ(co_await client.line(), "SOME abc");
    EXPECT_EQ(co_await client.line(), "BAD defECHO");
    // More than the buffer can hold is refused at once.
    co_await client.send("EXACT 100000\r\n");
    EXPECT_EQ(co_await client.line(), "ERR too-long");
  }));
}

TEST(ConnectionTest, ReadTimeoutEndsTheConnection) {
  TestServer server({});
  EXPECT_TRUE(run_bounded([&]() -> asio::awaitable<void> {
    Client client(co_await asio::this_coro::executor);
    EXPECT_TRUE(co_await client.connect("127.0.0.1", server.port));
    EXPECT_EQ(co_await client.line(), "* HELLO");
    co_await client.send("TIMEOUT 100\r\n");
    EXPECT_EQ(co_await client.line(), "OK");
    // Activity resets the clock: each read gets the whole timeout.
    for (int i = 0; i < 3; ++i) {
      co_await sleep_ms(40);
      co_await client.send("ECHO alive\r\n");
      EXPECT_EQ(co_await client.line(), "alive");
    }
    // Then silence.
    EXPECT_EQ(co_await client.line(), "* TIMEOUT");
    EXPECT_EQ(co_await client.rest(), "");
  }));
}

TEST(ConnectionTest, WriteWaitsForTheSocketToTakeTheBytes) {
  TestServer server({});
  constexpr std::size_t kBig = 64 * 1024 * 1024;  // far more than socket buffers hold
  EXPECT_TRUE(run_bounded([&]() -> asio::awaitable<void> {
    Client client(co_await asio::this_coro::executor);
    EXPECT_TRUE(co_await client.connect("127.0.0.1", server.port));
    EXPECT_EQ(co_await client.line(), "* HELLO");
    co_await client.send("BIG " + std::to_string(kBig) + "\r\n");
    // Not reading: the write cannot complete.
    co_await sleep_ms(300);
    EXPECT_EQ(server.handler->big_done.load(), 0);
    auto data = co_await client.read_n(kBig + 2);
    EXPECT_TRUE(data.has_value());
    EXPECT_EQ(data->size(), kBig + 2);
    co_await client.send("ECHO end\r\n");
    EXPECT_EQ(co_await client.line(), "end");
    EXPECT_EQ(server.handler->big_done.load(), 1);
  }));
}

TEST(ConnectionTest, WriteTimeoutWhenThePeerStopsReading) {
  TestServer server({});
  EXPECT_TRUE(run_bounded([&]() -> asio::awaitable<void> {
    Client client(co_await asio::this_coro::executor);
    EXPECT_TRUE(co_await client.connect("127.0.0.1", server.port));
    EXPECT_EQ(co_await client.line(), "* HELLO");
    co_await client.send("WTIMEOUT 200\r\n");
    EXPECT_EQ(co_await client.line(), "OK");
    co_await client.send("BIG 67108864\r\n");
    for (int i = 0; i < 200 && server.handler->big_failed_timeout.load() == 0; ++i) {
      co_await sleep_ms(25);
    }
    EXPECT_EQ(server.handler->big_failed_timeout.load(), 1);
  }));
  EXPECT_TRUE(test::eventually([&] { return server.runtime.connections() == 0; }));
}

TEST(ConnectionTest, NotifierWakesAnIdleReadWithoutLosingInput) {
  TestServer server({});
  EXPECT_TRUE(run_bounded([&]() -> asio::awaitable<void> {
    Client client(co_await asio::this_coro::executor);
    EXPECT_TRUE(co_await client.connect("127.0.0.1", server.port));
    EXPECT_EQ(co_await client.line(), "* HELLO");
    co_await client.send("IDLE 60000\r\n");
    EXPECT_EQ(co_await client.line(), "+ idling");
    // Half a line is buffered when the wake-up comes; it must survive the
    // cancelled read.
    co_await client.send("DO");
    co_await sleep_ms(50);
    std::thread([&] { server.handler->notify_idlers(); }).join();
    EXPECT_EQ(co_await client.line(), "* WOKE");
    std::thread([&] { server.handler->notify_idlers(); }).join();
    EXPECT_EQ(co_await client.line(), "* WOKE");
    co_await client.send("NE\r\n");
    EXPECT_EQ(co_await client.line(), "OK idle done");
    co_await client.send("ECHO back\r\n");
    EXPECT_EQ(co_await client.line(), "back");
  }));
}

TEST(ConnectionTest, IdleWaitTimesOutWhenNothingComes) {
  TestServer server({});
  EXPECT_TRUE(run_bounded([&]() -> asio::awaitable<void> {
    Client client(co_await asio::this_coro::executor);
    EXPECT_TRUE(co_await client.connect("127.0.0.1", server.port));
    EXPECT_EQ(co_await client.line(), "* HELLO");
    co_await client.send("IDLE 50\r\n");
    EXPECT_EQ(co_await client.line(), "+ idling");
    EXPECT_EQ(co_await client.line(), "* TICK");
    EXPECT_EQ(co_await client.line(), "* TICK");
    co_await client.send("DONE\r\n");
    // TICKs may have raced the DONE.
    for (;;) {
      auto line = co_await client.line();
      EXPECT_TRUE(line.has_value());
      if (!line || *line != "* TICK") {
        EXPECT_EQ(line, "OK idle done");
        break;
      }
    }
  }));
}

TEST(ConnectionTest, PeerAddressIsLoopback) {
  TestServer server({});
  EXPECT_TRUE(run_bounded([&]() -> asio::awaitable<void> {
    Client client(co_await asio::this_coro::executor);
    EXPECT_TRUE(co_await client.connect("127.0.0.1", server.port));
    EXPECT_EQ(co_await client.line(), "* HELLO");
    co_await client.send("PEER\r\n");
    EXPECT_EQ(co_await client.line(), "PEER 127.0.0.1 loopback");
  }));
}

}  // namespace
}  // namespace peregrine::net
