#pragma once

// Typed IMAP commands: what parse_command (parser.h) produces from a framed
// command. Each command's arguments are one struct; commands whose arguments
// have the same shape share it (SELECT and EXAMINE take a Select). The
// CommandId says which command it was, and Command::args holds the struct
// listed next to it below.
//
// Strings are decoded (quoting removed, literals copied) but not otherwise
// interpreted: mailbox names stay as sent (modified UTF-7 unless UTF8=ACCEPT
// is enabled; see utf7.h), except that INBOX in any case is spelled "INBOX".

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "imap/proto/fetch_item.h"
#include "imap/proto/search_key.h"
#include "imap/proto/sequence_set.h"
#include "mime/date.h"

namespace peregrine::imap {

enum class CommandId : uint8_t {
  kCapability,    // NoArgs
  kNoop,          // NoArgs
  kLogout,        // NoArgs
  kStartTls,      // NoArgs
  kAuthenticate,  // Authenticate
  kLogin,         // Login
  kSelect,        // Select
  kExamine,       // Select
  kCreate,        // Create
  kDelete,        // MailboxArg
  kRename,        // Rename
  kSubscribe,     // MailboxArg
  kUnsubscribe,   // MailboxArg
  kList,          // List
  kLsub,          // List (one pattern, no options)
  kStatus,        // Status
  kAppend,        // Append
  kCheck,         // NoArgs
  kClose,         // NoArgs
  kExpunge,       // Expunge (UID EXPUNGE carries a set)
  kSearch,        // Search
  kFetch,         // Fetch
  kStore,         // Store
  kCopy,          // Copy
  kMove,          // Copy
  kIdle,          // NoArgs (the DONE line: is_idle_done in parser.h)
  kUnselect,      // NoArgs
  kNamespace,     // NoArgs
  kEnable,        // Enable
  kId,            // Id
  kSort,          // Sort
  kThread,        // Thread
};

// The command's name in upper case ("UID" is not part of it).
std::string_view command_name(CommandId id);

// An extension value this library does not interpret (RFC 4466
// tagged-ext-val): a simple value (number, sequence set, astring, or a
// "\"-flag) or a parenthesised list of them.
struct ExtValue {
  bool is_list = false;
  std::string text;             // !is_list
  std::vector<ExtValue> items;  // is_list

  bool operator==(const ExtValue&) const;
};

// A named parameter with an optional value: SELECT's "(CONDSTORE)",
// "(QRESYNC (1 2))", LIST's "SUBSCRIBED" or "STATUS (MESSAGES)". The name is
// upper-cased.
struct ExtParam {
  std::string name;
  std::optional<ExtValue> value;

  bool operator==(const ExtParam&) const = default;
};

struct NoArgs {
  bool operator==(const NoArgs&) const = default;
};

struct Authenticate {
  std::string mechanism;  // upper-cased: "PLAIN"
  // SASL-IR (RFC 4959): the base64 text as sent; "=" means an empty
  // response. nullopt when the client sent none.
  std::optional<std::string> initial_response;

  bool operator==(const Authenticate&) const = default;
};

struct Login {
  std::string user;
  std::string password;

  bool operator==(const Login&) const = default;
};

struct Select {
  std::string mailbox;
  std::vector<ExtParam> params;  // CONDSTORE, QRESYNC (...)

  bool operator==(const Select&) const = default;
};

struct Create {
  std::string mailbox;
  std::vector<ExtParam> params;  // RFC 6154 "USE (\Drafts)"

  bool operator==(const Create&) const = default;
};

struct MailboxArg {
  std::string mailbox;

  bool operator==(const MailboxArg&) const = default;
};

struct Rename {
  std::string from;
  std::string to;

  bool operator==(const Rename&) const = default;
};

// LIST, and LIST-EXTENDED (RFC 5258) with its options kept generic.
struct List {
  std::vector<ExtParam> selection;  // "(SUBSCRIBED RECURSIVEMATCH)"
  std::string reference;
  std::vector<std::string> patterns;     // one, or several in "(...)"
  std::vector<ExtParam> return_options;  // "RETURN (CHILDREN STATUS (MESSAGES))"
  // The client used an extended form (selection options, a pattern list or
  // RETURN), so the answer follows RFC 5258.
  bool extended = false;

  bool operator==(const List&) const = default;
};

enum class StatusItem : uint8_t {
  kMessages,
  kRecent,
  kUidNext,
  kUidValidity,
  kUnseen,
  kDeleted,        // RFC 9051
  kSize,           // RFC 9051
  kHighestModSeq,  // RFC 7162
};

std::string_view status_item_name(StatusItem item);

struct Status {
  std::string mailbox;
  std::vector<StatusItem> items;

