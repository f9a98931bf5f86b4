#include "imap/server/session.h"

#include "imap/proto/parser.h"
#include "imap/server/command_context.h"
#include "imap/server/command_table.h"
#include "imap/server/commands/commands.h"
#include "imap/server/mailbox_hub.h"

namespace peregrine::imap {
namespace {

// The tagged line, after the pending updates the command allows.
void finish(CommandContext& ctx, const CommandSpec& spec, Reply& reply) {
  SessionData& s = ctx.session;
  if (ctx.flush_updates && s.selected && s.state == SessionState::kSelected) {
    SelectedView::FlushOptions options;
    options.allow_expunge = ctx.command.uid || (spec.flags & kNoExpungeUnlessUid) == 0;
    options.with_uid = ctx.command.uid;
    if (!s.selected->flush(ctx.out, options)) {
      // The mailbox was deleted under us: "* BYE" is written.
      deselect(s);
      s.state = SessionState::kLogout;
      ctx.action = SessionAction::kClose;
    }
  }
  if (ctx.code) {
    write_tagged(ctx.out, ctx.command.tag, ctx.status, *ctx.code, ctx.text);
  } else {
    write_tagged(ctx.out, ctx.command.tag, ctx.status, ctx.text);
  }
  reply.action = ctx.action;
  reply.delay = ctx.delay;
}

Command pseudo_command(std::string tag, CommandId id) {
  Command c;
  c.tag = std::move(tag);
  c.id = id;
  return c;
}

}  // namespace

Session::Session(ServerContext& server, ConnectionInfo connection)
    : data_(std::make_unique<SessionData>(server, std::move(connection))) {}

Session::~Session() { close(); }

std::string Session::greeting() const {
  std::string out;
  write_untagged(out, ResponseStatus::kOk, ResponseCode::capability(session_capabilities(*data_)),
                 data_->server.server_name + " ready");
  return out;
}

Reply Session::on_input(const ReaderEvent& event,
                        std::span<const std::unique_ptr<store::PreparedMessage>> prepared) {
  SessionData& s = *data_;
  Reply reply;
  switch (event.kind) {
    case ReaderEvent::Kind::kNeedMore:
      return reply;
    case ReaderEvent::Kind::kCommand: {
      s.prepared = prepared;
      reply = feed(*event.command);
      s.prepared = {};
      return reply;
    }
    case ReaderEvent::Kind::kContinue:
      write_continuation(reply.out, "Ready for literal data");
      return reply;
    case ReaderEvent::Kind::kError:
      break;
  }
  // The input could not be framed. An exchange in progress ends with it.
  std::string tag = event.tag;
  if (s.mode == InputMode::kAuthResponse) {
    tag = s.auth_tag;
    s.sasl.reset();
  } else if (s.mode == InputMode::kIdle) {
    tag = s.idle_tag;
  }
  s.mode = InputMode::kCommand;
  if (tag.empty()) {
    write_untagged(reply.out, ResponseStatus::kBad, event.message);
  } else {
    write_tagged(reply.out, tag, ResponseStatus::kBad, event.message);
  }
  if (event.fatal) {
    write_untagged(reply.out, ResponseStatus::kBye, "Input cannot be resynchronised, closing");
    s.state = SessionState::kLogout;
    reply.action = SessionAction::kClose;
  }
  return reply;
}

Reply Session::feed(const FramedCommand& framed) {
  SessionData& s = *data_;
  if (s.mode == InputMode::kAuthResponse) {
    Reply reply;
    Command command = pseudo_command(s.auth_tag, CommandId::kAuthenticate);
    CommandContext ctx(s, command, reply.out);
    commands::authenticate_response(ctx, framed);
    if (ctx.respond) {
      finish(ctx, command_spec(CommandId::kAuthenticate), reply);
    } else {
      reply.action = ctx.action;
      reply.delay = ctx.delay;
    }
    return reply;
  }
  if (s.mode == InputMode::kIdle) {
    Reply reply;
    Command command = pseudo_command(s.idle_tag, CommandId::kIdle);
    CommandContext ctx(s, command, reply.out);
    s.mode = InputMode::kCommand;
    s.idle_tag.clear();
    if (is_idle_done(framed)) {
      ctx.ok("Idle completed");
    } else {
      ctx.bad("Expected DONE to end IDLE");
    }
    finish(ctx, command_spec(CommandId::kIdle), reply);
    return reply;
  }
  Parsed<Command> command = parse_command(framed);
  if (!command) {
    Reply reply;
    const ParseError& e = command.error();
    if (e.tag.empty()) {
      write_untagged(reply.out, ResponseStatus::kBad, e.message);
    } else {
      write_tagged(reply.out, e.tag, ResponseStatus::kBad, e.message);
    }
    return reply;
  }
  return handle(*command);
}

Reply Session::handle(const Command& command) {
  SessionData& s = *data_;
  Reply reply;
  if (s.running || s.mode != InputMode::kCommand) {
    write_tagged(reply.out, command.tag, ResponseStatus::kBad, "Another command is in progress");
    return reply;
  }
  const CommandSpec& spec = command_spec(command.id);
  std::string wrong_state = state_error(spec, s.state);
  if (!wrong_state.empty()) {
    write_tagged(reply.out, command.tag, ResponseStatus::kBad, wrong_state);
    return reply;
  }
  CommandContext ctx(s, command, reply.out);
  if (spec.handler == nullptr) {
    ctx.bad(std::string(command_name(command.id)) + " is not supported");
  } else if ((spec.flags & kWritesMailbox) != 0 && s.selected && s.selected->read_only()) {
    ctx.no(Code::kReadOnly, "The mailbox is read-only (EXAMINE)");
  } else {
    spec.handler(ctx);
  }
  if (ctx.resume) {
    s.running = std::move(ctx.resume);
    s.running_command = command;
    reply.more = true;
    return reply;
  }
  if (ctx.respond) {
    finish(ctx, spec, reply);
  } else {
    reply.action = ctx.action;
    reply.delay = ctx.delay;
  }
  return reply;
}

Reply Session::resume() {
  SessionData& s = *data_;
  Reply reply;
  if (!s.running) {
    return reply;
  }
  const Command& command = *s.running_command;
  CommandContext ctx(s, command, reply.out);
  if (!s.running->resume(ctx)) {
    reply.more = true;
    return reply;
  }
  finish(ctx, command_spec(command.id), reply);
  s.running.reset();
  s.running_command.reset();
  return reply;
}

void Session::on_tls_started() { data_->connection.tls = true; }

void Session::set_wake(std::function<void()> wake) { data_->wake = std::move(wake); }

Reply Session::poll_updates() {
  SessionData& s = *data_;
  Reply reply;
  s.wake_sent = false;
  if (s.mode != InputMode::kIdle || !s.selected) {
    return reply;
  }
  if (!s.selected->flush(reply.out, SelectedView::FlushOptions{})) {
    deselect(s);
    s.state = SessionState::kLogout;
    s.mode = InputMode::kCommand;
    reply.action = SessionAction::kClose;
  }
  return reply;
}

Reply Session::idle_check() {
  SessionData& s = *data_;
  if (s.mode == InputMode::kIdle && s.selected) {
    // Errors only delay the news: the next check or command tries again.
    (void)s.user->store().sync_mailbox(s.selected->hub().name());
  }
  return poll_updates();
}

void Session::close() {
  SessionData& s = *data_;
  s.running.reset();
  s.running_command.reset();
  s.sasl.reset();
  s.selected.reset();
  s.user.reset();
  if (s.state != SessionState::kNotAuthenticated) {
    s.state = SessionState::kLogout;
  }
}

SessionState Session::state() const { return data_->state; }
InputMode Session::input_mode() const { return data_->mode; }
bool Session::busy() const { return data_->running != nullptr; }
UserContext* Session::user() const { return data_->user.get(); }
const ConnectionInfo& Session::connection() const { return data_->connection; }

}  // namespace peregrine::imap
