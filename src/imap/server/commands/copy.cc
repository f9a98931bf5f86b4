// COPY and MOVE (RFC 6851), and their UID forms, with COPYUID (RFC 4315).

#include "imap/proto/response_writer.h"
#include "imap/server/commands/commands.h"
#include "imap/server/mailbox_hub.h"

namespace peregrine::imap::commands {

void copy(CommandContext& ctx) {
  const auto& args = std::get<Copy>(ctx.command.args);
  bool move = ctx.command.id == CommandId::kMove;
  SelectedView& view = ctx.view();
  auto seqs = view.resolve(args.set, ctx.command.uid);
  if (!seqs) {
    return ctx.bad(seqs.error().message);
  }
  store::UidSet uids;
  for (std::uint32_t seq : *seqs) {
    if (view.meta_at(seq) == nullptr) {
      if (!ctx.command.uid) {
        // A message the client still numbers is gone: copying the rest
        // would not be what was asked (RFC 3501 §6.4.7: all or nothing).
        return ctx.no(Code::kExpungeIssued, "Some of the messages were expunged");
      }
      continue;
    }
    uids.add(view.uid_at(seq));
  }
  std::string_view done = move ? "Move completed" : "Copy completed";
  if (uids.empty()) {
    return ctx.ok(done);
  }
  const std::string& source = view.hub().name();
  auto result = move ? ctx.store().move(source, uids, args.mailbox)
                     : ctx.store().copy(source, uids, args.mailbox);
  if (!result) {
    return ctx.fail_target(result.error());
  }
  if (result->mapping.empty()) {
    return ctx.ok(done);
  }
  std::vector<std::uint32_t> source_uids;
  std::vector<std::uint32_t> dest_uids;
  for (const store::UidMapping& m : result->mapping) {
    source_uids.push_back(m.source);
    dest_uids.push_back(m.dest);
  }
  // Both lists ascend: the store hands out destination UIDs in source order.
  ResponseCode code =
      ResponseCode::copy_uid(result->uidvalidity, SequenceSet::from_sorted(source_uids),
                             SequenceSet::from_sorted(dest_uids));
  if (move) {
    // RFC 6851 §4.3: COPYUID goes in an untagged OK before the EXPUNGEs
    // (which the view writes when the command ends).
    write_untagged(ctx.out, ResponseStatus::kOk, code, "Moved UIDs");
    return ctx.ok(done);
  }
  ctx.ok(code, done);
}

}  // namespace peregrine::imap::commands
