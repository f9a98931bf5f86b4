#include "store/api/uid_set.h"

#include <algorithm>
#include <limits>
#include <utility>

namespace peregrine::store {

UidSet::UidSet(std::initializer_list<Uid> uids) {
  for (Uid uid : uids) {
    add(uid);
  }
}

UidSet UidSet::all() {
  UidSet set;
  set.add(1, std::numeric_limits<Uid>::max());
  return set;
}

UidSet UidSet::of(std::span<const Uid> uids) {
  std::vector<Uid> sorted(uids.begin(), uids.end());
  std::sort(sorted.begin(), sorted.end());
  UidSet set;
  for (Uid uid : sorted) {
    set.add(uid);  // ascending input appends or extends the last range
  }
  return set;
}

void UidSet::add(Uid uid) { add(uid, uid); }

void UidSet::add(Uid first, Uid last) {
  if (first > last) {
    std::swap(first, last);
  }
  if (last == 0) {
    return;
  }
  first = std::max<Uid>(first, 1);

  // The first range that ends at or after first - 1 (could touch or overlap).
  auto it = std::lower_bound(
      ranges_.begin(), ranges_.end(), first,
      [](const UidRange& r, Uid value) { return static_cast<std::uint64_t>(r.last) + 1 < value; });
  if (it == ranges_.end() || static_cast<std::uint64_t>(last) + 1 < it->first) {
    ranges_.insert(it, UidRange{first, last});
    return;
  }
  // Merge every range that touches [first, last] into *it.
  it->first = std::min(it->first, first);
  it->last = std::max(it->last, last);
  auto next = it + 1;
  while (next != ranges_.end() && static_cast<std::uint64_t>(it->last) + 1 >= next->first) {
    it->last = std::max(it->last, next->last);
    ++next;
  }
  ranges_.erase(it + 1, next);
}

bool UidSet::contains(Uid uid) const {
  auto it = std::lower_bound(ranges_.begin(), ranges_.end(), uid,
                             [](const UidRange& r, Uid value) { return r.last < value; });
  return it != ranges_.end() && it->first <= uid;
}

std::uint64_t UidSet::count() const {
  std::uint64_t n = 0;
  for (const UidRange& r : ranges_) {
    n += static_cast<std::uint64_t>(r.last) - r.first + 1;
  }
  return n;
}

}  // namespace peregrine::store
