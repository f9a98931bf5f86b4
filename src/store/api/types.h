#pragma once

// The values of the store API: flags, message metadata, mailbox information
// and the arguments and results of UserStore operations (user_store.h).
// Nothing here knows a protocol: IMAP, POP3 and LMTP map these values to
// their own words.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace peregrine::store {

// A message's unique identifier in its mailbox (RFC 3501 §2.3.1.1): strictly
// ascending in order of arrival, never reused while the mailbox's
// UIDVALIDITY stays the same. 0 is never a UID.
using Uid = std::uint32_t;
// A modification sequence (RFC 7162): every change to a mailbox's messages
// gets a value greater than any before it in that mailbox. Starts above 0.
using ModSeq = std::uint64_t;

// System flags as a bitmask. \Recent is not among them: it belongs to a
// session, and UserStore::claim_recent tells which session gets it.
using SystemFlags = std::uint8_t;
inline constexpr SystemFlags kFlagSeen = 1u << 0;
inline constexpr SystemFlags kFlagAnswered = 1u << 1;
inline constexpr SystemFlags kFlagFlagged = 1u << 2;
inline constexpr SystemFlags kFlagDeleted = 1u << 3;
inline constexpr SystemFlags kFlagDraft = 1u << 4;
inline constexpr SystemFlags kAllSystemFlags = 0x1f;

// Keywords ("$Forwarded", "NonJunk"): any printable ASCII without spaces.
// Compared case-insensitively; the first spelling a message got is kept.
inline constexpr std::size_t kMaxKeywordLength = 128;
inline constexpr std::size_t kMaxKeywordsPerMessage = 128;

// The date a message arrived (IMAP INTERNALDATE): seconds since the Unix
// epoch and the time zone it was given in, as minutes east of UTC.
struct InternalDate {
  std::int64_t seconds = 0;
  std::int16_t tz_minutes = 0;

  bool operator==(const InternalDate&) const = default;
};

struct MessageMeta {
  Uid uid = 0;
  ModSeq modseq = 0;
  SystemFlags flags = 0;
  std::vector<std::string> keywords;  // in the order they were added
  InternalDate internal_date;
  std::uint64_t size = 0;  // bytes of the stored message, CRLF line ends

  bool operator==(const MessageMeta&) const = default;
};

// RFC 6154 special uses. A mailbox has at most one here.
enum class SpecialUse : std::uint8_t {
  kNone,
  kAll,
  kArchive,
  kDrafts,
  kFlagged,
  kJunk,
  kSent,
  kTrash,
};

// "none", "all", "archive", "drafts", "flagged", "junk", "sent", "trash".
const char* to_string(SpecialUse use);
// The inverse of to_string; nullopt for any other text.
std::optional<SpecialUse> special_use_from_string(std::string_view text);

// Mailbox names: printable ASCII (the IMAP server passes its wire form,
// modified UTF-7), hierarchy levels separated by kHierarchyDelimiter, no
// empty level. "INBOX" in any case is the user's inbox and is always
// spelled "INBOX" in results.
inline constexpr char kHierarchyDelimiter = '/';
inline constexpr std::string_view kInbox = "INBOX";

struct MailboxInfo {
  std::string name;
  std::uint32_t uidvalidity = 0;
  Uid uidnext = 1;
  ModSeq highest_modseq = 0;
  std::uint32_t messages = 0;
  std::uint32_t unseen = 0;  // messages without kFlagSeen
  std::uint32_t recent = 0;  // messages no session has claimed yet (claim_recent)
  std::uint64_t size = 0;    // sum of the messages' sizes
  SpecialUse special_use = SpecialUse::kNone;
  bool subscribed = false;

  bool operator==(const MailboxInfo&) const = default;
};

// One line of a mailbox listing.
struct MailboxEntry {
  std::string name;
  // False for a name that exists only because mailboxes below it do (IMAP
  // \Noselect): e.g. "A" after "A" was deleted while "A/B" remains.
  bool selectable = true;
  bool has_children = false;
  bool subscribed = false;
  SpecialUse special_use = SpecialUse::kNone;

  bool operator==(const MailboxEntry&) const = default;
};

// A mailbox as it is at one moment: its information and every message's
// metadata in ascending UID order.
struct MailboxSnapshot {
  MailboxInfo info;
  std::vector<MessageMeta> messages;
};

// A message's pure analysis (what an append computes from its bytes alone:
// its parse, cache record and full-text term record), started ahead of the
// append by UserStore::prepare_messages(). Opaque: only the store that made
// it reads it. Destroying it waits for the work still running on it.
class PreparedMessage {
 public:
  virtual ~PreparedMessage() = default;
  // The bytes it was made from; they must outlive it.
  virtual std::string_view source() const = 0;
};

