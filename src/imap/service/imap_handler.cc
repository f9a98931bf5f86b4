#include "imap/service/imap_handler.h"

#include <algorithm>
#include <asio/experimental/awaitable_operators.hpp>
#include <deque>
#include <initializer_list>
#include <memory>
#include <span>
#include <utility>
#include <variant>

#include "base/ascii.h"
#include "net/notifier.h"
#include "service/session_driver.h"
#include "session/user_registry.h"

namespace peregrine::imap {
namespace {

// Read sizes: small while waiting for a command (most are short, and idle
// connections should stay small), larger inside a command (literals): 256
// KiB holds about a dozen typical messages, so a client pipelining APPENDs
// has most of them framed and prepared ahead (process_input).
constexpr size_t kCommandReadBytes = 4096;
constexpr size_t kLiteralReadBytes = 256 * 1024;

// Framing ahead (process_input): at most this many commands, and this many
// of their bytes, wait framed behind the one running.
constexpr size_t kMaxAheadCommands = 8;
constexpr size_t kMaxAheadBytes = 8 * 1024 * 1024;

// Whether the command's name (after its tag) is one of `names`, each
// written with a space before and after.
bool is_command(const FramedCommand& command, std::initializer_list<std::string_view> names) {
  const std::string_view tag = command.tag();
  if (tag.empty()) {
    return false;
  }
  const std::string_view rest = command.lines[0].substr(tag.size());
  for (std::string_view name : names) {
    if (rest.size() >= name.size() && base::iequals(rest.substr(0, name.size()), name)) {
      return true;
    }
  }
  return false;
}

// Whether a framed command is an APPEND (RFC 3501 §6.3.11): "tag APPEND ".
// Running one changes nothing about how the input after it is read, so
// commands after it may be framed before it runs.
bool is_append(const FramedCommand& command) { return is_command(command, {" APPEND "}); }

// The commands that store term records, which the full-text index batches
// later (UserStore::upkeep).
bool adds_messages(const FramedCommand& command) {
  return is_command(command, {" APPEND ", " COPY ", " MOVE ", " UID COPY ", " UID MOVE "});
}

// A reader event whose command lives in storage of its own, not in the
// reader's buffer, so the reader may go on framing; with the analyses of
// its messages started ahead.
struct FramedAhead {
  ReaderEvent event;  // a kCommand's `command` points at `command` below
  std::string bytes;  // every line and literal of the command, which `command` views
  FramedCommand command;
  // Last, so destroyed first: each waits for its work, which reads `bytes`.
  std::vector<std::unique_ptr<store::PreparedMessage>> prepared;
};

std::unique_ptr<FramedAhead> hold(ReaderEvent event) {
  auto held = std::make_unique<FramedAhead>();
  if (event.kind == ReaderEvent::Kind::kCommand) {
    const FramedCommand& framed = *event.command;
    size_t total = 0;
    for (std::string_view line : framed.lines) {
      total += line.size();
    }
    for (const Literal& literal : framed.literals) {
      total += literal.data.size();
    }
    held->bytes.reserve(total);
    std::vector<size_t> offsets;
    for (size_t i = 0; i < framed.lines.size(); ++i) {
      offsets.push_back(held->bytes.size());
      held->bytes.append(framed.lines[i]);
      if (i < framed.literals.size()) {
        offsets.push_back(held->bytes.size());
        held->bytes.append(framed.literals[i].data);
      }
    }
    // Views only now: `bytes` no longer grows.
    const char* base = held->bytes.data();
    for (size_t i = 0; i < framed.lines.size(); ++i) {
      held->command.lines.emplace_back(base + offsets[2 * i], framed.lines[i].size());
      if (i < framed.literals.size()) {
        Literal literal = framed.literals[i];
        literal.data = std::string_view(base + offsets[2 * i + 1], literal.data.size());
        held->command.literals.push_back(literal);
      }
    }
    event.command = &held->command;
  }
  held->event = std::move(event);
  return held;
}

service::Protocol imap_protocol() {
  return service::Protocol{.name = "imap",
                           .shutdown_line = "* BYE Server shutting down\r\n",
                           .timeout_line = "* BYE Autologout; idle for too long\r\n",
                           .too_many_line = "* BYE Too many connections from your address\r\n",
                           .tls_failed_event = "imap.starttls_failed"};
}

// One connection's session and everything that drives it. Lives in the
// serve() coroutine's frame, on the connection's worker thread.
class ImapDriver final : public service::SessionDriver {
 public:
  ImapDriver(net::Connection& conn, ServerContext& server, net::StoragePool& pool,
             const service::Protocol& protocol, const ImapHandlerOptions& options)
      : SessionDriver(conn, pool, protocol,
                      {.before_login = options.autologout_unauthenticated,
                       .after_login = options.autologout}),
        options_(options),
        session_(std::make_unique<Session>(server, service::connection_info(conn))),
        reader_(std::make_unique<CommandReader>(options.reader)),
        notifier_(conn.executor()) {}

