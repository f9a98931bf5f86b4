// SELECT, EXAMINE, CLOSE, UNSELECT, CHECK, EXPUNGE and UID EXPUNGE.

#include <algorithm>

#include "base/log.h"
#include "imap/proto/response_writer.h"
#include "imap/server/commands/commands.h"
#include "imap/server/flag_names.h"
#include "imap/server/mailbox_hub.h"

namespace peregrine::imap::commands {
namespace {

// The UIDs that are \Recent for a session that EXAMINEs the mailbox: the
// messages no session has claimed, which are the newest `unclaimed` (claims
// go in UID order). They are not claimed: EXAMINE changes nothing.
std::vector<store::Uid> unclaimed_uids(const MailboxHub& hub, std::uint32_t unclaimed) {
  const auto& messages = hub.messages();
  size_t n = std::min<size_t>(unclaimed, messages.size());
  std::vector<store::Uid> out;
  for (size_t i = messages.size() - n; i < messages.size(); ++i) {
    out.push_back(messages[i].uid);
  }
  return out;
}

void log_close_error(CommandContext& ctx, const base::Error& e) {
  base::log(base::LogLevel::kWarn, "imap.close_expunge",
            {{"user", ctx.session.user->user()}, {"error", e.message}});
}

}  // namespace

void select(CommandContext& ctx) {
  SessionData& s = ctx.session;
  const auto& args = std::get<Select>(ctx.command.args);
  bool read_only = ctx.command.id == CommandId::kExamine;
  // Whatever happens next, the mailbox selected before is left (RFC 3501
  // §6.3.1), without expunging it.
  deselect(s);
  if (!args.params.empty()) {
    return ctx.bad("Parameter " + args.params.front().name + " is not supported");
  }
  auto hub = open_hub(*s.user, args.mailbox);
  if (!hub) {
    return ctx.fail(hub.error());
  }
  std::vector<store::Uid> recent;
  if (read_only) {
    auto info = ctx.store().status((*hub)->name());
    if (!info) {
      return ctx.fail(info.error());
    }
    recent = unclaimed_uids(**hub, info->recent);
  } else {
    auto claimed = ctx.store().claim_recent((*hub)->name());
    if (!claimed) {
      return ctx.fail(claimed.error());
    }
    for (store::Uid uid : *claimed) {
      if ((*hub)->find(uid) != nullptr) {
        recent.push_back(uid);
      }
    }
  }
  const MailboxHub& h = **hub;
  auto view = std::make_unique<SelectedView>(*hub, read_only, std::move(recent));

  std::vector<std::string> flags = mailbox_flags(h.keywords());
  write_flags(ctx.out, flags);
  if (read_only) {
    write_untagged(ctx.out, ResponseStatus::kOk, ResponseCode::permanent_flags({}, false),
                   "No permanent flags permitted");
  } else {
    write_untagged(ctx.out, ResponseStatus::kOk, ResponseCode::permanent_flags(flags, true),
                   "Flags permitted");
  }
  write_exists(ctx.out, view->count());
  write_recent(ctx.out, view->recent_count());
  for (std::uint32_t seq = 1; seq <= view->count(); ++seq) {
    const store::MessageMeta* meta = view->meta_at(seq);
    if (meta != nullptr && (meta->flags & store::kFlagSeen) == 0) {
      write_untagged(ctx.out, ResponseStatus::kOk, ResponseCode::unseen(seq),
                     "First unseen message");
      break;
    }
  }
  write_untagged(ctx.out, ResponseStatus::kOk, ResponseCode::uid_validity(h.uidvalidity()),
                 "UIDs valid");
  write_untagged(ctx.out, ResponseStatus::kOk, ResponseCode::uid_next(h.uidnext()),
                 "Predicted next UID");
  select_view(s, std::move(view));
  if (read_only) {
    ctx.ok(Code::kReadOnly, "Examine completed");
  } else {
    ctx.ok(Code::kReadWrite, "Select completed");
  }
}

void close(CommandContext& ctx) {
  SelectedView& view = ctx.view();
  if (!view.read_only()) {
    // CLOSE expunges silently: the view goes before it could tell.
    auto expunged = ctx.store().expunge(view.hub().name());
    if (!expunged) {
      log_close_error(ctx, expunged.error());
    }
  }
  deselect(ctx.session);
  ctx.ok("Close completed");
}

void unselect(CommandContext& ctx) {
  deselect(ctx.session);
  ctx.ok("Unselect completed");
}

void check(CommandContext& ctx) {
  (void)ctx.store().sync_mailbox(ctx.view().hub().name());
  ctx.ok("Check completed");
}

void expunge(CommandContext& ctx) {
  SelectedView& view = ctx.view();
  const auto& args = std::get<Expunge>(ctx.command.args);
  store::UidSet uids = store::UidSet::all();
  if (args.uids) {
    auto seqs = view.resolve(*args.uids, true);
    if (!seqs) {
      return ctx.bad(seqs.error().message);
    }
    uids = store::UidSet();
    for (std::uint32_t seq : *seqs) {
      uids.add(view.uid_at(seq));
    }
    if (uids.empty()) {
      return ctx.ok("Expunge completed");
    }
  }
  // The EXPUNGE responses come from the view, with everyone else's.
  auto expunged = ctx.store().expunge(view.hub().name(), uids);
  if (!expunged) {
    return ctx.fail(expunged.error());
  }
  ctx.ok("Expunge completed");
}

}  // namespace peregrine::imap::commands
