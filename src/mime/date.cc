#include "mime/date.h"

#include <array>
#include <string_view>

#include "base/ascii.h"

namespace peregrine::mime {

namespace {

// Longer numbers are no part of a date (and could overflow).
constexpr size_t kMaxDigits = 9;
constexpr int kMaxCommentDepth = 32;

constexpr std::array<std::string_view, 12> kMonths = {
    "january", "february", "march",     "april",   "may",      "june",
    "july",    "august",   "september", "october", "november", "december"};

constexpr std::array<std::string_view, 7> kWeekdays = {
    "monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"};

struct NamedZone {
  std::string_view name;
  int minutes;
};

// RFC 5322 §4.3 obsolete zones, then names common in real mail. Military
// letters other than Z are read as unknown (0), as §4.3 says to.
constexpr NamedZone kZones[] = {
    {"ut", 0},        {"utc", 0},       {"gmt", 0},       {"z", 0},         {"est", -5 * 60},
    {"edt", -4 * 60}, {"cst", -6 * 60}, {"cdt", -5 * 60}, {"mst", -7 * 60}, {"mdt", -6 * 60},
    {"pst", -8 * 60}, {"pdt", -7 * 60}, {"wet", 0},       {"west", 60},     {"bst", 60},
    {"cet", 60},      {"cest", 120},    {"met", 60},      {"mest", 120},    {"eet", 120},
    {"eest", 180},    {"msk", 180},     {"jst", 540},     {"kst", 540},     {"hkt", 480},
    {"sgt", 480},     {"aest", 600},    {"aedt", 660},    {"nzst", 720},    {"nzdt", 780},
    {"akst", -540},   {"akdt", -480},   {"hst", -600},
};

// `word` is a prefix (of at least three letters) of `full`.
bool abbreviates(std::string_view word, std::string_view full) {
  return word.size() >= 3 && word.size() <= full.size() &&
         base::iequals(word, full.substr(0, word.size()));
}

int month_of(std::string_view word) {
  for (size_t i = 0; i < kMonths.size(); ++i) {
    if (abbreviates(word, kMonths[i])) {
      return static_cast<int>(i) + 1;
    }
  }
  if (base::iequals(word, "sept")) {
    return 9;
  }
  return 0;
}

bool is_weekday(std::string_view word) {
  for (std::string_view day : kWeekdays) {
    if (abbreviates(word, day)) {
      return true;
    }
  }
  return base::iequals(word, "tues") || base::iequals(word, "thur") || base::iequals(word, "thurs");
}

bool is_leap(int64_t y) { return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0; }

int days_in_month(int64_t y, int m) {
  static constexpr std::array<int, 12> kDays = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  return m == 2 && is_leap(y) ? 29 : kDays[static_cast<size_t>(m - 1)];
}

// Days from 1970-01-01 to y-m-d in the proleptic Gregorian calendar
// (Howard Hinnant's days_from_civil).
int64_t days_from_civil(int64_t y, int m, int d) {
  y -= m <= 2 ? 1 : 0;
  const int64_t era = (y >= 0 ? y : y - 399) / 400;
  const int64_t yoe = y - era * 400;
  const int64_t doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1;
  const int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + doe - 719468;
}

class DateParser {
 public:
  explicit DateParser(std::string_view s) : s_(s) {}

  std::optional<DateTime> parse() {
    while (pos_ < s_.size()) {
      const char c = s_[pos_];
      if (base::is_wsp(c) || c == ',' || c == '\r' || c == '\n') {
        ++pos_;
        space_before_ = true;
        continue;
      }
      if (c == '(') {
        skip_comment();
        space_before_ = true;
        continue;
      }
      if (base::is_digit(c)) {
        number();
      } else if (c == '+' || c == '-') {
        sign();
      } else if (base::is_alpha(c)) {
        word();
      } else {
        ++pos_;  // '.', '/', 8-bit bytes...: separators
        after_time_ = false;
        after_utc_word_ = false;
      }
      space_before_ = false;
    }
    return result();
  }

 private:
  size_t digits_end(size_t from) const {
    size_t end = from;
    while (end < s_.size() && base::is_digit(s_[end])) {
      ++end;
    }
    return end;
  }

