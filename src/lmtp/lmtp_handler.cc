#include "lmtp/lmtp_handler.h"

#include <fcntl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "base/log.h"
#include "delivery/batch.h"
#include "delivery/delivery.h"
#include "net/notifier.h"
#include "service/connection_driver.h"
#include "smtp/proto/command.h"
#include "smtp/proto/reader.h"
#include "smtp/proto/reply.h"

namespace peregrine::lmtp {
namespace {

constexpr std::size_t kCommandReadBytes = 4096;
constexpr std::size_t kDataReadBytes = 64 * 1024;
// How many resolved recipients a connection remembers (then it starts over).
constexpr std::size_t kMaxKnownRecipients = 1024;

std::string host_name() {
  char name[256] = {};
  if (::gethostname(name, sizeof name - 1) != 0 || name[0] == '\0') {
    return "localhost";
  }
  return name;
}

LmtpOptions with_host_name(LmtpOptions options) {
  if (options.hostname.empty()) {
    options.hostname = host_name();
  }
  return options;
}

smtp::Reply ok(std::string_view enhanced, std::string_view text) {
  return {250, std::string(enhanced), std::string(text)};
}

smtp::Reply bad_sequence(std::string_view text) { return {503, "5.5.1", std::string(text)}; }

service::Protocol lmtp_protocol() {
  return service::Protocol{
      .name = "lmtp",
      .shutdown_line = smtp::format_reply({421, "4.3.2", "Server shutting down"}),
      .timeout_line = smtp::format_reply({421, "4.4.2", "Timeout, closing the connection"}),
      .too_many_line = smtp::format_reply({421, "4.7.0", "Too many connections from your address"}),
      .tls_failed_event = "lmtp.starttls_failed"};  // LMTP offers no STARTTLS
}

// How long a session waits at a time for a reply a strand is sending.
constexpr std::chrono::minutes kSettleWait{1};

// The reply refusing `address` for `error` (at RCPT, or a failed re-check);
// logs errors other than an unknown user. Any thread.
smtp::Reply refusal(const base::Error& error, std::string_view address, std::uint64_t conn,
                    std::uint64_t quota_bytes) {
  if (error.code != base::MailError::kNotFound) {
    base::log(base::LogLevel::kWarn, "lmtp.rcpt_failed",
              {{"conn", static_cast<unsigned long long>(conn)},
               {"rcpt", std::string(address)},
               {"code", base::to_string(error.code)},
               {"error", error.message}});
  }
  return delivery::lmtp_reply(delivery::classify(error, 0, quota_bytes), address);
}

// On the user's strand: delivers `pending` unless an earlier batch there
// took it (delivery/batch.h). The context is held by the session until its
// work on the strand is done.
void run_pending(session::UserContext& context, delivery::DeliveryQueue& queue,
                 const std::string& user, const delivery::Pending& pending) {
  if (!pending.result) {
    delivery::deliver_batch(context.store(), queue.take(user));
  }
}

// What the sender is told of a delivery that ran, and whether the
// connection forgets the address (its re-check failed). Logs the outcome.
// Any thread.
struct Answer {
  smtp::Reply reply;
  bool forget = false;
};
Answer answer(const delivery::Recipient& recipient, delivery::Pending& pending, std::uint64_t conn,
              std::uint64_t quota_bytes) {
  if (!pending.result) {
    // Another task's batch took it and ended in an exception (logged by
    // the pool or that session): nothing says the message is stored.
    pending.result = base::fail(base::MailError::kTemporary, "the delivery did not finish");
  }
  const base::Result<delivery::Delivered>& delivered = *pending.result;
  if (!delivered && pending.refused) {
    // The re-check of a remembered recipient failed: as at RCPT, and the
    // next RCPT of that address looks it up afresh.
    return {refusal(delivered.error(), recipient.address, conn, quota_bytes), true};
  }
  if (!delivered) {
    const base::Error& error = delivered.error();
    base::log(base::LogLevel::kWarn, "lmtp.delivery_failed",
              {{"conn", static_cast<unsigned long long>(conn)},
               {"user", recipient.user},
               {"code", base::to_string(error.code)},
               {"error", error.message}});
    // An unknown user here means the store lost it: not the sender's fault.
    auto outcome = error.code == base::MailError::kNotFound
                       ? delivery::Outcome::kTemporary
                       : delivery::classify(error, pending.request.message.size(), quota_bytes);
    return {delivery::lmtp_reply(outcome, recipient.address)};
  }
  base::log(base::LogLevel::kInfo, "lmtp.delivered",
            {{"conn", static_cast<unsigned long long>(conn)},
             {"user", recipient.user},
             {"mailbox", delivered->mailbox},
             {"uid", static_cast<unsigned long long>(delivered->uid.uid)},
             {"size", static_cast<unsigned long long>(delivered->size)}});
  return {ok("2.0.0", "<" + recipient.address + "> Delivered")};
}

// A reply the user's strand sends itself (LmtpSession::send_from_strand).
// The strand sends it and fills in the outcome holding `mu`, so a session
// that finds `answered` set knows every byte the strand will send is sent;
// it blocks on `mu` at most while the strand is in that non-blocking send
// (the client, woken by it, may answer before the strand is done). Until
// the strand gets there, `state` says whether the session waits for it.
struct InFlight {
  enum State { kRunning, kWaiting, kDone };
  std::atomic<int> state{kRunning};  // kWaiting: the session waits for kDone
  std::mutex mu;
  bool answered = false;  // mu; the fields below are set with it
  std::string line;       // the reply
  std::size_t sent = 0;   // how much of it the strand could send
  int code = 0;
  bool forget = false;  // Answer::forget
  std::string address;
};

}  // namespace

// One connection's session; lives in serve()'s coroutine frame on the
// connection's worker thread.
class LmtpSession final : public service::ConnectionDriver {
 public:
  LmtpSession(LmtpHandler& handler, net::Connection& conn)
      : ConnectionDriver(conn, handler.pool_, handler.protocol(), handler.options_.timeout),
        handler_(handler),
        options_(handler.options_),
        reader_(options_.max_line_bytes),
        settled_(conn.executor()) {}