  bool operator==(const Status&) const = default;
};

struct AppendMessage {
  std::vector<std::string> flags;  // canonical system-flag spelling
  std::optional<mime::DateTime> internal_date;
  // The message, pointing into the framed command (so into the reader's
  // buffer): valid only until the reader is next fed or advanced.
  std::string_view data;
  bool binary = false;  // sent as literal8 (RFC 3516)

  bool operator==(const AppendMessage&) const = default;
};

// APPEND, with several messages for MULTIAPPEND (RFC 3502).
struct Append {
  std::string mailbox;
  std::vector<AppendMessage> messages;  // at least one

  bool operator==(const Append&) const = default;
};

struct Expunge {
  std::optional<SequenceSet> uids;  // UID EXPUNGE (RFC 4315)

  bool operator==(const Expunge&) const = default;
};

// ESEARCH result options (RFC 4731, RFC 9051 §6.4.4). "RETURN ()" means
// ALL, so at least one is set whenever the client sent RETURN.
struct SearchReturn {
  bool min = false;
  bool max = false;
  bool all = false;
  bool count = false;
  bool save = false;  // RFC 5182 SEARCHRES

  bool operator==(const SearchReturn&) const = default;
};

struct Search {
  std::optional<SearchReturn> result_options;  // nullopt: a plain "* SEARCH" answer
  std::optional<std::string> charset;          // upper-cased
  SearchKey key;

  bool operator==(const Search&) const = default;
};

struct Fetch {
  SequenceSet set;
  std::vector<FetchItem> items;           // at least one; macros expanded
  std::optional<uint64_t> changed_since;  // RFC 7162 (CHANGEDSINCE n)
  bool vanished = false;                  // RFC 7162 (VANISHED), UID FETCH only

  bool operator==(const Fetch&) const = default;
};

enum class StoreMode : uint8_t { kReplace, kAdd, kRemove };  // FLAGS, +FLAGS, -FLAGS

struct Store {
  SequenceSet set;
  StoreMode mode = StoreMode::kReplace;
  bool silent = false;
  std::vector<std::string> flags;           // may be empty ("FLAGS ()")
  std::optional<uint64_t> unchanged_since;  // RFC 7162 (UNCHANGEDSINCE n)

  bool operator==(const Store&) const = default;
};

struct Copy {
  SequenceSet set;
  std::string mailbox;

  bool operator==(const Copy&) const = default;
};

struct Enable {
  std::vector<std::string> capabilities;  // upper-cased, at least one

  bool operator==(const Enable&) const = default;
};

struct IdField {
  std::string name;
  std::optional<std::string> value;

  bool operator==(const IdField&) const = default;
};

// RFC 2971: "ID NIL" (nullopt) or "ID (name value ...)".
struct Id {
  std::optional<std::vector<IdField>> fields;

  bool operator==(const Id&) const = default;
};

enum class SortKey : uint8_t {
  kArrival,
  kCc,
  kDate,
  kFrom,
  kSize,
  kSubject,
  kTo,
  kDisplayFrom,  // RFC 5957
  kDisplayTo,    // RFC 5957
};

std::string_view sort_key_name(SortKey key);

struct SortCriterion {
  SortKey key = SortKey::kArrival;
  bool reverse = false;

  bool operator==(const SortCriterion&) const = default;
};

// SORT (RFC 5256), with ESORT result options (RFC 5267).
struct Sort {
  std::optional<SearchReturn> result_options;
  std::vector<SortCriterion> criteria;  // at least one
  std::string charset;                  // upper-cased
  SearchKey key;

  bool operator==(const Sort&) const = default;
};

struct Thread {
  std::string algorithm;  // upper-cased: "REFERENCES", "ORDEREDSUBJECT"
  std::string charset;    // upper-cased
  SearchKey key;

  bool operator==(const Thread&) const = default;
};

using CommandArgs =
    std::variant<NoArgs, Authenticate, Login, Select, Create, MailboxArg, Rename, List, Status,
                 Append, Expunge, Search, Fetch, Store, Copy, Enable, Id, Sort, Thread>;

struct Command {
  std::string tag;
  CommandId id = CommandId::kNoop;
  // Sent with the UID prefix (COPY, MOVE, FETCH, STORE, SEARCH, EXPUNGE,
  // SORT, THREAD): sets and results are UIDs.
  bool uid = false;
  CommandArgs args;

  bool operator==(const Command&) const = default;
};

}  // namespace peregrine::imap
