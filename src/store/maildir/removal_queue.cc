#include "store/maildir/removal_queue.h"

#include <map>
#include <string>
#include <utility>

#include "base/log.h"
#include "store/maildir/sync_threads.h"

namespace peregrine::store::maildir {

RemovalQueue::RemovalQueue(MaildirFs& fs) : fs_(fs) {}

RemovalQueue::~RemovalQueue() { wait(); }

void RemovalQueue::start(std::vector<Item> items) {
  if (items.empty()) {
    return;
  }
  {
    std::lock_guard lock(state_->mu);
    ++state_->running;
  }
  // The job holds the state, so it never outlives it; the destructor waits
  // for it, so the seam it uses outlives it too.
  auto job = [&fs = fs_, state = state_, items = std::move(items)] {
    struct Finished {
      State& state;
      ~Finished() {
        std::lock_guard lock(state.mu);
        --state.running;
        state.idle.notify_all();
      }
    } finished{*state};
    remove(fs, *state, items);
  };
  // The future is not kept: what the job throws (a crash the tests'
  // seam simulates) ends it, and its files stay journaled.
  (void)sync_threads().run(std::move(job));
}

void RemovalQueue::remove(MaildirFs& fs, State& state, const std::vector<Item>& items) {
  std::vector<std::filesystem::path> paths;
  paths.reserve(items.size());
  for (const Item& item : items) {
    paths.push_back(item.path);
  }
  const std::vector<base::Result<void>> removed = remove_files(fs, paths);
  // Per directory: the ids whose files are gone; done once it is fsynced.
  std::map<std::filesystem::path, std::vector<std::int64_t>> by_dir;
  for (std::size_t i = 0; i < items.size(); ++i) {
    if (removed[i] || removed[i].error().code == base::MailError::kNotFound) {
      by_dir[items[i].path.parent_path()].push_back(items[i].journal_id);
      continue;
    }
    base::log(base::LogLevel::kWarn, "maildir.remove_failed",
              {{"path", items[i].path.string()}, {"reason", removed[i].error().message}});
  }
  for (auto& [dir, ids] : by_dir) {
    if (auto r = fs.sync_dir(dir); !r) {
      base::log(base::LogLevel::kWarn, "maildir.remove_failed",
                {{"path", dir.string()}, {"reason", r.error().message}});
      continue;
    }
    std::lock_guard lock(state.mu);
    state.done.insert(state.done.end(), ids.begin(), ids.end());
  }
}

void RemovalQueue::wait() {
  std::unique_lock lock(state_->mu);
  state_->idle.wait(lock, [this] { return state_->running == 0; });
}

std::vector<std::int64_t> RemovalQueue::take_done() {
  std::lock_guard lock(state_->mu);
  return std::exchange(state_->done, {});
}

}  // namespace peregrine::store::maildir
