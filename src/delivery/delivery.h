#pragma once

// Local delivery: what LMTP (src/lmtp) and `peregrine deliver` share. Who a
// recipient address names, the trace headers a delivered message gets, the
// quota check, the append itself, and how each outcome is told to the
// sender: an LMTP reply (RFC 2033, RFC 3463 enhanced codes) or a sysexits
// exit code. One place decides all of it, so both paths answer alike.
//
// Thread safety: the functions taking a UserStore run where that store may
// be used (the user's strand); the others are thread-safe.

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "auth/authenticator.h"
#include "base/result.h"
#include "smtp/proto/reply.h"
#include "store/api/user_store.h"

namespace peregrine::delivery {

// A recipient as the passwd-file knows it.
struct Recipient {
  std::string user;     // the passwd-file name: the store's user and strand key
  std::string home;     // empty: the store's default place
  std::string address;  // as the sender gave it (for replies and Delivered-To)
};

// The user `address` names: the passwd-file entry spelled exactly like the
// whole address ("bob@example.org") if there is one, else the entry of its
// local part ("bob"), whatever the domain; a bare local part names that
// entry. The local part and domain are given apart (as parsed from RCPT TO;
// the domain may be empty). Errors: kNotFound, or the passwd-file's
// kTemporary.
base::Result<Recipient> resolve_recipient(auth::Authenticator& auth, std::string_view local,
                                          std::string_view domain);
// The same for an address in one string, split at its last '@'.
base::Result<Recipient> resolve_address(auth::Authenticator& auth, std::string_view address);

// The lines put before the message: "Return-Path: <sender>" (RFC 5321
// §4.4; "<>" for the null sender) and "Delivered-To: address" (RFC 9228),
// each only when given.
std::string trace_headers(const std::optional<std::string>& return_path,
                          const std::optional<std::string>& delivered_to);

// Whether `incoming` more bytes fit under `quota_bytes` (0: no quota) for
// the user: kOverQuota when they do not (the message says how full). With
// incoming = 0 it asks whether the user is full already (at RCPT time).
base::Result<void> check_quota(store::UserStore& store, std::uint64_t quota_bytes,
                               std::uint64_t incoming);

struct Request {
  // Trace headers to add (LMTP always gives both; `peregrine deliver` what
  // its -f and -a options say, as an MTA that pipes may add its own).
  std::optional<std::string> return_path;   // the envelope sender; "" is the null sender
  std::optional<std::string> delivered_to;  // the recipient address as the MTA had it
  std::string_view message;                 // as received; bare LF is stored as CRLF
  std::string mailbox = "INBOX";            // a mailbox that does not exist means INBOX
  std::uint64_t quota_bytes = 0;            // 0: no quota
};

struct Delivered {
  std::string mailbox;
  store::AppendedUid uid;
  std::uint64_t size = 0;  // bytes stored, with the trace headers
};

// Appends the message with the request's trace headers to a mailbox of
// `store` (the recipient's), durably (the store's append: fsync'd and
// committed when this returns).
// Errors: kOverQuota (check_quota), kTooBig (over the store's size limit),
// kBadInput (an empty message), and the store's others.
base::Result<Delivered> deliver(store::UserStore& store, const Request& request);

// deliver() for several requests to the user of `store`, with one result
// each, in order. The messages for one mailbox are appended together, in
// one store transaction, so they share its directory fsync and index
// commit; the quota counts the earlier accepted messages of the same call.
// When a shared append fails, its messages are appended one by one, so a
// message fails only for its own reason.
std::vector<base::Result<Delivered>> deliver_all(store::UserStore& store,
                                                 std::span<const Request* const> requests);

// What a failure means to the sender.
enum class Outcome {
  kNoSuchUser,   // 550 5.1.1 / EX_NOUSER
  kMailboxFull,  // 452 4.2.2 / EX_TEMPFAIL: may fit later
  kOverQuota,    // 552 5.2.2 / EX_CANTCREAT: larger than the whole quota
  kTooBig,       // 552 5.3.4 / EX_DATAERR
  kBadMessage,   // 554 5.6.0 / EX_DATAERR
  kTemporary,    // 451 4.3.0 / EX_TEMPFAIL
};
// `size` is the message's (0 when not known yet, at RCPT).
Outcome classify(const base::Error& error, std::uint64_t size, std::uint64_t quota_bytes);

// The LMTP reply for a failure, its text naming `address` where it helps.
smtp::Reply lmtp_reply(Outcome outcome, std::string_view address);
// The exit code of `peregrine deliver` (sysexits.h).
int exit_code(Outcome outcome);

}  // namespace peregrine::delivery