  ~LmtpSession() override {
    if (reply_fd_ >= 0) {
      ::close(reply_fd_);
    }
  }

 private:
  asio::awaitable<void> run() override {
    out_ = smtp::format_reply({220, "", options_.hostname + " Peregrine LMTP ready"});
    for (;;) {
      smtp::Reader::Line line = reader_.next_line();
      if (line.kind == smtp::Reader::Line::Kind::kNeedMore) {
        if (!co_await flush() || !co_await read_into(reader_, kCommandReadBytes, true)) {
          co_return;
        }
        continue;
      }
      co_await settle_output();  // the previous message's reply comes first
      if (line.kind == smtp::Reader::Line::Kind::kTooLong) {
        reply({500, "5.5.2", "Line too long"});
      } else if (!co_await command(line.text)) {
        co_await flush();
        co_return;
      }
      if (errors_ >= options_.max_errors) {
        reply({421, "4.7.0", "Too many errors, closing the connection"});
        co_await flush();
        co_return;
      }
    }
  }

  // How RCPT TO named a recipient: what a re-check looks up again.
  struct Named {
    std::string local;
    std::string domain;
  };

  struct Transaction {
    std::optional<std::string> sender;  // set by MAIL; "" is the null sender
    bool smtputf8 = false;
    std::vector<delivery::Recipient> recipients;
    // Per recipient: set when it was accepted from this connection's memory
    // (known_) without a lookup, so its delivery looks it up again first.
    std::vector<std::optional<Named>> recheck;
  };

  void reply(const smtp::Reply& r) {
    out_ += smtp::format_reply(r);
    errors_ = r.code >= 500 ? errors_ + 1 : 0;
  }

