#include "imap/proto/date_time.h"

#include <cstdio>

#include "base/ascii.h"

namespace peregrine::imap {
namespace {

constexpr const char* kMonths[12] = {"Jan", "Feb", "Mar", "Apr", "May", "Jun",
                                     "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};

bool is_leap(int y) { return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0; }

int days_in_month(int y, int m) {
  static constexpr int kDays[12] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  return m == 2 && is_leap(y) ? 29 : kDays[m - 1];
}

// Reads exactly `n` digits at s[pos]; false if any is not a digit.
bool digits(std::string_view s, size_t pos, size_t n, int& out) {
  if (pos + n > s.size()) {
    return false;
  }
  out = 0;
  for (size_t i = 0; i < n; ++i) {
    if (!base::is_digit(s[pos + i])) {
      return false;
    }
    out = out * 10 + (s[pos + i] - '0');
  }
  return true;
}

// Parses "d-Mon-yyyy" at the start of s (day 1 or 2 digits, or SP DIGIT
// when fixed_day); returns the bytes used, 0 on error.
size_t parse_date_prefix(std::string_view s, bool allow_space_day, Date& date) {
  size_t pos = 0;
  if (allow_space_day && !s.empty() && s[0] == ' ') {
    pos = 1;
  }
  size_t day_len = 0;
  while (pos + day_len < s.size() && base::is_digit(s[pos + day_len]) && day_len < 3) {
    ++day_len;
  }
  if (day_len == 0 || day_len > 2 || (pos == 1 && day_len != 1)) {
    return 0;
  }
  digits(s, pos, day_len, date.day);
  pos += day_len;
  if (pos + 5 > s.size() || s[pos] != '-' || s[pos + 4] != '-') {
    return 0;
  }
  std::string_view month = s.substr(pos + 1, 3);
  date.month = 0;
  for (int m = 0; m < 12; ++m) {
    if (base::iequals(month, kMonths[m])) {
      date.month = m + 1;
    }
  }
  pos += 5;
  if (date.month == 0 || !digits(s, pos, 4, date.year) || date.year < 1) {
    return 0;
  }
  if (date.day < 1 || date.day > days_in_month(date.year, date.month)) {
    return 0;
  }
  return pos + 4;
}

void append_2(std::string& out, int n) {
  out.push_back(static_cast<char>('0' + n / 10 % 10));
  out.push_back(static_cast<char>('0' + n % 10));
}

}  // namespace

int64_t days_since_epoch(const Date& date) {
  // Howard Hinnant's days_from_civil.
  int64_t y = date.year - (date.month <= 2 ? 1 : 0);
  int64_t era = (y >= 0 ? y : y - 399) / 400;
  int64_t yoe = y - era * 400;
  int64_t mp = (date.month + 9) % 12;
  int64_t doy = (153 * mp + 2) / 5 + date.day - 1;
  int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + doe - 719468;
}

Date date_from_days(int64_t z) {
  z += 719468;
  int64_t era = (z >= 0 ? z : z - 146096) / 146097;
  int64_t doe = z - era * 146097;
  int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  int64_t y = yoe + era * 400;
  int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  int64_t mp = (5 * doy + 2) / 153;
  int64_t d = doy - (153 * mp + 2) / 5 + 1;
  int64_t m = mp < 10 ? mp + 3 : mp - 9;
  return Date{static_cast<int>(y + (m <= 2 ? 1 : 0)), static_cast<int>(m), static_cast<int>(d)};
}

Parsed<Date> parse_date(std::string_view text) {
  Date date;
  size_t used = parse_date_prefix(text, /*allow_space_day=*/false, date);
  if (used == 0 || used != text.size()) {
    return parse_error("invalid date " + excerpt(text));
  }
  return date;
}

Parsed<mime::DateTime> parse_date_time(std::string_view text) {
  Date date;
  size_t pos = parse_date_prefix(text, /*allow_space_day=*/true, date);
  int hour = 0;
  int minute = 0;
  int second = 0;
  int zh = 0;
  int zm = 0;
  // " hh:mm:ss +hhmm"
  bool ok = pos != 0 && text.size() == pos + 15 && text[pos] == ' ' &&
            digits(text, pos + 1, 2, hour) && text[pos + 3] == ':' &&
            digits(text, pos + 4, 2, minute) && text[pos + 6] == ':' &&
            digits(text, pos + 7, 2, second) && text[pos + 9] == ' ' &&
            (text[pos + 10] == '+' || text[pos + 10] == '-') && digits(text, pos + 11, 2, zh) &&
            digits(text, pos + 13, 2, zm) && hour <= 23 && minute <= 59 && second <= 60 &&
            zh <= 23 && zm <= 59;
  if (!ok) {
    return parse_error("invalid date-time " + excerpt(text));
  }
  int zone = (zh * 60 + zm) * (text[pos + 10] == '-' ? -1 : 1);
  mime::DateTime t;
  t.tz_offset_minutes = zone;
  t.utc_seconds = days_since_epoch(date) * 86400 + hour * 3600 + minute * 60 + second -
                  static_cast<int64_t>(zone) * 60;
  return t;
}

void append_date(std::string& out, const Date& date) {
  out += std::to_string(date.day);
  out.push_back('-');
  out += kMonths[(date.month - 1) % 12];
  out.push_back('-');
  char year[8];
  std::snprintf(year, sizeof(year), "%04d", date.year % 10000);
  out += year;
}

void append_date_time(std::string& out, const mime::DateTime& t) {
  int64_t local = t.utc_seconds + static_cast<int64_t>(t.tz_offset_minutes) * 60;
  int64_t days = local >= 0 ? local / 86400 : -((-local + 86399) / 86400);
  int64_t secs = local - days * 86400;
  Date date = date_from_days(days);
  out.push_back('"');
  append_2(out, date.day);
  out.push_back('-');
  out += kMonths[(date.month - 1) % 12];
  out.push_back('-');
  char year[8];
  std::snprintf(year, sizeof(year), "%04d", date.year < 0 ? 0 : date.year % 10000);
  out += year;
  out.push_back(' ');
  append_2(out, static_cast<int>(secs / 3600));
  out.push_back(':');
  append_2(out, static_cast<int>(secs / 60 % 60));
  out.push_back(':');
  append_2(out, static_cast<int>(secs % 60));
  out.push_back(' ');
  int zone = t.tz_offset_minutes;
  out.push_back(zone < 0 ? '-' : '+');
  zone = zone < 0 ? -zone : zone;
  append_2(out, zone / 60 % 100);
  append_2(out, zone % 60);
  out.push_back('"');
}

}  // namespace peregrine::imap
