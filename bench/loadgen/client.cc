#include "bench/loadgen/client.h"

#include <fmt/core.h>

#include <algorithm>
#include <asio/connect.hpp>
#include <asio/read.hpp>
#include <asio/redirect_error.hpp>
#include <asio/steady_timer.hpp>
#include <asio/use_awaitable.hpp>
#include <asio/write.hpp>
#include <cstdio>
#include <stdexcept>
#include <system_error>

#include "bench/loadgen/messages.h"

namespace peregrine::bench {

namespace {

constexpr std::size_t kMaxResponse = 64 * 1024 * 1024;
constexpr std::size_t kReadChunk = 64 * 1024;
constexpr int kPickTries = 16;

// Flags and keywords STORE picks from (never \Deleted: only EXPUNGE ops set it).
constexpr const char* kStoreFlags[] = {"\\Seen",  "\\Answered", "\\Flagged", "\\Draft",
                                       "$Bench1", "$Bench2",    "$Bench3",   "$Bench4"};

// A response the stream cannot continue after (already counted).
struct ProtocolError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

std::string printable(std::string_view wire) {
  std::string out;
  for (char c : wire.substr(0, 200)) {
    out += (c == '\r' || c == '\n') ? ' ' : c;
  }
  return out;
}

std::uint32_t micros_since(std::chrono::steady_clock::time_point start) {
  auto us = std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now() -
                                                                  start)
                .count();
  return static_cast<std::uint32_t>(std::min<long long>(us, 0xffffffffLL));
}

}  // namespace

// ------------------------------------------------------------------- Run

MailboxModel& Run::model_for(const std::string& user) {
  auto& slot = models[user];
  if (!slot) {
    slot = std::make_unique<MailboxModel>(stats);
  }
  return *slot;
}

bool Run::next_op() {
  if (stopping) {
    return false;
  }
  if (options.ops != 0 && ops_started >= options.ops) {
    stopping = true;
    return false;
  }
  if (options.seconds > 0 && std::chrono::steady_clock::now() >= deadline) {
    stopping = true;
    return false;
  }
  ++ops_started;
  return true;
}

// ------------------------------------------------------------ Connection

void Watchdog::check(std::chrono::steady_clock::time_point now) {
  for (Connection* c : connections_) {
    std::chrono::steady_clock::time_point since;
    if (c->waiting_since(since) && now - since > timeout_) {
      c->expire();
    }
  }
}

Connection::Connection(asio::io_context& io, Watchdog& watchdog, asio::ssl::context* tls)
    : watchdog_(watchdog), socket_(io), tls_context_(tls), framer_(kMaxResponse) {
  watchdog_.add(this);
}

Connection::~Connection() { watchdog_.remove(this); }

bool Connection::waiting_since(std::chrono::steady_clock::time_point& since) const {
  since = wait_start_;
  return waiting_;
}

void Connection::expire() {
  expired_ = true;
  asio::error_code ignored;
  socket_.close(ignored);  // the pending operation completes with an error
}

void Connection::begin_wait() {
  waiting_ = true;
  wait_start_ = std::chrono::steady_clock::now();
}

void Connection::end_wait(const asio::error_code& ec) {
  waiting_ = false;
  if (expired_) {
    throw std::runtime_error(
        fmt::format("no response from the server in {} ms", watchdog_.timeout().count()));
  }
  if (ec) {
    throw std::system_error(ec);
  }
}

asio::awaitable<void> Connection::connect(const asio::ip::tcp::endpoint& endpoint) {
  close();
  asio::error_code ec;
  begin_wait();
  co_await socket_.async_connect(endpoint, asio::redirect_error(asio::use_awaitable, ec));
  end_wait(ec);
  socket_.set_option(asio::ip::tcp::no_delay(true));
  if (tls_context_ != nullptr) {
    tls_ = std::make_unique<asio::ssl::stream<asio::ip::tcp::socket&>>(socket_, *tls_context_);
    begin_wait();
    co_await tls_->async_handshake(asio::ssl::stream_base::client,
                                   asio::redirect_error(asio::use_awaitable, ec));
    end_wait(ec);
  }
}

asio::awaitable<void> Connection::write(std::string_view bytes) {
  asio::error_code ec;
  begin_wait();
  auto buffer = asio::buffer(bytes.data(), bytes.size());
  if (tls_) {
    co_await asio::async_write(*tls_, buffer, asio::redirect_error(asio::use_awaitable, ec));
  } else {
    co_await asio::async_write(socket_, buffer, asio::redirect_error(asio::use_awaitable, ec));
  }
  end_wait(ec);
}

