#include "imap/proto/response_code.h"

#include "imap/proto/wire_string.h"

namespace peregrine::imap {

std::string_view code_name(Code code) {
  switch (code) {
    case Code::kAlert:
      return "ALERT";
    case Code::kAlreadyExists:
      return "ALREADYEXISTS";
    case Code::kAuthenticationFailed:
      return "AUTHENTICATIONFAILED";
    case Code::kAuthorizationFailed:
      return "AUTHORIZATIONFAILED";
    case Code::kCannot:
      return "CANNOT";
    case Code::kClientBug:
      return "CLIENTBUG";
    case Code::kClosed:
      return "CLOSED";
    case Code::kContactAdmin:
      return "CONTACTADMIN";
    case Code::kCorruption:
      return "CORRUPTION";
    case Code::kExpired:
      return "EXPIRED";
    case Code::kExpungeIssued:
      return "EXPUNGEISSUED";
    case Code::kHasChildren:
      return "HASCHILDREN";
    case Code::kInUse:
      return "INUSE";
    case Code::kLimit:
      return "LIMIT";
    case Code::kNoModSeq:
      return "NOMODSEQ";
    case Code::kNonExistent:
      return "NONEXISTENT";
    case Code::kNoPerm:
      return "NOPERM";
    case Code::kNotSaved:
      return "NOTSAVED";
    case Code::kOverQuota:
      return "OVERQUOTA";
    case Code::kParse:
      return "PARSE";
    case Code::kPrivacyRequired:
      return "PRIVACYREQUIRED";
    case Code::kReadOnly:
      return "READ-ONLY";
    case Code::kReadWrite:
      return "READ-WRITE";
    case Code::kServerBug:
      return "SERVERBUG";
    case Code::kTooBig:
      return "TOOBIG";
    case Code::kTryCreate:
      return "TRYCREATE";
    case Code::kUidNotSticky:
      return "UIDNOTSTICKY";
    case Code::kUnavailable:
      return "UNAVAILABLE";
    case Code::kUnknownCte:
      return "UNKNOWN-CTE";
  }
  return "";
}

ResponseCode::ResponseCode(Code code) : text_(code_name(code)) {}

namespace {

std::string with_number(std::string_view name, uint64_t n) {
  std::string s(name);
  s += ' ';
  append_number(s, n);
  return s;
}

void append_atom_list(std::string& s, std::span<const std::string> atoms) {
  for (size_t i = 0; i < atoms.size(); ++i) {
    if (i > 0) {
      s += ' ';
    }
    s += atoms[i];
  }
}

}  // namespace

ResponseCode ResponseCode::uid_next(uint32_t uid) {
  return ResponseCode(with_number("UIDNEXT", uid));
}

ResponseCode ResponseCode::uid_validity(uint32_t value) {
  return ResponseCode(with_number("UIDVALIDITY", value));
}

ResponseCode ResponseCode::unseen(uint32_t seq) { return ResponseCode(with_number("UNSEEN", seq)); }

ResponseCode ResponseCode::highest_modseq(uint64_t modseq) {
  return ResponseCode(with_number("HIGHESTMODSEQ", modseq));
}

ResponseCode ResponseCode::permanent_flags(std::span<const std::string> flags, bool new_keywords) {
  std::string s = "PERMANENTFLAGS (";
  append_atom_list(s, flags);
  if (new_keywords) {
    s += flags.empty() ? "\\*" : " \\*";
  }
  s += ')';
  return ResponseCode(std::move(s));
}

ResponseCode ResponseCode::append_uid(uint32_t uid_validity, const SequenceSet& uids) {
  std::string s = with_number("APPENDUID", uid_validity);
  s += ' ';
  append_sequence_set(s, uids);
  return ResponseCode(std::move(s));
}

ResponseCode ResponseCode::copy_uid(uint32_t uid_validity, const SequenceSet& source,
                                    const SequenceSet& dest) {
  std::string s = with_number("COPYUID", uid_validity);
  s += ' ';
  append_sequence_set(s, source);
  s += ' ';
  append_sequence_set(s, dest);
  return ResponseCode(std::move(s));
}

ResponseCode ResponseCode::bad_charset(std::span<const std::string> supported) {
  std::string s = "BADCHARSET";
  if (!supported.empty()) {
    s += " (";
    for (size_t i = 0; i < supported.size(); ++i) {
      if (i > 0) {
        s += ' ';
      }
      append_astring(s, supported[i]);
    }
    s += ')';
  }
  return ResponseCode(std::move(s));
}

ResponseCode ResponseCode::capability(std::span<const std::string> capabilities) {
  std::string s = "CAPABILITY";
  for (const std::string& c : capabilities) {
    s += ' ';
    s += c;
  }
  return ResponseCode(std::move(s));
}

ResponseCode ResponseCode::modified(const SequenceSet& set) {
  std::string s = "MODIFIED ";
  append_sequence_set(s, set);
  return ResponseCode(std::move(s));
}

}  // namespace peregrine::imap
