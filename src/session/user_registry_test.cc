// The registry of logged-in users: one store per user however many sessions
// and threads ask, closed when the last lets go, and per-protocol state kept
// beside the store.

#include "session/user_registry.h"

#include <gtest/gtest.h>

#include <atomic>
#include <functional>
#include <thread>
#include <vector>

#include "store/maildir/maildir_store.h"
#include "test_support/temp_dir.h"

namespace peregrine::session {
namespace {

using test_support::TempDir;

class UserRegistryTest : public ::testing::Test {
 protected:
  UserRegistryTest() : store_(options(dir_.path())) {}

  static store::maildir::MaildirOptions options(const std::filesystem::path& data_dir) {
    store::maildir::MaildirOptions options;
    options.data_dir = data_dir;
    return options;
  }

  TempDir dir_;
  store::maildir::MaildirStore store_;
};

TEST_F(UserRegistryTest, OneContextPerUser) {
  UserRegistry users(store_);
  auto a = users.acquire("alice", "");
  auto b = users.acquire("alice", "");
  auto c = users.acquire("bob", "");
  ASSERT_TRUE(a && b && c);
  EXPECT_EQ(a->get(), b->get());
  EXPECT_NE(a->get(), c->get());
  EXPECT_EQ((*c)->user(), "bob");
  EXPECT_EQ(users.open_users(), 2u);
  a->reset();
  b->reset();
  EXPECT_EQ(users.open_users(), 1u);
}

TEST_F(UserRegistryTest, ConcurrentAcquireAndReleaseKeepOneStorePerUser) {
  UserRegistry users(store_);
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < 20; ++i) {
        auto context = users.acquire("alice", "");
        // Only the context is shared here: its store belongs to one strand.
        if (!context || (*context)->user() != "alice") {
          ++failures;
        }
      }
    });
  }
  for (std::thread& t : threads) {
    t.join();
  }
  EXPECT_EQ(failures.load(), 0);
  EXPECT_EQ(users.open_users(), 0u);
}

// A protocol's per-user state, recording when it goes.
struct Counter {
  int value = 0;
};
struct Tracer {
  ~Tracer() {
    if (destroyed) {
      *destroyed = true;
    }
  }
  bool* destroyed = nullptr;
};

TEST_F(UserRegistryTest, AttachmentsAreOnePerTypeAndGoWithTheContext) {
  UserRegistry users(store_);
  bool destroyed = false;
  {
    auto a = users.acquire("alice", "");
    ASSERT_TRUE(a);
    (*a)->attachment<Counter>().value = 7;
    (*a)->attachment<Tracer>().destroyed = &destroyed;
    auto b = users.acquire("alice", "");
    ASSERT_TRUE(b);
    EXPECT_EQ((*b)->attachment<Counter>().value, 7);
    EXPECT_EQ(&(*b)->attachment<Counter>(), &(*a)->attachment<Counter>());
    EXPECT_FALSE(destroyed);
  }
  EXPECT_TRUE(destroyed);
  auto again = users.acquire("alice", "");
  ASSERT_TRUE(again);
  EXPECT_EQ((*again)->attachment<Counter>().value, 0);
}

// Runs `on_close` when its context goes, that is while the user's store is
// being closed.
struct OnClose {
  ~OnClose() {
    if (on_close) {
      on_close();
    }
  }
  std::function<void()> on_close;
};

// While one user's store closes (a WAL checkpoint, waiting for file
// removals), another user logs in: the registry's mutex is not held. With
// the mutex held, the second acquire() would never return.
TEST_F(UserRegistryTest, ClosingOneUsersStoreDoesNotHoldUpAnother) {
  UserRegistry users(store_);
  bool bob_opened = false;
  std::size_t open_meanwhile = 0;
  {
    auto alice = users.acquire("alice", "");
    ASSERT_TRUE(alice);
    (*alice)->attachment<OnClose>().on_close = [&] {
      std::thread other([&] {
        auto bob = users.acquire("bob", "");
        bob_opened = bob.has_value();
        open_meanwhile = users.open_users();  // alice (closing) and bob
      });
      other.join();
    };
  }
  EXPECT_TRUE(bob_opened);
  EXPECT_EQ(open_meanwhile, 2u);
  EXPECT_EQ(users.open_users(), 0u);
}

// The same user's next acquire() waits until the store has closed, so one
// user never has two stores (two SQLite connections) open at once.
TEST_F(UserRegistryTest, SameUserWaitsForItsStoreToClose) {
  UserRegistry users(store_);
  std::atomic<bool> closed{false};
  std::atomic<bool> reopened_before_close{false};
  std::thread other;
  {
    auto alice = users.acquire("alice", "");
    ASSERT_TRUE(alice);
    (*alice)->attachment<OnClose>().on_close = [&] {
      other = std::thread([&] {
        auto again = users.acquire("alice", "");
        reopened_before_close = !closed.load();
        EXPECT_TRUE(again);
      });
      // Give the other thread every chance to get in first.
      for (int i = 0; i < 100; ++i) {
        std::this_thread::yield();
      }
      closed = true;  // the attachments go before the store; close enough
    };
  }
  other.join();
  EXPECT_FALSE(reopened_before_close.load());
  EXPECT_EQ(users.open_users(), 0u);
}

}  // namespace
}  // namespace peregrine::session
