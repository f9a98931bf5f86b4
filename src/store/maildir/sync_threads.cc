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
  // Every queued job has a waiting thread to take it: wake one. A waiting
  // thread stays counted until it wakes with a job, so a job a busy thread
  // takes first leaves the count right, not one low.
  if (static_cast<std::size_t>(idle_) >= jobs_.size()) {
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
      --idle_;
      if (jobs_.empty()) {
        return;  // stopping
      }
    }
    std::function<void()> job = std::move(jobs_.front());
    jobs_.pop_front();
    lock.unlock();
    job();  // a packaged_task: it keeps what the job throws for its future
    lock.lock();
  }
}

std::size_t SyncThreads::thread_count() {
  std::lock_guard lock(mu_);
  return threads_.size();
}

SyncThreads& sync_threads() {
  static SyncThreads threads;
  return threads;
}

}  // namespace peregrine::store::maildir
