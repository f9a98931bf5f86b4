#pragma once

// One error vocabulary for the whole server: a MailError code that every
// protocol maps to its own replies in one place (IMAP NO/BAD and response
// codes, POP3 -ERR [codes], LMTP 4xx/5xx enhanced codes). See result.h.

#include <string>

namespace peregrine::base {

enum class MailError {
  kNotFound,       // no such user, mailbox or message
  kExists,         // already exists (CREATE, RENAME target)
  kNoPermission,   // authenticated but not allowed
  kAuthFailed,     // bad credentials
  kOverQuota,      // storage limit reached
  kInUse,          // held by another session (POP3 maildrop lock)
  kExpunged,       // the message went away under us
  kBadInput,       // malformed request or value
  kTooBig,         // a size bound was exceeded
  kTemporary,      // try again later (I/O error, lock timeout, disk full)
  kInternal,       // a bug or corrupt state; logged with detail
};

struct Error {
  MailError code;
  std::string message;  // for humans: the log and the protocol's text
};

// A short stable name for logs ("not-found", "over-quota", ...).
const char* to_string(MailError code);

}  // namespace peregrine::base