  asio::awaitable<bool> flush() {
    if (out_.empty()) {
      co_return true;
    }
    const bool written = co_await write(out_);
    out_.clear();
    co_return written;
  }

  // One command; false ends the session.
  asio::awaitable<bool> command(std::string_view line) {
    smtp::ParseResult parsed = smtp::parse_command(line);
    if (!parsed.ok) {
      reply(parsed.error);
      co_return true;
    }
    smtp::Command& cmd = parsed.command;
    switch (cmd.verb) {
      case smtp::Verb::kLhlo:
        lhlo(cmd);
        break;
      case smtp::Verb::kHelo:
      case smtp::Verb::kEhlo:
        reply({500, "5.5.1", "This is an LMTP server: use LHLO"});
        break;
      case smtp::Verb::kMail:
        mail(cmd);
        break;
      case smtp::Verb::kRcpt:
        co_await rcpt(cmd);
        break;
      case smtp::Verb::kData:
        co_return co_await data();
      case smtp::Verb::kRset:
        tx_ = Transaction{};
        reply(ok("2.0.0", "Ok"));
        break;
      case smtp::Verb::kNoop:
        reply(ok("2.0.0", "Ok"));
        break;
      case smtp::Verb::kVrfy:
        reply({252, "2.5.0", "Cannot VRFY, but will accept the message and try delivery"});
        break;
      case smtp::Verb::kHelp:
        reply({214, "2.0.0", "Commands: LHLO MAIL RCPT DATA RSET NOOP VRFY HELP QUIT"});
        break;
      case smtp::Verb::kQuit:
        reply({221, "2.0.0", "Bye"});
        co_return false;
    }
    co_return true;
  }

  void lhlo(const smtp::Command&) {
    greeted_ = true;
    tx_ = Transaction{};
    out_ += smtp::format_multiline(
        250, {options_.hostname, "PIPELINING", "ENHANCEDSTATUSCODES", "8BITMIME", "SMTPUTF8",
              "SIZE " + std::to_string(options_.max_message_bytes)});
    errors_ = 0;
  }

  void mail(const smtp::Command& cmd) {
    if (!greeted_) {
      return reply(bad_sequence("Send LHLO first"));
    }
    if (tx_.sender) {
      return reply(bad_sequence("Nested MAIL command"));
    }
    if (cmd.size && *cmd.size > options_.max_message_bytes) {
      return reply({552, "5.3.4",
                    "Message size exceeds the limit of " +
                        std::to_string(options_.max_message_bytes) + " bytes"});
    }
    if (cmd.address.utf8 && !cmd.smtputf8) {
      return reply({553, "5.6.7", "Non-ASCII address needs SMTPUTF8"});
    }
    tx_.sender = cmd.address.text;
    tx_.smtputf8 = cmd.smtputf8;
    reply(ok("2.1.0", "Sender ok"));
  }

