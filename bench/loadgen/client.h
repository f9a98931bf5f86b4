#pragma once

// One simulated IMAP client: a coroutine on the generator's single event
// loop, with its connection, its session tracker and its random stream.
//
// Ownership: a Client refers to the Run it belongs to (which outlives it).
// Thread safety: none; everything runs on the one thread of Run::io.

#include <asio/awaitable.hpp>
#include <asio/io_context.hpp>
#include <asio/ip/tcp.hpp>
#include <asio/ssl/context.hpp>
#include <asio/ssl/stream.hpp>
#include <chrono>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <unordered_set>
#include <vector>

#include "bench/loadgen/mailbox_model.h"
#include "bench/loadgen/options.h"
#include "bench/loadgen/response.h"
#include "bench/loadgen/stats.h"

namespace peregrine::bench {

class Connection;

// Closes connections that wait too long for the server (--timeout), so a
// server that stops answering ends the run with errors instead of hanging.
class Watchdog {
 public:
  explicit Watchdog(std::chrono::milliseconds timeout) : timeout_(timeout) {}
  void add(Connection* c) { connections_.insert(c); }
  void remove(Connection* c) { connections_.erase(c); }
  // Expires every connection whose read has waited longer than the timeout.
  void check(std::chrono::steady_clock::time_point now);
  std::chrono::milliseconds timeout() const { return timeout_; }

 private:
  std::chrono::milliseconds timeout_;
  std::unordered_set<Connection*> connections_;
};

// What every client shares: options, counters, the mailbox models, the
// stop condition.
struct Run {
  Run(asio::io_context& io_context, const Options& opts)
      : io(io_context),
        options(opts),
        watchdog(std::chrono::milliseconds(static_cast<long long>(opts.timeout * 1000))) {}

  asio::io_context& io;
  const Options& options;
  Watchdog watchdog;
  std::unique_ptr<asio::ssl::context> tls;  // set with --tls
  asio::ip::tcp::endpoint endpoint;
  Stats stats;
  std::vector<std::string> messages;                            // APPEND sources, CRLF
  std::map<std::string, std::unique_ptr<MailboxModel>> models;  // by user
  std::uint64_t ops_started = 0;
  std::chrono::steady_clock::time_point deadline{};
  bool stopping = false;

  MailboxModel& model_for(const std::string& user);
  // Whether another op may start (and counts it as started).
  bool next_op();
};

// A TCP connection that reads whole IMAP responses.
class Connection {
 public:
  // `tls`: null for plaintext; else every connection starts with a TLS
  // handshake.
  Connection(asio::io_context& io, Watchdog& watchdog, asio::ssl::context* tls);
  ~Connection();
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;

  asio::awaitable<void> connect(const asio::ip::tcp::endpoint& endpoint);
  asio::awaitable<void> write(std::string_view bytes);
  // The next whole response (valid until the next read). Throws on EOF, a
  // socket error, or a response the framing cannot accept.
  asio::awaitable<std::string_view> read();
  void close();
  bool is_open() const { return socket_.is_open(); }
  // Called by the watchdog: the pending read fails with "no response".
  void expire();
  bool waiting_since(std::chrono::steady_clock::time_point& since) const;

 private:
  void begin_wait();
  // Ends a watched operation; throws if it failed or the watchdog expired it.
  void end_wait(const asio::error_code& ec);

  Watchdog& watchdog_;
  asio::ip::tcp::socket socket_;
  asio::ssl::context* tls_context_;
  std::unique_ptr<asio::ssl::stream<asio::ip::tcp::socket&>> tls_;
  bool waiting_ = false;
  bool expired_ = false;
  std::chrono::steady_clock::time_point wait_start_{};
  std::string buffer_;
  std::size_t start_ = 0;     // first byte of the current response
  std::size_t end_ = 0;       // bytes in buffer_ that hold data
  std::size_t consumed_ = 0;  // length of the response last returned
  Framer framer_;
};

class Client {
 public:
  Client(Run& run, int id);

  // Connects, logs in, and selects the mailbox when the workload needs it.
  // Returns false (after recording why in `setup_error`) if it could not.
  asio::awaitable<bool> setup();
  // Runs ops until the run's stop condition.
  asio::awaitable<void> work();
  // LOGOUT and close.
  asio::awaitable<void> finish();

  std::string setup_error;

 private:
  struct Reply {
    Status status = Status::kNone;
    std::string code;
    std::string text;
  };

  // Sends "<tag> <text>" and reads until its tagged reply; untagged
  // responses go to the tracker.
  // `tracker` is null on the short connections of LOGIN ops.
  asio::awaitable<Reply> command(Connection& conn, SessionTracker* tracker, std::string_view text);
  asio::awaitable<Reply> until_tagged(Connection& conn, SessionTracker* tracker,
                                      const std::string& tag);
  // Reads until a continuation request (true); a tagged reply instead
  // (false) is stored in `reply`.
  asio::awaitable<bool> until_continuation(Connection& conn, const std::string& tag, Reply& reply);
  // Reads one response and parses it; a malformed one is a violation and
  // throws (the stream cannot be trusted after it).
  asio::awaitable<Response> next_response(Connection& conn);
  asio::awaitable<void> greeting(Connection& conn);
  asio::awaitable<Reply> login(Connection& conn, SessionTracker* tracker);

  // One op; returns the op actually done (a STORE without a candidate
  // message becomes FETCH_META) and false if it failed.
  asio::awaitable<bool> run_op(Op op, Op& done);
  asio::awaitable<bool> op_login();
  asio::awaitable<bool> op_simple(Op op, std::string text);
  asio::awaitable<bool> op_select();
  asio::awaitable<bool> op_fetch_meta();
  asio::awaitable<bool> op_fetch_body(Op& done);
  asio::awaitable<bool> op_store(bool deleted, Op& done);
  asio::awaitable<bool> op_expunge(Op& done);
  asio::awaitable<bool> op_append();
  asio::awaitable<bool> op_idle();

  bool check_reply(Op op, std::string_view what, const Reply& reply);
  std::uint32_t pick_uid(bool lockable);
  std::string next_tag();
  std::string quoted(std::string_view s) const;
  bool needs_selected() const;

  Run& run_;
  int id_;
  std::string user_;
  MailboxModel* model_;
  Connection conn_;
  SessionTracker tracker_;
  std::mt19937_64 rng_;
  std::discrete_distribution<int> pick_op_;
  std::uint64_t tag_counter_ = 0;
};

}  // namespace peregrine::bench
