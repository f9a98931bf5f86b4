// STORE and UID STORE: FLAGS, +FLAGS, -FLAGS, .SILENT, keywords.

#include <set>

#include "imap/proto/fetch_response.h"
#include "imap/server/commands/commands.h"
#include "imap/server/flag_names.h"
#include "imap/server/mailbox_hub.h"

namespace peregrine::imap::commands {
namespace {

store::FlagOp flag_op(StoreMode mode) {
  switch (mode) {
    case StoreMode::kReplace:
      return store::FlagOp::kReplace;
    case StoreMode::kAdd:
      return store::FlagOp::kAdd;
    case StoreMode::kRemove:
      return store::FlagOp::kRemove;
  }
  return store::FlagOp::kAdd;
}

}  // namespace

void store(CommandContext& ctx) {
  const auto& args = std::get<Store>(ctx.command.args);
  SelectedView& view = ctx.view();
  auto seqs = view.resolve(args.set, ctx.command.uid);
  if (!seqs) {
    return ctx.bad(seqs.error().message);
  }
  auto flags = parse_flags(args.flags);
  if (!flags) {
    return ctx.bad(flags.error().message);
  }
  store::FlagUpdate update;
  update.op = flag_op(args.mode);
  update.flags = flags->flags;  // \Recent cannot be changed by a client; it is ignored
  update.keywords = std::move(flags->keywords);
  update.unchanged_since = args.unchanged_since;

  store::UidSet uids;
  std::set<store::Uid> pending_before;  // changes the client has yet to hear of
  bool some_expunged = false;
  for (std::uint32_t seq : *seqs) {
    if (view.meta_at(seq) == nullptr) {
      some_expunged = true;
      continue;
    }
    store::Uid uid = view.uid_at(seq);
    uids.add(uid);
    if (view.flags_pending(uid)) {
      pending_before.insert(uid);
    }
  }
  store::FlagUpdateResult result;
  if (!uids.empty()) {
    auto updated = ctx.store().update_flags(view.hub().name(), uids, update);
    if (!updated) {
      return ctx.fail(updated.error());
    }
    result = std::move(*updated);
  }
  std::set<store::Uid> modified(result.modified.begin(), result.modified.end());
  if (!args.silent) {
    // The new flags of every message of the set (RFC 3501 §6.4.6).
    for (std::uint32_t seq : *seqs) {
      const store::MessageMeta* meta = view.meta_at(seq);
      if (meta == nullptr || modified.contains(meta->uid)) {
        continue;
      }
      FetchResponse r(ctx.out, seq);
      if (ctx.command.uid) {
        r.uid(meta->uid);
      }
      r.flags(message_flags(*meta, view.is_recent(meta->uid)));
      r.finish();
      view.flags_told(meta->uid);
    }
  } else {
    // .SILENT: the client knows what it set; changes others made before
    // still go out with the pending updates.
    for (const store::MessageMeta& m : result.changed) {
      if (!pending_before.contains(m.uid)) {
        view.flags_told(m.uid);
      }
    }
  }
  if (!result.modified.empty()) {
    std::vector<std::uint32_t> numbers;
    for (store::Uid uid : result.modified) {
      if (ctx.command.uid) {
        numbers.push_back(uid);
      } else if (auto seq = view.seq_of(uid)) {
        numbers.push_back(*seq);
      }
    }
    std::sort(numbers.begin(), numbers.end());
    return ctx.ok(ResponseCode::modified(SequenceSet::from_sorted(numbers)),
                  "Conditional store failed for some messages");
  }
  if (some_expunged && !ctx.command.uid) {
    return ctx.no(Code::kExpungeIssued, "Some of the messages were expunged");
  }
  ctx.ok("Store completed");
}

}  // namespace peregrine::imap::commands
