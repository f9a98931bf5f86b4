#include "lmtp/lmtp_handler.h"

#include <unistd.h>

#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "base/log.h"
#include "delivery/batch.h"
#include "delivery/delivery.h"
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
// Messages up to this size may be stored on the connection's own thread
// when the storage pool is idle (deliver()).
constexpr std::size_t kDeliverHereBytes = 1024 * 1024;

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

}  // namespace

// One connection's session; lives in serve()'s coroutine frame on the
// connection's worker thread.
class LmtpSession final : public service::ConnectionDriver {
 public:
  LmtpSession(LmtpHandler& handler, net::Connection& conn)
      : ConnectionDriver(conn, handler.pool_, handler.protocol(), handler.options_.timeout),
        handler_(handler),
        options_(handler.options_),
        reader_(options_.max_line_bytes) {}

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
    if (error.code != base::MailError::kNotFound) {
      base::log(base::LogLevel::kWarn, "lmtp.rcpt_failed",
                {{"conn", static_cast<unsigned long long>(conn().id())},
                 {"rcpt", std::string(address)},
                 {"code", base::to_string(error.code)},
                 {"error", error.message}});
    }
    reply(delivery::lmtp_reply(delivery::classify(error, 0, options_.quota_bytes), address));
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
    std::set<std::string_view> due;  // users whose store has upkeep to do
    for (std::size_t i = 0; i < tx.recipients.size(); ++i) {
      if (co_await deliver(tx.recipients[i], *pending[i])) {
        due.insert(tx.recipients[i].user);
      }
    }
    // What the deliveries left for later (the full-text index's batch, the
    // files' fsyncs) runs on each user's strand while the replies go out
    // and the client sends its next message; the contexts are held until
    // this connection's queued work is done (finish()). Most deliveries
    // leave nothing due, and then nothing is posted: a post wakes a thread.
    for (std::string_view user : due) {
      handler_.pool_.post(
          user, [context = held_.at(std::string(user)).get()] { context->store().upkeep(); });
    }
    co_return true;
  }

  // Waits until `pending` is delivered (by this task's batch or an earlier
  // one on the user's strand) and adds its reply; true when the user's
  // store has upkeep to do. The recipient's context is held since RCPT,
  // and let go only after this connection's queued work on the strand
  // (finish()), so the tasks may use it.
  asio::awaitable<bool> deliver(const delivery::Recipient& recipient, delivery::Pending& pending) {
    session::UserContext* context = held_.at(recipient.user).get();
    auto task = [&] {
      if (!pending.result) {
        delivery::deliver_batch(context->store(), handler_.queue_->take(recipient.user));
      }
      return context->store().upkeep_due();
    };
    // The only LMTP connection, with no storage work waiting, stores a
    // message of ordinary size on its own thread: the reply then waits for
    // no thread hop (StoragePool::run_here_when_idle). With other LMTP
    // connections open the pool takes it: a delivery held on this thread
    // would hold up theirs too, leave the pool idle meanwhile, and so send
    // the next delivery here as well, one at a time. A large message goes
    // to the pool, so that this thread's other connections are not held
    // up for its copy.
    const bool here = handler_.connections_.load(std::memory_order_relaxed) == 1 &&
                      pending.request.message.size() <= kDeliverHereBytes;
    const bool upkeep_due = here ? co_await pool().run_here_when_idle(recipient.user, task)
                                 : co_await pool().run(recipient.user, task);
    if (!pending.result) {
      // Another task's batch took it and ended in an exception (logged by
      // the pool or that session): nothing says the message is stored.
      pending.result = base::fail(base::MailError::kTemporary, "the delivery did not finish");
    }
    const base::Result<delivery::Delivered>& delivered = *pending.result;
    if (!delivered && pending.refused) {
      // The re-check of a remembered recipient failed: as at RCPT, and the
      // next RCPT of that address looks it up afresh.
      known_.erase(recipient.address);
      refuse_recipient(delivered.error(), recipient.address);
      co_return upkeep_due;
    }
    if (!delivered) {
      const base::Error& error = delivered.error();
      base::log(base::LogLevel::kWarn, "lmtp.delivery_failed",
                {{"conn", static_cast<unsigned long long>(conn().id())},
                 {"user", recipient.user},
                 {"code", base::to_string(error.code)},
                 {"error", error.message}});
      // An unknown user here means the store lost it: not the sender's fault.
      auto outcome =
          error.code == base::MailError::kNotFound
              ? delivery::Outcome::kTemporary
              : delivery::classify(error, pending.request.message.size(), options_.quota_bytes);
      reply(delivery::lmtp_reply(outcome, recipient.address));
      co_return upkeep_due;
    }
    base::log(base::LogLevel::kInfo, "lmtp.delivered",
              {{"conn", static_cast<unsigned long long>(conn().id())},
               {"user", recipient.user},
               {"mailbox", delivered->mailbox},
               {"uid", static_cast<unsigned long long>(delivered->uid.uid)},
               {"size", static_cast<unsigned long long>(delivered->size)}});
    reply(ok("2.0.0", "<" + recipient.address + "> Delivered"));
    co_return upkeep_due;
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
  struct Counted {
    std::atomic<int>& count;
    explicit Counted(std::atomic<int>& c) : count(c) { ++count; }
    ~Counted() { --count; }
  } counted(connections_);
  LmtpSession session(*this, connection);
  co_await session.serve();
}

}  // namespace peregrine::lmtp
