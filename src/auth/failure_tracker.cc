#include "auth/failure_tracker.h"

#include <arpa/inet.h>

#include <algorithm>
#include <cstring>
#include <utility>

namespace peregrine::auth {

FailureTracker::FailureTracker(FailureTrackerOptions options, Clock clock)
    : options_(options),
      clock_(clock ? std::move(clock) : Clock([] { return std::chrono::steady_clock::now(); })) {}

std::string FailureTracker::key_for(std::string_view address) {
  std::string text(address);
  in_addr v4;
  if (inet_pton(AF_INET, text.c_str(), &v4) == 1) {
    char out[INET_ADDRSTRLEN];
    return inet_ntop(AF_INET, &v4, out, sizeof(out));
  }
  in6_addr v6;
  if (inet_pton(AF_INET6, text.c_str(), &v6) == 1) {
    if (IN6_IS_ADDR_V4MAPPED(&v6)) {
      std::memcpy(&v4, &v6.s6_addr[12], 4);
      char out[INET_ADDRSTRLEN];
      return inet_ntop(AF_INET, &v4, out, sizeof(out));
    }
    std::memset(&v6.s6_addr[8], 0, 8);
    char out[INET6_ADDRSTRLEN];
    return std::string(inet_ntop(AF_INET6, &v6, out, sizeof(out))) + "/64";
  }
  return text;
}

void FailureTracker::decay(Entry& entry, std::chrono::steady_clock::time_point now) const {
  if (options_.decay.count() <= 0 || entry.failures == 0 || now <= entry.last) {
    return;
  }
  auto periods = (now - entry.last) / options_.decay;
  if (periods <= 0) {
    return;
  }
  if (static_cast<unsigned long long>(periods) >= entry.failures) {
    entry.failures = 0;
    entry.last = now;
  } else {
    entry.failures -= static_cast<unsigned>(periods);
    entry.last += periods * options_.decay;  // keep the partial period
  }
}

std::chrono::milliseconds FailureTracker::delay_for(unsigned failures) const {
  if (failures == 0) {
    return std::chrono::milliseconds(0);
  }
  std::chrono::milliseconds delay = options_.base_delay;
  for (unsigned i = 1; i < failures && delay < options_.max_delay; ++i) {
    delay *= 2;
  }
  return std::min(delay, options_.max_delay);
}

std::chrono::milliseconds FailureTracker::record_failure(std::string_view address) {
  std::string key = key_for(address);
  auto now = clock_();
  std::lock_guard<std::mutex> lock(mu_);
  auto it = entries_.find(key);
  if (it == entries_.end()) {
    if (options_.max_tracked == 0) {
      return delay_for(1);
    }
    while (entries_.size() >= options_.max_tracked) {
      entries_.erase(lru_.back());
      lru_.pop_back();
    }
    lru_.push_front(key);
    it = entries_.emplace(std::move(key), Entry{0, now, lru_.begin()}).first;
  } else {
    lru_.splice(lru_.begin(), lru_, it->second.lru);
    decay(it->second, now);
  }
  Entry& entry = it->second;
  if (entry.failures < 64) {  // the delay saturated long before
    ++entry.failures;
  }
  entry.last = now;
  return delay_for(entry.failures);
}

unsigned FailureTracker::failures(std::string_view address) {
  std::string key = key_for(address);
  auto now = clock_();
  std::lock_guard<std::mutex> lock(mu_);
  auto it = entries_.find(key);
  if (it == entries_.end()) {
    return 0;
  }
  decay(it->second, now);
  return it->second.failures;
}

std::size_t FailureTracker::tracked() const {
  std::lock_guard<std::mutex> lock(mu_);
  return entries_.size();
}

}  // namespace peregrine::auth