asio::awaitable<std::string_view> Connection::read() {
  start_ += consumed_;
  consumed_ = 0;
  if (start_ == end_) {
    start_ = end_ = 0;
  } else if (start_ > kReadChunk && start_ * 2 > end_) {
    buffer_.erase(0, start_);
    end_ -= start_;
    start_ = 0;
  }
  while (true) {
    Frame frame = framer_.next(std::string_view(buffer_.data() + start_, end_ - start_));
    if (frame.status == FrameStatus::kComplete) {
      consumed_ = frame.length;
      co_return std::string_view(buffer_.data() + start_, frame.length);
    }
    if (frame.status == FrameStatus::kMalformed) {
      throw ProtocolError("malformed response framing (bad literal or over 64 MB)");
    }
    if (buffer_.size() - end_ < kReadChunk / 4) {
      buffer_.resize(std::max(buffer_.size() * 2, end_ + kReadChunk));
    }
    asio::error_code ec;
    begin_wait();
    auto buffer = asio::buffer(buffer_.data() + end_, buffer_.size() - end_);
    std::size_t n = 0;
    if (tls_) {
      n = co_await tls_->async_read_some(buffer, asio::redirect_error(asio::use_awaitable, ec));
    } else {
      n = co_await socket_.async_read_some(buffer, asio::redirect_error(asio::use_awaitable, ec));
    }
    end_wait(ec);
    end_ += n;
  }
}

void Connection::close() {
  expired_ = false;
  waiting_ = false;
  asio::error_code ignored;
  tls_.reset();
  socket_.close(ignored);
  buffer_.clear();
  start_ = end_ = consumed_ = 0;
  framer_ = Framer(kMaxResponse);
}

// ---------------------------------------------------------------- Client

Client::Client(Run& run, int id)
    : run_(run),
      id_(id),
      user_(run.options.user_for(id)),
      model_(&run.model_for(user_)),
      conn_(run.io, run.watchdog, run.tls.get()),
      tracker_(id, run.stats),
      rng_(run.options.seed * 1000003ULL + static_cast<std::uint64_t>(id)),
      pick_op_(run.options.mix.begin(), run.options.mix.end()) {
  if (run.options.check) {
    tracker_.attach(model_);
  }
}

std::string Client::next_tag() { return fmt::format("c{}.{}", id_, ++tag_counter_); }

std::string Client::quoted(std::string_view s) const {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
    }
    out += c;
  }
  return out + "\"";
}

bool Client::needs_selected() const {
  const Mix& m = run_.options.mix;
  for (Op op : {Op::kFetchMeta, Op::kFetchBody, Op::kStore, Op::kExpunge, Op::kSearch}) {
    if (m[static_cast<std::size_t>(op)] > 0) {
      return true;
    }
  }
  return false;
}

asio::awaitable<Response> Client::next_response(Connection& conn) {
  std::string_view wire = co_await conn.read();
  if (run_.options.trace) {
    std::fprintf(stderr, "S%d %s\n", id_, printable(wire).c_str());
  }
  Response r;
  std::string error;
  if (!parse_response(wire, r, error)) {
    run_.stats.violation(
        fmt::format("client {}: malformed response ({}): {}", id_, error, printable(wire)));
    throw ProtocolError("malformed response");
  }
  co_return r;
}

asio::awaitable<Client::Reply> Client::until_tagged(Connection& conn, SessionTracker* tracker,
                                                    const std::string& tag) {
  while (true) {
    Response r = co_await next_response(conn);
    if (r.kind == Kind::kTagged) {
      if (r.tag != tag) {
        run_.stats.violation(
            fmt::format("client {}: unexpected tagged reply {} {} while "
                        "waiting for {}",
                        id_, r.tag, printable(r.text), tag));
        continue;
      }
      co_return Reply{r.status, std::string(r.code), std::string(r.text)};
    }
    if (r.kind == Kind::kContinuation) {
      run_.stats.violation(
          fmt::format("client {}: continuation request nobody asked for (tag {})", id_, tag));
      continue;
    }
    if (tracker != nullptr) {
      tracker->on_untagged(r);
    }
  }
}

