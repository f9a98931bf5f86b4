// StoragePool: per-user order and serialization, users in parallel, the
// awaiting coroutine resuming on its own thread, and tasks run on the
// caller's thread while the pool is idle.

#include "net/storage_pool.h"

#include <gtest/gtest.h>

#include <asio/co_spawn.hpp>
#include <asio/io_context.hpp>
#include <asio/use_awaitable.hpp>
#include <atomic>
#include <condition_variable>
#include <future>
#include <map>
#include <mutex>
#include <stdexcept>
#include <thread>
#include <vector>

namespace peregrine::net {
namespace {

// Runs an io_context on its own thread, like a worker.
class Loop {
 public:
  Loop() : guard_(ioc_.get_executor()), thread_([this] { ioc_.run(); }) {}
  ~Loop() {
    guard_.reset();
    thread_.join();
  }
  asio::io_context& ioc() { return ioc_; }
  std::thread::id thread_id() const { return thread_.get_id(); }

  // Runs `body` here and waits for it (at most 20 s); rethrows its exception.
  void run(std::function<asio::awaitable<void>()> body) {
    std::promise<void> done;
    auto future = done.get_future();
    asio::co_spawn(ioc_, body(), [&done](std::exception_ptr e) {
      if (e) {
        done.set_exception(e);
      } else {
        done.set_value();
      }
    });
    ASSERT_EQ(future.wait_for(std::chrono::seconds(20)), std::future_status::ready);
    future.get();
  }

