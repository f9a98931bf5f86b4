#pragma once

// From the word index's hits (search_fts rowids: term record ids of every
// mailbox, deleted ones not yet purged included) to the UIDs of one
// mailbox's live messages.
//
// A mailbox's (record id, UID) pairs are read from the narrow
// search_docs_by_mailbox index once and kept while search_docs is unchanged:
// Index invalidates the map when a statement of its connection changes a
// row of search_docs (SQLite's update hook, cascades and triggers included)
// and on every rollback, and the map notices another connection's commit by
// PRAGMA data_version. A SEARCH then maps its hits by one merge with the
// kept pairs instead of reading the mailbox's part of the index again
// (measured at 100,000 messages: 18-23 ms a SEARCH for that read, its pages
// pushed out of SQLite's page cache by the word index's between searches).
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
  // Forgets every mailbox's pairs (before the next use). Cheap: called for
  // every changed row.
  void invalidate() { stale_ = true; }

  // The UIDs of the documents `ids` (ascending) that are live term records
  // of the mailbox, in the order of `ids` (not sorted by UID).
  base::Result<std::vector<Uid>> uids(Database& db, std::int64_t mailbox_id,
                                      const std::vector<std::int64_t>& ids);

 private:
  struct Pairs {
    std::vector<std::int64_t> ids;  // ascending
    std::vector<Uid> uids;          // uids[i] belongs to ids[i]
  };
  std::unordered_map<std::int64_t, Pairs> kept_;  // by mailbox id
  std::size_t kept_pairs_ = 0;
  std::int64_t data_version_ = -1;
  bool stale_ = true;
};

}  // namespace peregrine::store::maildir
