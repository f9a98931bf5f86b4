#pragma once

// The IMAP ENVELOPE of a message (RFC 3501 §7.4.2, RFC 9051 §7.5.2) as a
// value: strings are the header values as written (unfolded, encoded words
// kept), as IMAP sends them.

#include <optional>
#include <string>
#include <vector>

#include "mime/address.h"
#include "mime/header.h"

namespace peregrine::mime {

struct Envelope {
  std::optional<std::string> date;
  std::optional<std::string> subject;
  std::vector<Address> from;
  std::vector<Address> sender;    // defaults to from when absent or empty
  std::vector<Address> reply_to;  // defaults to from when absent or empty
  std::vector<Address> to;
  std::vector<Address> cc;
  std::vector<Address> bcc;
  std::optional<std::string> in_reply_to;
  std::optional<std::string> message_id;

  bool operator==(const Envelope&) const = default;
};

// Builds the envelope from a parsed header. The first field of each name is
// used; values are unfolded. Never fails.
Envelope build_envelope(const Header& header);

}  // namespace peregrine::mime

namespace peregrine::mime {

// The message ids ("<left@right>") in a Message-ID, In-Reply-To or References
// value, in order, each with its angle brackets, comments and whitespace
// removed. Bare ids without brackets that contain '@' are accepted when the
// value has no bracketed id at all; at most kMaxMessageIds are returned.
std::vector<std::string> parse_message_ids(std::string_view value);

inline constexpr size_t kMaxMessageIds = 1000;

}  // namespace peregrine::mime
