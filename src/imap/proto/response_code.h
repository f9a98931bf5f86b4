#pragma once

// Response codes: the "[...]" of a status response (RFC 9051 §7.1, RFC 3501
// §7.1, RFC 4315 UIDPLUS, RFC 5530, RFC 7162 CONDSTORE, RFC 3516 BINARY,
// RFC 5182 SEARCHRES). A ResponseCode is built from typed values and holds
// its wire text ("UIDNEXT 4392"), brackets excluded.

#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "imap/proto/sequence_set.h"

namespace peregrine::imap {

// Codes that carry no data.
enum class Code : uint8_t {
  kAlert,
  kAlreadyExists,
  kAuthenticationFailed,
  kAuthorizationFailed,
  kCannot,
  kClientBug,
  kClosed,
  kContactAdmin,
  kCorruption,
  kExpired,
  kExpungeIssued,
  kHasChildren,
  kInUse,
  kLimit,
  kNoModSeq,
  kNonExistent,
  kNoPerm,
  kNotSaved,
  kOverQuota,
  kParse,
  kPrivacyRequired,
  kReadOnly,
  kReadWrite,
  kServerBug,
  kTooBig,
  kTryCreate,
  kUidNotSticky,
  kUnavailable,
  kUnknownCte,
};

class ResponseCode {
 public:
  ResponseCode(Code code);  // NOLINT: implicit, so a Code can be passed where a code is wanted

  static ResponseCode uid_next(uint32_t uid);
  static ResponseCode uid_validity(uint32_t value);
  static ResponseCode unseen(uint32_t seq);
  static ResponseCode highest_modseq(uint64_t modseq);
  // PERMANENTFLAGS (flags... [\*]); `new_keywords` adds "\*" (the client
  // may create keywords).
  static ResponseCode permanent_flags(std::span<const std::string> flags, bool new_keywords);
  // APPENDUID uidvalidity uid-set (RFC 4315).
  static ResponseCode append_uid(uint32_t uid_validity, const SequenceSet& uids);
  // COPYUID uidvalidity source-set dest-set (RFC 4315).
  static ResponseCode copy_uid(uint32_t uid_validity, const SequenceSet& source,
                               const SequenceSet& dest);
  // BADCHARSET, with the supported charsets when given.
  static ResponseCode bad_charset(std::span<const std::string> supported);
  static ResponseCode capability(std::span<const std::string> capabilities);
  // MODIFIED set (RFC 7162: STORE ... UNCHANGEDSINCE failed for these).
  static ResponseCode modified(const SequenceSet& set);

  // "UIDNEXT 4392", without brackets.
  std::string_view text() const { return text_; }

 private:
  explicit ResponseCode(std::string text) : text_(std::move(text)) {}
  std::string text_;
};

// The atom of a data-less code: "TRYCREATE".
std::string_view code_name(Code code);

}  // namespace peregrine::imap
