#include "net/ip_limiter.h"

namespace peregrine::net {

bool IpLimiter::acquire(std::string_view address) {
  std::lock_guard lock(mu_);
  auto [it, inserted] = counts_.try_emplace(std::string(address), 0);
  if (max_ != 0 && it->second >= max_) {
    return false;
  }
  ++it->second;
  return true;
}

void IpLimiter::release(std::string_view address) {
  std::lock_guard lock(mu_);
  auto it = counts_.find(std::string(address));
  if (it == counts_.end()) {
    return;
  }
  if (--it->second == 0) {
    counts_.erase(it);
  }
}

std::uint32_t IpLimiter::count(std::string_view address) const {
  std::lock_guard lock(mu_);
  auto it = counts_.find(std::string(address));
  return it == counts_.end() ? 0 : it->second;
}

std::size_t IpLimiter::addresses() const {
  std::lock_guard lock(mu_);
  return counts_.size();
}

}  // namespace peregrine::net