  asio::awaitable<void> rcpt(const smtp::Command& cmd) {
    const smtp::Address& address = cmd.address;
    if (!tx_.sender) {
      co_return reply(bad_sequence("Send MAIL first"));
    }
    if (address.utf8 && !tx_.smtputf8) {
      co_return reply({553, "5.6.7", "Non-ASCII address needs SMTPUTF8"});
    }
    if (tx_.recipients.size() >= options_.max_recipients) {
      co_return reply({452, "4.5.3", "Too many recipients"});
    }
    // An address this connection resolved before is taken from memory:
    // an MTA sends the same few recipients again and again, and the lookup
    // costs a hop to the pool and back before the client may send the
    // message. Its delivery looks it up again on the user's strand, where
    // it goes anyway (admit in data()), so a user removed from the
    // passwd-file since gets 550 there instead of here.
    std::optional<Named> recheck;
    base::Result<delivery::Recipient> found = base::fail(base::MailError::kNotFound, "");
    const std::string key =
        address.domain.empty() ? address.local : address.local + '@' + address.domain;
    if (auto known = known_.find(key); known != known_.end()) {
      found = known->second;
      recheck = Named{address.local, address.domain};
    } else {
      // The passwd-file lookup stats (and may re-read) the file: off the
      // event loop, like every other blocking call.
      found = co_await pool().run(connection_key(), [&] {
        return delivery::resolve_recipient(handler_.authenticator_, address.local, address.domain);
      });
    }
    // The user's store is opened here, once per connection (hold), so that
    // DATA finds it open; a store that cannot open is a temporary failure now.
    if (found && (options_.quota_bytes > 0 || !held_.contains(found->user))) {
      auto room = co_await pool().run(found->user, [&]() -> base::Result<void> {
        auto user = hold(*found);
        if (!user) {
          return std::unexpected(user.error());
        }
        return delivery::check_quota((*user)->store(), options_.quota_bytes, 0);
      });
      if (!room) {
        co_return refuse_recipient(room.error(), address.text);
      }
    }
    if (!found) {
      co_return refuse_recipient(found.error(), address.text);
    }
    if (!recheck) {
      if (known_.size() >= kMaxKnownRecipients) {
        known_.clear();
      }
      known_.emplace(key, *found);
    }
    tx_.recipients.push_back(std::move(*found));
    tx_.recheck.push_back(std::move(recheck));
    reply(ok("2.1.5", "Recipient ok"));
  }

  void refuse_recipient(const base::Error& error, std::string_view address) {
    reply(refusal(error, address, conn().id(), options_.quota_bytes));
  }

  // DATA: the message, then one reply per accepted recipient. False when
  // the connection ended while reading it.
  asio::awaitable<bool> data() {
    if (!tx_.sender) {
      reply(bad_sequence("Send MAIL first"));
      co_return true;
    }
    if (tx_.recipients.empty()) {
      reply(bad_sequence("No valid recipients"));  // RFC 2033 §4.2
      co_return true;
    }
    out_ += smtp::format_reply({354, "", "Start mail input; end with <CRLF>.<CRLF>"});
    errors_ = 0;
    if (!co_await flush()) {
      co_return false;
    }
    smtp::DataDecoder decoder(options_.max_message_bytes);
    while (!reader_.read_data(decoder)) {
      if (!co_await read_into(reader_, kDataReadBytes, false)) {
        co_return false;
      }
    }
    Transaction tx = std::move(tx_);
    tx_ = Transaction{};
    if (decoder.too_big()) {
      for (size_t i = 0; i < tx.recipients.size(); ++i) {
        reply({552, "5.3.4",
               "Message size exceeds the limit of " + std::to_string(options_.max_message_bytes) +
                   " bytes"});
      }
      co_return true;
    }
    // One pending delivery per recipient, queued on its user's strand, where
    // it joins whatever else is queued for that user (delivery/batch.h).
    auto message = std::make_shared<const std::string>(std::move(decoder.text()));
    std::vector<std::shared_ptr<delivery::Pending>> pending;
    pending.reserve(tx.recipients.size());
    for (std::size_t i = 0; i < tx.recipients.size(); ++i) {
      const delivery::Recipient& recipient = tx.recipients[i];
      auto p = std::make_shared<delivery::Pending>();
      p->message = message;
      p->request.return_path = tx.sender;
      p->request.delivered_to = recipient.address;
      p->request.message = *message;
      p->request.quota_bytes = options_.quota_bytes;
      if (tx.recheck[i]) {
        p->admit = [&authenticator = handler_.authenticator_, named = std::move(*tx.recheck[i]),
                    user = recipient.user]() -> base::Result<void> {
          auto now = delivery::resolve_recipient(authenticator, named.local, named.domain);
          if (!now) {
            return std::unexpected(now.error());
          }
          if (now->user != user) {
            return base::fail(base::MailError::kTemporary, "the address now names another user");
          }
          return {};
        };
      }
      handler_.queue_->push(recipient.user, p);
      pending.push_back(std::move(p));
    }
    if (tx.recipients.size() == 1 && reply_fd() >= 0) {
      send_from_strand(tx.recipients.front(), std::move(pending.front()));
      co_return true;
    }
    // The other recipients' users start at once, in parallel on their own
    // strands; the replies below still wait for each in RCPT order.
    std::set<std::string_view> started{tx.recipients.front().user};
    for (const delivery::Recipient& recipient : tx.recipients) {
      if (started.insert(recipient.user).second) {
        handler_.pool_.post(recipient.user, [queue = handler_.queue_.get(), user = recipient.user,
                                             context = held_.at(recipient.user).get()] {
          delivery::deliver_batch(context->store(), queue->take(user));
        });
      }
    }
    for (std::size_t i = 0; i < tx.recipients.size(); ++i) {
      co_await deliver(tx.recipients[i], *pending[i]);
    }
    co_return true;
  }

