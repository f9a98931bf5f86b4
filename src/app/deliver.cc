// `peregrine deliver`: a local delivery agent. Reads one message from stdin
// and appends it to a user's mailbox through the store, so a running server
// sees it at its next sync point.

#include <sysexits.h>
#include <unistd.h>

#include <cstdio>
#include <iostream>
#include <string>

#include "app/commands.h"
#include "app/settings.h"
#include "base/ascii.h"
#include "base/log.h"
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

int run_deliver(const DeliverArgs& args) {
  // A broken configuration is the operator's to fix: the MTA keeps the mail.
  std::optional<config::Settings> settings = load_settings(args.config);
  if (!settings) {
    return EX_TEMPFAIL;
  }
  UserLookup lookup = lookup_user(*settings, args.user, "deliver");
  if (!lookup.user) {
    return lookup.exit_code;
  }
  const auth::UserInfo* user = &*lookup.user;

  const std::uint64_t limit = settings->limits.max_literal_bytes;
  std::string message;
  switch (read_stdin(limit, message)) {
    case ReadResult::kOk:
      break;
    case ReadResult::kTooBig:
      return fail("message larger than " + std::to_string(limit) + " bytes", EX_DATAERR);
    case ReadResult::kError:
      return fail("cannot read the message from stdin", EX_IOERR);
  }
  if (message.empty()) {
    return fail("empty message", EX_DATAERR);
  }

  store::maildir::MaildirOptions store_options;
  store_options.data_dir = settings->server.data_dir;
  store_options.max_message_size = limit;
  store_options.full_text_index = settings->search.fts;
  store::maildir::MaildirStore store(store_options);
  auto user_store = store.open_user(user->name, user->home);
  if (!user_store) {
    return fail(user_store.error().message, EX_TEMPFAIL);
  }
  std::string mailbox = base::iequals(args.mailbox, "INBOX") ? "INBOX" : args.mailbox;
  store::AppendMessage append;
  append.bytes = message;
  auto appended = (*user_store)->append(mailbox, append);
  if (!appended && appended.error().code == base::MailError::kNotFound && mailbox != "INBOX") {
    base::log(base::LogLevel::kWarn, "deliver.fallback",
              {{"user", user->name}, {"mailbox", mailbox}, {"reason", "no such mailbox"}});
    mailbox = "INBOX";
    appended = (*user_store)->append(mailbox, append);
  }
  if (!appended) {
    const base::Error& e = appended.error();
    const bool bad_message =
        e.code == base::MailError::kTooBig || e.code == base::MailError::kBadInput;
    return fail(e.message, bad_message ? EX_DATAERR : EX_TEMPFAIL);
  }
  base::log(base::LogLevel::kInfo, "deliver",
            {{"user", user->name},
             {"mailbox", mailbox},
             {"uid", static_cast<unsigned long long>(appended->uid)},
             {"size", static_cast<unsigned long long>(message.size())}});
  return EX_OK;
}

}  // namespace peregrine::app
