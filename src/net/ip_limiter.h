#pragma once

// Counts open connections per client address, across every listener, and
// says whether one more may open. Addresses are compared in their text form
// as PeerAddress gives them (IPv4-mapped IPv6 already folded to IPv4), so a
// client counts once whichever listener or address family it came in by.
//
// Thread safety: every function may be called from any thread.

#include <cstddef>
#include <cstdint>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>

namespace peregrine::net {

class IpLimiter {
 public:
  // At most `max_per_address` connections per address; zero means no limit.
  explicit IpLimiter(std::uint32_t max_per_address) : max_(max_per_address) {}

  // Counts one more connection from `address` and returns true, or returns
  // false (counting nothing) if the address is at its limit.
  bool acquire(std::string_view address);
  // Undoes one successful acquire().
  void release(std::string_view address);
  // Connections counted for `address` now.
  std::uint32_t count(std::string_view address) const;
  // Addresses with at least one connection.
  std::size_t addresses() const;

 private:
  const std::uint32_t max_;
  mutable std::mutex mu_;
  std::unordered_map<std::string, std::uint32_t> counts_;  // guarded by mu_; no zero entries
};

}  // namespace peregrine::net
