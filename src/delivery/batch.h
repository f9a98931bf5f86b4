#pragma once

// Group commit of deliveries: deliveries to one user that wait for the
// user's strand at the same time are stored together, in one append per
// mailbox, so they share the directory fsync and the index commit instead
// of paying for them one by one (docs/architecture.md, "Durability").
//
// How a batch forms: a session pushes its delivery onto the user's queue
// (any thread), then runs a task on the user's strand that takes everything
// queued for the user and delivers it (deliver_batch), unless an earlier
// task on that strand already took it. While one batch is being made
// durable, the deliveries that arrive meanwhile queue up and form the next.
// Each delivery still gets its own result: the batch is only a way to share
// fsyncs, never a reason for one delivery to fail another.

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.h"
#include "delivery/delivery.h"
#include "store/api/user_store.h"

namespace peregrine::delivery {

// One delivery to one recipient.
struct Pending {
  // The message as received, shared by every recipient of one transaction;
  // request.message views it.
  std::shared_ptr<const std::string> message;
  Request request;
  // When set, run on the user's strand by deliver_batch just before the
  // delivery is stored; an error becomes the result and nothing is stored.
  // (LMTP re-checks here a recipient it accepted without a lookup at RCPT.)
  std::function<base::Result<void>()> admit;
  // Set on the user's strand by deliver_batch.
  std::optional<base::Result<Delivered>> result;
  // Whether `result` is admit()'s error rather than the store's.
  bool refused = false;
};

// Deliveries waiting for their users' strands, per user.
//
// Thread safety: push() and take() may be called from any thread.
class DeliveryQueue {
 public:
  void push(std::string_view user, std::shared_ptr<Pending> pending);
  // Everything queued for `user`, oldest first; the queue is left empty.
  std::vector<std::shared_ptr<Pending>> take(std::string_view user);

 private:
  std::mutex mu_;
  std::map<std::string, std::vector<std::shared_ptr<Pending>>, std::less<>> queued_;  // mu_
};

// Delivers every pending delivery of `batch` (all to the user of `store`)
// and sets its result, as deliver() would have: the messages for one
// mailbox go into one append (one transaction: written and fsync'd files,
// one directory fsync, one commit), so each is durable when this returns.
// The quota counts the batch's earlier messages. A failed shared append is
// retried message by message, so one bad message fails only itself. A
// delivery whose admit() fails is left out, with that error as its result.
// Runs on the user's strand.
void deliver_batch(store::UserStore& store, std::span<const std::shared_ptr<Pending>> batch);

}  // namespace peregrine::delivery
