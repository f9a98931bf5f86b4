#pragma once

// SORT (RFC 5256 §3) with the SORT=DISPLAY keys (RFC 5957): orders messages
// by a list of criteria, each optionally reversed; messages equal under all
// of them keep sequence-number order. Strings compare by i;ascii-casemap.
//
// Keys are computed once per message when it is added, so sorting n
// messages costs n key extractions and O(n log n) comparisons.
//
// Thread safety: none; one Sorter per command.

#include <cstddef>
#include <cstdint>
#include <deque>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "search/message_keys.h"

namespace peregrine::search {

enum class SortField : uint8_t {
  kArrival,      // INTERNALDATE
  kCc,           // addr-mailbox of the first Cc address
  kDate,         // sent date (§2.2)
  kFrom,         // addr-mailbox of the first From address
  kSize,         // RFC822.SIZE
  kSubject,      // base subject (§2.1)
  kTo,           // addr-mailbox of the first To address
  kDisplayFrom,  // RFC 5957: display name of the first From, or its addr-spec
  kDisplayTo,    // RFC 5957: the same for To
};

struct SortCriterion {
  SortField field = SortField::kArrival;
  bool reverse = false;
};

class Sorter {
 public:
  // `criteria` must not be empty.
  explicit Sorter(std::span<const SortCriterion> criteria);

  void reserve(size_t messages);
  // Whether any criterion reads the cache record (all but ARRIVAL and SIZE
  // do); when none does, add() may be given null records.
  bool needs_records() const;
  // Adds a message; `record` is its cache record, or null when it has none
  // (then its string keys are empty and its sent date is INTERNALDATE).
  void add(const MessageFacts& message, const mime::CacheRecord* record);
  // The same with the keys derived already (cheaper): `keys` must stay alive
  // and unchanged until sorted() returns (the Sorter refers to its strings).
  void add(const MessageFacts& message, const MessageKeys* keys);
  void add(const MessageFacts& message, std::nullptr_t) {
    add(message, static_cast<const MessageKeys*>(nullptr));
  }
  // The sequence numbers of the added messages, in order.
  std::vector<uint32_t> sorted() const;

 private:
  struct Column {
    SortField field;
    bool reverse;
    bool numeric;
    std::vector<int64_t> numbers;           // when numeric
    std::vector<std::string_view> strings;  // into added keys or owned_
    std::vector<uint64_t> prefixes;         // of strings (sort.cc prefix_of)
  };

  std::vector<Column> columns_;
  std::vector<uint32_t> seqs_;
  std::deque<MessageKeys> owned_;  // keys derived here from cache records
};

}  // namespace peregrine::search
