#include "imap/server/command_context.h"

#include "base/log.h"
#include "config/plaintext_policy.h"

namespace peregrine::imap {
namespace {

void log_store_error(const CommandContext& ctx, const base::Error& error) {
  base::log(base::LogLevel::kError, "imap.store_error",
            {{"user", ctx.session.user ? ctx.session.user->user() : std::string()},
             {"command", std::string(command_name(ctx.command.id))},
             {"code", base::to_string(error.code)},
             {"error", error.message}});
}

}  // namespace

void CommandContext::fail(const base::Error& error, bool bad_input_is_bad) {
  using base::MailError;
  switch (error.code) {
    case MailError::kNotFound:
      return no(Code::kNonExistent, error.message);
    case MailError::kExists:
      return no(Code::kAlreadyExists, error.message);
    case MailError::kNoPermission:
      return no(Code::kNoPerm, error.message);
    case MailError::kAuthFailed:
      return no(Code::kAuthenticationFailed, "Authentication failed");
    case MailError::kOverQuota:
      return no(Code::kOverQuota, error.message);
    case MailError::kInUse:
      return no(Code::kInUse, error.message);
    case MailError::kExpunged:
      return no(Code::kExpungeIssued, error.message);
    case MailError::kBadInput:
      return bad_input_is_bad ? bad(error.message) : no(Code::kCannot, error.message);
    case MailError::kTooBig:
      return no(Code::kTooBig, error.message);
    case MailError::kTemporary:
      log_store_error(*this, error);
      return no(Code::kUnavailable, "Temporary failure, try again later");
    case MailError::kInternal:
      log_store_error(*this, error);
      return no(Code::kServerBug, "Internal error, see the server log");
  }
}

store::PreparedMessage* CommandContext::prepared_for(std::string_view bytes) const {
  for (const auto& prepared : session.prepared) {
    if (prepared && prepared->source().data() == bytes.data() &&
        prepared->source().size() == bytes.size()) {
      return prepared.get();
    }
  }
  return nullptr;
}

void CommandContext::fail_target(const base::Error& error) {
  if (error.code == base::MailError::kNotFound) {
    return no(Code::kTryCreate, error.message);
  }
  fail(error);
}

bool plaintext_allowed(const SessionData& session) {
  return config::plaintext_auth_allowed(session.server.plaintext, session.connection.tls,
                                        session.connection.loopback);
}

std::vector<std::string> session_capabilities(const SessionData& session) {
  std::vector<std::string> caps = {"IMAP4rev1",   "LITERAL+",  "SASL-IR",  "ID",
                                   "ENABLE",      "IDLE",      "UIDPLUS",  "MOVE",
                                   "UNSELECT",    "NAMESPACE", "CHILDREN", "SPECIAL-USE",
                                   "MULTIAPPEND", "ESEARCH",   "SEARCHRES"};
  // SORT and THREAD (commands/sort.cc, commands/thread.cc).
  caps.insert(caps.end(),
              {"SORT", "SORT=DISPLAY", "ESORT", "THREAD=ORDEREDSUBJECT", "THREAD=REFERENCES"});
  if (session.state == SessionState::kNotAuthenticated) {
    if (session.connection.tls_available && !session.connection.tls) {
      caps.emplace_back("STARTTLS");
    }
    if (plaintext_allowed(session)) {
      caps.emplace_back("AUTH=PLAIN");
      caps.emplace_back("AUTH=LOGIN");
    } else {
      caps.emplace_back("LOGINDISABLED");
    }
  }
  return caps;
}

void deselect(SessionData& session) {
  session.selected.reset();
  if (session.state == SessionState::kSelected) {
    session.state = SessionState::kAuthenticated;
  }
}

void select_view(SessionData& session, std::unique_ptr<SelectedView> view) {
  SessionData* s = &session;
  view->set_on_update([s] {
    if (s->mode == InputMode::kIdle && s->wake && !s->wake_sent) {
      s->wake_sent = true;
      s->wake();
    }
  });
  session.selected = std::move(view);
  session.state = SessionState::kSelected;
}

}  // namespace peregrine::imap
