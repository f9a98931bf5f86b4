#include "imap/proto/date_time.h"

#include <gtest/gtest.h>

#include <string>

namespace peregrine::imap {
namespace {

TEST(ImapDate, ParseTable) {
  struct Case {
    std::string text;
    Date date;
  };
  for (const Case& c : std::vector<Case>{{"1-Feb-1994", {1994, 2, 1}},
                                         {"01-feb-1994", {1994, 2, 1}},
                                         {"31-DEC-2023", {2023, 12, 31}},
                                         {"29-Feb-2024", {2024, 2, 29}},
                                         {"1-Jan-0001", {1, 1, 1}}}) {
    SCOPED_TRACE(c.text);
    Parsed<Date> d = parse_date(c.text);
    ASSERT_TRUE(d.ok()) << d.error().message;
    EXPECT_EQ(*d, c.date);
  }
}

TEST(ImapDate, BadInputs) {
  for (std::string_view text :
       {"", "1-Feb-94", "1-Feb-19944", "001-Feb-1994", "1-Fev-1994", "1 Feb 1994", "30-Feb-2024",
        "29-Feb-2023", "0-Jan-2000", "32-Jan-2000", "1-Feb-1994 ", " 1-Feb-1994", "1-Feb-0000",
        "\"1-Feb-1994\"", "a-Feb-1994"}) {
    SCOPED_TRACE(text);
    Parsed<Date> d = parse_date(text);
    ASSERT_FALSE(d.ok());
    EXPECT_EQ(d.error().message.rfind("invalid date", 0), 0u);
  }
}

TEST(ImapDate, DaysRoundTrip) {
  EXPECT_EQ(days_since_epoch(Date{1970, 1, 1}), 0);
  EXPECT_EQ(days_since_epoch(Date{2000, 3, 1}), 11017);
  EXPECT_EQ(days_since_epoch(Date{1969, 12, 31}), -1);
  for (int64_t d = -800000; d < 3000000; d += 997) {
    EXPECT_EQ(days_since_epoch(date_from_days(d)), d);
  }
}

TEST(ImapDateTime, ParseTable) {
  struct Case {
    std::string text;
    int64_t utc;
    int zone;
  };
  for (const Case& c : std::vector<Case>{
           {"17-Jul-1996 02:44:25 -0700", 837596665, -420},
           {" 7-Jul-1996 02:44:25 +0000", 836707465, 0},
           {"07-Jul-1996 02:44:25 +0000", 836707465, 0},
           {"7-Jul-1996 02:44:25 +0000", 836707465, 0},
           {"01-Jan-1970 01:00:00 +0100", 0, 60},
           {"31-Dec-1969 23:59:59 +0000", -1, 0},
           {"30-Jun-2012 23:59:60 +0000", 1341100800, 0},
       }) {
    SCOPED_TRACE(c.text);
    Parsed<mime::DateTime> t = parse_date_time(c.text);
    ASSERT_TRUE(t.ok()) << t.error().message;
    EXPECT_EQ(t->utc_seconds, c.utc);
    EXPECT_EQ(t->tz_offset_minutes, c.zone);
  }
}

TEST(ImapDateTime, BadInputs) {
  for (std::string_view text :
       {"", "17-Jul-1996", "17-Jul-1996 02:44:25", "17-Jul-1996 02:44 -0700",
        "17-Jul-1996 24:00:00 -0700", "17-Jul-1996 02:60:00 -0700", "17-Jul-1996 02:44:25 0700",
        "17-Jul-1996 02:44:25 -07:00", "17-Jul-1996  02:44:25 -0700", "17-Jul-1996 02:44:25 -0760",
        "  7-Jul-1996 02:44:25 -0700", " 17-Jul-1996 02:44:25 -0700", "31-Jun-1996 02:44:25 -0700",
        "17-Jul-1996 02:44:25 -0700 "}) {
    SCOPED_TRACE(text);
    Parsed<mime::DateTime> t = parse_date_time(text);
    ASSERT_FALSE(t.ok());
    EXPECT_EQ(t.error().message.rfind("invalid date-time", 0), 0u);
  }
}

TEST(ImapDateTime, AppendExactBytes) {
  std::string out;
  append_date_time(out, mime::DateTime{837596665, -420});
  EXPECT_EQ(out, "\"17-Jul-1996 02:44:25 -0700\"");
  out.clear();
  append_date_time(out, mime::DateTime{0, 330});
  EXPECT_EQ(out, "\"01-Jan-1970 05:30:00 +0530\"");
  out.clear();
  append_date_time(out, mime::DateTime{-1, 0});
  EXPECT_EQ(out, "\"31-Dec-1969 23:59:59 +0000\"");
  out.clear();
  append_date(out, Date{1994, 2, 1});
  EXPECT_EQ(out, "1-Feb-1994");
}

TEST(ImapDateTime, RoundTrip) {
  for (int64_t t = -100000000; t < 4000000000; t += 7654321) {
    for (int zone : {-720, -420, 0, 330, 840}) {
      std::string out;
      append_date_time(out, mime::DateTime{t, zone});
      Parsed<mime::DateTime> back = parse_date_time(out.substr(1, out.size() - 2));
      ASSERT_TRUE(back.ok()) << out;
      EXPECT_EQ(back->utc_seconds, t);
      EXPECT_EQ(back->tz_offset_minutes, zone);
    }
  }
}

}  // namespace
}  // namespace peregrine::imap
