#include "bench/loadgen/stats.h"

#include <fmt/core.h>

#include <algorithm>

namespace peregrine::bench {

namespace {

std::string json_string(std::string_view s) {
  std::string out = "\"";
  for (char c : s) {
    unsigned char u = static_cast<unsigned char>(c);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (u < 0x20 || u >= 0x7f) {
      out += fmt::format("\\u{:04x}", u);
    } else {
      out += c;
    }
  }
  return out + "\"";
}

std::string json_list(const std::vector<std::string>& items) {
  std::string out = "[";
  for (std::size_t i = 0; i < items.size(); ++i) {
    out.append(i ? ", " : "").append(json_string(items[i]));
  }
  return out + "]";
}

double per_second(std::uint64_t n, double seconds) { return seconds > 0 ? n / seconds : 0; }

}  // namespace

Percentiles percentiles(std::vector<std::uint32_t>& samples) {
  Percentiles p;
  if (samples.empty()) {
    return p;
  }
  auto rank = [&](double q) {
    std::size_t k = static_cast<std::size_t>(q * static_cast<double>(samples.size()));
    k = std::min(k, samples.size() - 1);
    std::nth_element(samples.begin(), samples.begin() + static_cast<long>(k), samples.end());
    return samples[k];
  };
  p.p50_us = rank(0.50);
  p.p99_us = rank(0.99);
  return p;
}

void Stats::completed(Op op, std::uint32_t latency_us) {
  OpStats& s = ops_[static_cast<std::size_t>(op)];
  ++s.count;
  s.latencies_us.push_back(latency_us);
}

void Stats::error(Op op, std::string_view what) {
  ++ops_[static_cast<std::size_t>(op)].errors;
  ++errors_;
  if (error_samples_.size() < kMaxSamples) {
    error_samples_.emplace_back(what.substr(0, 300));
  }
}

void Stats::violation(std::string_view what) {
  ++violations_;
  if (violation_samples_.size() < kMaxSamples) {
    violation_samples_.emplace_back(what.substr(0, 300));
  }
}

std::uint64_t Stats::ops() const {
  std::uint64_t n = 0;
  for (const OpStats& s : ops_) {
    n += s.count;
  }
  return n;
}

std::string Stats::human(const RunInfo& run) {
  std::string out =
      fmt::format("workload {}, {} clients, {:.2f} s\n", run.workload, run.clients, run.seconds);
  out += fmt::format("{:<12} {:>10} {:>10} {:>10} {:>10} {:>8}\n", "command", "count", "ops/s",
                     "p50 us", "p99 us", "errors");
  for (std::size_t i = 0; i < kOpCount; ++i) {
    OpStats& s = ops_[i];
    if (s.count == 0 && s.errors == 0) {
      continue;
    }
    Percentiles p = percentiles(s.latencies_us);
    out += fmt::format("{:<12} {:>10} {:>10.0f} {:>10} {:>10} {:>8}\n", op_name(static_cast<Op>(i)),
                       s.count, per_second(s.count, run.seconds), p.p50_us, p.p99_us, s.errors);
  }
  out += fmt::format("total {} ops, {:.0f} ops/s, {} errors, {} violations\n", ops(),
                     per_second(ops(), run.seconds), errors_, violations_);
  for (const std::string& e : error_samples_) {
    out += "error: " + e + "\n";
  }
  for (const std::string& v : violation_samples_) {
    out += "violation: " + v + "\n";
  }
  return out;
}

std::string Stats::json(const RunInfo& run) {
  std::string commands;
  for (std::size_t i = 0; i < kOpCount; ++i) {
    OpStats& s = ops_[i];
    if (s.count == 0 && s.errors == 0) {
      continue;
    }
    Percentiles p = percentiles(s.latencies_us);
    commands += fmt::format(
        "{}\"{}\": {{\"count\": {}, \"errors\": {}, \"p50_us\": {}, "
        "\"p99_us\": {}}}",
        commands.empty() ? "" : ", ", op_name(static_cast<Op>(i)), s.count, s.errors, p.p50_us,
        p.p99_us);
  }
  return fmt::format(
      "{{\"workload\": {}, \"clients\": {}, \"seconds\": {:.3f}, \"ops\": {}, "
      "\"ops_per_sec\": {:.1f}, \"errors\": {}, \"violations\": {}, \"commands\": {{{}}}, "
      "\"violation_samples\": {}, \"error_samples\": {}}}\n",
      json_string(run.workload), run.clients, run.seconds, ops(), per_second(ops(), run.seconds),
      errors_, violations_, commands, json_list(violation_samples_), json_list(error_samples_));
}

}  // namespace peregrine::bench
