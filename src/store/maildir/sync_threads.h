#pragma once

// Threads that wait for the disk on behalf of a store call, so that the
// caller (a user's strand) does its CPU work or its own sync meanwhile: an
// append writes and fsyncs its message files here while the strand parses
// and stages the rows, then fsyncs cur/ here while the strand commits
// (docs/formats/maildir-store.md, "Writes").
//
// A task starts at once: on an idle thread if there is one, else on a new
// one, so tasks never wait behind each other. Idle threads stay for the
// next task, so the number of threads follows the most tasks ever in
// flight at once (at most two per storage strand, and one per IMAP
// connection preparing pipelined APPENDs), plus threads that had just
// finished a task when a new one came.
//
// A task is handed to one idle thread, the one that went idle last, which
// sleeps on a semaphore of its own: posting is one wake of that thread,
// and the woken thread takes its task without the pool's lock. (With one
// condition variable for all, the woken thread took the lock again at
// once, so each post cost a futex wake more, and a poster often slept on
// the condition variable's internal lock while the thread it woke was
// still getting onto a CPU: docs/benchmarks.md, "LMTP delivery".)
//
// Thread safety: run() may be called from any thread. The process-wide
// instance lives until exit; its destructor joins the threads.

#include <semaphore.h>

#include <functional>
#include <future>
#include <memory>
#include <mutex>
#include <thread>
#include <type_traits>
#include <utility>
#include <vector>

namespace peregrine::store::maildir {

class SyncThreads {
 public:
  SyncThreads() = default;
  ~SyncThreads();
  SyncThreads(const SyncThreads&) = delete;
  SyncThreads& operator=(const SyncThreads&) = delete;

  // Runs `fn` on one of the threads. The future gives its result, or
  // rethrows what it threw. A future must be waited for before anything
  // `fn` refers to goes away.
  template <typename F>
  std::future<std::invoke_result_t<F&>> run(F fn) {
    using R = std::invoke_result_t<F&>;
    auto task = std::make_shared<std::packaged_task<R()>>(std::move(fn));
    std::future<R> future = task->get_future();
    post([task] { (*task)(); });
    return future;
  }

  // Threads started so far (they all stay until the destructor).
  std::size_t thread_count();

 private:
  struct Worker {
    Worker();
    ~Worker();
    sem_t wake;  // posted when `job` is set (an empty job: stop)
    // Set by post() while the thread is off the idle list and before
    // `wake` is posted; read by the thread after it wakes.
    std::function<void()> job;
    std::thread thread;
  };

  void post(std::function<void()> job);
  void loop(Worker* self);

  std::mutex mu_;
  std::vector<Worker*> idle_;                     // mu_: waiting for a job, the latest last
  bool stopping_ = false;                         // mu_
  std::vector<std::unique_ptr<Worker>> workers_;  // mu_
};

// The process-wide instance the Maildir stores use.
SyncThreads& sync_threads();

}  // namespace peregrine::store::maildir
