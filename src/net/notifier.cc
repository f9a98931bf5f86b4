#include "net/notifier.h"

#include <asio/experimental/as_tuple.hpp>
#include <asio/post.hpp>
#include <asio/steady_timer.hpp>
#include <asio/use_awaitable.hpp>
#include <mutex>

namespace peregrine::net {

// Shared with handles on any thread.
struct Notifier::State {
  explicit State(const asio::any_io_executor& ex) : executor(ex) {}

  asio::any_io_executor executor;
  std::mutex mu;
  bool pending = false;  // guarded by mu
  bool alive = true;     // guarded by mu; false once the Notifier is destroyed
  // The owner's timer while the Notifier lives; read and reset on the
  // owner's thread only.
  Waiter* waiter = nullptr;
};

// The owner's side; never touched from another thread.
struct Notifier::Waiter {
  explicit Waiter(const asio::any_io_executor& ex) : timer(ex) {}
  asio::steady_timer timer;
};

void Notifier::Handle::notify() const {
  if (!state_) {
    return;
  }
  std::lock_guard lock(state_->mu);
  if (!state_->alive || state_->pending) {
    return;  // gone, or a wake-up is already on its way
  }
  state_->pending = true;
  asio::post(state_->executor, [state = state_] {
    bool pending;
    {
      std::lock_guard lock(state->mu);
      pending = state->pending;
    }
    // Cancel only while the notification is unconsumed: a wake-up that
    // arrives after take() must not cut a later wait short.
    if (pending && state->waiter != nullptr) {
      state->waiter->timer.cancel();
    }
  });
}

Notifier::Notifier(const asio::any_io_executor& executor)
    : state_(std::make_shared<State>(executor)), waiter_(std::make_unique<Waiter>(executor)) {
  state_->waiter = waiter_.get();
}

Notifier::~Notifier() {
  std::lock_guard lock(state_->mu);
  state_->alive = false;
  state_->waiter = nullptr;
}

bool Notifier::take() {
  std::lock_guard lock(state_->mu);
  bool pending = state_->pending;
  state_->pending = false;
  return pending;
}

asio::awaitable<bool> Notifier::wait(std::chrono::milliseconds timeout) {
  if (take()) {
    co_return true;
  }
  waiter_->timer.expires_after(timeout);
  // Ends when the timer expires, when a notification cancels it, or when
  // the caller's cancellation does.
  co_await waiter_->timer.async_wait(asio::experimental::as_tuple(asio::use_awaitable));
  co_return take();
}

}  // namespace peregrine::net
