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

void for_each_message(CommandContext& ctx, std::span<const std::uint32_t> seqs,
                      const MessageVisitor& visit, bool with_records) {
  SelectedView& view = ctx.view();
  MailboxHub& hub = view.hub();
  SortKeyCache& keys = hub.sort_keys();
  const std::string& mailbox = hub.name();
  for (size_t begin = 0; begin < seqs.size(); begin += kRecordBatch) {
    const size_t end = std::min(seqs.size(), begin + kRecordBatch);
    // The batch's key records: from the hub's cache, else read now.
    std::vector<const search::MessageKeys*> records(end - begin, nullptr);
    store::UidSet missing;
    for (size_t i = begin; i < end; ++i) {
      const store::MessageMeta* meta = view.meta_at(seqs[i]);
      if (meta == nullptr || !with_records) {
        continue;
      }
      records[i - begin] = keys.find(meta->uid);
      if (records[i - begin] == nullptr) {
        missing.add(meta->uid);
      }
    }
    // Records the cache has no room for live until the batch is visited.
    std::vector<search::MessageKeys> uncached;
    if (!missing.empty()) {
      uncached.reserve(end - begin);  // no reallocation: pointers stay valid
      std::vector<store::CacheEntry> entries;
      if (auto read = ctx.store().cache_records(mailbox, missing)) {
        entries = std::move(*read);
      }
      // Entries come in ascending UID order, as the sequence numbers do.
      size_t next = 0;
      for (size_t i = begin; i < end; ++i) {
        const store::MessageMeta* meta = view.meta_at(seqs[i]);
        if (meta == nullptr || records[i - begin] != nullptr) {
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
        if (!record) {
          continue;
        }
        search::MessageKeys derived = search::message_keys(std::move(*record));
        records[i - begin] = keys.put(meta->uid, std::move(derived));
        if (records[i - begin] == nullptr) {
          uncached.push_back(std::move(derived));
          records[i - begin] = &uncached.back();
        }
      }
    }
    for (size_t i = begin; i < end; ++i) {
      const store::MessageMeta* meta = view.meta_at(seqs[i]);
      if (meta == nullptr) {
        continue;
      }
      const search::MessageFacts facts{seqs[i], meta->internal_date.seconds, meta->size};
      visit(facts, records[i - begin]);
    }
  }
}

}  // namespace peregrine::imap::commands