 private:
  // Greeting to end of connection.
  asio::awaitable<void> run() override {
    if (!co_await write(session_->greeting())) {
      co_return;
    }
    session_->set_wake([handle = notifier_.handle()] { handle.notify(); });
    for (;;) {
      if (!co_await process_input()) {
        co_return;
      }
      bool go;
      if (session_->input_mode() == InputMode::kIdle) {
        if (!idling_) {
          idling_ = true;
          idle_deadline_ = std::chrono::steady_clock::now() + options_.idle_timeout;
        }
        go = co_await idle_wait();
      } else {
        idling_ = false;
        // Waiting for a new command is a stop point: a stopping server ends
        // the session there.
        const bool between_commands = reader_->buffered() == 0;
        go = co_await read_into(*reader_, between_commands ? kCommandReadBytes : kLiteralReadBytes,
                                true);
      }
      if (!go) {
        co_return;
      }
    }
  }

  UserContext* user() const override { return session_->user(); }
  bool logged_in() const override { return session_->user() != nullptr; }
  Reply resume() override { return session_->resume(); }
  void tls_started() override { session_->on_tls_started(); }
  // Leaves the mailbox and lets go of the user's context, on its strand.
  void end_session() override {
    session_->close();
    session_.reset();
  }
  // Anything the client sent after STARTTLS came in plaintext: drop it
  // (start_tls() dropped the connection's buffer, this is ours, with what
  // was framed from it ahead).
  void after_handshake() override {
    reader_ = std::make_unique<CommandReader>(options_.reader);
    ahead_.clear();
    ahead_bytes_ = 0;
    frame_past_ = false;
  }

  // Hands every event the reader can frame to the session, in order; false
  // when the connection is to end.
  //
  // Reading ahead: a client that pipelines APPENDs has the next ones in the
  // buffer while the current one commits. When the command to run is an
  // APPEND, the commands after it are framed now
  // (into storage of their own: the reader's views end at its next call)
  // and, once logged in, the store starts the pure work of each APPEND's
  // messages on other threads (UserStore::prepare_messages). They still run one by one, in
  // order, each after the reply of the one before is written: only the
  // analysis runs early. Framing goes on past APPENDs only, so a command
  // that changes how later input is read (STARTTLS, AUTHENTICATE, IDLE,
  // LOGOUT) is the last one framed ahead, and anything else the reader does
  // not frame whole (a continuation request, an error) ends it too.
  asio::awaitable<bool> process_input() {
    for (;;) {
      std::unique_ptr<FramedAhead> held;
      ReaderEvent event;
      if (!ahead_.empty()) {
        held = std::move(ahead_.front());
        ahead_.pop_front();
        ahead_bytes_ -= held->bytes.size();
      } else {
        event = reader_->next();
        if (event.kind == ReaderEvent::Kind::kNeedMore) {
          co_return true;
        }
        frame_past_ = event.kind == ReaderEvent::Kind::kCommand &&
                      session_->input_mode() == InputMode::kCommand && is_append(*event.command);
        if (frame_past_ && reader_->buffered() > 0) {
          held = hold(std::move(event));
        }
      }
      if (held) {
        frame_ahead();
      }
      const ReaderEvent& current = held ? held->event : event;
      std::span<const std::unique_ptr<store::PreparedMessage>> prepared;
      if (held) {
        prepared = held->prepared;
      }
      // Read before the reply goes out: writing it may reset the reader
      // (STARTTLS), whose buffer `current` views.
      const bool stored =
          current.kind == ReaderEvent::Kind::kCommand && adds_messages(*current.command);
      Reply reply = co_await call([&] { return session_->on_input(current, prepared); });
      if (!co_await deliver(std::move(reply))) {
        co_return false;
      }
      if (stored) {
        upkeep_when_idle();
      }
      // Stopping: the command that was running is done; pipelined ones
      // after it are not started.
      if (current.kind == ReaderEvent::Kind::kCommand && conn().stopping()) {
        co_await goodbye(net::NetError::kShutdown);
        co_return false;
      }
    }
  }

