#include "store/maildir/sync_threads.h"

namespace peregrine::store::maildir {

SyncThreads::~SyncThreads() {
  std::vector<std::thread> threads;
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
    threads = std::move(threads_);
  }
  wake_.notify_all();
  for (std::thread& t : threads) {
    t.join();
  }
}

void SyncThreads::post(std::function<void()> job) {
  std::unique_lock lock(mu_);
  jobs_.push_back(std::move(job));
  if (idle_ > 0) {
    --idle_;  // handed this job; a busy thread may still take it first
    // Woken after the unlock: a thread woken while mu_ is held would at once
    // sleep again on mu_ (a second switch, and a futex wake at the unlock).
    lock.unlock();
    wake_.notify_one();
    return;
  }
  threads_.emplace_back([this] { loop(); });
}

void SyncThreads::loop() {
  std::unique_lock lock(mu_);
  for (;;) {
    if (jobs_.empty()) {
      ++idle_;
      wake_.wait(lock, [this] { return stopping_ || !jobs_.empty(); });
      if (jobs_.empty()) {
        return;  // stopping
      }
      // A job is here. post() counted this thread busy when it handed it
      // one; if a busy thread took it first, the count is one low, which
      // costs at most a new thread at a later post().
    }
    std::function<void()> job = std::move(jobs_.front());
    jobs_.pop_front();
    lock.unlock();
    job();  // a packaged_task: it keeps what the job throws for its future
    lock.lock();
  }
}

SyncThreads& sync_threads() {
  static SyncThreads threads;
  return threads;
}

}  // namespace peregrine::store::maildir
