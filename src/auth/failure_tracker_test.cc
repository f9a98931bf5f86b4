#include "auth/failure_tracker.h"

#include <gtest/gtest.h>

#include <atomic>
#include <thread>
#include <vector>

namespace peregrine::auth {
namespace {

using namespace std::chrono_literals;
using Time = std::chrono::steady_clock::time_point;

// A clock the test moves by hand.
class FakeClock {
 public:
  FailureTracker::Clock clock() {
    return [this] { return Time(std::chrono::nanoseconds(now_ns_.load())); };
  }
  void advance(std::chrono::nanoseconds d) { now_ns_ += d.count(); }

 private:
  std::atomic<std::int64_t> now_ns_{1'000'000'000'000};
};

FailureTrackerOptions options() {
  return FailureTrackerOptions{
      .base_delay = 1000ms, .max_delay = 10000ms, .decay = 60s, .max_tracked = 100};
}

TEST(FailureTracker, DelayDoublesUpToTheCap) {
  FakeClock clock;
  FailureTracker tracker(options(), clock.clock());
  const std::chrono::milliseconds expected[] = {1000ms, 2000ms, 4000ms, 8000ms, 10000ms, 10000ms};
  for (auto delay : expected) {
    EXPECT_EQ(tracker.record_failure("192.0.2.1"), delay);
    clock.advance(1s);
  }
  EXPECT_EQ(tracker.failures("192.0.2.1"), 6u);
  for (int i = 0; i < 100; ++i) {
    EXPECT_EQ(tracker.record_failure("192.0.2.1"), 10000ms);
  }
  EXPECT_EQ(tracker.failures("192.0.2.1"), 64u);  // the count saturates, it does not wrap
}

TEST(FailureTracker, AddressesAreCountedSeparately) {
  FakeClock clock;
  FailureTracker tracker(options(), clock.clock());
  EXPECT_EQ(tracker.record_failure("192.0.2.1"), 1000ms);
  EXPECT_EQ(tracker.record_failure("192.0.2.1"), 2000ms);
  EXPECT_EQ(tracker.record_failure("192.0.2.2"), 1000ms);
  EXPECT_EQ(tracker.failures("192.0.2.3"), 0u);
  EXPECT_EQ(tracker.tracked(), 2u);
}

TEST(FailureTracker, FailuresDecayOnePerQuietPeriod) {
  FakeClock clock;
  FailureTracker tracker(options(), clock.clock());
  for (int i = 0; i < 5; ++i) {
    tracker.record_failure("192.0.2.1");
  }
  clock.advance(59s);
  EXPECT_EQ(tracker.failures("192.0.2.1"), 5u);
  clock.advance(1s);
  EXPECT_EQ(tracker.failures("192.0.2.1"), 4u);
  clock.advance(90s);  // one more whole period, and half of the next
  EXPECT_EQ(tracker.failures("192.0.2.1"), 3u);
  clock.advance(30s);  // the half period was kept
  EXPECT_EQ(tracker.failures("192.0.2.1"), 2u);
  // A new failure counts on the decayed total: third failure -> 4 s.
  EXPECT_EQ(tracker.record_failure("192.0.2.1"), 4000ms);
  clock.advance(1h);
  EXPECT_EQ(tracker.failures("192.0.2.1"), 0u);
  EXPECT_EQ(tracker.record_failure("192.0.2.1"), 1000ms);
}

TEST(FailureTracker, Ipv6CountsPerSlash64AndMappedIpv4AsIpv4) {
  EXPECT_EQ(FailureTracker::key_for("2001:db8:1:2:aaaa::1"), "2001:db8:1:2::/64");
  EXPECT_EQ(FailureTracker::key_for("2001:DB8:1:2::ffff"), "2001:db8:1:2::/64");
  EXPECT_EQ(FailureTracker::key_for("::ffff:192.0.2.7"), "192.0.2.7");
  EXPECT_EQ(FailureTracker::key_for("192.0.2.7"), "192.0.2.7");
  EXPECT_EQ(FailureTracker::key_for("::1"), "::/64");
  EXPECT_EQ(FailureTracker::key_for("unix"), "unix");

  FakeClock clock;
  FailureTracker tracker(options(), clock.clock());
  EXPECT_EQ(tracker.record_failure("2001:db8:1:2::1"), 1000ms);
  EXPECT_EQ(tracker.record_failure("2001:db8:1:2::2"), 2000ms);  // same /64
  EXPECT_EQ(tracker.record_failure("2001:db8:1:3::1"), 1000ms);  // another /64
  EXPECT_EQ(tracker.record_failure("192.0.2.7"), 1000ms);
  EXPECT_EQ(tracker.record_failure("::ffff:192.0.2.7"), 2000ms);
}

TEST(FailureTracker, MemoryIsBoundedByEvictingTheLeastRecent) {
  FakeClock clock;
  FailureTrackerOptions o = options();
  o.max_tracked = 3;
  FailureTracker tracker(o, clock.clock());
  tracker.record_failure("10.0.0.1");
  tracker.record_failure("10.0.0.1");
  tracker.record_failure("10.0.0.2");
  tracker.record_failure("10.0.0.3");
  tracker.record_failure("10.0.0.1");  // now the most recent
  tracker.record_failure("10.0.0.4");  // evicts 10.0.0.2, the least recent
  EXPECT_EQ(tracker.tracked(), 3u);
  EXPECT_EQ(tracker.failures("10.0.0.1"), 3u);
  EXPECT_EQ(tracker.failures("10.0.0.2"), 0u);
  EXPECT_EQ(tracker.failures("10.0.0.3"), 1u);
  EXPECT_EQ(tracker.failures("10.0.0.4"), 1u);
  for (int i = 0; i < 1000; ++i) {
    tracker.record_failure("10.1." + std::to_string(i / 256) + "." + std::to_string(i % 256));
  }
  EXPECT_EQ(tracker.tracked(), 3u);
}

TEST(FailureTracker, ZeroCapacityStillDelays) {
  FailureTrackerOptions o = options();
  o.max_tracked = 0;
  FailureTracker tracker(o);
  EXPECT_EQ(tracker.record_failure("10.0.0.1"), 1000ms);
  EXPECT_EQ(tracker.record_failure("10.0.0.1"), 1000ms);
  EXPECT_EQ(tracker.tracked(), 0u);
}

TEST(FailureTracker, ZeroBaseMeansNoDelay) {
  FailureTrackerOptions o = options();
  o.base_delay = 0ms;
  FailureTracker tracker(o);
  for (int i = 0; i < 10; ++i) {
    EXPECT_EQ(tracker.record_failure("10.0.0.1"), 0ms);
  }
}

TEST(FailureTracker, ConcurrentUseFromManyThreads) {
  FailureTrackerOptions o = options();
  o.max_tracked = 50;
  FailureTracker tracker(o);  // the real clock
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&tracker, t] {
      for (int i = 0; i < 2000; ++i) {
        std::string address = "10.0." + std::to_string(t) + "." + std::to_string(i % 80);
        auto delay = tracker.record_failure(address);
        EXPECT_GE(delay, 1000ms);
        EXPECT_LE(delay, 10000ms);
        (void)tracker.failures(address);
      }
    });
  }
  for (auto& thread : threads) {
    thread.join();
  }
  EXPECT_EQ(tracker.tracked(), 50u);
}

}  // namespace
}  // namespace peregrine::auth
