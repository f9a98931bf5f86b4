#pragma once

// The command handlers, one family per file. Internal to imap/server; the
// command table (command_table.cc) says in which states each runs.

#include "imap/server/command_context.h"

namespace peregrine::imap::commands {

// any_state.cc
void capability(CommandContext& ctx);
void noop(CommandContext& ctx);
void logout(CommandContext& ctx);
void id(CommandContext& ctx);
void enable(CommandContext& ctx);
void namespace_(CommandContext& ctx);
void idle(CommandContext& ctx);

// auth.cc
void starttls(CommandContext& ctx);
void login(CommandContext& ctx);
void authenticate(CommandContext& ctx);
// One client response during AUTHENTICATE (session mode kAuthResponse). The
// tag in ctx.command is the AUTHENTICATE's.
void authenticate_response(CommandContext& ctx, const FramedCommand& line);

// select.cc
void select(CommandContext& ctx);  // SELECT and EXAMINE
void close(CommandContext& ctx);
void unselect(CommandContext& ctx);
void check(CommandContext& ctx);
void expunge(CommandContext& ctx);  // EXPUNGE and UID EXPUNGE

// mailbox.cc
void create(CommandContext& ctx);
void delete_(CommandContext& ctx);
void rename(CommandContext& ctx);
void subscribe(CommandContext& ctx);  // SUBSCRIBE and UNSUBSCRIBE
void status(CommandContext& ctx);

// list.cc
void list(CommandContext& ctx);  // LIST and LSUB

// append.cc
void append(CommandContext& ctx);

// search.cc
void search(CommandContext& ctx);

// sort.cc
void sort(CommandContext& ctx);  // SORT and UID SORT

// thread.cc
void thread(CommandContext& ctx);  // THREAD and UID THREAD

// fetch.cc
void fetch(CommandContext& ctx);

// store.cc
void store(CommandContext& ctx);

// copy.cc
void copy(CommandContext& ctx);  // COPY and MOVE

}  // namespace peregrine::imap::commands