asio::awaitable<bool> Client::until_continuation(Connection& conn, const std::string& tag,
                                                 Reply& reply) {
  while (true) {
    Response r = co_await next_response(conn);
    if (r.kind == Kind::kContinuation) {
      co_return true;
    }
    if (r.kind == Kind::kTagged) {
      if (r.tag != tag) {
        run_.stats.violation(fmt::format(
            "client {}: unexpected tagged reply {} while waiting for {}", id_, r.tag, tag));
        continue;
      }
      reply = Reply{r.status, std::string(r.code), std::string(r.text)};
      co_return false;
    }
    tracker_.on_untagged(r);
  }
}

asio::awaitable<Client::Reply> Client::command(Connection& conn, SessionTracker* tracker,
                                               std::string_view text) {
  std::string tag = next_tag();
  if (run_.options.trace) {
    std::fprintf(stderr, "C%d %s %s\n", id_, tag.c_str(), std::string(text).c_str());
  }
  co_await conn.write(fmt::format("{} {}\r\n", tag, text));
  co_return co_await until_tagged(conn, tracker, tag);
}

asio::awaitable<void> Client::greeting(Connection& conn) {
  Response r = co_await next_response(conn);
  if (r.kind != Kind::kUntagged || r.data != Data::kStatus || r.status != Status::kOk) {
    throw std::runtime_error("the server's greeting is not * OK");
  }
}

asio::awaitable<Client::Reply> Client::login(Connection& conn, SessionTracker* tracker) {
  co_return co_await command(
      conn, tracker, fmt::format("LOGIN {} {}", quoted(user_), quoted(run_.options.password)));
}

bool Client::check_reply(Op op, std::string_view what, const Reply& reply) {
  if (reply.status == Status::kOk) {
    return true;
  }
  run_.stats.error(op, fmt::format("client {}: {} -> {} {}", id_, what,
                                   reply.status == Status::kNo ? "NO" : "BAD", reply.text));
  return false;
}

asio::awaitable<bool> Client::setup() {
  const Mix& mix = run_.options.mix;
  if (std::count_if(mix.begin(), mix.end(), [](double w) { return w > 0; }) == 1 &&
      mix[static_cast<std::size_t>(Op::kLogin)] > 0) {
    co_return true;  // LOGIN ops open their own connections
  }
  try {
    tracker_.set_selected(false);
    co_await conn_.connect(run_.endpoint);
    co_await greeting(conn_);
    Reply r = co_await login(conn_, &tracker_);
    if (r.status != Status::kOk) {
      setup_error = fmt::format("LOGIN {} failed: {}", user_, r.text);
      co_return false;
    }
    if (needs_selected() || run_.options.mix[static_cast<std::size_t>(Op::kIdle)] > 0) {
      if (!co_await op_select()) {
        setup_error = "SELECT " + run_.options.mailbox + " failed";
        co_return false;
      }
      if (!co_await op_fetch_meta()) {
        setup_error = "FETCH 1:* failed";
        co_return false;
      }
    }
  } catch (const std::exception& e) {
    setup_error = fmt::format("client {}: {}", id_, e.what());
    co_return false;
  }
  co_return true;
}

asio::awaitable<void> Client::work() {
  while (run_.next_op()) {
    Op op = static_cast<Op>(pick_op_(rng_));
    Op done = op;
    auto start = std::chrono::steady_clock::now();
    bool lost = false;
    try {
      if (co_await run_op(op, done)) {
        run_.stats.completed(done, micros_since(start));
      }
    } catch (const std::exception& e) {
      run_.stats.error(done, fmt::format("client {}: {} failed: {}", id_, op_name(done), e.what()));
      lost = true;
    }
    if (lost) {
      // Start over on a new connection; give up on this client if that fails.
      if (!co_await setup()) {
        run_.stats.error(done, "reconnect failed: " + setup_error);
        co_return;
      }
    }
  }
}

asio::awaitable<void> Client::finish() {
  if (!conn_.is_open()) {
    co_return;
  }
  try {
    tracker_.set_selected(false);
    co_await command(conn_, nullptr, "LOGOUT");
  } catch (const std::exception&) {
    // The server may close first; nothing to report after the run.
  }
  conn_.close();
}

