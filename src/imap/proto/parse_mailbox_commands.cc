// SELECT/EXAMINE, CREATE, DELETE, RENAME, (UN)SUBSCRIBE, LIST, LSUB,
// STATUS and APPEND: the commands that name mailboxes.

#include "base/ascii.h"
#include "imap/proto/chars.h"
#include "imap/proto/date_time.h"
#include "imap/proto/parse_commands.h"
#include "imap/proto/parse_common.h"

namespace peregrine::imap::internal {
namespace {

// Parameters in parentheses after a mailbox name, when present.
std::optional<ParseError> optional_params(Cursor& c, std::vector<ExtParam>& out,
                                          std::string_view what) {
  Cursor probe = c;
  if (!probe.space() || probe.peek() != '(') {
    return std::nullopt;
  }
  c.space();
  Parsed<std::vector<ExtParam>> params = ext_params(c, what);
  if (!params) {
    return params.error();
  }
  out = std::move(*params);
  return std::nullopt;
}

Parsed<std::string> mailbox_after_space(Cursor& c, std::string_view what = "mailbox name") {
  ParseError error;
  if (!space_before(c, what, error)) {
    return error;
  }
  return mailbox(c, what);
}

// list-mailbox: 1*list-char or a string.
Parsed<std::string> list_mailbox(Cursor& c) {
  if (c.at_literal() || c.peek() == '"') {
    return c.string("mailbox pattern");
  }
  std::string_view p = c.take_while(is_list_char);
  if (p.empty()) {
    return missing_or_invalid(c, "mailbox pattern");
  }
  return std::string(p);
}

// The reference name of LIST and LSUB, then SP. The reference is a mailbox
// name, but not normalised: "inbox" as a reference is a prefix, not the
// mailbox.
std::optional<ParseError> reference_and_space(Cursor& c, std::string& out) {
  Parsed<std::string> ref = c.astring("reference name");
  if (!ref) {
    return ref.error();
  }
  out = std::move(*ref);
  ParseError error;
  if (!space_before(c, "mailbox pattern", error)) {
    return error;
  }
  return std::nullopt;
}

// SP mailbox [SP "(" params ")"]: the arguments of SELECT, EXAMINE and CREATE.
template <typename Args>
Parsed<CommandArgs> mailbox_and_params(Cursor& c, std::string_view params_what) {
  Args args;
  Parsed<std::string> name = mailbox_after_space(c);
  if (!name) {
    return name.error();
  }
  args.mailbox = std::move(*name);
  if (std::optional<ParseError> e = optional_params(c, args.params, params_what)) {
    return *e;
  }
  return CommandArgs(std::move(args));
}

}  // namespace

Parsed<CommandArgs> parse_select(Cursor& c, bool /*uid*/) {
  return mailbox_and_params<Select>(c, "select parameter");
}

Parsed<CommandArgs> parse_create(Cursor& c, bool /*uid*/) {
  return mailbox_and_params<Create>(c, "create parameter");
}

Parsed<CommandArgs> parse_mailbox_arg(Cursor& c, bool /*uid*/) {
  Parsed<std::string> name = mailbox_after_space(c);
  if (!name) {
    return name.error();
  }
  return CommandArgs(MailboxArg{std::move(*name)});
}

Parsed<CommandArgs> parse_rename(Cursor& c, bool /*uid*/) {
  Parsed<std::string> from = mailbox_after_space(c, "existing mailbox name");
  if (!from) {
    return from.error();
  }
  Parsed<std::string> to = mailbox_after_space(c, "new mailbox name");
  if (!to) {
    return to.error();
  }
  return CommandArgs(Rename{std::move(*from), std::move(*to)});
}

Parsed<CommandArgs> parse_list(Cursor& c, bool /*uid*/) {
  List l;
  ParseError error;
  if (!space_before(c, "reference name", error)) {
    return error;
  }
  if (c.peek() == '(') {
    Parsed<std::vector<ExtParam>> sel = ext_params(c, "selection option");
    if (!sel) {
      return sel.error();
    }
    l.selection = std::move(*sel);
    l.extended = true;
    if (!space_before(c, "reference name", error)) {
      return error;
    }
  }
  if (std::optional<ParseError> e = reference_and_space(c, l.reference)) {
    return *e;
  }
  if (c.consume('(')) {
    l.extended = true;
    for (;;) {
      c.space();
      Parsed<std::string> p = list_mailbox(c);
      if (!p) {
        return p.error();
      }
      l.patterns.push_back(std::move(*p));
      c.space();
      if (c.consume(')')) {
        break;
      }
      if (c.at_end()) {
        return parse_error("missing \")\" after mailbox patterns");
      }
    }
  } else {
    Parsed<std::string> p = list_mailbox(c);
    if (!p) {
      return p.error();
    }
    l.patterns.push_back(std::move(*p));
  }
  Cursor probe = c;
  if (probe.space() && probe.keyword("RETURN")) {
    c.space();
    c.keyword("RETURN");
    if (!space_before(c, "return options", error)) {
      return error;
    }
    Parsed<std::vector<ExtParam>> ret = ext_params(c, "return option");
    if (!ret) {
      return ret.error();
    }
    l.return_options = std::move(*ret);
    l.extended = true;
  }
  return CommandArgs(std::move(l));
}

Parsed<CommandArgs> parse_lsub(Cursor& c, bool /*uid*/) {
  List l;
  ParseError error;
  if (!space_before(c, "reference name", error)) {
    return error;
  }
  if (std::optional<ParseError> e = reference_and_space(c, l.reference)) {
    return *e;
  }
  Parsed<std::string> p = list_mailbox(c);
  if (!p) {
    return p.error();
  }
  l.patterns.push_back(std::move(*p));
  return CommandArgs(std::move(l));
}

Parsed<CommandArgs> parse_status(Cursor& c, bool /*uid*/) {
  static constexpr std::pair<std::string_view, StatusItem> kItems[] = {
      {"MESSAGES", StatusItem::kMessages}, {"RECENT", StatusItem::kRecent},
      {"UIDNEXT", StatusItem::kUidNext},   {"UIDVALIDITY", StatusItem::kUidValidity},
      {"UNSEEN", StatusItem::kUnseen},     {"DELETED", StatusItem::kDeleted},
      {"SIZE", StatusItem::kSize},         {"HIGHESTMODSEQ", StatusItem::kHighestModSeq},
  };
  Status s;
  Parsed<std::string> name = mailbox_after_space(c);
  if (!name) {
    return name.error();
  }
  s.mailbox = std::move(*name);
  ParseError error;
  if (!space_before(c, "status items", error)) {
    return error;
  }
  if (!c.consume('(')) {
    return missing_or_invalid(c, "status items");
  }
  for (;;) {
    c.space();
    std::string_view item = c.atom();
    if (item.empty()) {
      return missing_or_invalid(c, "status item");
    }
    bool known = false;
    for (const auto& [n, id] : kItems) {
      if (base::iequals(item, n)) {
        s.items.push_back(id);
        known = true;
      }
    }
    if (!known) {
      return parse_error("unknown status item " + excerpt(item));
    }
    bool sp = c.space();
    if (c.consume(')')) {
      break;
    }
    if (!sp) {
      return missing_or_invalid(c, "\")\" after status items");
    }
  }
  return CommandArgs(std::move(s));
}

Parsed<CommandArgs> parse_append(Cursor& c, bool /*uid*/) {
  Append a;
  Parsed<std::string> name = mailbox_after_space(c);
  if (!name) {
    return name.error();
  }
  a.mailbox = std::move(*name);
  ParseError error;
  // 1*append-message, each [SP flag-list] [SP date-time] SP literal.
  for (;;) {
    AppendMessage m;
    if (!space_before(c, "message literal", error)) {
      return error;
    }
    if (c.peek() == '(') {
      Parsed<std::vector<std::string>> flags = flag_list(c);
      if (!flags) {
        return flags.error();
      }
      m.flags = std::move(*flags);
      if (!space_before(c, "message literal", error)) {
        return error;
      }
    }
    if (c.peek() == '"') {
      Parsed<std::string> text = c.string("date-time");
      if (!text) {
        return text.error();
      }
      Parsed<mime::DateTime> date = parse_date_time(*text);
      if (!date) {
        return date.error();
      }
      m.internal_date = *date;
      if (!space_before(c, "message literal", error)) {
        return error;
      }
    }
    if (!c.at_literal()) {
      std::string_view word = c.atom();
      if (!word.empty()) {
        return parse_error("unsupported APPEND data " + excerpt(word));
      }
      return missing_or_invalid(c, "message literal");
    }
    Parsed<Literal> lit = c.literal("message", /*allow_binary=*/true);
    if (!lit) {
      return lit.error();
    }
    m.data = lit->data;
    m.binary = lit->binary;
    a.messages.push_back(std::move(m));
    Cursor probe = c;
    if (probe.finish()) {
      break;
    }
  }
  return CommandArgs(std::move(a));
}

}  // namespace peregrine::imap::internal
