#include "store/maildir/doc_uids.h"

#include <algorithm>

#include "store/maildir/sql_util.h"

namespace peregrine::store::maildir {

using base::Result;

namespace {

// A mailbox whose pairs are not kept has up to this many hits mapped one
// index lookup each (about 3 µs a lookup at 100,000 messages) rather than
// its pairs read (about 6 ms, 18-23 ms with the pages out of the cache).
constexpr std::size_t kLookupHits = 256;
// Pairs kept for all mailboxes together (12 bytes each): a larger mailbox
// has its pairs read for each SEARCH, and keeping another starts afresh.
constexpr std::size_t kMaxPairs = 2'000'000;

Result<std::vector<Uid>> lookup_each(Database& db, std::int64_t mailbox_id,
                                     const std::vector<std::int64_t>& ids) {
  std::vector<Uid> out;
  for (std::int64_t id : ids) {
    auto uid = query_int(db,
                         "SELECT uid FROM search_docs INDEXED BY search_docs_by_mailbox "
                         "WHERE mailbox_id = ?1 AND id = ?2",
                         [&](Statement& s) { s.bind(1, mailbox_id).bind(2, id); });
    if (!uid) {
      return std::unexpected(uid.error());
    }
    if (*uid != 0) {  // UIDs start at 1: 0 is "no row"
      out.push_back(static_cast<Uid>(*uid));
    }
  }
  return out;
}

// The UIDs of `ids` found among `pairs`, both ascending: a binary search
// from the last position when the hits are few against the pairs, a merge
// otherwise.
std::vector<Uid> merge(const std::vector<std::int64_t>& pair_ids, const std::vector<Uid>& uids,
                       const std::vector<std::int64_t>& ids) {
  std::vector<Uid> out;
  out.reserve(std::min(ids.size(), pair_ids.size()));
  const bool sparse = ids.size() * 16 < pair_ids.size();
  auto at = pair_ids.begin();
  for (std::int64_t id : ids) {
    if (sparse) {
      at = std::lower_bound(at, pair_ids.end(), id);
    } else {
      while (at != pair_ids.end() && *at < id) {
        ++at;
      }
    }
    if (at == pair_ids.end()) {
      break;
    }
    if (*at == id) {
      out.push_back(uids[static_cast<std::size_t>(at - pair_ids.begin())]);
    }
  }
  return out;
}

}  // namespace

Result<void> DocUidMap::apply_pending(Database& db) {
  std::sort(pending_.begin(), pending_.end());
  pending_.erase(std::unique(pending_.begin(), pending_.end()), pending_.end());
  for (std::int64_t id : pending_) {
    // Wherever it was (a move changes its mailbox)...
    for (auto& [mailbox_id, pairs] : kept_) {
      auto at = std::lower_bound(pairs.ids.begin(), pairs.ids.end(), id);
      if (at != pairs.ids.end() && *at == id) {
        const auto i = at - pairs.ids.begin();
        pairs.ids.erase(at);
        pairs.uids.erase(pairs.uids.begin() + i);
        --kept_pairs_;
      }
    }
    // ...and where it is now, if it still is.
    auto r = each_row(
        db, "SELECT mailbox_id, uid FROM search_docs WHERE id = ?1",
        [&](Statement& s) { s.bind(1, id); },
        [&](const Statement& s) {
          auto kept = kept_.find(s.column_int(0));
          if (kept != kept_.end()) {
            Pairs& pairs = kept->second;
            auto at = std::lower_bound(pairs.ids.begin(), pairs.ids.end(), id);
            const auto i = at - pairs.ids.begin();
            pairs.ids.insert(at, id);
            pairs.uids.insert(pairs.uids.begin() + i, static_cast<Uid>(s.column_int(1)));
            ++kept_pairs_;
          }
          return false;
        });
    if (!r) {
      return r;
    }
  }
  pending_.clear();
  return {};
}

Result<std::vector<Uid>> DocUidMap::uids(Database& db, std::int64_t mailbox_id,
                                         const std::vector<std::int64_t>& ids) {
  if (ids.empty()) {
    return std::vector<Uid>();
  }
  auto version = db.data_version();
  if (!version) {
    return std::unexpected(version.error());
  }
  if (stale_ || *version != data_version_) {
    kept_.clear();
    kept_pairs_ = 0;
    pending_.clear();
    stale_ = false;
    data_version_ = *version;
  }
  if (!pending_.empty()) {
    if (auto r = apply_pending(db); !r) {
      invalidate();
      return std::unexpected(r.error());
    }
  }
  auto it = kept_.find(mailbox_id);
  if (it == kept_.end()) {
    if (ids.size() <= kLookupHits) {
      return lookup_each(db, mailbox_id, ids);
    }
    Pairs read;
    auto r = each_row(
        db,
        "SELECT id, uid FROM search_docs INDEXED BY search_docs_by_mailbox "
        "WHERE mailbox_id = ?1 ORDER BY id",
        [&](Statement& s) { s.bind(1, mailbox_id); },
        [&](const Statement& s) {
          read.ids.push_back(s.column_int(0));
          read.uids.push_back(static_cast<Uid>(s.column_int(1)));
          return true;
        });
    if (!r) {
      return std::unexpected(r.error());
    }
    const std::size_t n = read.ids.size();
    if (n > kMaxPairs) {
      return merge(read.ids, read.uids, ids);
    }
    if (kept_pairs_ + n > kMaxPairs) {
      kept_.clear();
      kept_pairs_ = 0;
    }
    kept_pairs_ += n;
    it = kept_.emplace(mailbox_id, std::move(read)).first;
  }
  return merge(it->second.ids, it->second.uids, ids);
}

}  // namespace peregrine::store::maildir