struct AppendMessage {
  std::string_view bytes;  // the whole message; bare LF line ends are stored as CRLF
  SystemFlags flags = 0;
  std::vector<std::string> keywords;
  // When absent, the time of the append in UTC.
  std::optional<InternalDate> internal_date;
  // Optional, not owned: the analysis of `bytes` made ahead by the same
  // store. append() takes its results when it was made from exactly these
  // bytes and ignores it otherwise (computing them itself, as without one).
  PreparedMessage* prepared = nullptr;
};

struct AppendResult {
  std::uint32_t uidvalidity = 0;
  std::vector<Uid> uids;  // in the order of the messages given
};

struct AppendedUid {
  std::uint32_t uidvalidity = 0;
  Uid uid = 0;
};

enum class FlagOp : std::uint8_t {
  kReplace,  // the message's flags and keywords become exactly the given ones
  kAdd,
  kRemove,
};

struct FlagUpdate {
  FlagOp op = FlagOp::kAdd;
  SystemFlags flags = 0;
  std::vector<std::string> keywords;
  // CONDSTORE (RFC 7162 §3.1.3): a message whose MODSEQ is greater than this
  // is left alone and reported in FlagUpdateResult::modified.
  std::optional<ModSeq> unchanged_since;
};

struct FlagUpdateResult {
  // Messages whose flags or keywords changed, with their new metadata, in UID
  // order. A message the update would not change is not here and keeps its
  // MODSEQ. All changed messages share one new MODSEQ.
  std::vector<MessageMeta> changed;
  // UIDs that failed the unchanged_since test, ascending.
  std::vector<Uid> modified;
};

struct UidMapping {
  Uid source = 0;
  Uid dest = 0;

  bool operator==(const UidMapping&) const = default;
};

// The result of copy and move (for UIDPLUS COPYUID): the destination's
// UIDVALIDITY and, in ascending source UID order, where each message went.
// UIDs of the set that name no message are skipped.
struct CopyResult {
  std::uint32_t uidvalidity = 0;
  std::vector<UidMapping> mapping;
};

// A message's cache record: the bytes of mime::serialize(record).
struct CacheEntry {
  Uid uid = 0;
  std::string record;
};

struct ExpungedUid {
  Uid uid = 0;
  ModSeq modseq = 0;

  bool operator==(const ExpungedUid&) const = default;
};

// What changed in a mailbox after a given MODSEQ (CONDSTORE/QRESYNC).
struct ChangeSet {
  ModSeq highest_modseq = 0;
  std::vector<MessageMeta> changed;   // current metadata, UID order
  std::vector<ExpungedUid> expunged;  // UID order
  // False when the store no longer records some expunges after `since` (it
  // keeps the newest ones only): `expunged` lists those it does, and a UID
  // neither there nor current may have been expunged too.
  bool expunged_complete = true;
};

// ---- Full-text search (UserStore::text_candidates) ----

// Which parts of a message's search text a query looks in (a bitmask).
using TextColumns = std::uint8_t;
// The decoded From, To, Cc, Bcc and Subject, one bit each.
inline constexpr TextColumns kTextFrom = 1u << 0;
inline constexpr TextColumns kTextTo = 1u << 1;
inline constexpr TextColumns kTextCc = 1u << 2;
inline constexpr TextColumns kTextBcc = 1u << 3;
inline constexpr TextColumns kTextSubject = 1u << 4;
// Every header field, one "name: value" line each.
inline constexpr TextColumns kTextHeaders = 1u << 5;
// The text of the body parts and attachment names.
inline constexpr TextColumns kTextBody = 1u << 6;

struct TextQuery {
  TextColumns columns = 0;
  // Case-folded UTF-8 strings (mime::fold_case) that must all occur in the
  // columns (each in one of them).
  std::vector<std::string> needles;
};

// The answer of the full-text index to a TextQuery.
struct TextCandidates {
  // Ascending UIDs: a superset of the messages whose columns hold every
  // needle.
  std::vector<Uid> uids;
  // True when `uids` is exactly the messages where some column of the query
  // holds the needle (a query of one needle): nothing needs confirming.
  bool exact = false;
};

// The state of a user's full-text index.
struct SearchIndexStats {
  bool enabled = false;
  std::uint64_t messages = 0;       // messages of the user
  std::uint64_t indexed = 0;        // of them, with their terms in the index
  std::uint64_t index_bytes = 0;    // on disk: the three parts below together
  std::uint64_t records_bytes = 0;  //   the term records (and those awaiting purge)
  std::uint64_t words_bytes = 0;    //   the word index over them
  std::uint64_t terms_bytes = 0;    //   the vocabulary and the trigram index over it
  std::uint64_t mail_bytes = 0;     // the messages' sizes
  std::uint64_t pending_purge = 0;  // deleted records not yet removed from the word index
};

}  // namespace peregrine::store
