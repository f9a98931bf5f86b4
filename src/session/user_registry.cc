#include "session/user_registry.h"

#include <utility>

namespace peregrine::session {

UserContext::UserContext(std::unique_ptr<store::UserStore> store) : store_(std::move(store)) {}

UserContext::~UserContext() = default;

UserRegistry::UserRegistry(store::Store& store) : store_(store) {}

UserRegistry::~UserRegistry() = default;

base::Result<std::shared_ptr<UserContext>> UserRegistry::acquire(std::string_view user,
                                                                 const std::string& home) {
  std::unique_lock lock(mu_);
  for (;;) {
    auto it = users_.find(user);
    if (it == users_.end()) {
      break;
    }
    if (std::shared_ptr<UserContext> context = it->second.lock()) {
      return context;
    }
    // The user's store is being opened or closed by another thread: wait
    // for that, so that one user never has two stores open.
    released_.wait(lock);
  }
  // An entry without a context marks the store as being opened; the mutex
  // is not held meanwhile, so other users log in and out at the same time.
  auto entry = users_.emplace(std::string(user), std::weak_ptr<UserContext>()).first;
  lock.unlock();
  auto store = store_.open_user(user, home);
  lock.lock();
  if (!store) {
    users_.erase(entry);
    released_.notify_all();
    return std::unexpected(store.error());
  }
  std::shared_ptr<UserContext> context(new UserContext(std::move(*store)),
                                       [this](UserContext* c) { release(c); });
  entry->second = context;
  released_.notify_all();
  return context;
}

void UserRegistry::release(UserContext* context) {
  // The entry stays (expired) while the store closes, so the same user's
  // next acquire() waits for it; other users' do not.
  const std::string user = context->user();
  delete context;
  std::lock_guard lock(mu_);
  auto it = users_.find(user);
  if (it != users_.end() && it->second.expired()) {
    users_.erase(it);
  }
  released_.notify_all();
}

size_t UserRegistry::open_users() const {
  std::lock_guard lock(mu_);
  return users_.size();
}

}  // namespace peregrine::session
