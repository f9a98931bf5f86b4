#pragma once

// Blocking storage work, off the network threads. A small pool of threads
// runs tasks; each user has a strand on it, so one user's tasks run one at a
// time, in the order they were queued, while different users' tasks run in
// parallel (DESIGN.md: one strand per user; a UserStore is used by one
// thread at a time). A session awaits its task and resumes on its own
// worker thread:
//
//   auto status = co_await pool.run(user, [&] { return store.status(name); });
//
// run() always waits for the task to finish, even if the awaiting coroutine
// is cancelled, so the task may safely refer to the coroutine's locals.
//
// Lifetime: sessions await the pool, so it must outlive the Runtime: destroy
// it after Runtime::wait() has returned.
//
// Thread safety: run() and post() may be called from any thread (run() from
// a coroutine on an io_context); the destructor from one that is not a pool
// thread.

#include <asio/awaitable.hpp>
#include <cstddef>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>

namespace peregrine::net {

class StoragePool {
 public:
  using Task = std::move_only_function<void()>;

  explicit StoragePool(unsigned threads);
  // Runs every queued task, then joins the threads.
  ~StoragePool();
  StoragePool(const StoragePool&) = delete;
  StoragePool& operator=(const StoragePool&) = delete;

  // Runs fn() on `user_key`'s strand and gives back its result on the
  // awaiting coroutine's executor. An exception fn() throws is rethrown in
  // the coroutine.
  template <typename F>
  asio::awaitable<std::invoke_result_t<F&>> run(std::string user_key, F fn);

  // As run(), but when no user has a task queued or running, runs fn() at
  // once on the calling thread, and the user's later tasks wait for it.
  // For short work whose caller waits for it anyway (an LMTP delivery):
  // it saves the two thread hops run() makes (the post to a pool thread,
  // and the resumption on the caller's io_context), each a wake-up and a
  // context switch. Meanwhile the caller's thread serves none of its other
  // connections, so their work does not reach the pool either, and the
  // pool may well be idle again for the next such call: callers use it
  // only where nothing else is likely to be waiting (LMTP: while its
  // connection is the only one).
  template <typename F>
  asio::awaitable<std::invoke_result_t<F&>> run_here_when_idle(std::string user_key, F fn);

  // Queues fn() on `user_key`'s strand and returns at once. An exception it
  // throws is logged and dropped.
  void post(std::string_view user_key, Task fn);

  // Users with queued or running tasks (a strand is dropped when idle).
  std::size_t active_users() const;

 private:
  struct Impl;
  asio::awaitable<void> run_task(std::string user_key, Task task);
  // Claims `user_key`'s lane for a task run on the calling thread when no
  // lane exists (nothing queued or running anywhere); false otherwise.
  bool claim_idle(const std::string& user_key);
  // Ends the claim: the tasks queued meanwhile go to the user's strand.
  void end_claim(const std::string& user_key);

  std::unique_ptr<Impl> impl_;
};

template <typename F>
asio::awaitable<std::invoke_result_t<F&>> StoragePool::run(std::string user_key, F fn) {
  using R = std::invoke_result_t<F&>;
  static_assert(!std::is_reference_v<R>, "return a value, not a reference into the store");
  if constexpr (std::is_void_v<R>) {
    co_await run_task(std::move(user_key), Task([&fn] { fn(); }));
  } else {
    std::optional<R> result;
    co_await run_task(std::move(user_key), Task([&fn, &result] { result.emplace(fn()); }));
    co_return std::move(*result);
  }
}

template <typename F>
asio::awaitable<std::invoke_result_t<F&>> StoragePool::run_here_when_idle(std::string user_key,
                                                                          F fn) {
  if (!claim_idle(user_key)) {
    co_return co_await run(std::move(user_key), std::move(fn));
  }
  struct Claim {
    StoragePool* pool;
    const std::string& key;
    ~Claim() { pool->end_claim(key); }
  } claim{this, user_key};
  co_return fn();
}

}  // namespace peregrine::net
