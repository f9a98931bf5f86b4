#include "store/maildir/sync_threads.h"

#include <cerrno>

namespace peregrine::store::maildir {

SyncThreads::Worker::Worker() { ::sem_init(&wake, 0, 0); }

SyncThreads::Worker::~Worker() { ::sem_destroy(&wake); }

SyncThreads::~SyncThreads() {
  std::vector<std::unique_ptr<Worker>> workers;
  std::vector<Worker*> idle;
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
    workers = std::move(workers_);
    idle = std::move(idle_);
  }
  // A busy thread sees stopping_ when its job ends; an idle one is woken
  // with no job.
  for (Worker* w : idle) {
    ::sem_post(&w->wake);
  }
  for (auto& w : workers) {
    w->thread.join();
  }
}

void SyncThreads::post(std::function<void()> job) {
  std::unique_lock lock(mu_);
  if (!idle_.empty()) {
    Worker* w = idle_.back();
    idle_.pop_back();
    lock.unlock();
    // Off the idle list, the thread is ours to hand the job to: it reads it
    // only after the post below.
    w->job = std::move(job);
    ::sem_post(&w->wake);
    return;
  }
  auto worker = std::make_unique<Worker>();
  Worker* w = worker.get();
  w->job = std::move(job);
  w->thread = std::thread([this, w] { loop(w); });
  workers_.push_back(std::move(worker));
}

void SyncThreads::loop(Worker* self) {
  for (;;) {
    std::function<void()> job = std::move(self->job);
    self->job = nullptr;
    if (!job) {
      return;  // stopping
    }
    job();  // a packaged_task: it keeps what the job throws for its future
    job = nullptr;
    {
      std::lock_guard lock(mu_);
      if (stopping_) {
        return;
      }
      idle_.push_back(self);
    }
    while (::sem_wait(&self->wake) != 0 && errno == EINTR) {
    }
  }
}

std::size_t SyncThreads::thread_count() {
  std::lock_guard lock(mu_);
  return workers_.size();
}

SyncThreads& sync_threads() {
  static SyncThreads threads;
  return threads;
}

}  // namespace peregrine::store::maildir
