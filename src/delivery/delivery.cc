#include "delivery/delivery.h"

#include <sysexits.h>

#include <algorithm>
#include <iterator>
#include <string>
#include <utility>
#include <vector>

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

namespace {

// The bytes of the user's selectable mailboxes.
base::Result<std::uint64_t> used_bytes(store::UserStore& store) {
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
  return used;
}

base::Result<void> fits(std::uint64_t used, std::uint64_t quota_bytes, std::uint64_t incoming) {
  if (incoming == 0 ? used >= quota_bytes : used + incoming > quota_bytes) {
    return base::fail(base::MailError::kOverQuota, "mailbox full: " + std::to_string(used) +
                                                       " of " + std::to_string(quota_bytes) +
                                                       " bytes used");
  }
  return {};
}

// Appends to `mailbox`, or to INBOX when that mailbox does not exist (a
// missing mailbox must not lose the mail). Gives the mailbox used.
base::Result<std::pair<std::string, store::AppendResult>> append_or_inbox(
    store::UserStore& store, std::string mailbox, std::span<const store::AppendMessage> messages) {
  auto appended = store.append(mailbox, messages);
  if (!appended && appended.error().code == base::MailError::kNotFound && mailbox != "INBOX") {
    mailbox = "INBOX";
    appended = store.append(mailbox, messages);
  }
  if (!appended) {
    return std::unexpected(appended.error());
  }
  if (appended->uids.size() != messages.size()) {
    return base::fail(base::MailError::kInternal, "append returned too few UIDs");
  }
  return std::pair{std::move(mailbox), std::move(*appended)};
}

}  // namespace

base::Result<void> check_quota(store::UserStore& store, std::uint64_t quota_bytes,
                               std::uint64_t incoming) {
  if (quota_bytes == 0) {
    return {};
  }
  auto used = used_bytes(store);
  if (!used) {
    return std::unexpected(used.error());
  }
  return fits(*used, quota_bytes, incoming);
}

base::Result<Delivered> deliver(store::UserStore& store, const Request& request) {
  const Request* one = &request;
  return std::move(deliver_all(store, std::span<const Request* const>(&one, 1)).front());
}

std::vector<base::Result<Delivered>> deliver_all(store::UserStore& store,
                                                 std::span<const Request* const> requests) {
  const std::size_t n = requests.size();
  std::vector<std::optional<base::Result<Delivered>>> out(n);
  std::vector<std::string> bytes(n);
  // Groups of requests by mailbox, in order of first appearance.
  std::vector<std::pair<std::string, std::vector<std::size_t>>> groups;
  std::optional<std::uint64_t> used;  // read once, when a request has a quota
  std::uint64_t accepted = 0;         // bytes of this batch's messages so far
  for (std::size_t i = 0; i < n; ++i) {
    const Request& request = *requests[i];
    if (request.message.empty()) {
      out[i] = base::fail(base::MailError::kBadInput, "empty message");
      continue;
    }
    bytes[i] = trace_headers(request.return_path, request.delivered_to);
    bytes[i].reserve(bytes[i].size() + request.message.size());
    bytes[i] += request.message;
    if (request.quota_bytes > 0) {
      if (!used) {
        auto u = used_bytes(store);
        if (!u) {
          out[i] = std::unexpected(u.error());
          continue;
        }
        used = *u;
      }
      if (auto room = fits(*used + accepted, request.quota_bytes, bytes[i].size()); !room) {
        out[i] = std::unexpected(room.error());
        continue;
      }
    }
    accepted += bytes[i].size();
    std::string mailbox = base::iequals(request.mailbox, "INBOX") ? "INBOX" : request.mailbox;
    auto group = std::find_if(groups.begin(), groups.end(),
                              [&](const auto& g) { return g.first == mailbox; });
    if (group == groups.end()) {
      groups.emplace_back(std::move(mailbox), std::vector<std::size_t>{});
      group = std::prev(groups.end());
    }
    group->second.push_back(i);
  }
  for (const auto& [mailbox, members] : groups) {
    std::vector<store::AppendMessage> messages(members.size());
    for (std::size_t k = 0; k < members.size(); ++k) {
      messages[k].bytes = bytes[members[k]];
    }
    auto appended = append_or_inbox(store, mailbox, messages);
    if (appended) {
      for (std::size_t k = 0; k < members.size(); ++k) {
        const std::size_t i = members[k];
        out[i] = Delivered{appended->first,
                           {appended->second.uidvalidity, appended->second.uids[k]},
                           bytes[i].size()};
      }
      continue;
    }
    // The shared append stored nothing. One message may be the cause (too
    // big for the store): each on its own, so it fails alone.
    for (std::size_t k = 0; k < members.size(); ++k) {
      const std::size_t i = members[k];
      auto single = members.size() == 1
                        ? std::move(appended)
                        : append_or_inbox(store, mailbox, std::span(&messages[k], 1));
      if (!single) {
        out[i] = std::unexpected(single.error());
      } else {
        out[i] = Delivered{
            single->first, {single->second.uidvalidity, single->second.uids[0]}, bytes[i].size()};
      }
    }
  }
  std::vector<base::Result<Delivered>> results;
  results.reserve(n);
  for (auto& r : out) {
    results.push_back(std::move(*r));
  }
  return results;
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
  std::string who = "<";  // not "<" + std::string(...): GCC 12 -O2 warns (-Wrestrict)
  who += address;
  who += ">";
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
