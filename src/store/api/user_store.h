#pragma once

// The store API: what the protocols ask of a user's mail. A Store opens a
// UserStore per user; a UserStore does every mailbox and message operation,
// synchronously, each one atomic: it either happens whole and is durable
// when the call returns success, or it does not happen and the call returns
// an error.
//
// Errors (base::MailError) every operation may return, besides those listed
// at each function:
//   kNotFound   the named mailbox does not exist (or is only a \Noselect name)
//   kBadInput   an invalid mailbox name, keyword or argument
//   kTemporary  an I/O or database error; nothing was changed
//   kInternal   the index is corrupt or disagrees with itself

#include <filesystem>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.h"
#include "store/api/body.h"
#include "store/api/listener.h"
#include "store/api/types.h"
#include "store/api/uid_set.h"

namespace peregrine::store {

// One user's mailboxes and messages.
//
// Thread safety
// -------------
// None. A UserStore must be used by one thread at a time: the server keeps
// one UserStore per user and runs all of that user's calls on one strand.
// Listeners are called on that strand too. Body objects it returns are
// independent of it (body.h). Only one UserStore per user may be open in a
// process at a time; changes made through another process are seen after
// sync(), like any other program's changes, but are not published to this
// one's listeners until then.
// Opens message bodies without the UserStore (UserStore::body_source).
// Thread safety: open() may be called from any thread, by several at once.
class BodySource {
 public:
  virtual ~BodySource() = default;
  // Message `uid`'s body. kNotFound when the source does not know the UID,
  // or the message's file is no longer where it was (a flag change renamed
  // it, it was moved or removed): the caller then asks the store
  // (open_body(), on the user's strand), which knows where it went.
  virtual base::Result<std::unique_ptr<Body>> open(Uid uid) const = 0;
};

class UserStore {
 public:
  virtual ~UserStore() = default;

  virtual const std::string& user() const = 0;

  // ---- Mailboxes ----

  // Every mailbox, sorted by name, plus the names that exist only as parents
  // of others (selectable = false). INBOX is always there.
  virtual base::Result<std::vector<MailboxEntry>> list_mailboxes() = 0;
  // The subscribed names, sorted, whether or not the mailboxes exist (RFC
  // 3501 LSUB keeps names the user subscribed to, even if since deleted).
  virtual base::Result<std::vector<std::string>> list_subscriptions() = 0;

  // Creates a mailbox; a trailing delimiter is ignored ("A/" creates "A").
  // Parents are not created: they list as \Noselect names until created.
  // kExists if it exists (INBOX always does).
  virtual base::Result<void> create_mailbox(std::string_view name, SpecialUse use) = 0;
  base::Result<void> create_mailbox(std::string_view name) {
    return create_mailbox(name, SpecialUse::kNone);
  }

  // Deletes a mailbox and its messages. Its children stay; the name then
  // lists as \Noselect while they exist. Subscriptions are kept.
  // kNoPermission for INBOX.
  virtual base::Result<void> delete_mailbox(std::string_view name) = 0;

  // Renames a mailbox and every mailbox below it ("A" -> "B" takes "A/x" to
  // "B/x"); their UIDVALIDITY, UIDs and flags stay, and so do watches.
  // Subscriptions of the renamed names move with them.
  // Renaming INBOX (RFC 3501 §6.3.5) creates `to`, moves every INBOX message
  // into it, and leaves INBOX empty (its listeners hear the messages
  // expunged); mailboxes below INBOX are not moved.
  // kExists if `to` exists; kBadInput if `to` is below `from`.
  virtual base::Result<void> rename_mailbox(std::string_view from, std::string_view to) = 0;

  // Adds or removes a name from the subscriptions. Subscribing to a name that
  // does not exist is allowed. unsubscribe: kNotFound if not subscribed.
  virtual base::Result<void> subscribe(std::string_view name) = 0;
  virtual base::Result<void> unsubscribe(std::string_view name) = 0;

  virtual base::Result<MailboxInfo> status(std::string_view mailbox) = 0;

  // The mailbox's information and all its messages' metadata, as of now.
  // Call sync_mailbox() first to fold in changes other programs made.
  virtual base::Result<MailboxSnapshot> open_mailbox(std::string_view mailbox) = 0;

  // UIDs of the messages no session has claimed yet, ascending, which are
  // now claimed: each message is \Recent in exactly one session, the first
  // to claim after its arrival.
  virtual base::Result<std::vector<Uid>> claim_recent(std::string_view mailbox) = 0;

  // Watches a mailbox (listener.h). `listener` must outlive the Watch.
  virtual base::Result<Watch> watch(std::string_view mailbox, MailboxListener& listener) = 0;

  // ---- Messages ----

  // Appends the messages in one transaction (MULTIAPPEND): all get UIDs, in
  // order, or none is stored. kTooBig for a message over the backend's size
  // limit; kBadInput for an empty message.
  virtual base::Result<AppendResult> append(std::string_view mailbox,
                                            std::span<const AppendMessage> messages) = 0;
  base::Result<AppendedUid> append(std::string_view mailbox, const AppendMessage& message);

  // Starts the pure work of appending each of `messages` (the bytes of one
  // message each) on other threads, in order, so that a later append() of
  // exactly those bytes (AppendMessage::prepared) finds it done: a client
  // that pipelines APPENDs has the next one analysed while the current one
  // commits. One handle per message, or none at all (empty: the backend
  // prepares nothing; the default). The bytes must outlive their handle.
  // Thread safety: unlike every other call, may run on any thread, at the
  // same time as the store's other calls: it reads only what does not
  // change while the store is open.
  virtual std::vector<std::unique_ptr<PreparedMessage>> prepare_messages(
      std::span<const std::string_view> messages) const {
    (void)messages;
    return {};
  }

