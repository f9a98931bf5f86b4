#pragma once

// Wakes a coroutine on its own thread from any thread: a storage thread
// (a mailbox change) or another session's. Notifications coalesce: any
// number of notify() calls before the owner looks count as one.
//
//   Notifier changed(connection.executor());
//   hub.subscribe(changed.handle());             // handle.notify() from anywhere
//   if (co_await changed.wait(idle_timeout)) ... // true: notified; false: timed out
//
// For IMAP IDLE, race it against the client's "DONE" with Asio's awaitable
// operators: `co_await (connection.read_line(n) || changed.wait(t))`.
//
// Thread safety
// -------------
// notify() and Handle::notify() may be called from any thread, also after
// the Notifier is gone (they do nothing then). Everything else is for the
// owner's thread: the executor given at construction, where the Notifier
// must also be destroyed. One wait() at a time.

#include <asio/any_io_executor.hpp>
#include <asio/awaitable.hpp>
#include <chrono>
#include <memory>

namespace peregrine::net {

class Notifier {
 public:
  struct State;
  struct Waiter;

  // A copyable reference that can notify, and outlive, the Notifier.
  class Handle {
   public:
    Handle() = default;
    void notify() const;

   private:
    friend class Notifier;
    explicit Handle(std::shared_ptr<State> state) : state_(std::move(state)) {}
    std::shared_ptr<State> state_;
  };

  explicit Notifier(const asio::any_io_executor& executor);
  ~Notifier();
  Notifier(const Notifier&) = delete;
  Notifier& operator=(const Notifier&) = delete;

  Handle handle() const { return Handle(state_); }
  void notify() { handle().notify(); }

  // True if a notification came since the last take() or wait(), which it
  // consumes.
  bool take();
  // True at once if a notification is pending, else when one comes; false
  // when `timeout` passes first, or when the wait is cancelled (per-operation
  // cancellation, e.g. the other side of `||` finished).
  asio::awaitable<bool> wait(std::chrono::milliseconds timeout);

 private:
  std::shared_ptr<State> state_;
  std::unique_ptr<Waiter> waiter_;
};

}  // namespace peregrine::net
