#pragma once

// Grammar pieces shared by the command parsers (parser_*.cc). Internal to
// imap/proto. Each reads at the cursor and leaves it after what it read.

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "imap/proto/command.h"
#include "imap/proto/cursor.h"
#include "imap/proto/result.h"

namespace peregrine::imap::internal {

// Nesting bound for parenthesised values and search keys.
inline constexpr int kMaxDepth = 32;

// SP then an argument: false (with `error` set to "missing <what>") when the
// command ends or the space is missing.
bool space_before(Cursor& c, std::string_view what, ParseError& error);

// mailbox: an astring, INBOX normalised.
Parsed<std::string> mailbox(Cursor& c, std::string_view what = "mailbox name");
// sequence-set at the cursor (digits, ":", ",", "*", "$").
Parsed<SequenceSet> sequence_set(Cursor& c);
// flag: "\" atom (system flags canonicalised) or a keyword atom.
Parsed<std::string> flag(Cursor& c);
// flag-list: "(" [flag *(SP flag)] ")".
Parsed<std::vector<std::string>> flag_list(Cursor& c);
// "(" param *(SP param) ")", a param being a name and an optional value
// (the next token is a value if it starts with a digit, "*", "$" or "(").
Parsed<std::vector<ExtParam>> ext_params(Cursor& c, std::string_view what);
// "RETURN (...)" of SEARCH and SORT, the cursor at "RETURN".
Parsed<SearchReturn> search_return(Cursor& c);
// search-key *(SP search-key) to the end of the command (kAnd when several).
Parsed<SearchKey> search_keys(Cursor& c);
// The rest of the command as an error: "unexpected ..." when text remains.
ParseError trailing_error(Cursor& c);

}  // namespace peregrine::imap::internal