  // Value of s_[from, end); -1 when there are too many digits.
  int value(size_t from, size_t end) const {
    if (end - from > kMaxDigits || end == from) {
      return -1;
    }
    int v = 0;
    for (size_t i = from; i < end; ++i) {
      v = v * 10 + (s_[i] - '0');
    }
    return v;
  }

  bool digit_at(size_t i) const { return i < s_.size() && base::is_digit(s_[i]); }

  void skip_comment() {
    int depth = 0;
    for (; pos_ < s_.size(); ++pos_) {
      const char c = s_[pos_];
      if (c == '\\' && pos_ + 1 < s_.size()) {
        ++pos_;
      } else if (c == '(') {
        depth = depth < kMaxCommentDepth ? depth + 1 : depth;
      } else if (c == ')' && --depth == 0) {
        ++pos_;
        return;
      }
    }
  }

  void number() {
    const size_t begin = pos_;
    const size_t end = digits_end(begin);
    pos_ = end;
    after_utc_word_ = false;
    const int v = value(begin, end);
    if (v < 0) {
      bad_ = true;
      return;
    }
    if (end < s_.size() && s_[end] == ':' && digit_at(end + 1)) {
      time(v, end - begin);
      return;
    }
    after_time_ = false;
    if (end - begin == 4 && end < s_.size() && s_[end] == '-' && digit_at(end + 1)) {
      iso_date(v);
      return;
    }
    // The first short number is the day, before the month ("12 Jan 2004") or
    // after it ("Jan 12 2004"); the next one is the year.
    if (day_ < 0 && end - begin <= 2) {
      day_ = v;
      return;
    }
    if (year_ < 0) {
      year_ = v;
      year_digits_ = end - begin;
    }
  }

  // "hh:mm[:ss[.fraction]]", the hour already read.
  void time(int hour, size_t hour_digits) {
    const size_t min_begin = pos_ + 1;
    const size_t min_end = digits_end(min_begin);
    int minute = value(min_begin, min_end);
    int second = 0;
    pos_ = min_end;
    if (pos_ + 1 < s_.size() && s_[pos_] == ':' && digit_at(pos_ + 1)) {
      const size_t sec_end = digits_end(pos_ + 1);
      second = value(pos_ + 1, sec_end);
      if (sec_end - (pos_ + 1) > 2) {
        second = -1;
      }
      pos_ = sec_end;
      if (pos_ + 1 < s_.size() && s_[pos_] == '.' && digit_at(pos_ + 1)) {
        pos_ = digits_end(pos_ + 1);
      }
    }
    if (hour_ >= 0) {
      return;  // a second time is not ours
    }
    if (hour_digits > 2 || min_end - min_begin > 2) {
      bad_ = true;
      return;
    }
    hour_ = hour;
    minute_ = minute;
    second_ = second;
    after_time_ = true;
  }

  // "yyyy-mm-dd", optionally followed by 'T' and a time; the year read.
  void iso_date(int year) {
    const size_t m_begin = pos_ + 1;
    const size_t m_end = digits_end(m_begin);
    pos_ = m_end;
    if (!(pos_ < s_.size() && s_[pos_] == '-' && digit_at(pos_ + 1))) {
      bad_ = true;
      return;
    }
    const size_t d_begin = pos_ + 1;
    const size_t d_end = digits_end(d_begin);
    pos_ = d_end;
    if (m_end - m_begin > 2 || d_end - d_begin > 2 || year_ >= 0 || month_ != 0) {
      bad_ = true;
      return;
    }
    year_ = year;
    year_digits_ = 4;
    month_ = value(m_begin, m_end);
    day_ = value(d_begin, d_end);
    if (month_ == 0) {
      bad_ = true;  // "2004-00-01"
    }
    if (pos_ + 1 < s_.size() && (s_[pos_] == 'T' || s_[pos_] == 't') && digit_at(pos_ + 1)) {
      ++pos_;
    }
  }

