#pragma once

// The SEARCH key tree (RFC 3501 §6.4.4, RFC 9051 §6.4.4, RFC 7162 MODSEQ,
// RFC 5032 OLDER/YOUNGER, RFC 5182 "$"). The top-level keys of a SEARCH
// are ANDed: one key stands alone, several become a kAnd node.

#include <cstdint>
#include <string>
#include <vector>

#include "imap/proto/date_time.h"
#include "imap/proto/sequence_set.h"

namespace peregrine::imap {

enum class SearchKeyKind : uint8_t {
  // No argument.
  kAll,
  kAnswered,
  kDeleted,
  kDraft,
  kFlagged,
  kNew,
  kOld,
  kRecent,
  kSeen,
  kUnanswered,
  kUndeleted,
  kUndraft,
  kUnflagged,
  kUnseen,
  // `text`: a keyword.
  kKeyword,
  kUnkeyword,
  // `text`: the substring to look for.
  kBcc,
  kBody,
  kCc,
  kFrom,
  kSubject,
  kText,
  kTo,
  // `field`: the header field name; `text`: the substring.
  kHeader,
  // `date`: internal date (BEFORE ON SINCE) or Date: header (SENT*).
  kBefore,
  kOn,
  kSince,
  kSentBefore,
  kSentOn,
  kSentSince,
  // `number`: RFC822.SIZE bound (LARGER SMALLER), or age in seconds (OLDER
  // YOUNGER).
  kLarger,
  kSmaller,
  kOlder,
  kYounger,
  // `set`: UIDs (kUid) or sequence numbers (kSequenceSet); either may be
  // "$" (set.saved).
  kUid,
  kSequenceSet,
  // `number`: the mod-sequence; `field`/`text`: the optional entry name
  // ("/flags/\\Seen") and entry type ("priv", "shared", "all"), else empty.
  kModSeq,
  // `children`: one (NOT), two (OR), or one or more (AND).
  kNot,
  kOr,
  kAnd,
};

struct SearchKey {
  SearchKeyKind kind = SearchKeyKind::kAll;
  std::string field;
  std::string text;
  Date date;
  uint64_t number = 0;
  SequenceSet set;
  std::vector<SearchKey> children;

  bool operator==(const SearchKey&) const;
};

// Appends the key in IMAP syntax, canonical form: keywords upper case,
// strings as astrings, a kAnd node in parentheses (the caller strips them for
// a top-level AND if it wants). Used for logs, tests and proxies.
void append_search_key(std::string& out, const SearchKey& key);
std::string to_string(const SearchKey& key);

}  // namespace peregrine::imap
