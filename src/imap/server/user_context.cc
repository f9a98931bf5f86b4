#include "imap/server/user_context.h"

#include <algorithm>
#include <vector>

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

namespace {

// The hubs a user's IMAP sessions have open (weak: a hub lives as long as a
// session has its mailbox selected).
struct OpenHubs {
  std::vector<std::weak_ptr<MailboxHub>> hubs;
};

}  // namespace

base::Result<std::shared_ptr<MailboxHub>> open_hub(UserContext& user, std::string_view mailbox) {
  std::string name = canonical_mailbox(mailbox);
  std::vector<std::weak_ptr<MailboxHub>>& hubs = user.attachment<OpenHubs>().hubs;
  std::erase_if(hubs, [](const std::weak_ptr<MailboxHub>& h) { return h.expired(); });
  for (const std::weak_ptr<MailboxHub>& weak : hubs) {
    std::shared_ptr<MailboxHub> hub = weak.lock();
    if (hub && !hub->deleted() && hub->name() == name) {
      if (auto synced = user.store().sync_mailbox(name); !synced) {
        return std::unexpected(synced.error());
      }
      return hub;
    }
  }
  auto opened = MailboxHub::open(user.store(), name);
  if (!opened) {
    return std::unexpected(opened.error());
  }
  hubs.push_back(*opened);
  return *opened;
}

void mailbox_renamed(UserContext& user, std::string_view from, std::string_view to) {
  std::string old_name = canonical_mailbox(from);
  std::string new_name = canonical_mailbox(to);
  for (const std::weak_ptr<MailboxHub>& weak : user.attachment<OpenHubs>().hubs) {
    std::shared_ptr<MailboxHub> hub = weak.lock();
    if (hub && is_same_or_below(hub->name(), old_name)) {
      hub->set_name(new_name + hub->name().substr(old_name.size()));
    }
  }
}

}  // namespace peregrine::imap
