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
    // The last session let go and the context is being destroyed: wait for
    // its store to close before opening another.
    released_.wait(lock);
  }
  auto store = store_.open_user(user, home);
  if (!store) {
    return std::unexpected(store.error());
  }
  std::shared_ptr<UserContext> context(new UserContext(std::move(*store)),
                                       [this](UserContext* c) { release(c); });
  users_.emplace(std::string(user), context);
  return context;
}

void UserRegistry::release(UserContext* context) {
  std::lock_guard lock(mu_);
  auto it = users_.find(context->user());
  if (it != users_.end() && it->second.expired()) {
    users_.erase(it);
  }
  delete context;
  released_.notify_all();
}

size_t UserRegistry::open_users() const {
  std::lock_guard lock(mu_);
  return users_.size();
}

}  // namespace peregrine::session
