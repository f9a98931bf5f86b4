#include "net/storage_pool.h"

#include <asio/associated_executor.hpp>
#include <asio/async_result.hpp>
#include <asio/execution/outstanding_work.hpp>
#include <asio/post.hpp>
#include <asio/prefer.hpp>
#include <asio/strand.hpp>
#include <asio/thread_pool.hpp>
#include <asio/use_awaitable.hpp>
#include <exception>
#include <mutex>
#include <unordered_map>
#include <vector>

#include "base/log.h"

namespace peregrine::net {

using Strand = asio::strand<asio::thread_pool::executor_type>;

struct StoragePool::Impl {
  explicit Impl(unsigned threads) : pool(std::max(1u, threads)) {}

  struct Lane {
    Strand strand;
    std::size_t pending = 0;
    // A task runs on a caller's thread (run_here_when_idle): tasks queued
    // meanwhile wait here, in order, and go to the strand after it.
    bool claimed = false;
    std::vector<Task> held;
  };

  // Queues `task` on the user's strand, counting one more task on it (the
  // task calls release() when done). Under the lock, so that the tasks held
  // for a claim reach the strand before any queued after the claim ends.
  void submit(const std::string& key, Task task) {
    std::lock_guard lock(mu);
    auto it = lanes.find(key);
    if (it == lanes.end()) {
      it = lanes.emplace(key, new_lane()).first;
    }
    ++it->second.pending;
    if (it->second.claimed) {
      it->second.held.push_back(std::move(task));
    } else {
      asio::post(it->second.strand, std::move(task));
    }
  }

  // A task of the user's finished; the strand goes when none is left, so a
  // later task may get a new one (nothing is queued on the old one then).
  void release(const std::string& key) {
    std::lock_guard lock(mu);
    auto it = lanes.find(key);
    if (it != lanes.end()) {
      count_one_done(it);
    }
  }

  bool claim_idle(const std::string& key) {
    std::lock_guard lock(mu);
    if (!lanes.empty()) {
      return false;
    }
    Lane& lane = lanes.emplace(key, new_lane()).first->second;
    lane.pending = 1;
    lane.claimed = true;
    return true;
  }

  void end_claim(const std::string& key) {
    std::lock_guard lock(mu);
    auto it = lanes.find(key);
    if (it == lanes.end()) {
      return;
    }
    Lane& lane = it->second;
    lane.claimed = false;
    for (Task& task : lane.held) {
      asio::post(lane.strand, std::move(task));
    }
    lane.held.clear();
    count_one_done(it);
  }

  // A lane with nothing on it yet.
  Lane new_lane() { return Lane{asio::make_strand(pool.get_executor()), 0, false, {}}; }

  // One task of the lane at `it` is done (under mu); the lane goes when
  // none is left.
  void count_one_done(std::unordered_map<std::string, Lane>::iterator it) {
    if (--it->second.pending == 0) {
      lanes.erase(it);
    }
  }

  asio::thread_pool pool;
  mutable std::mutex mu;
  std::unordered_map<std::string, Lane> lanes;  // guarded by mu
};

StoragePool::StoragePool(unsigned threads) : impl_(std::make_unique<Impl>(threads)) {}

StoragePool::~StoragePool() { impl_->pool.join(); }

void StoragePool::post(std::string_view user_key, Task fn) {
  std::string key(user_key);
  impl_->submit(key, [impl = impl_.get(), key, fn = std::move(fn)]() mutable {
    try {
      fn();
    } catch (const std::exception& e) {
      base::log(base::LogLevel::kError, "storage.task_exception",
                {{"user", key}, {"what", e.what()}});
    } catch (...) {
      base::log(base::LogLevel::kError, "storage.task_exception", {{"user", key}});
    }
    impl->release(key);
  });
}

asio::awaitable<void> StoragePool::run_task(std::string user_key, Task task) {
  Impl* impl = impl_.get();
  co_await asio::async_initiate<decltype(asio::use_awaitable), void(std::exception_ptr)>(
      [impl, &user_key, &task](auto handler) {
        // Keeps the coroutine's io_context running until it is resumed.
        auto home = asio::prefer(asio::get_associated_executor(handler),
                                 asio::execution::outstanding_work.tracked);
        impl->submit(user_key, [impl, key = user_key, task = std::move(task),
                                handler = std::move(handler), home = std::move(home)]() mutable {
          std::exception_ptr error;
          try {
            task();
          } catch (...) {
            error = std::current_exception();
          }
          impl->release(key);
          asio::post(
              home, [handler = std::move(handler), error]() mutable { std::move(handler)(error); });
        });
      },
      asio::use_awaitable);
}

bool StoragePool::claim_idle(const std::string& user_key) { return impl_->claim_idle(user_key); }

void StoragePool::end_claim(const std::string& user_key) { impl_->end_claim(user_key); }

std::size_t StoragePool::active_users() const {
  std::lock_guard lock(impl_->mu);
  return impl_->lanes.size();
}

}  // namespace peregrine::net
