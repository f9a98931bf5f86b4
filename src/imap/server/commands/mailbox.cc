// CREATE, DELETE, RENAME, SUBSCRIBE, UNSUBSCRIBE and STATUS.

#include "base/ascii.h"
#include "imap/proto/response_writer.h"
#include "imap/proto/utf7.h"
#include "imap/server/commands/commands.h"
#include "imap/server/mailbox_hub.h"

namespace peregrine::imap::commands {
namespace {

// Why `name` cannot be a new mailbox's name, empty if it can. The store
// checks the rest (empty levels, length, 8-bit bytes).
std::string new_name_error(std::string_view name) {
  if (name.empty()) {
    return "Mailbox name is empty";
  }
  if (name.find_first_of("*%") != std::string_view::npos) {
    return "Mailbox names cannot contain * or %";
  }
  if (!is_valid_mutf7(name)) {
    return "Mailbox name is not valid modified UTF-7";
  }
  return {};
}

// RFC 6154 CREATE-SPECIAL-USE: "USE (\Drafts)".
std::optional<store::SpecialUse> special_use_param(const std::vector<ExtParam>& params,
                                                   std::string& error) {
  store::SpecialUse use = store::SpecialUse::kNone;
  for (const ExtParam& p : params) {
    if (p.name != "USE" || !p.value) {
      error = "CREATE parameter " + p.name + " is not supported";
      return std::nullopt;
    }
    std::vector<ExtValue> values = p.value->is_list ? p.value->items : std::vector{*p.value};
    for (const ExtValue& v : values) {
      std::optional<store::SpecialUse> u;
      if (!v.is_list && v.text.size() > 1 && v.text[0] == '\\') {
        u = store::special_use_from_string(base::to_lower(v.text.substr(1)));
      }
      if (!u || *u == store::SpecialUse::kNone || (use != store::SpecialUse::kNone && use != *u)) {
        error = "Unsupported special use";
        return std::nullopt;
      }
      use = *u;
    }
  }
  return use;
}

bool is_selected(const SessionData& s, std::string_view name) {
  return s.selected && s.selected->hub().name() == canonical_mailbox(name);
}

}  // namespace

void create(CommandContext& ctx) {
  const auto& args = std::get<Create>(ctx.command.args);
  if (std::string e = new_name_error(args.mailbox); !e.empty()) {
    return ctx.no(Code::kCannot, e);
  }
  std::string error;
  std::optional<store::SpecialUse> use = special_use_param(args.params, error);
  if (!use) {
    return ctx.bad(error);
  }
  auto created = ctx.store().create_mailbox(args.mailbox, *use);
  if (!created) {
    return ctx.fail(created.error());
  }
  ctx.ok("Create completed");
}

void delete_(CommandContext& ctx) {
  const auto& args = std::get<MailboxArg>(ctx.command.args);
  if (is_inbox(args.mailbox)) {
    return ctx.no(Code::kCannot, "INBOX cannot be deleted");
  }
  if (is_selected(ctx.session, args.mailbox)) {
    deselect(ctx.session);  // deleting the mailbox we are in: leave it first
  }
  auto deleted = ctx.store().delete_mailbox(args.mailbox);
  if (!deleted) {
    return ctx.fail(deleted.error());
  }
  ctx.ok("Delete completed");
}

void rename(CommandContext& ctx) {
  const auto& args = std::get<Rename>(ctx.command.args);
  if (std::string e = new_name_error(args.to); !e.empty()) {
    return ctx.no(Code::kCannot, e);
  }
  auto renamed = ctx.store().rename_mailbox(args.from, args.to);
  if (!renamed) {
    return ctx.fail(renamed.error());
  }
  if (!is_inbox(args.from)) {
    mailbox_renamed(*ctx.session.user, args.from, args.to);
  }
  ctx.ok("Rename completed");
}

void subscribe(CommandContext& ctx) {
  const auto& args = std::get<MailboxArg>(ctx.command.args);
  bool on = ctx.command.id == CommandId::kSubscribe;
  if (on && !is_valid_mutf7(args.mailbox)) {
    return ctx.no(Code::kCannot, "Mailbox name is not valid modified UTF-7");
  }
  auto done = on ? ctx.store().subscribe(args.mailbox) : ctx.store().unsubscribe(args.mailbox);
  if (!done) {
    return ctx.fail(done.error());
  }
  ctx.ok(on ? "Subscribe completed" : "Unsubscribe completed");
}

void status(CommandContext& ctx) {
  const auto& args = std::get<Status>(ctx.command.args);
  // A sync point for that mailbox; a missing one fails below.
  (void)ctx.store().sync_mailbox(args.mailbox);
  auto info = ctx.store().status(args.mailbox);
  if (!info) {
    return ctx.fail(info.error());
  }
  std::vector<StatusValue> values;
  for (StatusItem item : args.items) {
    StatusValue v{item, 0};
    switch (item) {
      case StatusItem::kMessages:
        v.value = info->messages;
        break;
      case StatusItem::kRecent:
        v.value = info->recent;
        break;
      case StatusItem::kUidNext:
        v.value = info->uidnext;
        break;
      case StatusItem::kUidValidity:
        v.value = info->uidvalidity;
        break;
      case StatusItem::kUnseen:
        v.value = info->unseen;
        break;
      case StatusItem::kSize:
        v.value = info->size;
        break;
      case StatusItem::kHighestModSeq:
        v.value = info->highest_modseq;
        break;
      case StatusItem::kDeleted: {
        auto snapshot = ctx.store().open_mailbox(args.mailbox);
        if (!snapshot) {
          return ctx.fail(snapshot.error());
        }
        for (const store::MessageMeta& m : snapshot->messages) {
          v.value += (m.flags & store::kFlagDeleted) != 0 ? 1 : 0;
        }
        break;
      }
    }
    values.push_back(v);
  }
  write_status(ctx.out, args.mailbox, values);
  ctx.ok("Status completed");
}

}  // namespace peregrine::imap::commands
