#include "imap/server/commands/sort_thread_input.h"

#include <algorithm>
#include <string>

#include "imap/server/commands/fetch_body.h"
#include "imap/server/mailbox_hub.h"
#include "imap/server/search_view.h"
#include "search/search_program.h"

namespace peregrine::imap::commands {
namespace {

// Records read from the store per query: bounds the memory of a SORT over a
// large mailbox to this many serialized records.
constexpr size_t kRecordBatch = 2000;

}  // namespace

std::optional<std::vector<std::uint32_t>> select_messages(CommandContext& ctx, const SearchKey& key,
                                                          std::string_view charset) {
  SelectedView& view = ctx.view();
  if (!search::charset_supported(charset)) {
    const std::string supported[] = {"US-ASCII", "UTF-8"};
    ctx.no(ResponseCode::bad_charset(supported), "unknown charset " + std::string(charset));
    return std::nullopt;
  }
  // "$" reads the result saved before this command, even when it saves anew.
  const std::vector<store::Uid> saved = view.saved_result();
  search::SearchOptions options;
  options.charset = charset;
  options.saved = &saved;
  auto found = search::evaluate(SearchView(view), ctx.store(), key, options);
  if (!found) {
    ctx.fail(found.error(), /*bad_input_is_bad=*/true);
    return std::nullopt;
  }
  return std::move(*found);
}

UncachedKeys for_each_message(CommandContext& ctx, std::span<const std::uint32_t> seqs,
                              const MessageVisitor& visit, bool with_records) {
  SelectedView& view = ctx.view();
  MailboxHub& hub = view.hub();
  SortKeyCache& cache = hub.sort_keys();
  const std::string& mailbox = hub.name();
  size_t cursor = 0;  // seqs ascend, so do their UIDs
  UncachedKeys uncached;
  for (size_t begin = 0; begin < seqs.size(); begin += kRecordBatch) {
    const size_t n = std::min(seqs.size(), begin + kRecordBatch) - begin;
    // The batch's keys: from the hub's cache, else read now.
    std::vector<const store::MessageMeta*> metas(n, nullptr);
    std::vector<const search::MessageKeys*> keys(n, nullptr);
    // The sent dates (RFC 5256 §2.2) of the cached ones, from the cache's
    // table: a sort by date reads no key record.
    std::vector<std::optional<std::int64_t>> sent(n);
    store::UidSet missing;
    for (size_t k = 0; k < n; ++k) {
      metas[k] = view.meta_at(seqs[begin + k]);
      if (metas[k] == nullptr || !with_records) {
        continue;
      }
      std::optional<std::int64_t> date_header;
      keys[k] = cache.find(metas[k]->uid, cursor, date_header);
      if (keys[k] == nullptr) {
        missing.add(metas[k]->uid);
      } else {
        sent[k] = date_header.value_or(metas[k]->internal_date.seconds);
      }
    }
    SortKeyCache::Fresh& fresh = uncached.emplace_back();
    if (!missing.empty()) {
      std::vector<store::CacheEntry> entries;
      if (auto read = ctx.store().cache_records(mailbox, missing)) {
        entries = std::move(*read);
      }
      // Entries come in ascending UID order, as the sequence numbers do.
      size_t next = 0;
      for (size_t k = 0; k < n; ++k) {
        const store::MessageMeta* meta = metas[k];
        if (meta == nullptr || keys[k] != nullptr || !with_records) {
          continue;
        }
        while (next < entries.size() && entries[next].uid < meta->uid) {
          ++next;
        }
        std::string_view stored;
        if (next < entries.size() && entries[next].uid == meta->uid) {
          stored = entries[next].record;
        }
        LazyBody body(ctx.store(), mailbox, meta->uid);
        std::optional<mime::CacheRecord> record = cache_record_of(stored, body);
        if (record) {
          fresh.emplace_back(meta->uid, search::message_keys(std::move(*record)));
        }
      }
      cache.put(fresh);
      size_t f = 0;
      for (size_t k = 0; k < n; ++k) {
        if (metas[k] == nullptr || keys[k] != nullptr || !with_records) {
          continue;
        }
        keys[k] = cache.find(metas[k]->uid, cursor);
        while (f < fresh.size() && fresh[f].first < metas[k]->uid) {
          ++f;
        }
        if (keys[k] == nullptr && f < fresh.size() && fresh[f].first == metas[k]->uid) {
          keys[k] = &fresh[f].second;  // not cached: used once
        }
      }
    }
    for (size_t k = 0; k < n; ++k) {
      if (metas[k] != nullptr) {
        const search::MessageFacts facts{seqs[begin + k], metas[k]->internal_date.seconds,
                                         metas[k]->size, sent[k]};
        visit(facts, keys[k]);
      }
    }
  }
  return uncached;
}

}  // namespace peregrine::imap::commands