asio::awaitable<bool> Client::run_op(Op op, Op& done) {
  switch (op) {
    case Op::kLogin:
      co_return co_await op_login();
    case Op::kList:
      co_return co_await op_simple(op, "LIST \"\" *");
    case Op::kStatus:
      co_return co_await op_simple(
          op, fmt::format("STATUS {} (MESSAGES UNSEEN RECENT)", quoted(run_.options.mailbox)));
    case Op::kSelect:
      co_return co_await op_select();
    case Op::kFetchMeta:
      co_return co_await op_fetch_meta();
    case Op::kFetchBody:
      co_return co_await op_fetch_body(done);
    case Op::kStore:
      co_return co_await op_store(false, done);
    case Op::kExpunge:
      co_return co_await op_expunge(done);
    case Op::kAppend:
      co_return co_await op_append();
    case Op::kSearch: {
      const auto& words = search_words();
      std::string word = words[rng_() % words.size()];
      tracker_.begin(SessionTracker::Command::kSeqCommand);
      bool ok = co_await op_simple(op, "SEARCH TEXT " + quoted(word));
      tracker_.end();
      co_return ok;
    }
    case Op::kIdle:
      co_return co_await op_idle();
  }
  co_return false;
}

asio::awaitable<bool> Client::op_login() {
  Connection conn(run_.io, run_.watchdog, run_.tls.get());
  co_await conn.connect(run_.endpoint);
  co_await greeting(conn);
  Reply r = co_await login(conn, nullptr);
  if (!check_reply(Op::kLogin, "LOGIN", r)) {
    co_return false;
  }
  r = co_await command(conn, nullptr, "LOGOUT");
  conn.close();
  co_return check_reply(Op::kLogin, "LOGOUT", r);
}

asio::awaitable<bool> Client::op_simple(Op op, std::string text) {
  Reply r = co_await command(conn_, &tracker_, text);
  co_return check_reply(op, text, r);
}

asio::awaitable<bool> Client::op_select() {
  tracker_.begin(SessionTracker::Command::kSelect);
  tracker_.set_selected(false);
  Reply r = co_await command(conn_, &tracker_, "SELECT " + quoted(run_.options.mailbox));
  tracker_.end();
  tracker_.set_selected(r.status == Status::kOk);
  co_return check_reply(Op::kSelect, "SELECT", r);
}

asio::awaitable<bool> Client::op_fetch_meta() {
  if (tracker_.exists() == 0) {
    // "FETCH 1:*" on an empty mailbox is BAD; the UID form is not.
    co_return co_await op_simple(Op::kFetchMeta,
                                 "UID FETCH 1:* (UID FLAGS ENVELOPE INTERNALDATE BODYSTRUCTURE)");
  }
  tracker_.begin(SessionTracker::Command::kFetchAll);
  Reply r = co_await command(conn_, &tracker_,
                             "FETCH 1:* (UID FLAGS ENVELOPE INTERNALDATE BODYSTRUCTURE)");
  // RFC 2180 4.1.2: a server may answer NO when another session expunged
  // some of the messages; that is due only if this view may hold one.
  bool expunged_no = r.status == Status::kNo && tracker_.may_hold_expunged();
  tracker_.end_fetch_all(r.status == Status::kOk || expunged_no);
  co_return expunged_no || check_reply(Op::kFetchMeta, "FETCH 1:*", r);
}

std::uint32_t Client::pick_uid(bool lockable) {
  std::uint32_t n = tracker_.exists();
  for (int i = 0; i < kPickTries && n > 0; ++i) {
    std::uint32_t uid = tracker_.uid_at(static_cast<std::uint32_t>(rng_() % n) + 1);
    if (uid == 0 || tracker_.told_expunged(uid)) {
      continue;
    }
    if (!lockable || model_->lockable(uid)) {
      return uid;
    }
  }
  return 0;
}

asio::awaitable<bool> Client::op_fetch_body(Op& done) {
  std::uint32_t uid = pick_uid(false);
  if (uid == 0) {
    done = Op::kFetchMeta;
    co_return co_await op_fetch_meta();
  }
  tracker_.begin(SessionTracker::Command::kFetchOne, uid);
  Reply r = co_await command(conn_, &tracker_, fmt::format("UID FETCH {} (BODY.PEEK[])", uid));
  tracker_.end();
  if (!check_reply(Op::kFetchBody, "UID FETCH BODY.PEEK[]", r)) {
    co_return false;
  }
  const MailboxModel::Message* m = model_->find(uid);
  if (run_.options.check && !tracker_.target_seen() && m != nullptr && m->known && !m->doomed &&
      !model_->is_expunged(uid)) {
    run_.stats.violation(fmt::format(
        "client {}: UID FETCH {} BODY.PEEK[] returned no body for a message never deleted", id_,
        uid));
  }
  co_return true;
}

