// STARTTLS, LOGIN and AUTHENTICATE (PLAIN, LOGIN; SASL-IR).

#include "auth/authenticator.h"
#include "auth/failure_tracker.h"
#include "auth/sasl.h"
#include "base/log.h"
#include "imap/proto/parser.h"
#include "imap/proto/response_writer.h"
#include "imap/server/commands/commands.h"

namespace peregrine::imap::commands {
namespace {

constexpr std::string_view kPlaintextRefused =
    "Plaintext authentication is not allowed on this connection; use STARTTLS";

void log_login(const SessionData& s, std::string_view user, std::string_view result,
               std::string_view detail) {
  base::log(base::LogLevel::kInfo, "imap.login",
            {{"user", user}, {"peer", s.connection.peer}, {"result", result}, {"detail", detail}});
}

// Checks the credentials and, when they are good, logs the user in.
void finish_login(CommandContext& ctx, const auth::Credentials& creds) {
  SessionData& s = ctx.session;
  if (!creds.authzid.empty() && creds.authzid != creds.authcid) {
    log_login(s, creds.authcid, "denied", "authorization identity " + creds.authzid);
    return ctx.no(Code::kAuthorizationFailed, "Logging in as another user is not allowed");
  }
  auto verified = s.server.authenticator.verify(creds.authcid, creds.password);
  if (!verified) {
    const base::Error& e = verified.error();
    log_login(s, creds.authcid, "failed", e.message);
    if (e.code == base::MailError::kAuthFailed) {
      if (s.server.failures != nullptr) {
        ctx.delay = s.server.failures->record_failure(s.connection.peer);
      }
      return ctx.no(Code::kAuthenticationFailed, "Authentication failed");
    }
    return ctx.no(Code::kUnavailable, "Authentication is temporarily unavailable");
  }
  auto user = s.server.users.acquire(verified->name, verified->home);
  if (!user) {
    log_login(s, verified->name, "store-error", user.error().message);
    return ctx.no(Code::kUnavailable, "Your mail cannot be opened now, try again later");
  }
  log_login(s, verified->name, "ok", "");
  s.user = std::move(*user);
  s.state = SessionState::kAuthenticated;
  ctx.ok(ResponseCode::capability(session_capabilities(s)), "Logged in");
}

// The next step of an AUTHENTICATE exchange with the client's `response`.
void step(CommandContext& ctx, std::string_view response) {
  SessionData& s = ctx.session;
  auto next = s.sasl->step(response);
  if (!next) {
    s.sasl.reset();
    s.mode = InputMode::kCommand;
    return ctx.bad("Invalid authentication response: " + next.error().message);
  }
  if (auto* challenge = std::get_if<auth::SaslChallenge>(&*next)) {
    write_continuation(ctx.out, challenge->base64);
    s.mode = InputMode::kAuthResponse;
    s.auth_tag = ctx.command.tag;
    ctx.respond = false;
    return;
  }
  s.sasl.reset();
  s.mode = InputMode::kCommand;
  finish_login(ctx, std::get<auth::Credentials>(*next));
}

}  // namespace

void starttls(CommandContext& ctx) {
  if (ctx.session.connection.tls) {
    return ctx.bad("TLS is already active");
  }
  if (!ctx.session.connection.tls_available) {
    return ctx.bad("TLS is not available on this server");
  }
  ctx.flush_updates = false;
  ctx.action = SessionAction::kStartTls;
  ctx.ok("Begin TLS negotiation now");
}

void login(CommandContext& ctx) {
  if (!plaintext_allowed(ctx.session)) {
    return ctx.no(Code::kPrivacyRequired, kPlaintextRefused);
  }
  const auto& args = std::get<Login>(ctx.command.args);
  finish_login(ctx, auth::Credentials{"", args.user, args.password});
}

void authenticate(CommandContext& ctx) {
  SessionData& s = ctx.session;
  const auto& args = std::get<Authenticate>(ctx.command.args);
  std::unique_ptr<auth::SaslServer> sasl = auth::make_sasl_server(args.mechanism);
  if (!sasl) {
    return ctx.no("Unsupported authentication mechanism " + args.mechanism);
  }
  if (!plaintext_allowed(s)) {
    return ctx.no(Code::kPrivacyRequired, kPlaintextRefused);
  }
  s.sasl = std::move(sasl);
  if (args.initial_response) {
    // SASL-IR: "=" stands for an empty initial response (RFC 4959).
    std::string_view ir = *args.initial_response;
    return step(ctx, ir == "=" ? std::string_view() : ir);
  }
  write_continuation(ctx.out, s.sasl->initial_challenge().base64);
  s.mode = InputMode::kAuthResponse;
  s.auth_tag = ctx.command.tag;
  ctx.respond = false;
}

void authenticate_response(CommandContext& ctx, const FramedCommand& line) {
  SessionData& s = ctx.session;
  Parsed<AuthResponse> response = parse_auth_response(line);
  if (!response || response->cancelled) {
    s.sasl.reset();
    s.mode = InputMode::kCommand;
    return ctx.bad(response ? "Authentication cancelled" : response.error().message);
  }
  step(ctx, response->base64);
}

}  // namespace peregrine::imap::commands
