// FETCH and UID FETCH: every RFC 3501 item, BINARY and BINARY.SIZE (RFC
// 3516) and MODSEQ. Metadata comes from the hub, ENVELOPE and BODYSTRUCTURE
// from the cache record, body sections from the message file by range.
// Output goes out in pieces of about kChunkBytes (ResumableCommand).

#include <map>
#include <set>

#include "imap/proto/fetch_response.h"
#include "imap/server/commands/commands.h"
#include "imap/server/commands/fetch_body.h"
#include "imap/server/flag_names.h"
#include "imap/server/mailbox_hub.h"
#include "mime/cache_record.h"

namespace peregrine::imap::commands {
namespace {

constexpr size_t kChunkBytes = 256 * 1024;
constexpr size_t kBatchMessages = 64;

bool is_body_item(FetchAttr a) {
  return a == FetchAttr::kRfc822 || a == FetchAttr::kRfc822Header || a == FetchAttr::kRfc822Text ||
         a == FetchAttr::kBodySection || a == FetchAttr::kBinary || a == FetchAttr::kBinarySize;
}

// Whether the item needs the message's cache record: its ENVELOPE or
// BODYSTRUCTURE, or the PartMap that locates a section. The whole message
// (BODY[], RFC822) is read from the file alone, without the record's read
// and parse.
bool needs_record(const FetchItem& item) {
  if (is_body_item(item.attr)) {
    return !is_whole_message(item);
  }
  return item.attr == FetchAttr::kEnvelope || item.attr == FetchAttr::kBody ||
         item.attr == FetchAttr::kBodyStructure;
}

// Whether fetching the item sets \Seen (RFC 3501 §6.4.5).
bool sets_seen(const FetchItem& item) {
  switch (item.attr) {
    case FetchAttr::kRfc822:
    case FetchAttr::kRfc822Text:
      return true;
    case FetchAttr::kBodySection:
    case FetchAttr::kBinary:
      return !item.peek;
    default:
      return false;
  }
}

class FetchJob final : public ResumableCommand {
 public:
  FetchJob(std::vector<std::uint32_t> seqs, std::vector<FetchItem> items, bool uid_command)
      : seqs_(std::move(seqs)), items_(std::move(items)), uid_command_(uid_command) {
    for (const FetchItem& item : items_) {
      needs_record_ = needs_record_ || needs_record(item);
      sets_seen_ = sets_seen_ || sets_seen(item);
    }
  }

  bool resume(CommandContext& ctx) override {
    while (next_ < seqs_.size()) {
      size_t end = std::min(seqs_.size(), next_ + kBatchMessages);
      next_ = run_batch(ctx, next_, end);
      if (ctx.out.size() >= kChunkBytes && next_ < seqs_.size()) {
        return false;
      }
    }
    if (unknown_cte_) {
      ctx.no(Code::kUnknownCte, "Cannot decode the content transfer encoding of a part");
    } else if (read_failed_) {
      ctx.no("Some messages could not be read");
    } else if (expunged_ && !uid_command_) {
      ctx.no(Code::kExpungeIssued, "Some of the requested messages no longer exist");
    } else {
      ctx.ok("Fetch completed");
    }
    return true;
  }

 private:
  // Writes messages begin.. up to end, stopping early once a piece is full;
  // returns where it stopped.
  size_t run_batch(CommandContext& ctx, size_t begin, size_t end) {
    SelectedView& view = ctx.view();
    const std::string& mailbox = view.hub().name();
    store::UidSet uids;
    for (size_t i = begin; i < end; ++i) {
      if (view.meta_at(seqs_[i]) != nullptr) {
        uids.add(view.uid_at(seqs_[i]));
      }
    }
    if (sets_seen_ && !view.read_only() && !uids.empty()) {
      store::UidSet unseen;
      for (size_t i = begin; i < end; ++i) {
        const store::MessageMeta* m = view.meta_at(seqs_[i]);
        if (m != nullptr && (m->flags & store::kFlagSeen) == 0) {
          unseen.add(m->uid);
        }
      }
      if (!unseen.empty()) {
        store::FlagUpdate update{store::FlagOp::kAdd, store::kFlagSeen, {}, std::nullopt};
        auto changed = ctx.store().update_flags(mailbox, unseen, update);
        if (changed) {
          for (const store::MessageMeta& m : changed->changed) {
            seen_now_.insert(m.uid);
          }
        }
      }
    }
    std::map<store::Uid, std::string> records;
    if (needs_record_ && !uids.empty()) {
      auto entries = ctx.store().cache_records(mailbox, uids);
      if (entries) {
        for (store::CacheEntry& e : *entries) {
          records.emplace(e.uid, std::move(e.record));
        }
      }
    }
    for (size_t i = begin; i < end; ++i) {
      std::uint32_t seq = seqs_[i];
      const store::MessageMeta* meta = view.meta_at(seq);
      if (meta == nullptr) {
        expunged_ = true;
        continue;
      }
      auto it = records.find(meta->uid);
      write_message(ctx, seq, *meta, it == records.end() ? std::string_view() : it->second,
                    seen_now_.erase(meta->uid) > 0);
      if (ctx.out.size() >= kChunkBytes) {
        return i + 1;
      }
    }
    return end;
  }

