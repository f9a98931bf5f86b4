// CAPABILITY, NOOP, LOGOUT, ID, ENABLE, NAMESPACE and IDLE.

#include "imap/proto/response_writer.h"
#include "imap/server/commands/commands.h"
#include "imap/server/mailbox_hub.h"

namespace peregrine::imap::commands {

void capability(CommandContext& ctx) {
  write_capability(ctx.out, session_capabilities(ctx.session));
  ctx.ok("Capability completed");
}

void noop(CommandContext& ctx) {
  if (ctx.session.selected) {
    // A sync point: fold in what other programs did to the Maildir. A
    // failure only delays the news.
    (void)ctx.store().sync_mailbox(ctx.view().hub().name());
  }
  ctx.ok("NOOP completed");
}

void logout(CommandContext& ctx) {
  write_untagged(ctx.out, ResponseStatus::kBye, "Logging out");
  deselect(ctx.session);
  ctx.session.state = SessionState::kLogout;
  ctx.flush_updates = false;
  ctx.action = SessionAction::kClose;
  ctx.ok("Logout completed");
}

void id(CommandContext& ctx) {
  std::vector<IdField> fields = {
      IdField{"name", ctx.session.server.server_name},
      IdField{"version", ctx.session.server.server_version},
  };
  write_id(ctx.out, fields);
  ctx.ok("ID completed");
}

void enable(CommandContext& ctx) {
  // None of the capabilities ENABLE can turn on (CONDSTORE, QRESYNC,
  // UTF8=ACCEPT) is offered yet: RFC 5161 answers with an empty list.
  write_enabled(ctx.out, {});
  ctx.ok("Enabled");
}

void namespace_(CommandContext& ctx) {
  const Namespace personal[] = {Namespace{"", store::kHierarchyDelimiter}};
  write_namespace(ctx.out, personal, {}, {});
  ctx.ok("Namespace completed");
}

void idle(CommandContext& ctx) {
  SessionData& s = ctx.session;
  write_continuation(ctx.out, "idling");
  s.mode = InputMode::kIdle;
  s.idle_tag = ctx.command.tag;
  s.wake_sent = false;
  if (s.selected) {
    (void)ctx.store().sync_mailbox(ctx.view().hub().name());
    // What is already pending goes out at once (RFC 2177).
    if (!s.selected->flush(ctx.out, SelectedView::FlushOptions{})) {
      deselect(s);
      s.state = SessionState::kLogout;
      s.mode = InputMode::kCommand;
      ctx.action = SessionAction::kClose;
    }
  }
  ctx.respond = false;
}

}  // namespace peregrine::imap::commands
