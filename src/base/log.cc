#include "base/log.h"

#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <ctime>

namespace peregrine::base {
namespace {

std::atomic<int> g_level{static_cast<int>(LogLevel::kInfo)};

bool needs_quotes(std::string_view value) {
  if (value.empty()) {
    return true;
  }
  for (unsigned char c : value) {
    if (c <= ' ' || c == '"' || c == '=' || c == '\\' || c == 0x7f) {
      return true;
    }
  }
  return false;
}

void append_value(std::string& out, std::string_view value) {
  if (!needs_quotes(value)) {
    out += value;
    return;
  }
  static constexpr char kHex[] = "0123456789abcdef";
  out += '"';
  for (unsigned char c : value) {
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\t':
        out += "\\t";
        break;
      default:
        if (c < ' ' || c == 0x7f) {
          out += "\\x";
          out += kHex[c >> 4];
          out += kHex[c & 15];
        } else {
          out += static_cast<char>(c);
        }
    }
  }
  out += '"';
}

void append_time(std::string& out) {
  auto now = std::chrono::system_clock::now();
  auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(now.time_since_epoch()).count();
  std::time_t secs = static_cast<std::time_t>(ms / 1000);
  std::tm tm{};
  gmtime_r(&secs, &tm);
  char buf[32];
  std::size_t n = std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%S", &tm);
  out.append(buf, n);
  char frac[8];
  int m = static_cast<int>(ms % 1000);
  frac[0] = '.';
  frac[1] = static_cast<char>('0' + m / 100);
  frac[2] = static_cast<char>('0' + m / 10 % 10);
  frac[3] = static_cast<char>('0' + m % 10);
  frac[4] = 'Z';
  frac[5] = ' ';
  out.append(frac, 6);
}

}  // namespace

const char* to_string(LogLevel level) {
  switch (level) {
    case LogLevel::kError:
      return "error";
    case LogLevel::kWarn:
      return "warn";
    case LogLevel::kInfo:
      return "info";
    case LogLevel::kDebug:
      return "debug";
  }
  return "info";
}

void set_log_level(LogLevel level) { g_level.store(static_cast<int>(level)); }

bool log_enabled(LogLevel level) {
  return static_cast<int>(level) <= g_level.load(std::memory_order_relaxed);
}

std::string format_log_line(LogLevel level, std::string_view event,
                            std::initializer_list<LogField> fields) {
  std::string line;
  line.reserve(64 + fields.size() * 24);
  line += "level=";
  line += to_string(level);
  line += " event=";
  append_value(line, event);
  for (const LogField& field : fields) {
    line += ' ';
    line += field.key;
    line += '=';
    append_value(line, field.value);
  }
  return line;
}

void log(LogLevel level, std::string_view event, std::initializer_list<LogField> fields) {
  if (!log_enabled(level)) {
    return;
  }
  std::string line;
  append_time(line);
  line += format_log_line(level, event, fields);
  line += '\n';
  const char* p = line.data();
  std::size_t left = line.size();
  while (left > 0) {
    ssize_t n = ::write(STDERR_FILENO, p, left);
    if (n < 0 && errno == EINTR) {
      continue;
    }
    if (n <= 0) {
      return;  // nowhere to report a failure to log
    }
    p += n;
    left -= static_cast<std::size_t>(n);
  }
}

}  // namespace peregrine::base
