#pragma once

// Counts, latencies, errors and violations of one run, and the two ways of
// printing them: a human table and the JSON bench/compare.sh reads
// (docs/peregrine-bench.md gives its fields).
//
// Thread safety: none; the generator runs on one thread.

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "bench/loadgen/options.h"

namespace peregrine::bench {

struct OpStats {
  std::uint64_t count = 0;   // completed without error
  std::uint64_t errors = 0;  // NO/BAD where OK was due, lost connections
  std::vector<std::uint32_t> latencies_us;
};

struct Percentiles {
  std::uint32_t p50_us = 0;
  std::uint32_t p99_us = 0;
};

// p50 and p99 (nearest rank) of `samples`, which it reorders.
Percentiles percentiles(std::vector<std::uint32_t>& samples);

class Stats {
 public:
  static constexpr std::size_t kMaxSamples = 20;

  void completed(Op op, std::uint32_t latency_us);
  void error(Op op, std::string_view what);
  void violation(std::string_view what);

  std::uint64_t ops() const;
  std::uint64_t errors() const { return errors_; }
  std::uint64_t violations() const { return violations_; }

  struct RunInfo {
    std::string workload;
    int clients = 0;
    double seconds = 0;
  };
  std::string human(const RunInfo& run);
  std::string json(const RunInfo& run);

 private:
  std::array<OpStats, kOpCount> ops_{};
  std::uint64_t errors_ = 0;
  std::uint64_t violations_ = 0;
  std::vector<std::string> error_samples_;
  std::vector<std::string> violation_samples_;
};

}  // namespace peregrine::bench
