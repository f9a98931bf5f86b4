#include "search/sort.h"

#include <algorithm>
#include <limits>
#include <numeric>

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

const std::string& string_key(SortField f, const MessageKeys& k) {
  switch (f) {
    case SortField::kCc:
      return k.cc;
    case SortField::kFrom:
      return k.from;
    case SortField::kTo:
      return k.to;
    case SortField::kSubject:
      return k.subject;
    case SortField::kDisplayFrom:
      return k.display_from;
    case SortField::kDisplayTo:
      return k.display_to;
    default:
      return k.subject;  // never: numeric fields have no string key
  }
}

// The first 8 bytes of `s` as a big-endian number, zero-padded: unequal
// prefixes order two strings as comparing their bytes would, so most
// comparisons never touch the strings themselves.
uint64_t prefix_of(std::string_view s) {
  uint64_t p = 0;
  for (size_t i = 0; i < 8; ++i) {
    p = (p << 8) | (i < s.size() ? static_cast<unsigned char>(s[i]) : 0u);
  }
  return p;
}

}  // namespace

Sorter::Sorter(std::span<const SortCriterion> criteria) {
  for (const SortCriterion& c : criteria) {
    columns_.push_back(Column{c.field, c.reverse, is_numeric(c.field), {}, {}, {}});
  }
}

void Sorter::reserve(size_t messages) {
  seqs_.reserve(messages);
  for (Column& c : columns_) {
    if (c.numeric) {
      c.numbers.reserve(messages);
    } else {
      c.strings.reserve(messages);
      c.prefixes.reserve(messages);
    }
  }
}

bool Sorter::needs_records() const {
  return std::any_of(columns_.begin(), columns_.end(), [](const Column& c) {
    return c.field != SortField::kArrival && c.field != SortField::kSize;
  });
}

void Sorter::add(const MessageFacts& message, const mime::CacheRecord* record) {
  if (record == nullptr) {
    return add(message, static_cast<const MessageKeys*>(nullptr));
  }
  add(message, &owned_.emplace_back(message_keys(*record)));
}

void Sorter::add(const MessageFacts& message, const MessageKeys* keys) {
  const mime::CacheRecord* record = keys != nullptr ? &keys->record : nullptr;
  seqs_.push_back(message.seq);
  for (Column& c : columns_) {
    if (c.numeric) {
      c.numbers.push_back(number_key(c.field, message, record));
    } else {
      std::string_view key;  // (a ?: with "" would view a temporary copy)
      if (keys != nullptr) {
        key = string_key(c.field, *keys);
      }
      c.strings.push_back(key);
      c.prefixes.push_back(prefix_of(key));
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
      } else if (c.prefixes[a] != c.prefixes[b]) {
        cmp = c.prefixes[a] < c.prefixes[b] ? -1 : 1;
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
