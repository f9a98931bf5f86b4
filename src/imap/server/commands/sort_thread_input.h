#pragma once

// What SEARCH, SORT and THREAD start from: the messages their search key selects,
// and each one's facts and cache record. Internal to imap/server.

#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

#include "imap/server/command_context.h"
#include "imap/server/sort_key_cache.h"
#include "mime/cache_record.h"
#include "search/message_keys.h"

namespace peregrine::imap::commands {

// The sequence numbers of the messages `key` matches, ascending; ghosts
// (expunged, not yet told) are left out. On a bad key or charset, sets the
// tagged answer (BAD, or NO [BADCHARSET]) and returns nullopt.
//
// The one place SEARCH, SORT and THREAD evaluate a search key.
std::optional<std::vector<std::uint32_t>> select_messages(CommandContext& ctx, const SearchKey& key,
                                                          std::string_view charset);

using MessageVisitor =
    std::function<void(const search::MessageFacts&, const search::MessageKeys* keys)>;

// Calls `visit` for each of `seqs` (ascending, no ghosts) in order, with its
// keys (its cache record without the FETCH parts, and the compared strings
// derived from it): from the mailbox
// hub's SortKeyCache, else read from the store in batches and kept there
// (a message whose record is missing or unreadable is parsed from its file
// once); `keys` is null only when even that fails, or when
// `with_records` is false (then nothing is read at all).
//
// The keys stay alive and unchanged while the returned holder lives: the
// hub's cache has most; the holder has those past the cache's byte bound.
using UncachedKeys = std::vector<SortKeyCache::Fresh>;
[[nodiscard]] UncachedKeys for_each_message(CommandContext& ctx,
                                            std::span<const std::uint32_t> seqs,
                                            const MessageVisitor& visit, bool with_records = true);

}  // namespace peregrine::imap::commands
