#include "search/sort.h"

#include <algorithm>
#include <limits>
#include <numeric>

#include "search/base_subject.h"

namespace peregrine::search {
namespace {

bool is_numeric(SortField f) {
  return f == SortField::kArrival || f == SortField::kDate || f == SortField::kSize;
}

int64_t number_key(SortField f, const MessageFacts& m, const mime::CacheRecord* r) {
  switch (f) {
    case SortField::kArrival:
      return m.internal_date;
    case SortField::kDate:
      return sent_date(m, r);
    case SortField::kSize:
      return static_cast<int64_t>(std::min<uint64_t>(m.size, std::numeric_limits<int64_t>::max()));
    default:
      return 0;
  }
}

std::string string_key(SortField f, const mime::CacheRecord* r) {
  if (r == nullptr) {
    return {};
  }
  switch (f) {
    case SortField::kCc:
      return ascii_casemap(r->cc_mailbox);
    case SortField::kFrom:
      return ascii_casemap(r->from_mailbox);
    case SortField::kTo:
      return ascii_casemap(r->to_mailbox);
    case SortField::kSubject:
      return ascii_casemap(extract_base_subject(r->subject).text);
    case SortField::kDisplayFrom:
      return ascii_casemap(r->from_display);
    case SortField::kDisplayTo:
      return ascii_casemap(r->to_display);
    default:
      return {};
  }
}

}  // namespace

Sorter::Sorter(std::span<const SortCriterion> criteria) {
  for (const SortCriterion& c : criteria) {
    columns_.push_back(Column{c.field, c.reverse, is_numeric(c.field), {}, {}});
  }
}

void Sorter::reserve(size_t messages) {
  seqs_.reserve(messages);
  for (Column& c : columns_) {
    if (c.numeric) {
      c.numbers.reserve(messages);
    } else {
      c.strings.reserve(messages);
    }
  }
}

void Sorter::add(const MessageFacts& message, const mime::CacheRecord* record) {
  seqs_.push_back(message.seq);
  for (Column& c : columns_) {
    if (c.numeric) {
      c.numbers.push_back(number_key(c.field, message, record));
    } else {
      c.strings.push_back(string_key(c.field, record));
    }
  }
}

std::vector<uint32_t> Sorter::sorted() const {
  std::vector<uint32_t> order(seqs_.size());
  std::iota(order.begin(), order.end(), 0u);
  auto less = [this](uint32_t a, uint32_t b) {
    for (const Column& c : columns_) {
      int cmp = 0;
      if (c.numeric) {
        cmp = c.numbers[a] < c.numbers[b] ? -1 : (c.numbers[a] > c.numbers[b] ? 1 : 0);
      } else {
        cmp = c.strings[a].compare(c.strings[b]);
      }
      if (cmp != 0) {
        return c.reverse ? cmp > 0 : cmp < 0;
      }
    }
    return seqs_[a] < seqs_[b];  // RFC 5256 §3: ties in sequence order
  };
  std::sort(order.begin(), order.end(), less);
  std::vector<uint32_t> out;
  out.reserve(order.size());
  for (uint32_t i : order) {
    out.push_back(seqs_[i]);
  }
  return out;
}

}  // namespace peregrine::search