  // "+hhmm", "-hhmm", "+hh:mm", "+hh", "+h"; a '-' glued to a word or number
  // ("12-Jan-2004") is only a separator.
  void sign() {
    const bool negative = s_[pos_] == '-';
    const bool zone_position = !negative || space_before_ || after_time_ || after_utc_word_;
    if (!digit_at(pos_ + 1) || !zone_position) {
      ++pos_;
      after_time_ = false;
      after_utc_word_ = false;
      return;
    }
    const size_t begin = pos_ + 1;
    const size_t end = digits_end(begin);
    pos_ = end;
    after_time_ = false;
    after_utc_word_ = false;
    const size_t n = end - begin;
    int hours = -1;
    int minutes = 0;
    if (n == 4) {
      hours = value(begin, begin + 2);
      minutes = value(begin + 2, end);
    } else if (n == 3) {
      hours = value(begin, begin + 1);
      minutes = value(begin + 1, end);
    } else if (n <= 2) {
      hours = value(begin, end);
      if (pos_ + 1 < s_.size() && s_[pos_] == ':' && digit_at(pos_ + 1)) {
        const size_t m_end = digits_end(pos_ + 1);
        minutes = m_end - (pos_ + 1) == 2 ? value(pos_ + 1, m_end) : -1;
        pos_ = m_end;
      }
    }
    if (numeric_zone_) {
      return;
    }
    numeric_zone_ = true;
    // Offsets past a day are nonsense: the zone is then unknown (0).
    if (hours >= 0 && hours <= 23 && minutes >= 0 && minutes <= 59) {
      zone_ = (negative ? -1 : 1) * (hours * 60 + minutes);
    } else {
      zone_ = 0;
    }
  }

  void word() {
    const size_t begin = pos_;
    while (pos_ < s_.size() && base::is_alpha(s_[pos_])) {
      ++pos_;
    }
    const std::string_view w = s_.substr(begin, pos_ - begin);
    const bool was_after_time = after_time_;
    after_time_ = false;
    after_utc_word_ = false;
    if (const int m = month_of(w); m != 0) {
      if (month_ == 0) {
        month_ = m;
      }
      return;
    }
    if (is_weekday(w)) {
      return;
    }
    if (base::iequals(w, "am") || base::iequals(w, "pm")) {
      if (was_after_time && hour_ >= 1 && hour_ <= 12) {
        hour_ = hour_ % 12 + (base::iequals(w, "pm") ? 12 : 0);
      }
      after_time_ = was_after_time;
      return;
    }
    for (const NamedZone& zone : kZones) {
      if (base::iequals(w, zone.name)) {
        if (!numeric_zone_ && !named_zone_) {
          named_zone_ = true;
          zone_ = zone.minutes;
        }
        after_utc_word_ = zone.minutes == 0 && w.size() >= 2;  // "GMT+0200"
        return;
      }
    }
    if (w.size() == 1) {
      named_zone_ = true;  // military zone: unknown, 0 (RFC 5322 §4.3)
      if (!numeric_zone_) {
        zone_ = 0;
      }
    }
    // Anything else is ignored.
  }

  std::optional<DateTime> result() const {
    if (bad_ || day_ < 0 || month_ < 1 || month_ > 12 || year_ < 0) {
      return std::nullopt;
    }
    int64_t year = year_;
    if (year_digits_ <= 2) {
      year += year < 50 ? 2000 : 1900;
    } else if (year_digits_ == 3) {
      year += 1900;
    } else if (year_digits_ > 4) {
      return std::nullopt;
    }
    if (day_ < 1 || day_ > days_in_month(year, month_)) {
      return std::nullopt;
    }
    const int hour = hour_ < 0 ? 0 : hour_;
    if (hour > 23 || minute_ < 0 || minute_ > 59 || second_ < 0 || second_ > 60) {
      return std::nullopt;
    }
    DateTime dt;
    dt.utc_seconds = days_from_civil(year, month_, day_) * 86400 + hour * 3600 + minute_ * 60 +
                     second_ - static_cast<int64_t>(zone_) * 60;
    dt.tz_offset_minutes = zone_;
    return dt;
  }

  std::string_view s_;
  size_t pos_ = 0;
  bool space_before_ = true;
  bool after_time_ = false;
  bool after_utc_word_ = false;
  bool bad_ = false;

  int day_ = -1;
  int month_ = 0;
  int year_ = -1;
  size_t year_digits_ = 0;
  int hour_ = -1;
  int minute_ = 0;
  int second_ = 0;
  bool numeric_zone_ = false;
  bool named_zone_ = false;
  int zone_ = 0;
};

}  // namespace

std::optional<DateTime> parse_date(std::string_view value) { return DateParser(value).parse(); }

}  // namespace peregrine::mime
