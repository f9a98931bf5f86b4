#include "imap/server/user_context.h"

#include <algorithm>

#include "base/ascii.h"
#include "imap/server/mailbox_hub.h"

namespace peregrine::imap {
namespace {

// Whether canonical `name` is `parent` or below it.
bool is_same_or_below(std::string_view name, std::string_view parent) {
  return name == parent || (name.size() > parent.size() && name.starts_with(parent) &&
                            name[parent.size()] == store::kHierarchyDelimiter);
}

}  // namespace

std::string canonical_mailbox(std::string_view name) {
  std::string out(name);
  if (out.size() > 1 && out.back() == store::kHierarchyDelimiter) {
    out.pop_back();
  }
  size_t first_level = std::min(out.find(store::kHierarchyDelimiter), out.size());
  if (first_level == store::kInbox.size() && base::iequals(out.substr(0, first_level), "INBOX")) {
    out.replace(0, first_level, store::kInbox);
  }
  return out;
}

UserContext::UserContext(std::unique_ptr<store::UserStore> store, std::any runtime)
    : store_(std::move(store)), runtime_(std::move(runtime)) {}

UserContext::~UserContext() = default;

base::Result<std::shared_ptr<MailboxHub>> UserContext::hub(std::string_view mailbox) {
  std::string name = canonical_mailbox(mailbox);
  std::erase_if(hubs_, [](const std::weak_ptr<MailboxHub>& h) { return h.expired(); });
  for (const std::weak_ptr<MailboxHub>& weak : hubs_) {
    std::shared_ptr<MailboxHub> hub = weak.lock();
    if (hub && !hub->deleted() && hub->name() == name) {
      if (auto synced = store_->sync_mailbox(name); !synced) {
        return std::unexpected(synced.error());
      }
      return hub;
    }
  }
  auto opened = MailboxHub::open(*store_, name);
  if (!opened) {
    return std::unexpected(opened.error());
  }
  hubs_.push_back(*opened);
  return *opened;
}

void UserContext::mailbox_renamed(std::string_view from, std::string_view to) {
  std::string old_name = canonical_mailbox(from);
  std::string new_name = canonical_mailbox(to);
  for (const std::weak_ptr<MailboxHub>& weak : hubs_) {
    std::shared_ptr<MailboxHub> hub = weak.lock();
    if (hub && is_same_or_below(hub->name(), old_name)) {
      hub->set_name(new_name + hub->name().substr(old_name.size()));
    }
  }
}

UserRegistry::UserRegistry(store::Store& store, Options options)
    : store_(store), options_(std::move(options)) {}

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
  std::any runtime = options_.make_runtime ? options_.make_runtime(user) : std::any{};
  std::shared_ptr<UserContext> context(new UserContext(std::move(*store), std::move(runtime)),
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

}  // namespace peregrine::imap
