#include "pop3/server/session.h"

#include <optional>
#include <span>
#include <utility>

#include "auth/authenticator.h"
#include "auth/failure_tracker.h"
#include "auth/sasl.h"
#include "base/log.h"
#include "config/plaintext_policy.h"
#include "pop3/proto/command.h"
#include "pop3/proto/dot_stuffer.h"
#include "pop3/server/maildrop.h"
#include "store/api/user_store.h"

namespace peregrine::pop3 {

struct SessionData {
  SessionData(ServerContext& s, ConnectionInfo c) : server(s), connection(std::move(c)) {}

  ServerContext& server;
  ConnectionInfo connection;
  State state = State::kAuthorization;
  std::string user_name;                   // from USER, until PASS
  std::unique_ptr<auth::SaslServer> sasl;  // an AUTH exchange in progress
  std::shared_ptr<session::UserContext> user;
  bool login_pending = false;  // the password is good; the maildrop is opened in resume()
  std::optional<Maildrop> drop;
  // Opens INBOX's message files as they were at login, off the strand
  // (RETR and TOP); null when the store has no such source.
  std::shared_ptr<const store::BodySource> bodies;
  // RETR/TOP in progress.
  std::unique_ptr<store::Body> body;
  std::uint64_t body_offset = 0;
  DotStuffer stuffer;
  std::string chunk;  // read buffer, kRetrChunkBytes once a message was sent
  std::string spare;  // a written reply's buffer, for the next piece (recycle())
};

namespace {

constexpr std::string_view kPlaintextRefused =
    "Plaintext authentication is not allowed on this connection; use STLS";

Reply ok(std::string_view text) { return Reply{.out = "+OK " + std::string(text) + "\r\n"}; }
Reply err(std::string_view text) { return Reply{.out = "-ERR " + std::string(text) + "\r\n"}; }

bool plaintext_allowed(const SessionData& s) {
  return config::plaintext_auth_allowed(s.server.plaintext, s.connection.tls,
                                        s.connection.loopback);
}

void log_login(const SessionData& s, std::string_view user, std::string_view result,
               std::string_view detail) {
  base::log(base::LogLevel::kInfo, "pop3.login",
            {{"user", user}, {"peer", s.connection.peer}, {"result", result}, {"detail", detail}});
}

std::string maildrop_summary(const Maildrop& drop) {
  return std::to_string(drop.count()) + " messages (" + std::to_string(drop.octets()) + " octets)";
}

// RFC 2449 §6; what is offered depends on the state and the connection.
Reply capa(const SessionData& s) {
  std::string out =
      "+OK Capability list follows\r\nTOP\r\nUIDL\r\nRESP-CODES\r\n"
      "AUTH-RESP-CODE\r\nPIPELINING\r\n";
  if (s.state == State::kAuthorization) {
    if (plaintext_allowed(s)) {
      out += "USER\r\nSASL PLAIN LOGIN\r\n";
    }
    if (s.connection.tls_available && !s.connection.tls) {
      out += "STLS\r\n";
    }
  }
  out += "IMPLEMENTATION " + s.server.server_name + "\r\n.\r\n";
  return Reply{.out = std::move(out)};
}

// Checks the credentials; when they are good, holds the user's context and
// asks to be resumed on the user's strand, where the maildrop is opened.
Reply finish_login(SessionData& s, const auth::Credentials& creds) {
  s.user_name.clear();
  if (!creds.authzid.empty() && creds.authzid != creds.authcid) {
    log_login(s, creds.authcid, "denied", "authorization identity " + creds.authzid);
    return err("[AUTH] Logging in as another user is not allowed");
  }
  auto verified = s.server.authenticator.verify(creds.authcid, creds.password);
  if (!verified) {
    const base::Error& e = verified.error();
    log_login(s, creds.authcid, "failed", e.message);
    if (e.code == base::MailError::kAuthFailed) {
      Reply reply = err("[AUTH] Authentication failed");
      if (s.server.failures != nullptr) {
        reply.delay = s.server.failures->record_failure(s.connection.peer);
      }
      return reply;
    }
    return err("[SYS/TEMP] Authentication is temporarily unavailable");
  }
  auto user = s.server.users.acquire(verified->name, verified->home);
  if (!user) {
    log_login(s, verified->name, "store-error", user.error().message);
    return err("[SYS/TEMP] Your mail cannot be opened now, try again later");
  }
  s.user = std::move(*user);
  s.login_pending = true;
  Reply reply;
  reply.more = true;
  return reply;
}

// Runs on the user's strand: takes the maildrop lock and reads INBOX.
Reply open_maildrop(SessionData& s) {
  s.login_pending = false;
  auto drop = Maildrop::open(*s.user);
  if (!drop) {
    const base::Error& e = drop.error();
    const std::string name = s.user->user();
    s.user.reset();
    if (e.code == base::MailError::kInUse) {
      log_login(s, name, "in-use", e.message);
      return err("[IN-USE] Your maildrop is in use by another POP3 session");
    }
    log_login(s, name, "store-error", e.message);
    return err("[SYS/TEMP] Your mail cannot be opened now, try again later");
  }
  s.drop = std::move(*drop);
  // Without it (an error here), RETR and TOP read through the store.
  if (auto bodies = s.user->store().body_source(store::kInbox); bodies) {
    s.bodies = std::move(*bodies);
  }
  s.state = State::kTransaction;
  log_login(s, s.user->user(), "ok", "");
  return ok("Logged in, " + maildrop_summary(*s.drop));
}

// The next step of an AUTH exchange with the client's `response`.
Reply sasl_step(SessionData& s, std::string_view response) {
  auto next = s.sasl->step(response);
  if (!next) {
    s.sasl.reset();
    return err("[AUTH] Invalid authentication response: " + next.error().message);
  }
  if (auto* challenge = std::get_if<auth::SaslChallenge>(&*next)) {
    return Reply{.out = "+ " + challenge->base64 + "\r\n"};
  }
  s.sasl.reset();
  return finish_login(s, std::get<auth::Credentials>(*next));
}

Reply authorization_command(SessionData& s, const Command& cmd) {
  switch (cmd.verb) {
    case Verb::kCapa:
      return capa(s);
    case Verb::kQuit:
      s.state = State::kClosed;
      return Reply{.out = "+OK " + s.server.server_name + " POP3 server signing off\r\n",
                   .action = Action::kClose};
    case Verb::kStls:
      if (s.connection.tls) {
        return err("TLS is already active");
      }
      if (!s.connection.tls_available) {
        return err("TLS is not available on this server");
      }
      s.user_name.clear();
      return Reply{.out = "+OK Begin TLS negotiation\r\n", .action = Action::kStartTls};
    case Verb::kUser:
      if (!plaintext_allowed(s)) {
        return err(kPlaintextRefused);
      }
      s.user_name = cmd.text;
      return ok("Send your password");
    case Verb::kPass: {
      if (s.user_name.empty()) {
        return err("Send USER first");
      }
      const std::string name = std::move(s.user_name);
      return finish_login(s, auth::Credentials{"", name, cmd.text});
    }
    case Verb::kApop:
      s.user_name.clear();
      return err("APOP is not supported; use USER and PASS or AUTH");
    case Verb::kAuth: {
      s.user_name.clear();
      if (cmd.text.empty()) {
        // The mechanism list some clients ask for (RFC 5034 leaves it open).
        return Reply{.out =
                         plaintext_allowed(s) ? "+OK\r\nPLAIN\r\nLOGIN\r\n.\r\n" : "+OK\r\n.\r\n"};
      }
      std::unique_ptr<auth::SaslServer> sasl = auth::make_sasl_server(cmd.text);
      if (!sasl) {
        return err("Unsupported authentication mechanism");
      }
      if (!plaintext_allowed(s)) {
        return err(kPlaintextRefused);
      }
      s.sasl = std::move(sasl);
      if (cmd.has_initial) {
        // RFC 5034 §4: "=" stands for an empty initial response.
        return sasl_step(s, cmd.text2 == "=" ? std::string_view() : cmd.text2);
      }
      return Reply{.out = "+ " + s.sasl->initial_challenge().base64 + "\r\n"};
    }
    default:
      return err("Log in first");
  }
}

// Reads and stuffs the next piece of the message being sent, after
// `status` (the +OK line, when this is the first piece).
Reply continue_message(SessionData& s, std::string_view status) {
  Reply reply;
  reply.out = std::move(s.spare);
  reply.out.assign(status);
  auto got = s.body->read_into(s.body_offset, std::span<char>(s.chunk));
  if (!got) {
    base::log(base::LogLevel::kError, "pop3.store_error",
              {{"user", s.user->user()}, {"error", got.error().message}});
    s.body.reset();
    if (s.body_offset == 0) {
      return err("[SYS/TEMP] The message cannot be read now");
    }
    // Part of the response is out already: the client can only tell that
    // something went wrong from the connection closing.
    reply.out.clear();
    reply.action = Action::kClose;
    return reply;
  }
  s.body_offset += *got;
  // Stuffing adds at most one byte per line; most pieces need no more.
  reply.out.reserve(reply.out.size() + *got + *got / 32 + 8);
  s.stuffer.feed(std::string_view(s.chunk.data(), *got), reply.out);
  if (*got == 0 || s.stuffer.done() || s.body_offset >= s.body->size()) {
    s.stuffer.finish(reply.out);
    s.body.reset();
    return reply;
  }
  reply.more = true;
  return reply;
}

// Sends `body`, message `message` (RETR), or its header and first `lines`
// lines (TOP): the status line and the first piece in one reply.
Reply begin_message(SessionData& s, const Maildrop::Message& message,
                    std::optional<std::uint32_t> lines, std::unique_ptr<store::Body> body) {
  s.body = std::move(body);
  s.body_offset = 0;
  s.stuffer = lines ? DotStuffer(*lines) : DotStuffer();
  s.chunk.resize(kRetrChunkBytes);
  return continue_message(s, lines ? "+OK Top of message follows\r\n"
                                   : "+OK " + std::to_string(message.size) + " octets\r\n");
}

// RETR or TOP of message `number`, reading through the store (on the
// user's strand): it finds a file that was renamed or moved since login.
Reply start_message(SessionData& s, std::uint32_t number, std::optional<std::uint32_t> lines) {
  const Maildrop::Message* message = s.drop->find(number);
  if (message == nullptr) {
    return err("No such message");
  }
  auto body = s.user->store().open_body(store::kInbox, message->uid);
  if (!body) {
    if (body.error().code == base::MailError::kExpunged) {
      return err("Message " + std::to_string(number) + " was removed by another client");
    }
    base::log(base::LogLevel::kError, "pop3.store_error",
              {{"user", s.user->user()}, {"error", body.error().message}});
    return err("[SYS/TEMP] The message cannot be read now");
  }
  return begin_message(s, *message, lines, std::move(*body));
}

// RETR or TOP of message `number` from the files as they were at login,
// on the connection's thread; nothing when the file is not where it was
// (then start_message(), on the strand, looks for it).
std::optional<Reply> start_message_without_store(SessionData& s, std::uint32_t number,
                                                 std::optional<std::uint32_t> lines) {
  if (!s.bodies) {
    return std::nullopt;
  }
  const Maildrop::Message* message = s.drop->find(number);
  if (message == nullptr) {
    return err("No such message");
  }
  auto body = s.bodies->open(message->uid);
  if (!body) {
    return std::nullopt;
  }
  return begin_message(s, *message, lines, std::move(*body));
}

Reply listing(const SessionData& s, const Command& cmd, bool uidl) {
  const Maildrop& drop = *s.drop;
  auto line = [&](std::uint32_t number, const Maildrop::Message& m) {
    return std::to_string(number) + " " + (uidl ? drop.unique_id(m) : std::to_string(m.size));
  };
  if (cmd.has_msg) {
    const Maildrop::Message* message = drop.find(cmd.msg);
    if (message == nullptr) {
      return err("No such message");
    }
    return ok(line(cmd.msg, *message));
  }
  std::string out =
      uidl ? "+OK Unique-ID listing follows\r\n" : "+OK " + maildrop_summary(drop) + "\r\n";
  const auto& messages = drop.messages();
  for (std::uint32_t i = 0; i < messages.size(); ++i) {
    if (!messages[i].deleted) {
      out += line(i + 1, messages[i]);
      out += "\r\n";
    }
  }
  out += ".\r\n";
  return Reply{.out = std::move(out)};
}

// QUIT in the TRANSACTION state: the UPDATE state of RFC 1939 §6.
Reply update(SessionData& s) {
  auto removed = s.drop->expunge_marked(*s.user);
  const std::string name = s.user->user();
  Reply reply;
  if (!removed) {
    base::log(base::LogLevel::kError, "pop3.store_error",
              {{"user", name}, {"error", removed.error().message}});
    reply = err("[SYS/TEMP] Some deleted messages were not removed");
  } else {
    base::log(base::LogLevel::kInfo, "pop3.logout",
              {{"user", name}, {"deleted", static_cast<unsigned long>(*removed)}});
    reply = ok(s.server.server_name + " POP3 server signing off (" +
               std::to_string(s.drop->count()) + " messages left)");
  }
  reply.action = Action::kClose;
  return reply;
}

Reply transaction_command(SessionData& s, const Command& cmd) {
  Maildrop& drop = *s.drop;
  switch (cmd.verb) {
    case Verb::kCapa:
      return capa(s);
    case Verb::kStat:
      return ok(std::to_string(drop.count()) + " " + std::to_string(drop.octets()));
    case Verb::kList:
      return listing(s, cmd, false);
    case Verb::kUidl:
      return listing(s, cmd, true);
    case Verb::kRetr:
      return start_message(s, cmd.msg, std::nullopt);
    case Verb::kTop:
      return start_message(s, cmd.msg, cmd.lines);
    case Verb::kDele:
      if (!drop.mark_deleted(cmd.msg)) {
        return err("No such message");
      }
      return ok("Message " + std::to_string(cmd.msg) + " deleted");
    case Verb::kRset:
      drop.unmark_all();
      return ok("Maildrop has " + maildrop_summary(drop));
    case Verb::kNoop:
      return ok("");
    case Verb::kQuit: {
      Reply reply = update(s);
      Maildrop::unlock(*s.user);
      s.drop.reset();
      // The user's context is let go in close(), after the reply is
      // written: when this was the user's last session, that closes the
      // user's store (a WAL checkpoint, waiting for the expunge's file
      // removals), which the client need not wait for.
      s.state = State::kClosed;
      return reply;
    }
    case Verb::kUser:
    case Verb::kPass:
    case Verb::kApop:
    case Verb::kAuth:
      return err("Already logged in");
    case Verb::kStls:
      return err("STLS is only allowed before logging in");
  }
  return err("Unknown command");
}

}  // namespace

Session::Session(ServerContext& server, ConnectionInfo connection)
    : data_(std::make_unique<SessionData>(server, std::move(connection))) {}

Session::~Session() { close(); }

std::string Session::greeting() const {
  return "+OK " + data_->server.server_name + " POP3 server ready\r\n";
}

Reply Session::on_line(std::string_view line) {
  SessionData& s = *data_;
  if (s.state == State::kClosed) {
    return err("The session is over");
  }
  if (s.sasl) {
    if (line == "*") {
      s.sasl.reset();
      return err("[AUTH] Authentication cancelled");
    }
    return sasl_step(s, line);
  }
  ParsedCommand parsed = parse_command(line);
  if (!parsed.ok()) {
    return err(parsed.error);
  }
  if (s.state == State::kAuthorization) {
    return authorization_command(s, parsed.command);
  }
  return transaction_command(s, parsed.command);
}

std::optional<Reply> Session::on_line_without_store(std::string_view line) {
  SessionData& s = *data_;
  if (s.state != State::kTransaction || s.body || s.login_pending) {
    return std::nullopt;
  }
  ParsedCommand parsed = parse_command(line);
  if (!parsed.ok()) {
    return err(parsed.error);
  }
  switch (parsed.command.verb) {
    case Verb::kStat:
    case Verb::kList:
    case Verb::kUidl:
    case Verb::kDele:
    case Verb::kRset:
    case Verb::kNoop:
      return transaction_command(s, parsed.command);
    case Verb::kRetr:
      return start_message_without_store(s, parsed.command.msg, std::nullopt);
    case Verb::kTop:
      return start_message_without_store(s, parsed.command.msg, parsed.command.lines);
    default:
      return std::nullopt;
  }
}

Reply Session::on_line_too_long() {
  SessionData& s = *data_;
  if (s.sasl) {
    s.sasl.reset();
    return err("[AUTH] Authentication response too long");
  }
  return err("Line too long");
}

Reply Session::resume() {
  SessionData& s = *data_;
  if (s.login_pending) {
    return open_maildrop(s);
  }
  if (s.body) {
    return continue_message(s, {});
  }
  return Reply{};
}

std::optional<Reply> Session::resume_without_store() {
  SessionData& s = *data_;
  if (s.login_pending || !s.body) {
    return std::nullopt;
  }
  return continue_message(s, {});
}

void Session::recycle(std::string&& out) {
  // A piece is at most a chunk, doubled at worst by stuffing: keep a buffer
  // that size, not one a long LIST or UIDL grew.
  if (out.capacity() <= 2 * kRetrChunkBytes + 1024 && out.capacity() > data_->spare.capacity()) {
    data_->spare = std::move(out);
  }
}

void Session::on_tls_started() { data_->connection.tls = true; }

void Session::close() {
  SessionData& s = *data_;
  s.body.reset();
  s.bodies.reset();
  s.sasl.reset();
  if (s.drop) {
    Maildrop::unlock(*s.user);
    s.drop.reset();
  }
  s.user.reset();
  s.login_pending = false;
  if (s.state != State::kClosed) {
    s.state = State::kClosed;
  }
}

State Session::state() const { return data_->state; }

session::UserContext* Session::user() const { return data_->user.get(); }

}  // namespace peregrine::pop3