  // After a command that stored messages, and only when the client has sent
  // nothing more yet: the store's deferred work (the full-text index's
  // batch) on the user's strand, after the reply. A burst of pipelined
  // APPENDs leaves it to its end (or to the store's own bound).
  void upkeep_when_idle() {
    UserContext* context = session_->user();
    if (context == nullptr || !ahead_.empty() || reader_->buffered() > 0) {
      return;
    }
    pool().post(strand_key(), [context] { context->store().upkeep(); });
  }

  // Frames commands behind the last one framed while that is an APPEND,
  // within the bounds, and starts the analysis of each APPEND's literals.
  // Runs on the connection's thread between session calls: user() is
  // stable then, and prepare_messages() may run on any thread.
  void frame_ahead() {
    while (frame_past_ && ahead_.size() < kMaxAheadCommands && ahead_bytes_ < kMaxAheadBytes) {
      ReaderEvent event = reader_->next();
      if (event.kind == ReaderEvent::Kind::kNeedMore) {
        return;
      }
      std::unique_ptr<FramedAhead> held = hold(std::move(event));
      frame_past_ = held->event.kind == ReaderEvent::Kind::kCommand && is_append(held->command);
      // Before login an APPEND is refused: framed past, but nothing to prepare.
      if (frame_past_ && logged_in() && !held->command.literals.empty()) {
        std::vector<std::string_view> messages;
        for (const Literal& literal : held->command.literals) {
          messages.push_back(literal.data);
        }
        held->prepared = session_->user()->store().prepare_messages(messages);
      }
      ahead_bytes_ += held->bytes.size();
      ahead_.push_back(std::move(held));
    }
  }

  // IDLE: waits for the client's DONE, a change to report, or the next
  // periodic check, whichever comes first.
  asio::awaitable<bool> idle_wait() {
    using namespace asio::experimental::awaitable_operators;
    const auto now = std::chrono::steady_clock::now();
    if (now >= idle_deadline_) {
      co_await goodbye(net::NetError::kTimeout);
      co_return false;
    }
    const auto wait_for = std::min<std::chrono::milliseconds>(
        options_.idle_check_interval,
        std::chrono::ceil<std::chrono::milliseconds>(idle_deadline_ - now));
    const bool between_commands = reader_->buffered() == 0;
    std::span<char> space = reader_->prepare(kCommandReadBytes);
    auto first =
        co_await (conn().read_into(space, net::ReadOptions{.timeout = std::chrono::milliseconds(0),
                                                           .stop_point = between_commands}) ||
                  notifier_.wait(wait_for));
    if (first.index() == 0) {
      const auto& got = std::get<0>(first);
      reader_->commit(got ? *got : 0);
      if (!got) {
        co_await goodbye(got.error());
        co_return false;
      }
      co_return true;
    }
    reader_->commit(0);
    const bool notified = std::get<1>(first);
    Reply reply =
        co_await call([&] { return notified ? session_->poll_updates() : session_->idle_check(); });
    co_return co_await deliver(std::move(reply));
  }

  const ImapHandlerOptions& options_;
  std::unique_ptr<Session> session_;
  std::unique_ptr<CommandReader> reader_;
  // Framed ahead of the command running, in order (process_input).
  std::deque<std::unique_ptr<FramedAhead>> ahead_;
  size_t ahead_bytes_ = 0;
  // Whether the last command framed is one that input may be framed past.
  bool frame_past_ = false;
  net::Notifier notifier_;
  bool idling_ = false;
  std::chrono::steady_clock::time_point idle_deadline_;
};

}  // namespace

ImapHandlerOptions imap_handler_options(const config::Settings& settings) {
  const config::LimitSettings& limits = settings.limits;
  ImapHandlerOptions options;
  options.reader.max_line_bytes = limits.max_line_bytes;
  options.reader.max_literal_bytes = limits.max_literal_bytes;
  options.autologout = limits.autologout;
  options.autologout_unauthenticated = limits.autologout_unauthenticated;
  options.idle_timeout = limits.idle_timeout;
  return options;
}

ImapHandler::ImapHandler(ServerContext& server, net::StoragePool& pool, ImapHandlerOptions options)
    : ProtocolHandler(imap_protocol()),
      server_(server),
      pool_(pool),
      options_(std::move(options)) {}

asio::awaitable<void> ImapHandler::serve(net::Connection& connection) {
  ImapDriver driver(connection, server_, pool_, protocol(), options_);
  co_await driver.serve();
}

}  // namespace peregrine::imap
