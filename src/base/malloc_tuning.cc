#include "base/malloc_tuning.h"

#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <utility>

#include "base/log.h"

namespace peregrine::base {

namespace {

constexpr std::pair<std::string_view, std::string_view> kTunables[] = {
    {"glibc.malloc.hugetlb", "1"},
    {"glibc.malloc.arena_max", "1"},
};

// Whether the colon-separated list `tunables` names `name` (name=value).
bool sets(std::string_view tunables, std::string_view name) {
  while (!tunables.empty()) {
    const std::size_t end = tunables.find(':');
    std::string_view item = tunables.substr(0, end);
    if (item.size() > name.size() && item.starts_with(name) && item[name.size()] == '=') {
      return true;
    }
    if (end == std::string_view::npos) {
      break;
    }
    tunables.remove_prefix(end + 1);
  }
  return false;
}

}  // namespace

std::string tuned_glibc_tunables(std::string_view current) {
  std::string out(current);
  for (const auto& [name, value] : kTunables) {
    if (sets(current, name)) {
      continue;
    }
    if (!out.empty()) {
      out += ':';
    }
    out.append(name).append("=").append(value);
  }
  return out;
}

std::optional<std::string> run_again_with_tuned_malloc(char** argv) {
  const char* current = std::getenv("GLIBC_TUNABLES");
  const bool had = current != nullptr;
  const std::string now = had ? current : "";
  const std::string tuned = tuned_glibc_tunables(now);
  if (tuned == now) {
    return tuned;
  }
  if (::setenv("GLIBC_TUNABLES", tuned.c_str(), 1) != 0) {
    return std::nullopt;
  }
  ::execv("/proc/self/exe", argv);
  log(LogLevel::kWarn, "malloc_tuning_failed",
      {{"reason", "cannot execute /proc/self/exe"}, {"error", std::strerror(errno)}});
  // Leave the environment as it was found, for any child this process starts.
  if (had) {
    ::setenv("GLIBC_TUNABLES", now.c_str(), 1);
  } else {
    ::unsetenv("GLIBC_TUNABLES");
  }
  return std::nullopt;
}

}  // namespace peregrine::base
