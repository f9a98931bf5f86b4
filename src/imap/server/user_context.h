#pragma once

// IMAP's view of a logged-in user: the protocol-neutral UserContext of
// session/user_registry.h (the user's store, shared with the user's POP3
// and LMTP sessions) plus the hubs of the mailboxes its IMAP sessions have
// selected, kept as the context's attachment.
//
// Thread safety: as session/user_registry.h says, everything here runs on
// the user's strand.

#include <memory>
#include <string>
#include <string_view>

#include "base/result.h"
#include "session/user_registry.h"

namespace peregrine::imap {

class MailboxHub;

using session::UserContext;
using session::UserRegistry;

// The store's canonical spelling of a mailbox name as far as the server
// needs it: INBOX in any case as the first level is "INBOX", one trailing
// delimiter dropped.
std::string canonical_mailbox(std::string_view name);

// The hub of `mailbox`, shared with every IMAP session of the user that has
// it selected; opened on first use (the mailbox is synced, snapshotted and
// watched). Errors: the store's (kNotFound for a missing or \Noselect
// mailbox).
base::Result<std::shared_ptr<MailboxHub>> open_hub(UserContext& user, std::string_view mailbox);

// Tells the user's open hubs that RENAME moved `from` (and the names below
// it) to `to`, so they go on answering to the new names. Not for INBOX,
// whose messages move but whose mailbox stays.
void mailbox_renamed(UserContext& user, std::string_view from, std::string_view to);

}  // namespace peregrine::imap
