#include "store/maildir/sync_threads.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <stdexcept>
#include <thread>
#include <vector>

namespace peregrine::store::maildir {
namespace {

TEST(SyncThreadsTest, GivesEachTaskItsResult) {
  SyncThreads threads;
  std::vector<std::future<int>> futures;
  for (int i = 0; i < 20; ++i) {
    futures.push_back(threads.run([i] { return i * i; }));
  }
  for (int i = 0; i < 20; ++i) {
    EXPECT_EQ(futures[i].get(), i * i);
  }
}

TEST(SyncThreadsTest, HandsBackWhatATaskThrows) {
  SyncThreads threads;
  auto f = threads.run([]() -> int { throw std::runtime_error("boom"); });
  EXPECT_THROW(f.get(), std::runtime_error);
  // The thread that ran it is still there for the next task.
  EXPECT_EQ(threads.run([] { return 7; }).get(), 7);
}

// A task never waits behind another: the first blocks until the second has
// run, which deadlocks if they share a thread. (The wait is bounded only so
// that a broken pool fails the test instead of hanging it.)
TEST(SyncThreadsTest, TasksRunSideBySide) {
  SyncThreads threads;
  for (int round = 0; round < 3; ++round) {  // idle threads are reused too
    std::promise<void> second_ran;
    auto first = threads.run([done = second_ran.get_future()]() mutable {
      return done.wait_for(std::chrono::seconds(60)) == std::future_status::ready;
    });
    auto second = threads.run([&second_ran] {
      second_ran.set_value();
      return true;
    });
    EXPECT_TRUE(second.get());
    EXPECT_TRUE(first.get());
  }
}

TEST(SyncThreadsTest, TakesTasksFromManyThreads) {
  SyncThreads threads;
  std::atomic<int> ran{0};
  std::vector<std::thread> callers;
  for (int c = 0; c < 4; ++c) {
    callers.emplace_back([&] {
      for (int i = 0; i < 50; ++i) {
        threads.run([&ran] { ran.fetch_add(1); }).get();
      }
    });
  }
  for (std::thread& t : callers) {
    t.join();
  }
  EXPECT_EQ(ran.load(), 200);
}

// Threads are reused, however the callers' tasks interleave: a task another
// thread's job took first must not leave an idle thread uncounted (it was
// then never handed a job again, and every such race started one more
// thread for good: about 3,000 threads for these 12,000 tasks). Each caller
// has one task in flight at a time, but a thread that has just run a task
// may not be back waiting when its caller posts the next one (or the one
// after, if the scheduler leaves it there), so the bound allows four
// threads per caller: what is in flight, not how many tasks ran.
TEST(SyncThreadsTest, ReusesIdleThreadsUnderConcurrentCallers) {
  SyncThreads threads;
  constexpr int kCallers = 4;
  std::vector<std::thread> callers;
  for (int c = 0; c < kCallers; ++c) {
    callers.emplace_back([&] {
      for (int i = 0; i < 3000; ++i) {
        threads.run([] {}).get();
      }
    });
  }
  for (std::thread& t : callers) {
    t.join();
  }
  EXPECT_LE(threads.thread_count(), 4u * kCallers);
}

}  // namespace
}  // namespace peregrine::store::maildir
