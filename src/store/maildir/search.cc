// The full-text index operations of MaildirUserStore (the tables and queries
// are in search_index.cc): candidates for SEARCH, statistics, and the upkeep
// that rebuilds a missing or damaged index.

#include "base/log.h"
#include "mime/case_fold.h"
#include "mime/part.h"
#include "store/maildir/maildir_user_store.h"

namespace peregrine::store::maildir {

using base::MailError;
using base::Result;

namespace {

// Messages indexed per transaction when filling in missing texts.
constexpr std::size_t kFillBatch = 256;

}  // namespace

TermRecord packed_search_text(mime::SearchText text) {
  mime::fold_search_text(text);
  TermRecord record;
  record.terms = index_terms(text);
  record.packed = pack_terms(record.terms);
  return record;
}

TermRecord message_term_record(std::string_view bytes) {
  if (bytes.empty()) {
    return packed_search_text(mime::SearchText());
  }
  const mime::Part root = mime::parse_message(bytes);
  return packed_search_text(mime::build_search_text(bytes, root));
}

Result<std::optional<TextCandidates>> MaildirUserStore::text_candidates(std::string_view mailbox,
                                                                        const TextQuery& query) {
  if (!options_.full_text_index) {
    return std::optional<TextCandidates>();
  }
  auto row = require_mailbox(mailbox);
  if (!row) {
    return std::unexpected(row.error());
  }
  auto found = index_->text_candidates(row->id, query);
  if (found || found.error().code != MailError::kInternal) {
    return found;
  }
  // The word index is damaged: build it again from the term records, and
  // ask once more.
  base::log(base::LogLevel::kWarn, "search_index_rebuild",
            {{"user", user_}, {"reason", found.error().message}});
  {
    auto tx = index_->begin();
    if (!tx) {
      return std::unexpected(tx.error());
    }
    if (auto r = index_->rebuild_search_fts(); !r) {
      return std::unexpected(r.error());
    }
    if (auto r = tx->commit(); !r) {
      return std::unexpected(r.error());
    }
  }
  return index_->text_candidates(row->id, query);
}

Result<SearchIndexStats> MaildirUserStore::search_index_stats() {
  auto stats = index_->search_stats();
  if (stats) {
    stats->enabled = options_.full_text_index;
  }
  return stats;
}

Result<SearchIndexStats> MaildirUserStore::rebuild_search_index() {
  if (auto r = in_transaction(*index_, [&] { return index_->clear_search_index(); }); !r) {
    return std::unexpected(r.error());
  }
  if (auto r = index_missing_texts(); !r) {
    return std::unexpected(r.error());
  }
  // A rebuild leaves no record waiting for its batch.
  if (auto r = in_transaction(*index_, [&] { return index_->index_waiting_docs(); }); !r) {
    return std::unexpected(r.error());
  }
  return search_index_stats();
}

bool MaildirUserStore::index_batch_due() {
  if (!options_.full_text_index) {
    return false;
  }
  auto due = index_->batch_due();
  return !due || *due;
}

void MaildirUserStore::run_due_index_batch() {
  if (!index_batch_due()) {
    return;
  }
  if (options_.upkeep_after_reply) {
    index_->request_batch();
    return;
  }
  // (A count that failed above fails again in the batch, which logs it
  // below.)
  auto done = in_transaction(*index_, [&] {
    return index_->index_waiting_docs(static_cast<std::int64_t>(Index::kWaitingDocs));
  });
  if (!done) {
    base::log(base::LogLevel::kWarn, "search_index_batch_failed",
              {{"user", user_}, {"error", done.error().message}});
  }
}

Result<void> MaildirUserStore::check_search_index() {
  // A batch's worth of records left waiting go into the word index first;
  // fewer stay waiting (queries read them; a later batch takes them), but
  // are read, so that a damaged one calls for the rebuild as a batch that
  // fails on it does. Batched at every open, they gave a store opened for
  // each delivery (`peregrine deliver`, an MTA's LMTP connection a
  // message) a segment of the word index for every message.
  // More than ever wait while the server runs (a new file of the word
  // index: the upgrade to schema 13, or one lost): a rebuild from the
  // records, which fills the vocabulary from the word index, costs less
  // than a batch that large.
  auto waiting = index_->waiting_count();
  if (!waiting) {
    return std::unexpected(waiting.error());
  }
  const bool batched =
      *waiting <= static_cast<std::int64_t>(Index::kMostWaitingDocs) &&
      in_transaction(*index_, [&] {
        return index_->index_waiting_docs(static_cast<std::int64_t>(Index::kWaitingDocs));
      }).has_value();
  auto readable = index_->waiting_docs_readable();
  if (!readable) {
    return std::unexpected(readable.error());
  }
  auto healthy = index_->search_fts_healthy();
  if (!healthy) {
    return std::unexpected(healthy.error());
  }
  if (!batched || !*readable || !*healthy) {
    base::log(base::LogLevel::kWarn, "search_index_rebuild",
              {{"user", user_}, {"reason", "missing or damaged"}});
    const bool rebuilt =
        in_transaction(*index_, [&] { return index_->rebuild_search_fts(); }).has_value();
    if (!rebuilt) {
      // The term records themselves are unreadable: start again from the files.
      auto r = rebuild_search_index();
      return r ? Result<void>() : std::unexpected(r.error());
    }
  }
  return index_missing_texts();
}

Result<void> MaildirUserStore::purge_search_index() {
  std::size_t total = 0;
  for (;;) {
    auto purged = index_->purge_search_fts(Index::kPurgeBatch);
    if (!purged) {
      base::log(base::LogLevel::kWarn, "search_index_rebuild",
                {{"user", user_}, {"reason", purged.error().message}});
      // Dropping the word index clears the pending purges; it is built
      // again from the term records, or emptied when they are unreadable too
      // (the open then indexes the messages again from their files).
      return in_transaction(*index_, [&] {
        auto r = index_->rebuild_search_fts();
        return r ? r : index_->clear_search_index();
      });
    }
    if (*purged == 0) {
      break;
    }
    total += *purged;
  }
  // In a transaction begun after the writer's last commit, so that it sees
  // every record the writer is done with.
  if (auto r = in_transaction(*index_, [&] { return index_->forget_purged(); }); !r) {
    return r;
  }
  if (total > 0) {
    base::log(base::LogLevel::kInfo, "search_index_purged",
              {{"user", user_}, {"texts", static_cast<unsigned long>(total)}});
  }
  return {};
}

Result<void> MaildirUserStore::index_missing_texts() {
  auto mailboxes = index_->all_mailboxes();
  if (!mailboxes) {
    return std::unexpected(mailboxes.error());
  }
  std::size_t total = 0;
  for (;;) {
    auto missing = index_->messages_without_text(kFillBatch);
    if (!missing) {
      return std::unexpected(missing.error());
    }
    if (missing->empty()) {
      break;
    }
    std::vector<std::pair<std::size_t, TermRecord>> texts;  // (index into missing, record)
    for (std::size_t i = 0; i < missing->size(); ++i) {
      const auto& [mailbox_id, m] = (*missing)[i];
      std::string name;
      for (const MailboxRow& b : *mailboxes) {
        if (b.id == mailbox_id) {
          name = b.name;
        }
      }
      std::string bytes;
      if (!name.empty()) {
        auto body = open_body(name, m.meta.uid);
        if (body) {
          bytes = (*body)->read_all().value_or(std::string());
        }
      }
      // A message whose file cannot be read gets an empty text, so it is not
      // tried again at every open; the next sync expunges it if it is gone.
      texts.emplace_back(i, message_term_record(bytes));
    }
    auto tx = index_->begin();
    if (!tx) {
      return std::unexpected(tx.error());
    }
    for (const auto& [i, packed] : texts) {
      const auto& [mailbox_id, m] = (*missing)[i];
      if (auto r = index_->insert_search_text(mailbox_id, m.meta.uid, packed); !r) {
        return r;
      }
    }
    if (auto r = tx->commit(); !r) {
      return r;
    }
    total += missing->size();
  }
  if (total > 0) {
    base::log(base::LogLevel::kInfo, "search_index_filled",
              {{"user", user_}, {"messages", static_cast<unsigned long>(total)}});
  }
  return {};
}

}  // namespace peregrine::store::maildir
