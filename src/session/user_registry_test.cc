// The registry of logged-in users: one store per user however many sessions
// and threads ask, closed when the last lets go, and per-protocol state kept
// beside the store.

#include "session/user_registry.h"

#include <gtest/gtest.h>

#include <atomic>
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

}  // namespace
}  // namespace peregrine::session
