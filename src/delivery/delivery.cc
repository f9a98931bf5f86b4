#include "delivery/delivery.h"

#include <sysexits.h>

#include <string>

#include "base/ascii.h"

namespace peregrine::delivery {

base::Result<Recipient> resolve_recipient(auth::Authenticator& auth, std::string_view local,
                                          std::string_view domain) {
  std::string address(local);
  if (!domain.empty()) {
    address += '@';
    address += domain;
    // The whole address first: a passwd-file may name users that way.
    auto full = auth.lookup(address);
    if (full) {
      return Recipient{full->name, full->home, address};
    }
    if (full.error().code != base::MailError::kNotFound) {
      return std::unexpected(full.error());
    }
  }
  auto user = auth.lookup(local);
  if (!user) {
    return std::unexpected(user.error());
  }
  return Recipient{user->name, user->home, address};
}

base::Result<Recipient> resolve_address(auth::Authenticator& auth, std::string_view address) {
  size_t at = address.rfind('@');
  if (at == std::string_view::npos) {
    return resolve_recipient(auth, address, {});
  }
  return resolve_recipient(auth, address.substr(0, at), address.substr(at + 1));
}

std::string trace_headers(const std::optional<std::string>& return_path,
                          const std::optional<std::string>& delivered_to) {
  std::string out;
  if (return_path) {
    out += "Return-Path: <";
    out += *return_path;
    out += ">\r\n";
  }
  if (delivered_to) {
    out += "Delivered-To: ";
    out += *delivered_to;
    out += "\r\n";
  }
  return out;
}

base::Result<void> check_quota(store::UserStore& store, std::uint64_t quota_bytes,
                               std::uint64_t incoming) {
  if (quota_bytes == 0) {
    return {};
  }
  auto mailboxes = store.list_mailboxes();
  if (!mailboxes) {
    return std::unexpected(mailboxes.error());
  }
  std::uint64_t used = 0;
  for (const store::MailboxEntry& entry : *mailboxes) {
    if (!entry.selectable) {
      continue;
    }
    auto status = store.status(entry.name);
    if (!status) {
      return std::unexpected(status.error());
    }
    used += status->size;
  }
  if (incoming == 0 ? used >= quota_bytes : used + incoming > quota_bytes) {
    return base::fail(base::MailError::kOverQuota, "mailbox full: " + std::to_string(used) +
                                                       " of " + std::to_string(quota_bytes) +
                                                       " bytes used");
  }
  return {};
}

base::Result<Delivered> deliver(store::UserStore& store, const Request& request) {
  if (request.message.empty()) {
    return base::fail(base::MailError::kBadInput, "empty message");
  }
  std::string bytes = trace_headers(request.return_path, request.delivered_to);
  bytes.reserve(bytes.size() + request.message.size());
  bytes += request.message;
  if (auto room = check_quota(store, request.quota_bytes, bytes.size()); !room) {
    return std::unexpected(room.error());
  }
  store::AppendMessage append;
  append.bytes = bytes;
  std::string mailbox = base::iequals(request.mailbox, "INBOX") ? "INBOX" : request.mailbox;
  auto appended = store.append(mailbox, append);
  if (!appended && appended.error().code == base::MailError::kNotFound && mailbox != "INBOX") {
    mailbox = "INBOX";  // a missing mailbox must not lose the mail
    appended = store.append(mailbox, append);
  }
  if (!appended) {
    return std::unexpected(appended.error());
  }
  return Delivered{mailbox, *appended, bytes.size()};
}

Outcome classify(const base::Error& error, std::uint64_t size, std::uint64_t quota_bytes) {
  switch (error.code) {
    case base::MailError::kNotFound:
      return Outcome::kNoSuchUser;
    case base::MailError::kOverQuota:
      return size > quota_bytes ? Outcome::kOverQuota : Outcome::kMailboxFull;
    case base::MailError::kTooBig:
      return Outcome::kTooBig;
    case base::MailError::kBadInput:
      return Outcome::kBadMessage;
    default:
      return Outcome::kTemporary;
  }
}

smtp::Reply lmtp_reply(Outcome outcome, std::string_view address) {
  const std::string who = "<" + std::string(address) + ">";
  switch (outcome) {
    case Outcome::kNoSuchUser:
      return {550, "5.1.1", who + " User unknown"};
    case Outcome::kMailboxFull:
      return {452, "4.2.2", who + " Mailbox full"};
    case Outcome::kOverQuota:
      return {552, "5.2.2", who + " Message larger than the mailbox quota"};
    case Outcome::kTooBig:
      return {552, "5.3.4", "Message too big"};
    case Outcome::kBadMessage:
      return {554, "5.6.0", "Message refused"};
    case Outcome::kTemporary:
      break;
  }
  return {451, "4.3.0", who + " Temporary failure, try again later"};
}

int exit_code(Outcome outcome) {
  switch (outcome) {
    case Outcome::kNoSuchUser:
      return EX_NOUSER;
    case Outcome::kMailboxFull:
      return EX_TEMPFAIL;
    case Outcome::kOverQuota:
      return EX_CANTCREAT;
    case Outcome::kTooBig:
    case Outcome::kBadMessage:
      return EX_DATAERR;
    case Outcome::kTemporary:
      break;
  }
  return EX_TEMPFAIL;
}

}  // namespace peregrine::delivery