  // Waits until `pending` is delivered (by this task's batch or an earlier
  // one on the user's strand) and adds its reply. The recipient's context is
  // held since RCPT, and let go only after this connection's queued work on
  // the strand (finish()), so the tasks may use it.
  asio::awaitable<void> deliver(const delivery::Recipient& recipient, delivery::Pending& pending) {
    session::UserContext* context = held_.at(recipient.user).get();
    co_await pool().run(recipient.user,
                        [&] { run_pending(*context, *handler_.queue_, recipient.user, pending); });
    Answer told = answer(recipient, pending, conn().id(), options_.quota_bytes);
    if (told.forget) {
      known_.erase(recipient.address);
    }
    reply(told.reply);
  }

  // One recipient: its strand delivers and sends the reply itself, while
  // this coroutine goes on to read the next command, so the connection's
  // thread is not woken only to write the reply. A client sends nothing
  // more before it has the reply (RFC 2920: the end of the data ends a
  // group), so the send finds the socket's buffer empty; if a client sent
  // on anyway and filled it, the session writes the rest when it takes the
  // outcome. The next command, and any other output, waits for the strand
  // first (settle_output()).
  void send_from_strand(const delivery::Recipient& recipient,
                        std::shared_ptr<delivery::Pending> pending) {
    auto flight = std::make_shared<InFlight>();
    flight->address = recipient.address;
    in_flight_ = flight;
    handler_.pool_.post(
        recipient.user,
        [flight, recipient, pending = std::move(pending), context = held_.at(recipient.user).get(),
         queue = handler_.queue_.get(), fd = reply_fd_, woken = settled_.handle(),
         conn = conn().id(), quota = options_.quota_bytes] {
          Answer told;
          try {
            run_pending(*context, *queue, recipient.user, *pending);
            told = answer(recipient, *pending, conn, quota);
          } catch (...) {
            told.reply = delivery::lmtp_reply(delivery::Outcome::kTemporary, recipient.address);
          }
          {
            std::lock_guard lock(flight->mu);
            flight->line = smtp::format_reply(told.reply);
            flight->code = told.reply.code;
            flight->forget = told.forget;
            const ssize_t n =
                ::send(fd, flight->line.data(), flight->line.size(), MSG_DONTWAIT | MSG_NOSIGNAL);
            flight->sent = n > 0 ? static_cast<std::size_t>(n) : 0;
            flight->answered = true;
          }
          if (flight->state.exchange(InFlight::kDone, std::memory_order_acq_rel) ==
              InFlight::kWaiting) {
            woken.notify();
          }
        });
  }

