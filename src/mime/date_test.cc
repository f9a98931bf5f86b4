#include "mime/date.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace peregrine::mime {
namespace {

struct DateCase {
  std::string input;
  std::optional<DateTime> expected;
};

// Expected values computed independently (Python calendar.timegm).
TEST(ParseDate, Table) {
  const std::vector<DateCase> cases = {
      // RFC 5322 §A examples and the plain form.
      {"Fri, 21 Nov 1997 09:55:06 -0600", DateTime{880127706, -360}},
      {"Tue, 1 Jul 2003 10:52:37 +0200", DateTime{1057049557, 120}},
      {"Thu, 13 Feb 1969 23:32:54 -0330", DateTime{-27723426, -210}},
      {"Mon, 12 Jan 2004 10:00:00 +0000", DateTime{1073901600, 0}},
      {"Mon, 12 Jan 2004 10:00:00 -0000", DateTime{1073901600, 0}},
      {"Mon, 12 Jan 2004 10:00:00 +0100 (CET)", DateTime{1073898000, 60}},
      {"12 Jan 2004 10:00:00 +0100", DateTime{1073898000, 60}},
      {"Mon, 12 Jan 2004 10:00 +0100", DateTime{1073898000, 60}},
      // Obsolete zones (RFC 5322 §4.3).
      {"Mon, 12 Jan 2004 10:00:00 GMT", DateTime{1073901600, 0}},
      {"Mon, 12 Jan 2004 10:00:00 UT", DateTime{1073901600, 0}},
      {"Mon, 12 Jan 2004 10:00:00 UTC", DateTime{1073901600, 0}},
      {"Mon, 12 Jan 2004 10:00:00 Z", DateTime{1073901600, 0}},
      {"Mon, 12 Jan 2004 10:00:00 EST", DateTime{1073919600, -300}},
      {"Mon, 12 Jan 2004 10:00:00 EDT", DateTime{1073916000, -240}},
      {"Mon, 12 Jan 2004 10:00:00 CST", DateTime{1073923200, -360}},
      {"Mon, 12 Jan 2004 10:00:00 CDT", DateTime{1073919600, -300}},
      {"Mon, 12 Jan 2004 10:00:00 MST", DateTime{1073926800, -420}},
      {"Mon, 12 Jan 2004 10:00:00 MDT", DateTime{1073923200, -360}},
      {"Mon, 12 Jan 2004 10:00:00 PST", DateTime{1073930400, -480}},
      {"Mon, 12 Jan 2004 10:00:00 pdt", DateTime{1073926800, -420}},
      // Military letters other than Z: unknown, 0.
      {"Mon, 12 Jan 2004 10:00:00 A", DateTime{1073901600, 0}},
      {"Mon, 12 Jan 2004 10:00:00 m", DateTime{1073901600, 0}},
      {"Mon, 12 Jan 2004 10:00:00 Y", DateTime{1073901600, 0}},
      // A numeric zone wins over a name; names alone are used; unknown is 0.
      {"Mon, 12 Jan 2004 10:00:00 +0100 CET", DateTime{1073898000, 60}},
      {"Mon, 12 Jan 2004 10:00:00 CET", DateTime{1073898000, 60}},
      {"Mon, 12 Jan 2004 10:00:00", DateTime{1073901600, 0}},
      {"Mon, 12 Jan 2004 10:00:00 XYZ", DateTime{1073901600, 0}},
      // Two- and three-digit years.
      {"Mon, 12 Jan 04 10:00:00 +0000", DateTime{1073901600, 0}},
      {"Mon, 12 Jan 49 10:00:00 +0000", DateTime{2494058400, 0}},
      {"Mon, 12 Jan 50 10:00:00 +0000", DateTime{-630165600, 0}},
      {"Mon, 12 Jan 99 10:00:00 +0000", DateTime{916135200, 0}},
      {"Mon, 12 Jan 104 10:00:00 +0000", DateTime{1073901600, 0}},
      // Comments, weekday missing or wrong, case, long names.
      {"12 Jan 2004 10:00:00 -0800 (PST)", DateTime{1073930400, -480}},
      {"Tue, 12 Jan 2004 10:00:00 +0000", DateTime{1073901600, 0}},
      {"Mon, 12 jan 2004 10:00:00 +0000", DateTime{1073901600, 0}},
      {"Mon, 12 JANUARY 2004 10:00:00 +0000", DateTime{1073901600, 0}},
      {"Monday, 12 Sept 2004 10:00:00 +0000", DateTime{1094983200, 0}},
      {"Mon, 12 Jan 2004 10:00:00 +0100 (Central (European) Time)", DateTime{1073898000, 60}},
      {"(comment) Mon, 12 Jan 2004 10:00:00 +0100", DateTime{1073898000, 60}},
      // Month before day, no time, ISO, asctime.
      {"Mon, Jan 12 2004 10:00:00 +0000", DateTime{1073901600, 0}},
      {"Jan 12 2004", DateTime{1073865600, 0}},
      {"12 Jan 2004", DateTime{1073865600, 0}},
      {"2004-01-12 10:00:00", DateTime{1073901600, 0}},
      {"2004-01-12T10:00:00Z", DateTime{1073901600, 0}},
      {"2004-01-12T10:00:00+01:00", DateTime{1073898000, 60}},
      {"2004-01-12T10:00:00.123-05:30", DateTime{1073921400, -330}},
      {"2004-01-12", DateTime{1073865600, 0}},
      {"Mon Jan 12 10:00:00 2004", DateTime{1073901600, 0}},
      {"Mon Jan  2 10:00:00 2004", DateTime{1073037600, 0}},
      {"Mon Jan 12 10:00:00 PST 2004", DateTime{1073930400, -480}},
      // "GMT+0200" and friends, spacing, folding, dashes, AM/PM.
      {"Mon, 12 Jan 2004 10:00:00 GMT+0200", DateTime{1073894400, 120}},
      {"Mon, 12 Jan 2004 10:00:00 GMT-0500", DateTime{1073919600, -300}},
      {"Mon, 12 Jan 2004 10:00:00 UTC+2", DateTime{1073894400, 120}},
      {"  Mon,   12   Jan   2004   10:00:00   +0100  ", DateTime{1073898000, 60}},
      {"Mon,12 Jan 2004 10:00:00 +0100", DateTime{1073898000, 60}},
      {"Mon, 12 Jan 2004\r\n 10:00:00 +0100", DateTime{1073898000, 60}},
      {"12-Jan-2004 10:00:00 +0100", DateTime{1073898000, 60}},
      {"Mon, 12 Jan 2004 10:00:00 PM +0000", DateTime{1073944800, 0}},
      {"Mon, 12 Jan 2004 12:30:00 AM +0000", DateTime{1073867400, 0}},
      // Calendar edges: leap second, leap day, epoch, far years.
      {"Sat, 31 Dec 2016 23:59:60 +0000", DateTime{1483228800, 0}},
      {"Thu, 29 Feb 2024 12:00:00 +0000", DateTime{1709208000, 0}},
      {"Mon, 1 Jan 1900 00:00:00 +0000", DateTime{-2208988800, 0}},
      {"Fri, 31 Dec 9999 23:59:59 +0000", DateTime{253402300799, 0}},
      {"Thu, 01 Jan 1970 00:00:00 +0000", DateTime{0, 0}},
      {"Wed, 31 Dec 1969 23:59:59 +0000", DateTime{-1, 0}},
      // Zones past a day, or with minutes past 59, are unknown (0).
      {"Mon, 12 Jan 2004 10:00:00 +2400", DateTime{1073901600, 0}},
      {"Mon, 12 Jan 2004 10:00:00 +0160", DateTime{1073901600, 0}},
      {"Mon, 12 Jan 2004 10:00:00 +1400", DateTime{1073851200, 840}},
      // Out of range and garbage.
      {"", std::nullopt},
      {"garbage", std::nullopt},
      {"hello world 42", std::nullopt},
      {"Mon, 12 Foo 2004 10:00:00 +0000", std::nullopt},
      {"Mon, 12 Jan 2004 25:00:00 +0000", std::nullopt},
      {"Mon, 12 Jan 2004 10:60:00 +0000", std::nullopt},
      {"Mon, 12 Jan 2004 10:00:61 +0000", std::nullopt},
      {"Mon, 12 Jan 2004 123:00:00 +0000", std::nullopt},
      {"2004-13-01 10:00:00", std::nullopt},
      {"2004-00-10", std::nullopt},
      {"2004-01-00", std::nullopt},
      {"Mon, 32 Jan 2004 10:00:00 +0000", std::nullopt},
      {"Mon, 0 Jan 2004 10:00:00 +0000", std::nullopt},
      {"Mon, 30 Feb 2004 10:00:00 +0000", std::nullopt},
      {"Sun, 29 Feb 2023 10:00:00 +0000", std::nullopt},
      {"Mon, 12 2004 10:00:00 +0000", std::nullopt},
      {"Jan 2004", std::nullopt},
      {"Mon, 12 Jan 20040 10:00:00 +0000", std::nullopt},
      {"Mon, 12 Jan 99999999999 10:00:00 +0000", std::nullopt},
      {"Mon, 12 Jan", std::nullopt},
  };
  for (const DateCase& c : cases) {
    SCOPED_TRACE(c.input);
    std::optional<DateTime> got = parse_date(c.input);
    ASSERT_EQ(got.has_value(), c.expected.has_value());
    if (got) {
      EXPECT_EQ(got->utc_seconds, c.expected->utc_seconds);
      EXPECT_EQ(got->tz_offset_minutes, c.expected->tz_offset_minutes);
    }
  }
}

TEST(ParseDate, EveryDayOfFourHundredYearsMatchesNaiveCount) {
  // days_from_civil against a day-by-day walk from 1970.
  int64_t days = 0;
  for (int y = 1970; y < 2370; ++y) {
    for (int m = 1; m <= 12; ++m) {
      static constexpr int kDays[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
      const bool leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
      const int n = m == 2 && leap ? 29 : kDays[m - 1];
      for (int d = 1; d <= n; d += 9) {
        const std::string text =
            std::to_string(y) + "-" + std::to_string(m) + "-" + std::to_string(d);
        std::optional<DateTime> got = parse_date(text);
        ASSERT_TRUE(got.has_value()) << text;
        ASSERT_EQ(got->utc_seconds, (days + d - 1) * 86400) << text;
      }
      days += n;
    }
  }
}

TEST(ParseDate, EveryPrefix) {
  const std::vector<std::string> inputs = {
      "Mon, 12 Jan 2004 10:00:00 +0100 (CET (nested \\) x))",
      "2004-01-12T10:00:00.123456789-05:30",
      "Mon Jan 12 10:00:00 PST 2004",
      "Mon, 12 Jan 2004 10:00:00 GMT+02:00",
      "((((((((((((((((((((((((((((((((((((((((x",
      "12-Jan-2004 +-+-99999999999999999999:999:99999 AM PM \xff\x80 Z",
  };
  for (const std::string& input : inputs) {
    for (size_t n = 0; n <= input.size(); ++n) {
      (void)parse_date(input.substr(0, n));
    }
  }
  EXPECT_TRUE(parse_date("Mon, 12 Jan 2004 10:00:00 +0100 (CET").has_value());
}

}  // namespace
}  // namespace peregrine::mime
