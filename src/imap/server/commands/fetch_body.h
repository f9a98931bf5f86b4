#pragma once

// The bytes of FETCH body items, read by range from the message file: only
// the section asked for (and only its partial) is read, located through the
// cache record's PartMap (the whole message needs only the file's size).
// Internal to imap/server.

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "base/result.h"
#include "imap/proto/fetch_item.h"
#include "mime/cache_record.h"
#include "mime/section.h"
#include "store/api/body.h"
#include "store/api/user_store.h"

namespace peregrine::imap {

// One message's bytes, opened on first use.
class LazyBody {
 public:
  LazyBody(store::UserStore& store, const std::string& mailbox, store::Uid uid)
      : store_(store), mailbox_(mailbox), uid_(uid) {}

  // The open body; errors as UserStore::open_body.
  base::Result<const store::Body*> get();

 private:
  store::UserStore& store_;
  const std::string& mailbox_;
  store::Uid uid_;
  std::unique_ptr<store::Body> body_;
};

// The message's cache record from its stored bytes, rebuilt from the
// message file when the store has none (or one this build cannot read);
// nullopt when the file cannot be read either.
std::optional<mime::CacheRecord> cache_record_of(std::string_view stored, LazyBody& body);

// Whether a body item is the whole message (RFC822, BODY[], BINARY[] and
// their PEEK and SIZE forms): it needs no PartMap, and read_section and
// binary_size take an empty one for it.
bool is_whole_message(const FetchItem& item);

struct SectionBytes {
  bool nil = false;          // the part does not exist (`bytes` is empty)
  bool unknown_cte = false;  // BINARY of a part whose encoding we cannot decode
  std::string bytes;         // partial applied; NUL replaced unless BINARY
};

// A body item's data: BODY[section]<partial>, BODY.PEEK, RFC822,
// RFC822.HEADER, RFC822.TEXT, BINARY[part]<partial>, BINARY.PEEK. Outside
// BINARY a NUL byte, which a literal cannot carry, is sent as 0x80 (as
// Dovecot does; it keeps sizes and offsets). Errors: reading the message.
base::Result<SectionBytes> read_section(const FetchItem& item, const mime::PartMap& parts,
                                        LazyBody& body);

struct SectionSize {
  std::uint64_t size = 0;    // decoded bytes; 0 for a part that does not exist
  bool unknown_cte = false;  // the part's encoding cannot be decoded
};

// BINARY.SIZE[part]: the decoded size (reading the part only when it must
// be decoded). Errors: reading the message.
base::Result<SectionSize> binary_size(const FetchItem& item, const mime::PartMap& parts,
                                      LazyBody& body);

}  // namespace peregrine::imap
