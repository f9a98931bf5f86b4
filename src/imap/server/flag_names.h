#pragma once

// IMAP flag words <-> the store's flags (store/api/types.h): system flags as
// a bitmask, keywords as strings. \Recent is neither: it belongs to the
// session (SelectedView) and is added to what a client sees here.

#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.h"
#include "store/api/types.h"

namespace peregrine::imap {

// The IMAP spelling of one system flag bit ("\\Seen").
std::string_view system_flag_name(store::SystemFlags bit);

// A message's flags as FETCH FLAGS lists them: system flags in a fixed
// order, then keywords in the store's order, then \Recent when `recent`.
std::vector<std::string> message_flags(const store::MessageMeta& meta, bool recent);

// The flags a client sent (STORE, APPEND), split for the store.
struct ParsedFlags {
  store::SystemFlags flags = 0;
  std::vector<std::string> keywords;
  bool recent = false;  // \Recent was given: clients cannot set it, callers ignore it
};
// Errors (kBadInput, text for a BAD): a backslash flag that is not a system
// flag ("\\Foo"), or a keyword the store refuses (store::check_keyword).
base::Result<ParsedFlags> parse_flags(std::span<const std::string> flags);

// The flags a mailbox announces (* FLAGS, PERMANENTFLAGS): the five system
// flags, then `keywords`.
std::vector<std::string> mailbox_flags(std::span<const std::string> keywords);

}  // namespace peregrine::imap
