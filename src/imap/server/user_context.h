#pragma once

// One logged-in user in the process: the user's UserStore and the hubs of
// the mailboxes its sessions have selected. Every session of the user shares
// one UserContext (UserRegistry hands it out).
//
// Thread safety
// -------------
// None inside. Every call to a UserContext, to its UserStore, to its hubs and
// to the sessions' views of them happens serialized on the user's strand
// (DESIGN.md: a user's store operations run on one strand); the network layer
// runs each command of a logged-in session there. The last reference must be
// dropped on that strand too (Session::close()). The `runtime` value is set
// once at creation and may be read from any thread.

#include <any>
#include <condition_variable>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.h"
#include "store/api/user_store.h"

namespace peregrine::imap {

class MailboxHub;

class UserContext {
 public:
  UserContext(std::unique_ptr<store::UserStore> store, std::any runtime);
  ~UserContext();
  UserContext(const UserContext&) = delete;
  UserContext& operator=(const UserContext&) = delete;

  const std::string& user() const { return store_->user(); }
  store::UserStore& store() { return *store_; }

  // The hub of `mailbox`, shared with every session that has it selected;
  // opened on first use (the mailbox is synced, snapshotted and watched).
  // Errors: the store's (kNotFound for a missing or \Noselect mailbox).
  base::Result<std::shared_ptr<MailboxHub>> hub(std::string_view mailbox);

  // Tells open hubs that RENAME moved `from` (and the names below it) to
  // `to`, so they go on answering to the new names. Not for INBOX, whose
  // messages move but whose mailbox stays.
  void mailbox_renamed(std::string_view from, std::string_view to);

  // What the network layer attached at creation (e.g. the user's strand).
  const std::any& runtime() const { return runtime_; }

 private:
  std::unique_ptr<store::UserStore> store_;
  std::vector<std::weak_ptr<MailboxHub>> hubs_;
  const std::any runtime_;
};

// The store's canonical spelling of a mailbox name as far as the server
// needs it: INBOX in any case as the first level is "INBOX", one trailing
// delimiter dropped.
std::string canonical_mailbox(std::string_view name);

// Hands out one UserContext per user, opening the user's store on first use
// and closing it when the last session lets go.
//
// Thread safety
// -------------
// acquire() may be called from any thread. A mutex guards the table; it is
// held while a store is opened or closed, so that one user never has two
// stores open (a context being destroyed is waited for).
class UserRegistry {
 public:
  struct Options {
    // Called once per new context, under the registry's lock: the value the
    // network layer wants to find in UserContext::runtime() (its strand).
    std::function<std::any(std::string_view user)> make_runtime;
  };

  // `store` must outlive the registry and every context it handed out.
  UserRegistry(store::Store& store, Options options);
  explicit UserRegistry(store::Store& store) : UserRegistry(store, Options{}) {}
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
  Options options_;
  mutable std::mutex mu_;
  std::condition_variable released_;
  std::map<std::string, std::weak_ptr<UserContext>, std::less<>> users_;  // guarded by mu_
};

}  // namespace peregrine::imap
