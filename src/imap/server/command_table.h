#pragma once

// The command table: for each command, the states it is allowed in, how it
// treats pending updates, and its handler (commands/*.cc). No command is
// allowed during IDLE: the session then reads only DONE (RFC 2177).
// Internal to imap/server.

#include <cstdint>
#include <string>

#include "imap/proto/command.h"
#include "imap/server/session.h"

namespace peregrine::imap {

struct CommandContext;

enum CommandFlag : std::uint16_t {
  kInNotAuthenticated = 1u << 0,
  kInAuthenticated = 1u << 1,
  kInSelected = 1u << 2,
  kInAnyState = kInNotAuthenticated | kInAuthenticated | kInSelected,
  kAfterLogin = kInAuthenticated | kInSelected,
  // The non-UID form names messages by sequence number and is one of FETCH,
  // STORE, SEARCH: no EXPUNGE response may be sent while it runs (RFC 3501
  // §7.4.1). Its UID form is a different command and may.
  kNoExpungeUnlessUid = 1u << 3,
  // Names messages (sets or results): sequence numbers, or UIDs in the UID
  // form. Runs only with a mailbox selected. Commands run one at a time
  // today; a dispatcher that overlaps pipelined commands must not overlap
  // these with ones that expunge (RFC 3501 §5.5).
  kUsesMessageNumbers = 1u << 4,
  // Changes the selected mailbox's messages: refused when it is read-only
  // (EXAMINE).
  kWritesMailbox = 1u << 5,
};

using CommandHandler = void (*)(CommandContext& ctx);

struct CommandSpec {
  CommandId id;
  std::uint16_t flags;
  CommandHandler handler;  // null: parsed but not offered
};

// The entry for `id`; never null.
const CommandSpec& command_spec(CommandId id);

// Why `spec` cannot run in `state`, for a BAD text; empty when it can.
std::string state_error(const CommandSpec& spec, SessionState state);

}  // namespace peregrine::imap
