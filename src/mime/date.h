#pragma once

// RFC 5322 dates, including the obsolete syntax (named zones such as EST or
// military letters, two-digit years, comments, missing seconds) and the broken
// forms common in real mail (missing weekday or zone, day and month swapped
// "Mon, Jan 12 2004", ISO-like "2004-01-12 10:00:00", ctime/asctime, extra
// spaces, "GMT+0200").

#include <cstdint>
#include <optional>
#include <string_view>

namespace peregrine::mime {

struct DateTime {
  // Seconds since the Unix epoch, UTC.
  int64_t utc_seconds = 0;
  // The zone as written, in minutes east of UTC (so local time =
  // utc_seconds + 60 * tz_offset_minutes). 0 for unknown zones.
  int32_t tz_offset_minutes = 0;

  bool operator==(const DateTime&) const = default;
};

// Parses a Date header value. Returns nullopt when no date can be recovered.
std::optional<DateTime> parse_date(std::string_view value);

}  // namespace peregrine::mime
