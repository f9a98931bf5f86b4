// Notifier: wake-ups from other threads, timeouts, coalescing, handles that
// outlive the notifier.

#include "net/notifier.h"

#include <gtest/gtest.h>

#include <asio/co_spawn.hpp>
#include <asio/io_context.hpp>
#include <optional>
#include <thread>

namespace peregrine::net {
namespace {

// Runs one wait() on a fresh io_context on this thread, bounded.
struct WaitRun {
  asio::io_context ioc;
  Notifier notifier{ioc.get_executor()};
  std::optional<bool> result;

  void start(std::chrono::milliseconds timeout) {
    asio::co_spawn(ioc, notifier.wait(timeout), [this](std::exception_ptr e, bool woken) {
      EXPECT_FALSE(e);
      result = woken;
    });
  }
  void run() { ioc.run_for(std::chrono::seconds(20)); }
};

TEST(NotifierTest, TimesOutWhenNothingComes) {
  WaitRun w;
  auto begin = std::chrono::steady_clock::now();
  w.start(std::chrono::milliseconds(50));
  w.run();
  ASSERT_TRUE(w.result.has_value());
  EXPECT_FALSE(*w.result);
  EXPECT_GE(std::chrono::steady_clock::now() - begin, std::chrono::milliseconds(50));
}

TEST(NotifierTest, AnotherThreadWakesTheWaiter) {
  WaitRun w;
  Notifier::Handle handle = w.notifier.handle();
  w.start(std::chrono::seconds(15));
  std::thread other([handle] {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    handle.notify();
  });
  w.run();
  other.join();
  ASSERT_TRUE(w.result.has_value());
  EXPECT_TRUE(*w.result);
}

TEST(NotifierTest, PendingNotificationsCoalesce) {
  asio::io_context ioc;
  Notifier notifier(ioc.get_executor());
  EXPECT_FALSE(notifier.take());
  std::thread([h = notifier.handle()] {
    h.notify();
    h.notify();
    h.notify();
  }).join();
  EXPECT_TRUE(notifier.take());
  EXPECT_FALSE(notifier.take());
  ioc.run_for(std::chrono::milliseconds(10));  // the queued wake-up finds nothing to wake
  EXPECT_FALSE(notifier.take());
}

TEST(NotifierTest, NotificationBeforeTheWaitIsNotLost) {
  WaitRun w;
  w.notifier.notify();
  w.start(std::chrono::seconds(15));
  w.run();
  ASSERT_TRUE(w.result.has_value());
  EXPECT_TRUE(*w.result);
}

TEST(NotifierTest, ConsumedWakeUpDoesNotCutALaterWaitShort) {
  WaitRun w;
  w.notifier.notify();             // posts a wake-up to the loop...
  EXPECT_TRUE(w.notifier.take());  // ...but the notification is consumed first
  auto begin = std::chrono::steady_clock::now();
  w.start(std::chrono::milliseconds(100));
  w.run();
  ASSERT_TRUE(w.result.has_value());
  EXPECT_FALSE(*w.result);
  EXPECT_GE(std::chrono::steady_clock::now() - begin, std::chrono::milliseconds(100));
}

TEST(NotifierTest, HandleOutlivesTheNotifier) {
  asio::io_context ioc;
  Notifier::Handle handle;
  {
    Notifier notifier(ioc.get_executor());
    handle = notifier.handle();
    handle.notify();  // a wake-up queued while it lives
  }
  handle.notify();  // and one after: both are harmless
  ioc.run_for(std::chrono::milliseconds(10));
  Notifier::Handle empty;
  empty.notify();
}

}  // namespace
}  // namespace peregrine::net
