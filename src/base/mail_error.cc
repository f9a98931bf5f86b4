#include "base/mail_error.h"

namespace peregrine::base {

const char* to_string(MailError code) {
  switch (code) {
    case MailError::kNotFound:
      return "not-found";
    case MailError::kExists:
      return "exists";
    case MailError::kNoPermission:
      return "no-permission";
    case MailError::kAuthFailed:
      return "auth-failed";
    case MailError::kOverQuota:
      return "over-quota";
    case MailError::kInUse:
      return "in-use";
    case MailError::kExpunged:
      return "expunged";
    case MailError::kBadInput:
      return "bad-input";
    case MailError::kTooBig:
      return "too-big";
    case MailError::kTemporary:
      return "temporary";
    case MailError::kInternal:
      return "internal";
  }
  return "unknown";
}

}  // namespace peregrine::base
