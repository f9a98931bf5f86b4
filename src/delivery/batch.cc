#include "delivery/batch.h"

#include <utility>

namespace peregrine::delivery {

void DeliveryQueue::push(std::string_view user, std::shared_ptr<Pending> pending) {
  std::lock_guard lock(mu_);
  auto found = queued_.find(user);
  if (found == queued_.end()) {
    found = queued_.emplace(std::string(user), std::vector<std::shared_ptr<Pending>>{}).first;
  }
  found->second.push_back(std::move(pending));
}

std::vector<std::shared_ptr<Pending>> DeliveryQueue::take(std::string_view user) {
  std::lock_guard lock(mu_);
  auto found = queued_.find(user);
  if (found == queued_.end()) {
    return {};
  }
  std::vector<std::shared_ptr<Pending>> batch = std::move(found->second);
  queued_.erase(found);  // an idle user keeps no entry
  return batch;
}

void deliver_batch(store::UserStore& store, std::span<const std::shared_ptr<Pending>> batch) {
  if (batch.empty()) {
    return;  // an earlier batch took them
  }
  std::vector<const Request*> requests;
  std::vector<Pending*> admitted;
  requests.reserve(batch.size());
  admitted.reserve(batch.size());
  for (const auto& pending : batch) {
    if (pending->admit) {
      if (auto ok = pending->admit(); !ok) {
        pending->result = std::unexpected(ok.error());
        pending->refused = true;
        continue;
      }
    }
    requests.push_back(&pending->request);
    admitted.push_back(pending.get());
  }
  std::vector<base::Result<Delivered>> results = deliver_all(store, requests);
  for (std::size_t i = 0; i < admitted.size(); ++i) {
    admitted[i]->result = std::move(results[i]);
  }
}

}  // namespace peregrine::delivery
