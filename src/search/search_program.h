#pragma once

// Evaluates an IMAP SEARCH key tree (imap/proto/search_key.h) over the
// messages of one mailbox as a client numbers them: the entry point for
// SEARCH, and for SORT and THREAD to pick the messages they order.
//
// Set at a time, not message at a time: each key narrows the set of
// messages still in question, cheap keys first (flags, UIDs, sizes and
// internal dates from the metadata in memory; the Date header from the
// cache records), and text keys ask the store's full-text index for
// candidates, then confirm each one exactly on the message's folded search
// text (substring, case-insensitive by Unicode case folding, RFC 9051
// §6.4.4). Without the index (switched off, or a string shorter than three
// characters) every message still in question is checked.
//
// Thread safety: none; runs on the user's strand (it calls the UserStore).

#include <cstdint>
#include <ctime>
#include <optional>
#include <string_view>
#include <vector>

#include "base/result.h"
#include "imap/proto/search_key.h"
#include "store/api/types.h"
#include "store/api/user_store.h"

namespace peregrine::search {

// The messages a search runs over, in the client's numbering.
class MessageView {
 public:
  virtual ~MessageView() = default;
  virtual std::string_view mailbox() const = 0;
  // Messages numbered 1..count(), ascending UIDs.
  virtual std::uint32_t count() const = 0;
  virtual store::Uid uid_at(std::uint32_t seq) const = 0;
  // nullptr for a message expunged but not yet announced: it never matches.
  virtual const store::MessageMeta* meta_at(std::uint32_t seq) const = 0;
  virtual bool is_recent(store::Uid uid) const = 0;
  // uid_at(seq) into uids[seq] and whether meta_at(seq) is not null into
  // present[seq], for seq 1..count() (both hold count() + 1 elements): what
  // every search reads of every message first, which a view may give faster
  // than a call per message.
  virtual void fill(std::vector<store::Uid>& uids, std::vector<char>& present) const;
  // meta_at(seq)->flags, or nullopt where meta_at(seq) is null: what the
  // flag keys (SEEN, UNSEEN, ...) read of every message, which a view may
  // keep more compactly than the whole metadata.
  virtual std::optional<store::SystemFlags> flags_at(std::uint32_t seq) const;
};

struct SearchOptions {
  // The SEARCH CHARSET: empty, "UTF-8", "US-ASCII" (any case), or another
  // charset the MIME engine converts (mime::is_known_charset).
  std::string_view charset;
  // "Now" for OLDER and YOUNGER (RFC 5032).
  std::int64_t now = std::time(nullptr);
  // The UIDs "$" stands for (RFC 5182), ascending; null or empty: none.
  const std::vector<store::Uid>* saved = nullptr;
};

// Whether `charset` is one a search accepts (see SearchOptions::charset).
bool charset_supported(std::string_view charset);

// The sequence numbers of the messages matching `key`, ascending.
// Errors: kBadInput for a charset charset_supported refuses; store errors
// (kTemporary, kInternal) as the store gives them.
base::Result<std::vector<std::uint32_t>> evaluate(const MessageView& view, store::UserStore& store,
                                                  const imap::SearchKey& key,
                                                  const SearchOptions& options);

}  // namespace peregrine::search
