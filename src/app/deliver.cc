// `peregrine deliver`: a local delivery agent. Reads one message from stdin
// and delivers it as LMTP does (delivery/delivery.h: the same recipient
// rule, trace headers, quota and outcomes), through the store, so a running
// server sees it at its next sync point.

#include <sysexits.h>
#include <unistd.h>

#include <cstdio>
#include <iostream>
#include <string>

#include "app/commands.h"
#include "app/settings.h"
#include "base/ascii.h"
#include "base/log.h"
#include "delivery/delivery.h"
#include "store/maildir/maildir_store.h"

namespace peregrine::app {
namespace {

int fail(std::string_view what, int code) {
  std::cerr << "peregrine deliver: " << what << "\n";
  return code;
}

enum class ReadResult { kOk, kTooBig, kError };

// All of stdin, refusing more than `limit` bytes.
ReadResult read_stdin(std::uint64_t limit, std::string& out) {
  char chunk[64 * 1024];
  for (;;) {
    ssize_t n = ::read(STDIN_FILENO, chunk, sizeof chunk);
    if (n < 0) {
      if (errno == EINTR) {
        continue;
      }
      return ReadResult::kError;
    }
    if (n == 0) {
      return ReadResult::kOk;
    }
    if (out.size() + static_cast<std::uint64_t>(n) > limit) {
      return ReadResult::kTooBig;
    }
    out.append(chunk, static_cast<size_t>(n));
  }
}

}  // namespace

// An mbox "From " envelope line, which some MTAs put first when they pipe
// (Postfix's local(8) with mailbox_command): it is not part of the message.
std::string_view without_envelope_line(std::string_view message) {
  if (message.starts_with("From ")) {
    size_t lf = message.find('\n');
    return lf == std::string_view::npos ? std::string_view() : message.substr(lf + 1);
  }
  return message;
}

int run_deliver(const DeliverArgs& args) {
  // A broken configuration is the operator's to fix: the MTA keeps the mail.
  std::optional<config::Settings> settings = load_settings(args.config);
  if (!settings) {
    return EX_TEMPFAIL;
  }
  const std::uint64_t quota = settings->limits.quota_bytes;
  auth::Authenticator authenticator(settings->auth.passwd_file);
  auto recipient = delivery::resolve_address(authenticator, args.user);
  if (!recipient) {
    return fail(args.user + ": " + recipient.error().message,
                delivery::exit_code(delivery::classify(recipient.error(), 0, quota)));
  }

  const std::uint64_t limit = settings->lmtp.max_message_bytes;
  std::string input;
  switch (read_stdin(limit, input)) {
    case ReadResult::kOk:
      break;
    case ReadResult::kTooBig:
      return fail("message larger than " + std::to_string(limit) + " bytes",
                  delivery::exit_code(delivery::Outcome::kTooBig));
    case ReadResult::kError:
      return fail("cannot read the message from stdin", EX_IOERR);
  }

  store::maildir::MaildirOptions store_options;
  store_options.data_dir = settings->server.data_dir;
  store_options.max_message_size = settings->limits.max_literal_bytes;
  store_options.full_text_index = settings->search.fts;
  store::maildir::MaildirStore store(store_options);
  auto user_store = store.open_user(recipient->user, recipient->home);
  if (!user_store) {
    return fail(user_store.error().message, EX_TEMPFAIL);
  }
  delivery::Request request;
  request.return_path = args.sender;
  if (!args.address.empty()) {
    request.delivered_to = args.address;
  }
  request.message = without_envelope_line(input);
  request.mailbox = args.mailbox;
  request.quota_bytes = quota;
  auto delivered = delivery::deliver(**user_store, request);
  if (!delivered) {
    return fail(delivered.error().message, delivery::exit_code(delivery::classify(
                                               delivered.error(), request.message.size(), quota)));
  }
  if (delivered->mailbox != args.mailbox && !base::iequals(args.mailbox, "INBOX")) {
    base::log(
        base::LogLevel::kWarn, "deliver.fallback",
        {{"user", recipient->user}, {"mailbox", args.mailbox}, {"reason", "no such mailbox"}});
  }
  base::log(base::LogLevel::kInfo, "deliver",
            {{"user", recipient->user},
             {"mailbox", delivered->mailbox},
             {"uid", static_cast<unsigned long long>(delivered->uid.uid)},
             {"size", static_cast<unsigned long long>(delivered->size)}});
  return EX_OK;
}

}  // namespace peregrine::app