  void write_message(CommandContext& ctx, std::uint32_t seq, const store::MessageMeta& meta,
                     std::string_view stored_record, bool seen_now) {
    SelectedView& view = ctx.view();
    LazyBody body(ctx.store(), view.hub().name(), meta.uid);
    std::optional<mime::CacheRecord> record;
    if (needs_record_) {
      record = cache_record_of(stored_record, body);
      if (!record) {
        read_failed_ = true;
        return;
      }
    }
    // Built aside, so a message that fails half-way leaves no partial line.
    std::string line;
    FetchResponse r(line, seq);
    bool uid_written = uid_command_;
    if (uid_command_) {
      r.uid(meta.uid);
    }
    bool flags_written = false;
    static const mime::PartMap kNoParts;  // the whole message needs none
    const mime::PartMap& parts = record ? record->parts : kNoParts;
    for (const FetchItem& item : items_) {
      switch (item.attr) {
        case FetchAttr::kUid:
          if (!uid_written) {
            r.uid(meta.uid);
            uid_written = true;
          }
          break;
        case FetchAttr::kFlags:
          if (!flags_written) {
            r.flags(message_flags(meta, view.is_recent(meta.uid)));
            flags_written = true;
          }
          break;
        case FetchAttr::kInternalDate:
          r.internal_date(
              mime::DateTime{meta.internal_date.seconds, meta.internal_date.tz_minutes});
          break;
        case FetchAttr::kRfc822Size:
          r.rfc822_size(meta.size);
          break;
        case FetchAttr::kModSeq:
          r.modseq(meta.modseq);
          break;
        case FetchAttr::kEnvelope:
          r.raw("ENVELOPE", record->envelope);
          break;
        case FetchAttr::kBody:
          r.raw("BODY", record->body);
          break;
        case FetchAttr::kBodyStructure:
          r.raw("BODYSTRUCTURE", record->bodystructure);
          break;
        case FetchAttr::kBinarySize: {
          auto size = binary_size(item, parts, body);
          if (!size) {
            read_failed_ = true;
            return;
          }
          if (size->unknown_cte) {
            unknown_cte_ = true;
            return;
          }
          r.binary_size(item, size->size);
          break;
        }
        default: {
          auto data = read_section(item, parts, body);
          if (!data) {
            read_failed_ = true;
            return;
          }
          if (data->unknown_cte) {
            unknown_cte_ = true;
            return;
          }
          // A part that does not exist reads as empty, as in Dovecot (RFC
          // 3501 leaves it open; NIL upsets some clients).
          r.section(item, data->bytes);
          break;
        }
      }
    }
    if (seen_now && !flags_written) {
      // The fetch set \Seen: the client hears of it here (RFC 3501 §6.4.5).
      r.flags(message_flags(meta, view.is_recent(meta.uid)));
      flags_written = true;
    }
    r.finish();
    if (flags_written) {
      view.flags_told(meta.uid);
    }
    ctx.out += line;
  }

  std::vector<std::uint32_t> seqs_;
  std::vector<FetchItem> items_;
  bool uid_command_;
  bool needs_record_ = false;
  bool sets_seen_ = false;
  size_t next_ = 0;
  std::set<store::Uid> seen_now_;  // \Seen set by this FETCH, FLAGS not sent yet
  bool expunged_ = false;
  bool read_failed_ = false;
  bool unknown_cte_ = false;
};

}  // namespace

void fetch(CommandContext& ctx) {
  const auto& args = std::get<Fetch>(ctx.command.args);
  if (args.changed_since || args.vanished) {
    return ctx.bad("CHANGEDSINCE and VANISHED need CONDSTORE, which is not offered");
  }
  auto seqs = ctx.view().resolve(args.set, ctx.command.uid);
  if (!seqs) {
    return ctx.bad(seqs.error().message);
  }
  auto job = std::make_unique<FetchJob>(std::move(*seqs), args.items, ctx.command.uid);
  if (!job->resume(ctx)) {
    ctx.resume = std::move(job);
  }
}

}  // namespace peregrine::imap::commands
