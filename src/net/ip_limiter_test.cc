#include "net/ip_limiter.h"

#include <gtest/gtest.h>

#include <thread>
#include <vector>

namespace peregrine::net {
namespace {

TEST(IpLimiterTest, CountsPerAddressUpToTheLimit) {
  IpLimiter limiter(2);
  EXPECT_TRUE(limiter.acquire("192.0.2.1"));
  EXPECT_TRUE(limiter.acquire("192.0.2.1"));
  EXPECT_FALSE(limiter.acquire("192.0.2.1"));
  EXPECT_TRUE(limiter.acquire("2001:db8::1"));
  EXPECT_EQ(limiter.count("192.0.2.1"), 2u);
  EXPECT_EQ(limiter.addresses(), 2u);
  limiter.release("192.0.2.1");
  EXPECT_TRUE(limiter.acquire("192.0.2.1"));
  limiter.release("192.0.2.1");
  limiter.release("192.0.2.1");
  limiter.release("2001:db8::1");
  EXPECT_EQ(limiter.addresses(), 0u);
  limiter.release("198.51.100.1");  // never acquired: ignored
  EXPECT_EQ(limiter.count("198.51.100.1"), 0u);
}

TEST(IpLimiterTest, ZeroMeansNoLimit) {
  IpLimiter limiter(0);
  for (int i = 0; i < 1000; ++i) {
    ASSERT_TRUE(limiter.acquire("192.0.2.1"));
  }
  EXPECT_EQ(limiter.count("192.0.2.1"), 1000u);
}

TEST(IpLimiterTest, ConcurrentAcquireNeverExceedsTheLimit) {
  IpLimiter limiter(10);
  std::atomic<int> admitted{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < 100; ++i) {
        if (limiter.acquire("192.0.2.9")) {
          admitted.fetch_add(1);
        }
      }
    });
  }
  for (auto& t : threads) {
    t.join();
  }
  EXPECT_EQ(admitted.load(), 10);
  EXPECT_EQ(limiter.count("192.0.2.9"), 10u);
}

}  // namespace
}  // namespace peregrine::net
