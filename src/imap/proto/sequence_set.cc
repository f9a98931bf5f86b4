#include "imap/proto/sequence_set.h"

#include <algorithm>
#include <charconv>
#include <optional>

#include "imap/proto/wire_string.h"

namespace peregrine::imap {
namespace {

// seq-number: nz-number or "*". Returns false on anything else.
bool parse_seq_number(std::string_view s, uint32_t& out) {
  if (s == "*") {
    out = kStar;
    return true;
  }
  if (s.empty() || s[0] < '1' || s[0] > '9') {
    return false;  // empty, "0", leading zero or a sign
  }
  std::optional<uint64_t> value = parse_number(s);
  if (!value) {
    return false;
  }
  out = static_cast<uint32_t>(*value);
  return true;
}

ParseError invalid(std::string_view text) {
  return parse_error("invalid sequence set " + excerpt(text));
}

// Replaces "*" in `r` by `largest`; false when `r` has a "*" and the mailbox
// is empty (largest == 0), so that the range matches nothing.
bool resolve_star(SeqRange& r, uint32_t largest) {
  if (r.first != kStar && r.last != kStar) {
    return true;
  }
  if (largest == 0) {
    return false;
  }
  r.first = r.first == kStar ? largest : r.first;
  r.last = r.last == kStar ? largest : r.last;
  return true;
}

}  // namespace

Parsed<SequenceSet> parse_sequence_set(std::string_view text) {
  SequenceSet set;
  if (text == "$") {
    set.saved = true;
    return set;
  }
  size_t pos = 0;
  for (;;) {
    size_t comma = text.find(',', pos);
    std::string_view element =
        text.substr(pos, comma == std::string_view::npos ? std::string_view::npos : comma - pos);
    if (set.ranges.size() >= kMaxSequenceRanges) {
      return parse_error("sequence set too long");
    }
    size_t colon = element.find(':');
    SeqRange range;
    if (colon == std::string_view::npos) {
      if (!parse_seq_number(element, range.first)) {
        return invalid(text);
      }
      range.last = range.first;
    } else if (!parse_seq_number(element.substr(0, colon), range.first) ||
               !parse_seq_number(element.substr(colon + 1), range.last)) {
      return invalid(text);
    }
    set.ranges.push_back(range);
    if (comma == std::string_view::npos) {
      return set;
    }
    pos = comma + 1;
  }
}

std::vector<SeqRange> SequenceSet::normalized(uint32_t largest) const {
  std::vector<SeqRange> out;
  out.reserve(ranges.size());
  for (SeqRange r : ranges) {
    if (!resolve_star(r, largest)) {
      continue;
    }
    if (r.first > r.last) {
      std::swap(r.first, r.last);
    }
    out.push_back(r);
  }
  std::sort(out.begin(), out.end(),
            [](const SeqRange& a, const SeqRange& b) { return a.first < b.first; });
  size_t n = 0;
  for (const SeqRange& r : out) {
    // Merge overlapping and adjacent ranges (last + 1 computed in 64 bits).
    if (n > 0 && static_cast<uint64_t>(r.first) <= static_cast<uint64_t>(out[n - 1].last) + 1) {
      out[n - 1].last = std::max(out[n - 1].last, r.last);
    } else {
      out[n++] = r;
    }
  }
  out.resize(n);
  return out;
}

bool SequenceSet::contains(uint32_t n, uint32_t largest) const {
  for (SeqRange r : ranges) {
    if (!resolve_star(r, largest)) {
      continue;
    }
    if (std::min(r.first, r.last) <= n && n <= std::max(r.first, r.last)) {
      return true;
    }
  }
  return false;
}

bool SequenceSet::has_star() const {
  return std::any_of(ranges.begin(), ranges.end(),
                     [](const SeqRange& r) { return r.first == kStar || r.last == kStar; });
}

SequenceSet SequenceSet::from_sorted(std::span<const uint32_t> sorted) {
  SequenceSet set;
  for (uint32_t n : sorted) {
    if (!set.ranges.empty() && (n == set.ranges.back().last ||
                                static_cast<uint64_t>(n) == set.ranges.back().last + 1ull)) {
      set.ranges.back().last = n;
    } else {
      set.ranges.push_back(SeqRange{n, n});
    }
  }
  return set;
}

namespace {

void append_number(std::string& out, uint32_t n) {
  if (n == kStar) {
    out.push_back('*');
    return;
  }
  char buf[16];
  auto [end, ec] = std::to_chars(buf, buf + sizeof(buf), n);
  (void)ec;
  out.append(buf, end);
}

}  // namespace

void append_sequence_set(std::string& out, const SequenceSet& set) {
  if (set.saved) {
    out.push_back('$');
    return;
  }
  for (size_t i = 0; i < set.ranges.size(); ++i) {
    if (i > 0) {
      out.push_back(',');
    }
    append_number(out, set.ranges[i].first);
    if (set.ranges[i].last != set.ranges[i].first) {
      out.push_back(':');
      append_number(out, set.ranges[i].last);
    }
  }
}

std::string to_string(const SequenceSet& set) {
  std::string out;
  append_sequence_set(out, set);
  return out;
}

}  // namespace peregrine::imap
