#pragma once

// A set of UIDs kept as sorted, disjoint, non-adjacent ranges, so that
// "1:4294967295" costs one range. The protocol layer resolves its own
// notation ("*", sequence numbers) into a UidSet before calling the store.

#include <cstdint>
#include <initializer_list>
#include <span>
#include <vector>

#include "store/api/types.h"

namespace peregrine::store {

struct UidRange {
  Uid first = 1;
  Uid last = 1;  // inclusive, first <= last

  bool operator==(const UidRange&) const = default;
};

class UidSet {
 public:
  UidSet() = default;
  UidSet(std::initializer_list<Uid> uids);

  // Every UID, 1:4294967295.
  static UidSet all();
  // The UIDs of `sorted_or_not`, in any order, duplicates allowed.
  static UidSet of(std::span<const Uid> uids);

  // Adds one UID; 0 is ignored.
  void add(Uid uid);
  // Adds first..last inclusive, in either order; 0 is dropped from the range.
  void add(Uid first, Uid last);

  bool contains(Uid uid) const;
  bool empty() const { return ranges_.empty(); }
  // How many UIDs the set holds.
  std::uint64_t count() const;
  const std::vector<UidRange>& ranges() const { return ranges_; }

  bool operator==(const UidSet&) const = default;

 private:
  std::vector<UidRange> ranges_;
};

}  // namespace peregrine::store
