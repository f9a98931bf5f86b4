#pragma once

// From the word index's hits (search_fts rowids: term record ids of every
// mailbox, deleted ones not yet purged included) to the UIDs of one
// mailbox's live messages.
//
// A mailbox's (record id, UID) pairs are read from the narrow
// search_docs_by_mailbox index once and kept: a SEARCH then maps its hits by
// one merge with the kept pairs instead of reading the mailbox's part of the
// index again (measured at 100,000 messages: 18-23 ms a SEARCH for that
// read, its pages pushed out of SQLite's page cache by the word index's
// between searches). Index tells the map of every row of search_docs a
// statement of its connection changes (SQLite's update hook, cascades and
// triggers included): up to kMaxPending of them are read again by id at the
// next use (an append, an expunge, a move), more drop every kept pair. A
// rollback drops them too, and so does another connection's commit, seen
// by PRAGMA data_version.
//
// Not thread-safe: belongs to one Index.

#include <cstdint>
#include <unordered_map>
#include <vector>

#include "base/result.h"
#include "store/api/types.h"
#include "store/maildir/sqlite.h"

namespace peregrine::store::maildir {

class DocUidMap {
 public:
  // Forgets every mailbox's pairs (before the next use).
  void invalidate() {
    stale_ = true;
    pending_.clear();
  }
  // Record `id` of search_docs was inserted, updated or deleted. Cheap:
  // called for every changed row.
  void changed(std::int64_t id) {
    if (stale_ || kept_.empty()) {
      return;  // nothing kept to bring up to date
    }
    if (pending_.size() == kMaxPending) {
      invalidate();
      return;
    }
    pending_.push_back(id);
  }

  // The UIDs of the documents `ids` (ascending) that are live term records
  // of the mailbox, in the order of `ids` (not sorted by UID).
  base::Result<std::vector<Uid>> uids(Database& db, std::int64_t mailbox_id,
                                      const std::vector<std::int64_t>& ids);

 private:
  // Changed records read again one by one; past this, every pair is read
  // again (a lookup and a move of the mailbox's later pairs each, against
  // one read of the mailbox's pairs).
  static constexpr std::size_t kMaxPending = 64;
  // Brings the kept pairs up to date with the records in pending_.
  base::Result<void> apply_pending(Database& db);

  struct Pairs {
    std::vector<std::int64_t> ids;  // ascending
    std::vector<Uid> uids;          // uids[i] belongs to ids[i]
  };
  std::unordered_map<std::int64_t, Pairs> kept_;  // by mailbox id
  std::size_t kept_pairs_ = 0;
  std::vector<std::int64_t> pending_;  // record ids changed since the pairs were read
  std::int64_t data_version_ = -1;
  bool stale_ = true;
};

}  // namespace peregrine::store::maildir
