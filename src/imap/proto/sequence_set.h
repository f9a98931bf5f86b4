#pragma once

// Sequence sets (RFC 9051 §9 sequence-set): message sequence numbers or UIDs
// as ranges, "*" for the largest number in use, and "$" (RFC 5182 SEARCHRES)
// for the result saved by the last SEARCH RETURN (SAVE).

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "imap/proto/result.h"

namespace peregrine::imap {

// "*" in a SeqRange (0 is never a valid nz-number).
inline constexpr uint32_t kStar = 0;
// Ranges accepted in one set; a command line is bounded anyway, this bounds
// the work a server does per set.
inline constexpr size_t kMaxSequenceRanges = 10000;

struct SeqRange {
  // As written: first may be greater than last ("5:1"); kStar for "*".
  uint32_t first = 1;
  uint32_t last = 1;

  bool operator==(const SeqRange&) const = default;
};

struct SequenceSet {
  std::vector<SeqRange> ranges;  // in the order written; empty when saved
  bool saved = false;            // "$"

  // The ranges with "*" replaced by `largest`, each ordered first <= last,
  // sorted and merged; numbers below 1 are dropped. When `largest` is 0
  // (empty mailbox) "*" matches nothing. Not meaningful for a saved set.
  std::vector<SeqRange> normalized(uint32_t largest) const;
  // Whether n is in the set, "*" meaning `largest`.
  bool contains(uint32_t n, uint32_t largest) const;
  // The largest number written, kStar if "*" appears.
  bool has_star() const;

  // The compact set covering `sorted` (ascending, duplicates allowed):
  // runs become ranges, e.g. {1,2,3,5} -> "1:3,5". Numbers in another order
  // keep it, each ascending run a range: {4,1,2,3} -> "4,1:3" (ESORT's ALL).
  static SequenceSet from_sorted(std::span<const uint32_t> sorted);

  bool operator==(const SequenceSet&) const = default;
};

// Parses the whole of `text` as a sequence set. Errors: "invalid sequence
// set <text>" (empty element, 0, a number above 2^32-1, a stray character,
// "$" combined with anything), "sequence set too long".
Parsed<SequenceSet> parse_sequence_set(std::string_view text);

// Appends the wire form: "1:3,5,7:*" or "$".
void append_sequence_set(std::string& out, const SequenceSet& set);
std::string to_string(const SequenceSet& set);

}  // namespace peregrine::imap