asio::awaitable<bool> Client::op_store(bool deleted, Op& done) {
  std::uint32_t uid = pick_uid(true);
  if (uid == 0) {
    done = Op::kFetchMeta;
    co_return co_await op_fetch_meta();
  }
  bool add = deleted || rng_() % 2 == 0;
  std::string list;
  FlagBits bits = 0;
  if (deleted) {
    list = "\\Deleted";
    bits = model_->deleted_bit();
  } else {
    int count = 1 + static_cast<int>(rng_() % 3);
    for (int i = 0; i < count; ++i) {
      const char* flag = kStoreFlags[rng_() % std::size(kStoreFlags)];
      if ((bits & model_->flag_bit(flag)) == 0) {
        list.append(list.empty() ? "" : " ").append(flag);
        bits |= model_->flag_bit(flag);
      }
    }
  }
  FlagBits before = model_->current(uid);
  FlagBits expected = add ? (before | bits) : (before & ~bits);
  std::string text = fmt::format("UID STORE {} {}FLAGS ({})", uid, add ? '+' : '-', list);
  model_->lock(uid, id_, expected);
  tracker_.begin(SessionTracker::Command::kStore, uid);
  Reply r;
  try {
    r = co_await command(conn_, &tracker_, text);
  } catch (...) {
    model_->unlock_unknown(uid);
    throw;
  }
  tracker_.end();
  if (!check_reply(deleted ? Op::kExpunge : Op::kStore, text, r)) {
    model_->unlock_unknown(uid);
    co_return false;
  }
  FlagBits result = expected;
  bool check = run_.options.check;
  if (check && !tracker_.target_seen() && expected != before && !tracker_.told_expunged(uid)) {
    // (With \Deleted set, another client's EXPUNGE may remove the message
    // before this STORE's answer; then the answer is its EXPUNGE.)
    // A STORE that changes nothing may go unanswered: servers commonly
    // send FETCH only for messages whose flags changed.
    run_.stats.violation(
        fmt::format("client {}: {} answered no FETCH FLAGS for the message "
                    "(flags were {}, {} messages in view)",
                    id_, text, model_->flag_text(before), tracker_.exists()));
  } else if (check && tracker_.target_seen() && tracker_.target_flags() != expected) {
    run_.stats.violation(fmt::format("client {}: {} left FLAGS {}, expected {}", id_, text,
                                     model_->flag_text(tracker_.target_flags()),
                                     model_->flag_text(expected)));
    result = tracker_.target_flags();  // the server's state from now on
  }
  tracker_.set_watermark(uid, model_->unlock_with(uid, result));
  co_return true;
}

asio::awaitable<bool> Client::op_expunge(Op& done) {
  Op store_done = Op::kExpunge;
  if (!co_await op_store(true, store_done)) {
    co_return false;
  }
  if (store_done != Op::kExpunge) {
    done = store_done;  // nothing to delete: it became a FETCH_META
    co_return true;
  }
  co_return co_await op_simple(Op::kExpunge, "EXPUNGE");
}

asio::awaitable<bool> Client::op_append() {
  const std::string& message = run_.messages[rng_() % run_.messages.size()];
  std::string tag = next_tag();
  model_->append_started();
  co_await conn_.write(
      fmt::format("{} APPEND {} {{{}}}\r\n", tag, quoted(run_.options.mailbox), message.size()));
  Reply r;
  if (co_await until_continuation(conn_, tag, r)) {
    std::string data = message + "\r\n";
    co_await conn_.write(data);
    r = co_await until_tagged(conn_, &tracker_, tag);
  }
  co_return check_reply(Op::kAppend, "APPEND", r);
}

asio::awaitable<bool> Client::op_idle() {
  std::string tag = next_tag();
  co_await conn_.write(tag + " IDLE\r\n");
  Reply r;
  if (!co_await until_continuation(conn_, tag, r)) {
    co_return check_reply(Op::kIdle, "IDLE", r);
  }
  asio::steady_timer timer(run_.io);
  timer.expires_after(std::chrono::microseconds(static_cast<long>(run_.options.idle_ms * 1000)));
  co_await timer.async_wait(asio::use_awaitable);
  co_await conn_.write("DONE\r\n");
  r = co_await until_tagged(conn_, &tracker_, tag);
  co_return check_reply(Op::kIdle, "IDLE", r);
}

}  // namespace peregrine::bench
