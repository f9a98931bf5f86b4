#pragma once

// Slows down password guessing: counts recent failed logins per client
// address and says how long to wait before answering the next failure.
//
// The n-th recent failure from an address gets base * 2^(n-1), capped at
// max. Failures are forgiven one per `decay` of quiet: after a pause of
// 3 * decay, three are forgotten. IPv6 addresses count per /64 (one host
// usually owns the whole /64); an IPv4-mapped IPv6 address counts as its
// IPv4 address. Memory is bounded: past `max_tracked` addresses the least
// recently failing one is dropped.
//
// Thread safety
// -------------
// All methods may be called from any thread at once: one mutex guards the
// table, held for a hash lookup and no I/O.

#include <chrono>
#include <cstddef>
#include <functional>
#include <list>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>

namespace peregrine::auth {

struct FailureTrackerOptions {
  std::chrono::milliseconds base_delay{2000};
  std::chrono::milliseconds max_delay{15000};
  std::chrono::milliseconds decay{std::chrono::minutes(1)};
  std::size_t max_tracked = 10000;
};

class FailureTracker {
 public:
  using Clock = std::function<std::chrono::steady_clock::time_point()>;

  // `clock` defaults to steady_clock::now; tests pass a fake.
  explicit FailureTracker(FailureTrackerOptions options, Clock clock = nullptr);

  // Records a failed login from `address` (text form, "192.0.2.1" or
  // "2001:db8::1") and returns how long to delay the failure reply.
  std::chrono::milliseconds record_failure(std::string_view address);
  // The number of recent failures counted against `address`, after decay.
  unsigned failures(std::string_view address);
  // How many addresses are tracked now (at most options.max_tracked).
  std::size_t tracked() const;

  // The key an address counts under: the IPv4 address, the IPv6 /64 prefix
  // ("2001:db8:1:2::/64"), or the text itself if it is neither.
  static std::string key_for(std::string_view address);

 private:
  struct Entry {
    unsigned failures = 0;
    std::chrono::steady_clock::time_point last;  // last failure, advanced by decays
    std::list<std::string>::iterator lru;        // position in lru_
  };

  // Forgives the failures due since entry.last. Requires mu_.
  void decay(Entry& entry, std::chrono::steady_clock::time_point now) const;
  std::chrono::milliseconds delay_for(unsigned failures) const;

  const FailureTrackerOptions options_;
  const Clock clock_;
  mutable std::mutex mu_;
  std::unordered_map<std::string, Entry> entries_;  // guarded by mu_
  std::list<std::string> lru_;                      // guarded by mu_; front = most recent
};

}  // namespace peregrine::auth