  // Changes the flags and keywords of the messages in `uids` (UIDs that name
  // no message are skipped). Changed messages get one new MODSEQ.
  virtual base::Result<FlagUpdateResult> update_flags(std::string_view mailbox, const UidSet& uids,
                                                      const FlagUpdate& update) = 0;

  // Removes the messages that have kFlagDeleted and are in `uids`; returns
  // their UIDs, ascending.
  virtual base::Result<std::vector<Uid>> expunge(std::string_view mailbox, const UidSet& uids) = 0;
  // Removes the messages in `uids` whatever their flags (POP3's UPDATE
  // state: the session's own marks decide, and an unfinished QUIT leaves no
  // \Deleted behind); returns their UIDs, ascending.
  virtual base::Result<std::vector<Uid>> remove_messages(std::string_view mailbox,
                                                         const UidSet& uids) = 0;
  base::Result<std::vector<Uid>> expunge(std::string_view mailbox) {
    return expunge(mailbox, UidSet::all());
  }

  // Copies the messages in `uids` to `dest` with their flags, keywords and
  // internal dates; they get new UIDs there, in ascending source order.
  virtual base::Result<CopyResult> copy(std::string_view source, const UidSet& uids,
                                        std::string_view dest) = 0;
  // Like copy, then expunges them from `source`, in one transaction (RFC
  // 6851). kBadInput when source and dest are the same mailbox.
  virtual base::Result<CopyResult> move(std::string_view source, const UidSet& uids,
                                        std::string_view dest) = 0;

  // The message's bytes. kExpunged if the message no longer exists (or its
  // file was removed by another program); kNotFound for a UID never given.
  virtual base::Result<std::unique_ptr<Body>> open_body(std::string_view mailbox, Uid uid) = 0;

  // Opens bodies of `mailbox`'s messages as they were at this call, on any
  // thread and without this store: for a reader that keeps its own
  // snapshot of the mailbox (POP3's maildrop), so reading a message needs
  // no hop to the user's strand. Null when the backend has none; then
  // open_body() is the way. The default has none.
  virtual base::Result<std::shared_ptr<const BodySource>> body_source(std::string_view mailbox) {
    (void)mailbox;
    return std::shared_ptr<const BodySource>();
  }

  // The cache records of the messages in `uids`, ascending UIDs; UIDs that
  // name no message are skipped.
  virtual base::Result<std::vector<CacheEntry>> cache_records(std::string_view mailbox,
                                                              const UidSet& uids) = 0;

  // What changed after `since`: messages whose MODSEQ is greater and
  // messages expunged with a greater MODSEQ (as many as the store still
  // records: ChangeSet::expunged_complete).
  virtual base::Result<ChangeSet> changes_since(std::string_view mailbox, ModSeq since) = 0;

  // ---- Full-text index ----

  // The messages of `mailbox` whose search text holds every needle of
  // `query` in one of its columns: a superset the caller confirms, or the
  // exact set when the answer says so (TextCandidates::exact). nullopt when
  // the index cannot narrow the search (switched off, or needles too short
  // for it): then every message is a candidate. An index found corrupt is
  // rebuilt before answering.
  virtual base::Result<std::optional<TextCandidates>> text_candidates(std::string_view mailbox,
                                                                      const TextQuery& query) = 0;
  virtual base::Result<SearchIndexStats> search_index_stats() = 0;
  // Drops the full-text index and builds it again from the message files.
  virtual base::Result<SearchIndexStats> rebuild_search_index() = 0;
  // Work a change left for later to keep its reply's path short (the
  // full-text index's batch). The server runs it on the user's strand after
  // replying; it is cheap when nothing is due, and losing it (a crash, a
  // failure, which the store logs) only leaves it due.
  virtual void upkeep() {}
  // Whether upkeep() has anything to do now. Called on the user's strand
  // (where a change has just run): a server that asks may skip posting
  // upkeep when it has not, a post being a thread's wake-up. A store that
  // cannot tell says true.
  virtual bool upkeep_due() { return true; }

  // Folds in changes other programs made to the user's mail (new files,
  // flags changed by renaming, files removed, folders created or removed)
  // and publishes them to listeners. Cheap when nothing changed.
  virtual base::Result<void> sync() = 0;
  // The same for one mailbox only.
  virtual base::Result<void> sync_mailbox(std::string_view mailbox) = 0;
};

// Opens users' stores. Thread-safe: open_user may be called from any thread.
class Store {
 public:
  virtual ~Store() = default;

  // Opens the store of `user`, creating it on first use (with INBOX and the
  // special-use mailboxes of the backend's defaults). `home`, when not
  // empty, is where the user's mail lives instead of the backend's default
  // place. kBadInput for a user name that cannot name a directory
  // (empty, "/", NUL, "." or ".."); kTemporary when the files or the index
  // cannot be opened; kInternal when the index is of a newer format.
  virtual base::Result<std::unique_ptr<UserStore>> open_user(std::string_view user,
                                                             const std::filesystem::path& home) = 0;
  base::Result<std::unique_ptr<UserStore>> open_user(std::string_view user) {
    return open_user(user, {});
  }
};

}  // namespace peregrine::store
