// APPEND, with flags, internal date and several messages (MULTIAPPEND,
// RFC 3502); the result carries APPENDUID (RFC 4315). A pipelined APPEND
// comes with its messages already analysed (the IMAP driver framed it
// while the command before it ran and started the store's
// prepare_messages() on it); the store takes that work instead of doing it
// on the strand. The order of commands and replies does not change.

#include "imap/proto/response_writer.h"
#include "imap/server/commands/commands.h"
#include "imap/server/flag_names.h"

namespace peregrine::imap::commands {

void append(CommandContext& ctx) {
  const auto& args = std::get<Append>(ctx.command.args);
  std::vector<store::AppendMessage> messages;
  messages.reserve(args.messages.size());
  for (const AppendMessage& m : args.messages) {
    auto flags = parse_flags(m.flags);
    if (!flags) {
      return ctx.bad(flags.error().message);
    }
    store::AppendMessage out;
    out.bytes = m.data;
    out.prepared = ctx.prepared_for(m.data);  // analysed while the command before ran
    out.flags = flags->flags;                 // \Recent, if given, is not the client's to set
    out.keywords = std::move(flags->keywords);
    if (m.internal_date) {
      out.internal_date =
          store::InternalDate{m.internal_date->utc_seconds,
                              static_cast<std::int16_t>(m.internal_date->tz_offset_minutes)};
    }
    messages.push_back(std::move(out));
  }
  if (messages.empty()) {
    return ctx.bad("APPEND: no message");
  }
  auto appended = ctx.store().append(args.mailbox, messages);
  if (!appended) {
    return ctx.fail_target(appended.error());
  }
  // The selected mailbox's view hears of the new messages from its hub; its
  // EXISTS goes out before the tagged line.
  SequenceSet uids = SequenceSet::from_sorted(appended->uids);
  ctx.ok(ResponseCode::append_uid(appended->uidvalidity, uids), "Append completed");
}

}  // namespace peregrine::imap::commands
