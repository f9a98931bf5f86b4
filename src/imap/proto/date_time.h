#pragma once

// IMAP dates (RFC 3501 §9 / RFC 9051 §9): SEARCH's date ("1-Feb-1994") and
// the date-time of APPEND and INTERNALDATE ("17-Jul-1996 02:44:25 -0700").
// A date-time is a mime::DateTime (UTC seconds + the zone as written).

#include <cstdint>
#include <string>
#include <string_view>

#include "imap/proto/result.h"
#include "mime/date.h"

namespace peregrine::imap {

struct Date {
  int year = 1970;  // 1..9999
  int month = 1;    // 1..12
  int day = 1;      // 1..31, valid for the month

  bool operator==(const Date&) const = default;
};

// date-text: day "-" month "-" year, the day one or two digits, the month a
// three-letter name in any case, the year four digits. Rejects days the
// month does not have ("30-Feb-2024"). Without the optional DQUOTEs.
Parsed<Date> parse_date(std::string_view text);

// date-time without its DQUOTEs: date-day-fixed ("17", " 7" or "07"; "7"
// is accepted too), "-" month "-" year SP time SP zone.
Parsed<mime::DateTime> parse_date_time(std::string_view text);

// Days since 1970-01-01 of a valid date (negative before).
int64_t days_since_epoch(const Date& date);
// The calendar date of a day number.
Date date_from_days(int64_t days);

// Appends the quoted date-time of `t` in its own zone:
// "\"17-Jul-1996 02:44:25 -0700\"".
void append_date_time(std::string& out, const mime::DateTime& t);
// Appends a date-text: "1-Feb-1994".
void append_date(std::string& out, const Date& date);

}  // namespace peregrine::imap
