#pragma once

// What command handlers (commands/*.cc) see: the session's state and one
// command's output. Internal to imap/server.
//
// A handler writes untagged responses to `out` and sets the tagged result
// (ok(), no(), bad(), fail()); the session then writes the pending mailbox
// updates the command allows and the tagged line. A handler whose output is
// long (FETCH) sets `resume` instead of finishing: the session gives the
// output so far to the network layer and calls it again on resume().

#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "auth/sasl.h"
#include "base/mail_error.h"
#include "imap/proto/command.h"
#include "imap/proto/response_code.h"
#include "imap/proto/response_writer.h"
#include "imap/server/selected_view.h"
#include "imap/server/session.h"
#include "imap/server/user_context.h"

namespace peregrine::imap {

struct CommandContext;

class ResumableCommand {
 public:
  virtual ~ResumableCommand() = default;
  // Writes more output to ctx.out. Returns true when done, with the tagged
  // result set in ctx; false to be called again.
  virtual bool resume(CommandContext& ctx) = 0;
};

// The session's state, owned by Session.
struct SessionData {
  SessionData(ServerContext& s, ConnectionInfo c) : server(s), connection(std::move(c)) {}

  ServerContext& server;
  ConnectionInfo connection;
  SessionState state = SessionState::kNotAuthenticated;
  InputMode mode = InputMode::kCommand;
  std::shared_ptr<UserContext> user;
  std::unique_ptr<SelectedView> selected;

  // AUTHENTICATE in progress (mode kAuthResponse).
  std::unique_ptr<auth::SaslServer> sasl;
  std::string auth_tag;
  // IDLE in progress (mode kIdle).
  std::string idle_tag;
  std::function<void()> wake;
  bool wake_sent = false;  // woken since the last poll
  // An unfinished command.
  std::unique_ptr<ResumableCommand> running;
  std::optional<Command> running_command;
  // During on_input: the analyses made ahead of the command's literals.
  std::span<const std::unique_ptr<store::PreparedMessage>> prepared;
};

struct CommandContext {
  CommandContext(SessionData& s, const Command& c, std::string& o)
      : session(s), command(c), out(o) {}

  SessionData& session;
  const Command& command;
  std::string& out;

  // The tagged result.
  ResponseStatus status = ResponseStatus::kOk;
  std::optional<ResponseCode> code;
  std::string text = "Completed";
  // For the network layer.
  SessionAction action = SessionAction::kNone;
  std::chrono::milliseconds delay{0};
  // Set by a handler that continues later.
  std::unique_ptr<ResumableCommand> resume;
  // Whether pending mailbox updates may be written before the tagged line.
  bool flush_updates = true;
  // False: no tagged line yet, the command waits for client input
  // (AUTHENTICATE's challenge, IDLE).
  bool respond = true;

  void ok(std::string_view t) { set(ResponseStatus::kOk, t); }
  void ok(const ResponseCode& c, std::string_view t) { set(ResponseStatus::kOk, c, t); }
  void no(std::string_view t) { set(ResponseStatus::kNo, t); }
  void no(const ResponseCode& c, std::string_view t) { set(ResponseStatus::kNo, c, t); }
  void bad(std::string_view t) { set(ResponseStatus::kBad, t); }
  // A store error as NO with the response code it maps to (or BAD for
  // kBadInput when `bad_input_is_bad`). Internal and temporary errors are
  // logged with their detail; the client gets a generic text.
  void fail(const base::Error& error, bool bad_input_is_bad = false);
  // fail() for APPEND, COPY and MOVE: a missing mailbox gets [TRYCREATE].
  void fail_target(const base::Error& error);

  store::UserStore& store() { return session.user->store(); }
  // The analysis made ahead from exactly `bytes` (a view of one of the
  // command's literals), or null.
  store::PreparedMessage* prepared_for(std::string_view bytes) const;
  SelectedView& view() { return *session.selected; }

 private:
  void set(ResponseStatus s, const ResponseCode& c, std::string_view t) {
    status = s;
    code = c;
    text = std::string(t);
  }
  // Without a code. (Not a disengaged std::optional argument: GCC 12 at -O2
  // takes the destructor of that temporary for a read of uninitialized
  // memory.)
  void set(ResponseStatus s, std::string_view t) {
    status = s;
    code.reset();
    text = std::string(t);
  }
};

// The capabilities to announce in the session's current state.
std::vector<std::string> session_capabilities(const SessionData& session);
// Whether a plaintext password may be used on this connection now.
bool plaintext_allowed(const SessionData& session);
// Leaves the selected mailbox (no expunge), back to the authenticated state.
void deselect(SessionData& session);
// Makes `view` the session's selected mailbox and has its updates wake an
// IDLE.
void select_view(SessionData& session, std::unique_ptr<SelectedView> view);

}  // namespace peregrine::imap