  // Waits for the reply a strand is sending (send_from_strand), then takes
  // its outcome and writes what the strand could not send.
  asio::awaitable<void> settle_output() override {
    if (!in_flight_) {
      co_return;
    }
    std::shared_ptr<InFlight> flight = std::move(in_flight_);
    for (;;) {
      {
        std::lock_guard lock(flight->mu);
        if (flight->answered) {
          break;
        }
      }
      int running = InFlight::kRunning;
      if (flight->state.compare_exchange_strong(running, InFlight::kWaiting,
                                                std::memory_order_acq_rel)) {
        while (flight->state.load(std::memory_order_acquire) != InFlight::kDone) {
          co_await settled_.wait(kSettleWait);
        }
      }
    }
    if (flight->forget) {
      known_.erase(flight->address);
    }
    if (flight->sent < flight->line.size()) {
      // What the socket did not take at once: before anything else. A failed
      // write shows at the next read.
      co_await write(std::string_view(flight->line).substr(flight->sent));
    }
    errors_ = flight->code >= 500 ? errors_ + 1 : 0;
  }

  // A second descriptor of the socket for the strands' sends (it stays open
  // until this session ends, whatever happens to the connection's); -1
  // when the connection cannot take raw writes (TLS).
  int reply_fd() {
    if (reply_fd_ < 0) {
      const int fd = conn().native_handle();
      if (fd >= 0) {
        reply_fd_ = ::fcntl(fd, F_DUPFD_CLOEXEC, 0);
      }
    }
    return reply_fd_;
  }

  // The user's context, kept for the rest of the connection so that an MTA
  // delivering many messages to the same users opens each store once. On
  // the user's strand only.
  base::Result<session::UserContext*> hold(const delivery::Recipient& recipient) {
    auto found = held_.find(recipient.user);
    if (found != held_.end()) {
      return found->second.get();
    }
    auto user = handler_.users_.acquire(recipient.user, recipient.home);
    if (!user) {
      return std::unexpected(user.error());
    }
    session::UserContext* context = user->get();
    held_.emplace(recipient.user, std::move(*user));
    return context;
  }

  // Lets go of the held contexts, each on its user's strand.
  asio::awaitable<void> finish() override {
    co_await settle_output();
    while (!held_.empty()) {
      auto node = held_.extract(held_.begin());
      co_await pool().run(node.key(), [&node] { node.mapped().reset(); });
    }
  }

 private:
  LmtpHandler& handler_;
  const LmtpOptions& options_;
  smtp::Reader reader_;
  std::string out_;  // replies not yet written
  // The reply a strand is sending (send_from_strand), until settle_output().
  std::shared_ptr<InFlight> in_flight_;
  net::Notifier settled_;  // the strand's signal when the session waits for it
  int reply_fd_ = -1;      // reply_fd()
  bool greeted_ = false;
  int errors_ = 0;  // refused commands in a row
  Transaction tx_;
  // Recipients this connection resolved, by local part '@' domain as RCPT TO
  // gave them (the Recipient's address).
  std::map<std::string, delivery::Recipient, std::less<>> known_;
  // Touched on the users' strands (hold) and, between them, by this
  // session's coroutine; never by two at once.
  std::map<std::string, std::shared_ptr<session::UserContext>> held_;
};

LmtpOptions lmtp_options(const config::Settings& settings) {
  LmtpOptions options;
  options.max_message_bytes = settings.lmtp.max_message_bytes;
  options.quota_bytes = settings.limits.quota_bytes;
  return options;
}

LmtpHandler::LmtpHandler(auth::Authenticator& authenticator, session::UserRegistry& users,
                         net::StoragePool& pool, LmtpOptions options)
    : ProtocolHandler(lmtp_protocol()),
      authenticator_(authenticator),
      users_(users),
      pool_(pool),
      options_(with_host_name(std::move(options))),
      queue_(std::make_unique<delivery::DeliveryQueue>()) {}

LmtpHandler::~LmtpHandler() = default;

asio::awaitable<void> LmtpHandler::serve(net::Connection& connection) {
  LmtpSession session(*this, connection);
  co_await session.serve();
}

}  // namespace peregrine::lmtp
