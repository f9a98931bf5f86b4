#pragma once

// Logging: one event a line on stderr, as `key=value` fields after the time
// and the level, so that a line is both readable and greppable:
//
//   2024-05-01T12:00:00.123Z level=info event=conn.open id=7 peer=192.0.2.1
//
// Values with spaces, quotes, '=' or control characters are written quoted
// with C-style escapes. Each line is written with one write(2), so lines from
// different threads never interleave.
//
// Thread safety: every function may be called from any thread.

#include <initializer_list>
#include <string>
#include <string_view>

namespace peregrine::base {

enum class LogLevel { kError, kWarn, kInfo, kDebug };
// "error", "warn", "info", "debug": as in log lines and the [log] level key.
const char* to_string(LogLevel level);

// Events above `level` are dropped. The default is kInfo.
void set_log_level(LogLevel level);
bool log_enabled(LogLevel level);

// One `key=value` field. The key is written as is (keep it a short word).
struct LogField {
  LogField(std::string_view k, std::string_view v) : key(k), value(v) {}
  LogField(std::string_view k, const char* v) : key(k), value(v) {}
  LogField(std::string_view k, const std::string& v) : key(k), value(v) {}
  LogField(std::string_view k, bool v) : key(k), value(v ? "true" : "false") {}
  LogField(std::string_view k, int v) : key(k), value(std::to_string(v)) {}
  LogField(std::string_view k, unsigned v) : key(k), value(std::to_string(v)) {}
  LogField(std::string_view k, long v) : key(k), value(std::to_string(v)) {}
  LogField(std::string_view k, unsigned long v) : key(k), value(std::to_string(v)) {}
  LogField(std::string_view k, long long v) : key(k), value(std::to_string(v)) {}
  LogField(std::string_view k, unsigned long long v) : key(k), value(std::to_string(v)) {}

  std::string_view key;
  std::string value;
};

// Writes one event line if `level` is enabled.
void log(LogLevel level, std::string_view event, std::initializer_list<LogField> fields = {});

// The line log() writes, without the time stamp and newline (for tests).
std::string format_log_line(LogLevel level, std::string_view event,
                            std::initializer_list<LogField> fields);

}  // namespace peregrine::base
