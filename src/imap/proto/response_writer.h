#pragma once

// Typed IMAP responses to bytes (RFC 9051 §7, RFC 3501 §7). Every function
// appends one whole response line, CRLF included, to `out`; the caller owns
// the buffer and writes it to the socket. FETCH responses are built item by
// item with FetchResponse (fetch_response.h).
//
// Text given for humans (the "text" of OK/NO/BAD/BYE) is sanitised: CR, LF
// and NUL become spaces, so a message that quotes client input cannot break
// the line.

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "imap/proto/command.h"
#include "imap/proto/response_code.h"
#include "imap/proto/sequence_set.h"

namespace peregrine::imap {

enum class ResponseStatus : uint8_t { kOk, kNo, kBad, kPreauth, kBye };

// "<tag> OK [CODE] text\r\n".
void write_tagged(std::string& out, std::string_view tag, ResponseStatus status,
                  std::string_view text);
void write_tagged(std::string& out, std::string_view tag, ResponseStatus status,
                  const ResponseCode& code, std::string_view text);
// "* OK [CODE] text\r\n" (also NO, BAD, PREAUTH, BYE).
void write_untagged(std::string& out, ResponseStatus status, std::string_view text);
void write_untagged(std::string& out, ResponseStatus status, const ResponseCode& code,
                    std::string_view text);
// "+ text\r\n": a continuation request (literal data, AUTHENTICATE
// challenges in base64, IDLE). Empty text gives "+ \r\n".
void write_continuation(std::string& out, std::string_view text);

// "* 23 EXISTS", "* 5 RECENT", "* 44 EXPUNGE".
void write_exists(std::string& out, uint32_t count);
void write_recent(std::string& out, uint32_t count);
void write_expunge(std::string& out, uint32_t seq);
// "* VANISHED (EARLIER) 41,43:116" (RFC 7162 QRESYNC).
void write_vanished(std::string& out, const SequenceSet& uids, bool earlier);

// "* FLAGS (\Answered \Flagged ...)".
void write_flags(std::string& out, std::span<const std::string> flags);
// "* CAPABILITY IMAP4rev1 ..." and "* ENABLED ...".
void write_capability(std::string& out, std::span<const std::string> capabilities);
void write_enabled(std::string& out, std::span<const std::string> capabilities);

// One LIST (or LSUB) answer.
struct ListEntry {
  std::vector<std::string> attributes;  // "\HasNoChildren", "\Noselect", "\Sent", ...
  std::optional<char> delimiter;        // nullopt: NIL (flat namespace)
  std::string mailbox;                  // as it goes on the wire (modified UTF-7 or UTF-8)
  // LIST-EXTENDED data (RFC 5258): CHILDINFO ("SUBSCRIBED"), OLDNAME (RFC 9051).
  std::vector<std::string> child_info;
  std::optional<std::string> old_name;
};
// "* LIST (\HasNoChildren) "/" INBOX".
void write_list(std::string& out, const ListEntry& entry);
void write_lsub(std::string& out, const ListEntry& entry);

struct StatusValue {
  StatusItem item = StatusItem::kMessages;
  uint64_t value = 0;
};
// "* STATUS blurdybloop (MESSAGES 231 UIDNEXT 44292)".
void write_status(std::string& out, std::string_view mailbox, std::span<const StatusValue> values);

// "* SEARCH 2 3 6" with "(MODSEQ n)" when given (RFC 7162); "* SEARCH" when
// empty. write_sort is the same for "* SORT".
void write_search(std::string& out, std::span<const uint32_t> numbers,
                  std::optional<uint64_t> modseq = std::nullopt);
void write_sort(std::string& out, std::span<const uint32_t> numbers,
                std::optional<uint64_t> modseq = std::nullopt);

// An ESEARCH answer (RFC 4731, RFC 9051 §7.3.4).
struct ESearchResponse {
  std::string tag;  // the command's tag, for "(TAG "a1")"; empty: none
  bool uid = false;
  std::optional<uint32_t> min;
  std::optional<uint32_t> max;
  std::optional<uint32_t> count;
  std::optional<SequenceSet> all;  // omitted when empty (no match)
  std::optional<uint64_t> modseq;
};
// "* ESEARCH (TAG "a1") UID MIN 2 MAX 9 COUNT 3 ALL 2,5,9".
void write_esearch(std::string& out, const ESearchResponse& response);
// The answer `options` ask for about `numbers`, the matches in the order
// the command gives them: ascending for SEARCH (RFC 4731), sort order for
// SORT (RFC 5267 §4.2). MIN and MAX are the first and last of them; ALL
// lists them in that order, runs of consecutive numbers as ranges.
ESearchResponse esearch_response(std::string_view tag, bool uid, const SearchReturn& options,
                                 std::span<const uint32_t> numbers);

// A THREAD tree (RFC 5256): id 0 is a missing parent (a dummy node).
struct ThreadNode {
  uint32_t id = 0;
  std::vector<ThreadNode> children;
};
// "* THREAD (2)(3 6 (4 23)(44 7 96))". Depth-safe: no recursion.
void write_thread(std::string& out, std::span<const ThreadNode> threads);

// The same threads flat, in pre-order: each node followed by its subtrees,
// with its number of children. (3 6 (4 23)(44 7 96)) is {3,1} {6,2} {4,1}
// {23,0} {44,1} {7,1} {96,0}. Deep threads cost no recursion to build or
// destroy in this form.
struct ThreadListNode {
  uint32_t id = 0;  // 0: a dummy
  uint32_t children = 0;
};
void write_thread(std::string& out, std::span<const ThreadListNode> threads);

struct Namespace {
  std::string prefix;
  std::optional<char> delimiter;
};
// "* NAMESPACE (("" "/")) NIL NIL".
void write_namespace(std::string& out, std::span<const Namespace> personal,
                     std::span<const Namespace> other_users, std::span<const Namespace> shared);

// "* ID NIL" or "* ID ("name" "Peregrine" ...)".
void write_id(std::string& out, const std::optional<std::vector<IdField>>& fields);

}  // namespace peregrine::imap
