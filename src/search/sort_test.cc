// SORT orders over hand-built cache records: every key, REVERSE, ties in
// sequence order, the sent-date fallback and RFC 5256's own example.

#include "search/sort.h"

#include <gtest/gtest.h>

#include <optional>
#include <vector>

namespace peregrine::search {
namespace {

struct Msg {
  int64_t arrival = 0;
  uint64_t size = 0;
  std::optional<int64_t> date;
  std::string subject;
  std::string from;
  std::string to;
  std::string cc;
  std::string display_from;
  std::string display_to;
};

Msg dated(int64_t date, std::string subject) {
  Msg m;
  m.date = date;
  m.subject = std::move(subject);
  return m;
}
Msg numbers(int64_t arrival, uint64_t size, std::optional<int64_t> date) {
  Msg m;
  m.arrival = arrival;
  m.size = size;
  m.date = date;
  return m;
}
Msg addresses(std::string from, std::string to, std::string cc, std::string display_from,
              std::string display_to) {
  Msg m;
  m.from = std::move(from);
  m.to = std::move(to);
  m.cc = std::move(cc);
  m.display_from = std::move(display_from);
  m.display_to = std::move(display_to);
  return m;
}

std::vector<uint32_t> sort(const std::vector<Msg>& msgs, std::vector<SortCriterion> criteria) {
  Sorter sorter(criteria);
  sorter.reserve(msgs.size());
  for (size_t i = 0; i < msgs.size(); ++i) {
    const Msg& m = msgs[i];
    mime::CacheRecord r;
    if (m.date) {
      r.sent_date = mime::DateTime{*m.date, 0};
    }
    r.subject = m.subject;
    r.from_mailbox = m.from;
    r.to_mailbox = m.to;
    r.cc_mailbox = m.cc;
    r.from_display = m.display_from;
    r.to_display = m.display_to;
    sorter.add(MessageFacts{static_cast<uint32_t>(i + 1), m.arrival, m.size, std::nullopt}, &r);
  }
  return sorter.sorted();
}

using V = std::vector<uint32_t>;
constexpr SortCriterion kArrival{SortField::kArrival, false};
constexpr SortCriterion kDate{SortField::kDate, false};
constexpr SortCriterion kReverseDate{SortField::kDate, true};
constexpr SortCriterion kSize{SortField::kSize, false};
constexpr SortCriterion kSubject{SortField::kSubject, false};

TEST(Sort, Rfc5256Example) {
  // "A283 SORT (SUBJECT REVERSE DATE) UTF-8 ALL" -> "* SORT 5 3 4 1 2".
  std::vector<Msg> m(5);
  m[0] = dated(200, "Re: c");
  m[1] = dated(100, "c");
  m[2] = dated(200, "[list] b");
  m[3] = dated(100, "Fwd: B");
  m[4] = dated(100, "a (fwd)");
  EXPECT_EQ(sort(m, {kSubject, kReverseDate}), (V{5, 3, 4, 1, 2}));
}

TEST(Sort, NumericKeys) {
  std::vector<Msg> m(4);
  m[0] = numbers(30, 10, 5);
  m[1] = numbers(10, 30, 7);
  m[2] = numbers(20, 20, std::nullopt);  // no Date: its arrival (20) stands in
  m[3] = numbers(10, 10, 20);
  EXPECT_EQ(sort(m, {kArrival}), (V{2, 4, 3, 1}));
  EXPECT_EQ(sort(m, {{SortField::kArrival, true}}), (V{1, 3, 2, 4}));
  EXPECT_EQ(sort(m, {kSize}), (V{1, 4, 3, 2}));
  EXPECT_EQ(sort(m, {kDate}), (V{1, 2, 3, 4}));
  // Date 20 ties 3 (fallback) with 4: sequence order.
  EXPECT_EQ(sort(m, {kReverseDate}), (V{3, 4, 2, 1}));
  // REVERSE applies to its own key only; the final tie-break stays ascending.
  EXPECT_EQ(sort(m, {{SortField::kSize, true}}), (V{2, 3, 1, 4}));
  EXPECT_EQ(sort(m, {{SortField::kSize, true}, {SortField::kArrival, true}}), (V{2, 3, 1, 4}));
  EXPECT_EQ(sort(m, {kSize, kArrival}), (V{4, 1, 3, 2}));
}

TEST(Sort, AddressKeysUseAsciiCasemap) {
  std::vector<Msg> m(5);
  m[0] = addresses("bob", "zed", "", "Zoe", "b@x");
  m[1] = addresses("Alice", "amy", "carl", "alice@x", "Amy");
  m[2] = addresses("", "Bea", "Al", "", "");
  m[3] = addresses("alice", "", "", "Bob", "zed");
  // 8-bit text compares by octet after ASCII letters are mapped.
  m[4] = addresses(
      "\xc3\xa9"
      "mile",
      "", "",
      "\xc3\xa9"
      "mile",
      "");
  EXPECT_EQ(sort(m, {{SortField::kFrom, false}}), (V{3, 2, 4, 1, 5}));
  EXPECT_EQ(sort(m, {{SortField::kTo, false}}), (V{4, 5, 2, 3, 1}));
  EXPECT_EQ(sort(m, {{SortField::kCc, false}}), (V{1, 4, 5, 3, 2}));
  EXPECT_EQ(sort(m, {{SortField::kDisplayFrom, false}}), (V{3, 2, 4, 1, 5}));
  EXPECT_EQ(sort(m, {{SortField::kDisplayTo, false}}), (V{3, 5, 2, 1, 4}));
  EXPECT_EQ(sort(m, {{SortField::kFrom, true}}), (V{5, 1, 2, 4, 3}));
}

TEST(Sort, SubjectUsesBaseSubject) {
  std::vector<Msg> m(4);
  m[0] = dated(0, "Re: Zebra");
  m[1] = dated(0, "[list] apple");
  m[2] = dated(0, "APPLE (fwd)");
  m[3] = dated(0, "");
  EXPECT_EQ(sort(m, {kSubject}), (V{4, 2, 3, 1}));
}

TEST(Sort, MissingRecord) {
  Sorter sorter(std::vector<SortCriterion>{kSubject, kDate});
  mime::CacheRecord r;
  r.subject = "a";
  r.sent_date = mime::DateTime{1, 0};
  sorter.add(MessageFacts{1, 50, 1, std::nullopt}, &r);
  sorter.add(MessageFacts{2, 40, 1, std::nullopt}, nullptr);  // empty subject, arrival date
  sorter.add(MessageFacts{3, 30, 1, std::nullopt}, nullptr);
  EXPECT_EQ(sorter.sorted(), (V{3, 2, 1}));
}

TEST(Sort, ManyMessagesStayInOrder) {
  // 20,000 messages with ten distinct dates: each date's messages come out
  // in sequence order.
  Sorter sorter(std::vector<SortCriterion>{kDate});
  std::vector<mime::CacheRecord> records(20000);
  for (uint32_t i = 0; i < records.size(); ++i) {
    records[i].sent_date = mime::DateTime{static_cast<int64_t>((i * 7) % 10), 0};
    sorter.add(MessageFacts{i + 1, 0, 0, std::nullopt}, &records[i]);
  }
  std::vector<uint32_t> out = sorter.sorted();
  ASSERT_EQ(out.size(), records.size());
  for (size_t i = 1; i < out.size(); ++i) {
    int64_t a = records[out[i - 1] - 1].sent_date->utc_seconds;
    int64_t b = records[out[i] - 1].sent_date->utc_seconds;
    ASSERT_TRUE(a < b || (a == b && out[i - 1] < out[i])) << i;
  }
}

}  // namespace
}  // namespace peregrine::search
