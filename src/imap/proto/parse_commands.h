#pragma once

// One parser per command family, called by parse_command (parser.cc) with
// the cursor right after the command name. Each reads its arguments,
// including the SP before the first; parse_command then checks that nothing
// is left. Internal to imap/proto.

#include "imap/proto/command.h"
#include "imap/proto/cursor.h"
#include "imap/proto/result.h"

namespace peregrine::imap::internal {

using ArgsParser = Parsed<CommandArgs> (*)(Cursor& c, bool uid);

// parse_mailbox_commands.cc
Parsed<CommandArgs> parse_select(Cursor& c, bool uid);
Parsed<CommandArgs> parse_create(Cursor& c, bool uid);
Parsed<CommandArgs> parse_mailbox_arg(Cursor& c, bool uid);
Parsed<CommandArgs> parse_rename(Cursor& c, bool uid);
Parsed<CommandArgs> parse_list(Cursor& c, bool uid);
Parsed<CommandArgs> parse_lsub(Cursor& c, bool uid);
Parsed<CommandArgs> parse_status(Cursor& c, bool uid);
Parsed<CommandArgs> parse_append(Cursor& c, bool uid);

// parse_message_commands.cc
Parsed<CommandArgs> parse_fetch(Cursor& c, bool uid);
Parsed<CommandArgs> parse_store(Cursor& c, bool uid);
Parsed<CommandArgs> parse_copy(Cursor& c, bool uid);
Parsed<CommandArgs> parse_expunge(Cursor& c, bool uid);

// parse_search.cc
Parsed<CommandArgs> parse_search(Cursor& c, bool uid);
Parsed<CommandArgs> parse_sort(Cursor& c, bool uid);
Parsed<CommandArgs> parse_thread(Cursor& c, bool uid);

// parser.cc
Parsed<CommandArgs> parse_no_args(Cursor& c, bool uid);
Parsed<CommandArgs> parse_authenticate(Cursor& c, bool uid);
Parsed<CommandArgs> parse_login(Cursor& c, bool uid);
Parsed<CommandArgs> parse_enable(Cursor& c, bool uid);
Parsed<CommandArgs> parse_id(Cursor& c, bool uid);

}  // namespace peregrine::imap::internal