 private:
  asio::io_context ioc_;
  asio::executor_work_guard<asio::io_context::executor_type> guard_;
  std::thread thread_;
};

TEST(StoragePoolTest, PostedTasksOfOneUserRunInOrder) {
  std::vector<int> order;  // touched only on alice's strand
  {
    StoragePool pool(4);
    for (int i = 0; i < 1000; ++i) {
      pool.post("alice", [&order, i] { order.push_back(i); });
    }
  }  // the destructor runs what is queued
  ASSERT_EQ(order.size(), 1000u);
  for (int i = 0; i < 1000; ++i) {
    ASSERT_EQ(order[i], i);
  }
}

TEST(StoragePoolTest, OneUsersTasksNeverOverlapAndResumeOnTheirOwnThread) {
  StoragePool pool(4);
  Loop loop_a, loop_b;
  const std::vector<std::string> users = {"u1", "u2", "u3"};
  std::map<std::string, std::atomic<int>> in_flight;
  std::map<std::string, int> counts;  // each touched only on its user's strand
  for (const auto& user : users) {
    in_flight[user] = 0;
    counts[user] = 0;
  }
  std::atomic<int> overlaps{0};
  std::atomic<int> wrong_thread{0};
  std::atomic<int> on_network_thread{0};

  auto session = [&](Loop& loop, std::string user) -> asio::awaitable<void> {
    for (int i = 0; i < 50; ++i) {
      int seen = co_await pool.run(user, [&] {
        if (std::this_thread::get_id() == loop_a.thread_id() ||
            std::this_thread::get_id() == loop_b.thread_id()) {
          on_network_thread.fetch_add(1);
        }
        if (in_flight[user].fetch_add(1) != 0) {
          overlaps.fetch_add(1);
        }
        std::this_thread::yield();
        int value = ++counts[user];
        in_flight[user].fetch_sub(1);
        return value;
      });
      EXPECT_GT(seen, 0);
      if (std::this_thread::get_id() != loop.thread_id()) {
        wrong_thread.fetch_add(1);
      }
    }
  };
  std::vector<std::future<void>> sessions;
  for (int s = 0; s < 8; ++s) {
    Loop& loop = s % 2 == 0 ? loop_a : loop_b;
    std::string user = users[s % users.size()];
    sessions.push_back(std::async(std::launch::async, [&loop, &session, user] {
      loop.run([&] { return session(loop, user); });
    }));
  }
  for (auto& s : sessions) {
    s.get();
  }
  EXPECT_EQ(overlaps.load(), 0);
  EXPECT_EQ(wrong_thread.load(), 0);
  EXPECT_EQ(on_network_thread.load(), 0);
  // 8 sessions over 3 users: u1 and u2 get 3 sessions, u3 gets 2.
  EXPECT_EQ(counts["u1"], 150);
  EXPECT_EQ(counts["u2"], 150);
  EXPECT_EQ(counts["u3"], 100);
  EXPECT_TRUE([&] {
    for (int i = 0; i < 1000 && pool.active_users() != 0; ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    return pool.active_users() == 0;
  }());
}

TEST(StoragePoolTest, DifferentUsersRunInParallel) {
  StoragePool pool(2);
  // Each task waits for the other to start: both finish only if they run at
  // the same time. Bounded: a task gives up after 10 s.
  std::mutex mu;
  std::condition_variable cv;
  int started = 0;
  auto rendezvous = [&] {
    std::unique_lock lock(mu);
    ++started;
    cv.notify_all();
    return cv.wait_for(lock, std::chrono::seconds(10), [&] { return started == 2; });
  };
  std::promise<bool> a, b;
  pool.post("alice", [&] { a.set_value(rendezvous()); });
  pool.post("bob", [&] { b.set_value(rendezvous()); });
  EXPECT_TRUE(a.get_future().get());
  EXPECT_TRUE(b.get_future().get());
}

TEST(StoragePoolTest, ResultsExceptionsAndVoidTasks) {
  StoragePool pool(2);
  Loop loop;
  loop.run([&]() -> asio::awaitable<void> {
    const auto home = std::this_thread::get_id();
    auto ran_on = co_await pool.run("carol", [] { return std::this_thread::get_id(); });
    EXPECT_NE(ran_on, home);
    EXPECT_EQ(std::this_thread::get_id(), home);

    std::string moved = co_await pool.run("carol", [] { return std::string(1000, 'm'); });
    EXPECT_EQ(moved.size(), 1000u);

    int side_effect = 0;
    co_await pool.run("carol", [&] { side_effect = 7; });
    EXPECT_EQ(side_effect, 7);

    bool caught = false;
    try {
      co_await pool.run("carol", []() -> int { throw std::runtime_error("disk on fire"); });
    } catch (const std::runtime_error& e) {
      caught = std::string(e.what()) == "disk on fire";
    }
    EXPECT_TRUE(caught);
    EXPECT_EQ(std::this_thread::get_id(), home);
  });
}

TEST(StoragePoolTest, AnIdlePoolRunsTheTaskOnTheCallersThread) {
  StoragePool pool(2);
  Loop loop;
  loop.run([&]() -> asio::awaitable<void> {
    const auto home = std::this_thread::get_id();
    auto ran_on =
        co_await pool.run_here_when_idle("dave", [] { return std::this_thread::get_id(); });
    EXPECT_EQ(ran_on, home);
    EXPECT_EQ(pool.active_users(), 0u);  // the claim is let go

    co_await pool.run_here_when_idle("dave", [] {});  // void
    bool caught = false;
    try {
      co_await pool.run_here_when_idle("dave",
                                       []() -> int { throw std::runtime_error("no space"); });
    } catch (const std::runtime_error& e) {
      caught = std::string(e.what()) == "no space";
    }
    EXPECT_TRUE(caught);
    EXPECT_EQ(pool.active_users(), 0u);
  });
}

TEST(StoragePoolTest, ABusyPoolRunsTheTaskOnItsThreads) {
  StoragePool pool(2);
  Loop loop;
  // Another user's task holds the pool busy until the check below is done.
  std::promise<void> release;
  auto released = release.get_future().share();
  pool.post("erin", [released] { released.wait_for(std::chrono::seconds(10)); });
  loop.run([&]() -> asio::awaitable<void> {
    const auto home = std::this_thread::get_id();
    auto ran_on =
        co_await pool.run_here_when_idle("frank", [] { return std::this_thread::get_id(); });
    EXPECT_NE(ran_on, home);
    EXPECT_EQ(std::this_thread::get_id(), home);
    release.set_value();
  });
}

TEST(StoragePoolTest, TasksQueuedDuringAClaimWaitForItAndKeepTheirOrder) {
  StoragePool pool(4);
  Loop loop;
  std::vector<int> order;  // touched only by grace's tasks, one at a time
  std::atomic<bool> claimed_done{false};
  std::atomic<int> ran_early{0};
  loop.run([&]() -> asio::awaitable<void> {
    co_await pool.run_here_when_idle("grace", [&] {
      order.push_back(0);
      for (int i = 1; i <= 50; ++i) {
        pool.post("grace", [&, i] {
          if (!claimed_done.load()) {
            ++ran_early;
          }
          order.push_back(i);
        });
      }
      // The pool has threads free: a task posted above would run now if
      // it were not held for the claim.
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
      order.push_back(-1);
      claimed_done = true;
    });
    // Queued after the claim ended: behind the held ones.
    co_await pool.run("grace", [&] { order.push_back(51); });
  });
  EXPECT_EQ(ran_early.load(), 0);
  ASSERT_EQ(order.size(), 53u);
  EXPECT_EQ(order[0], 0);
  EXPECT_EQ(order[1], -1);
  for (int i = 1; i <= 51; ++i) {
    EXPECT_EQ(order[static_cast<std::size_t>(i) + 1], i);
  }
}

}  // namespace
}  // namespace peregrine::net
