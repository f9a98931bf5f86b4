#pragma once

// The files of expunged messages, removed after the expunge has committed.
//
// An expunge is decided by its index transaction, which also journals the
// removal of every file it leaves behind (Index::add_pending_removal). The
// caller replies as soon as that commit returns; the files are removed here,
// on a sync thread, several at once (remove_files), and their directories
// fsynced. Only then is an entry "done": its file is gone for good, and the
// user's strand deletes the entry at its next chance (take_done()). Until
// then every reader treats a journaled file as gone (the scan does not adopt
// it), and an open after a crash finishes the removals
// (docs/formats/maildir-store.md, "Expunge").
//
// Thread safety: start(), wait() and take_done() may be called from any
// thread; the store calls them on the user's strand. The destructor waits
// for the removals still running.

#include <condition_variable>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <mutex>
#include <vector>

#include "store/maildir/maildir_fs.h"

namespace peregrine::store::maildir {

class RemovalQueue {
 public:
  struct Item {
    std::int64_t journal_id = 0;  // the journal entry that lists the file
    std::filesystem::path path;
  };

  explicit RemovalQueue(MaildirFs& fs);
  ~RemovalQueue();
  RemovalQueue(const RemovalQueue&) = delete;
  RemovalQueue& operator=(const RemovalQueue&) = delete;

  // Removes the files of `items` on a sync thread, then fsyncs their
  // directories. A file already missing counts as removed. A file that
  // cannot be removed, or whose directory cannot be fsynced, stays in the
  // journal for the next open.
  void start(std::vector<Item> items);
  // Returns once no removal started here is running.
  void wait();
  // The journal ids of the files removed (durably) since the last call.
  std::vector<std::int64_t> take_done();

 private:
  struct State {
    std::mutex mu;
    std::condition_variable idle;
    int running = 0;                 // mu
    std::vector<std::int64_t> done;  // mu
  };
  static void remove(MaildirFs& fs, State& state, const std::vector<Item>& items);

  MaildirFs& fs_;
  std::shared_ptr<State> state_ = std::make_shared<State>();
};

}  // namespace peregrine::store::maildir
