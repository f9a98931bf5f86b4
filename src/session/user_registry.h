#pragma once

// The users logged in to this process. Every session of a user, whatever
// its protocol (IMAP, POP3, LMTP delivery), shares one UserContext: the
// user's open UserStore, so that a change one session makes reaches the
// others through the store's listeners at once, plus one slot per protocol
// for the per-user state it keeps (IMAP keeps its open mailbox hubs there).
//
// Thread safety
// -------------
// None inside a UserContext. Every call to it, to its UserStore and to what
// its attachments hold happens serialized on the user's strand (DESIGN.md:
// a user's store operations run on one strand; the strand key is the user
// name). The last reference must be dropped on that strand too.
// UserRegistry::acquire() may be called from any thread.

#include <condition_variable>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <typeindex>

#include "base/result.h"
#include "store/api/user_store.h"

namespace peregrine::session {

class UserContext {
 public:
  explicit UserContext(std::unique_ptr<store::UserStore> store);
  ~UserContext();
  UserContext(const UserContext&) = delete;
  UserContext& operator=(const UserContext&) = delete;

  const std::string& user() const { return store_->user(); }
  store::UserStore& store() { return *store_; }

  // The protocol state of type T kept for this user, default-constructed on
  // first use and destroyed before the store closes. One per type.
  template <typename T>
  T& attachment() {
    std::shared_ptr<void>& slot = attachments_[std::type_index(typeid(T))];
    if (!slot) {
      slot = std::make_shared<T>();
    }
    return *static_cast<T*>(slot.get());
  }

 private:
  std::unique_ptr<store::UserStore> store_;
  // Declared after store_ so that it is destroyed first.
  std::map<std::type_index, std::shared_ptr<void>> attachments_;
};

// Hands out one UserContext per user, opening the user's store on first use
// and closing it when the last session lets go. A mutex guards the table,
// but is not held while a store is opened or closed (that may take a WAL
// checkpoint and an fsync): a user's entry stays in the table meanwhile, so
// another acquire() of the same user waits for it, and one user never has
// two stores open, while other users log in and out at the same time.
class UserRegistry {
 public:
  // `store` must outlive the registry and every context it handed out.
  explicit UserRegistry(store::Store& store);
  ~UserRegistry();

  // The user's context, opening the store (at `home` when not empty) if no
  // session of the user holds it. Errors: those of Store::open_user.
  base::Result<std::shared_ptr<UserContext>> acquire(std::string_view user,
                                                     const std::string& home);

  // Users with an open context (for tests and metrics).
  size_t open_users() const;

 private:
  void release(UserContext* context);

  store::Store& store_;
  mutable std::mutex mu_;
  std::condition_variable released_;
  // Guarded by mu_. An entry whose context is expired (or not yet set) is a
  // store being opened or closed.
  std::map<std::string, std::weak_ptr<UserContext>, std::less<>> users_;
};

}  // namespace peregrine::session
