#pragma once

// A set of distinct terms with the columns each occurs in, for the term
// records (index_terms) and for a batch's records (Index::add_waiting_terms).

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "store/maildir/term_record.h"

namespace peregrine::store::maildir {

// The distinct terms of a text (or of a batch of records) with their
// columns, gathered in one pass: the terms' bytes in one arena, found again
// through an open-addressing table of their hashes (a node and a string per
// term cost more than tokenizing).
class TermSet {
 public:
  // `text_bytes`: about how many bytes of text will be added (it sizes the
  // first allocations; the set grows past it).
  explicit TermSet(std::size_t text_bytes) {
    arena_.reserve(text_bytes / 2 + 16);
    std::size_t slots = 256;
    while (slots < text_bytes / 8) {
      slots *= 2;
    }
    slots_.assign(slots, 0);
    entries_.reserve(slots / 2);
  }

  void add(std::string_view term, std::uint8_t column_bit) {
    const std::uint64_t hash = hash_of(term);
    std::size_t mask = slots_.size() - 1;
    for (std::size_t at = hash & mask;; at = (at + 1) & mask) {
      const std::uint32_t slot = slots_[at];
      if (slot == 0) {
        entries_.push_back(Entry{arena_.size(), term.size(), hash, column_bit});
        arena_.append(term);
        slots_[at] = static_cast<std::uint32_t>(entries_.size());
        if (entries_.size() * 2 > slots_.size()) {
          grow();
        }
        return;
      }
      Entry& e = entries_[slot - 1];
      if (e.hash == hash && view(e) == term) {
        e.columns |= column_bit;
        return;
      }
    }
  }

  // The terms in the order they were first added.
  std::vector<IndexedTerm> terms() const {
    std::vector<IndexedTerm> out;
    out.reserve(entries_.size());
    for (const Entry& e : entries_) {
      out.push_back(IndexedTerm{std::string(view(e)), e.columns});
    }
    return out;
  }

  // The terms in byte order (a term record's order).
  std::vector<IndexedTerm> sorted() const {
    // Sorted by the first eight bytes as one number (big-endian, zeros
    // past the end: no term holds a zero byte, so a shorter term sorts
    // first as it should), and by the whole term only when those are
    // equal: most comparisons are one of integers, not a memcmp.
    struct Key {
      std::uint64_t prefix;
      std::uint32_t index;
    };
    std::vector<Key> order(entries_.size());
    for (std::size_t i = 0; i < order.size(); ++i) {
      const std::string_view t = view(entries_[i]);
      std::uint64_t prefix = 0;
      for (std::size_t k = 0; k < 8; ++k) {
        prefix = (prefix << 8) | (k < t.size() ? static_cast<unsigned char>(t[k]) : 0u);
      }
      order[i] = Key{prefix, static_cast<std::uint32_t>(i)};
    }
    std::sort(order.begin(), order.end(), [&](const Key& a, const Key& b) {
      if (a.prefix != b.prefix) {
        return a.prefix < b.prefix;
      }
      return view(entries_[a.index]) < view(entries_[b.index]);
    });
    std::vector<IndexedTerm> out;
    out.reserve(order.size());
    for (const Key& k : order) {
      out.push_back(IndexedTerm{std::string(view(entries_[k.index])), entries_[k.index].columns});
    }
    return out;
  }

 private:
  struct Entry {
    std::size_t offset;
    std::size_t size;
    std::uint64_t hash;
    std::uint8_t columns;
  };

  static std::uint64_t hash_of(std::string_view s) {
    std::uint64_t h = 0xcbf29ce484222325ULL ^ s.size();
    for (char c : s) {
      h = (h ^ static_cast<unsigned char>(c)) * 0x100000001b3ULL;
    }
    return h ^ (h >> 29);
  }

  std::string_view view(const Entry& e) const {
    return std::string_view(arena_.data() + e.offset, e.size);
  }

  void grow() {
    slots_.assign(slots_.size() * 2, 0);
    const std::size_t mask = slots_.size() - 1;
    for (std::size_t i = 0; i < entries_.size(); ++i) {
      std::size_t at = entries_[i].hash & mask;
      while (slots_[at] != 0) {
        at = (at + 1) & mask;
      }
      slots_[at] = static_cast<std::uint32_t>(i + 1);
    }
  }

  std::string arena_;
  std::vector<Entry> entries_;
  std::vector<std::uint32_t> slots_;  // 1 + index into entries_; 0: empty
};

}  // namespace peregrine::store::maildir
