#include "imap/proto/parser.h"

#include "base/ascii.h"
#include "imap/proto/chars.h"
#include "imap/proto/parse_commands.h"
#include "imap/proto/parse_common.h"

namespace peregrine::imap {
namespace internal {
namespace {

// RFC 2971 §3.3: at most 30 field-value pairs.
constexpr size_t kMaxIdFields = 30;

struct CommandSyntax {
  std::string_view name;
  CommandId id;
  ArgsParser parse;
  bool uid_allowed;
};

constexpr CommandSyntax kCommands[] = {
    {"CAPABILITY", CommandId::kCapability, parse_no_args, false},
    {"NOOP", CommandId::kNoop, parse_no_args, false},
    {"LOGOUT", CommandId::kLogout, parse_no_args, false},
    {"STARTTLS", CommandId::kStartTls, parse_no_args, false},
    {"AUTHENTICATE", CommandId::kAuthenticate, parse_authenticate, false},
    {"LOGIN", CommandId::kLogin, parse_login, false},
    {"SELECT", CommandId::kSelect, parse_select, false},
    {"EXAMINE", CommandId::kExamine, parse_select, false},
    {"CREATE", CommandId::kCreate, parse_create, false},
    {"DELETE", CommandId::kDelete, parse_mailbox_arg, false},
    {"RENAME", CommandId::kRename, parse_rename, false},
    {"SUBSCRIBE", CommandId::kSubscribe, parse_mailbox_arg, false},
    {"UNSUBSCRIBE", CommandId::kUnsubscribe, parse_mailbox_arg, false},
    {"LIST", CommandId::kList, parse_list, false},
    {"LSUB", CommandId::kLsub, parse_lsub, false},
    {"STATUS", CommandId::kStatus, parse_status, false},
    {"APPEND", CommandId::kAppend, parse_append, false},
    {"CHECK", CommandId::kCheck, parse_no_args, false},
    {"CLOSE", CommandId::kClose, parse_no_args, false},
    {"EXPUNGE", CommandId::kExpunge, parse_expunge, true},
    {"SEARCH", CommandId::kSearch, parse_search, true},
    {"FETCH", CommandId::kFetch, parse_fetch, true},
    {"STORE", CommandId::kStore, parse_store, true},
    {"COPY", CommandId::kCopy, parse_copy, true},
    {"MOVE", CommandId::kMove, parse_copy, true},
    {"IDLE", CommandId::kIdle, parse_no_args, false},
    {"UNSELECT", CommandId::kUnselect, parse_no_args, false},
    {"NAMESPACE", CommandId::kNamespace, parse_no_args, false},
    {"ENABLE", CommandId::kEnable, parse_enable, false},
    {"ID", CommandId::kId, parse_id, false},
    {"SORT", CommandId::kSort, parse_sort, true},
    {"THREAD", CommandId::kThread, parse_thread, true},
};

bool is_base64_char(char c) {
  return base::is_alpha(c) || base::is_digit(c) || c == '+' || c == '/' || c == '=';
}

}  // namespace

Parsed<CommandArgs> parse_no_args(Cursor& /*c*/, bool /*uid*/) { return CommandArgs(NoArgs{}); }

Parsed<CommandArgs> parse_authenticate(Cursor& c, bool /*uid*/) {
  Authenticate a;
  ParseError error;
  if (!space_before(c, "authentication mechanism", error)) {
    return error;
  }
  std::string_view mech = c.atom();
  if (mech.empty()) {
    return missing_or_invalid(c, "authentication mechanism");
  }
  a.mechanism = base::to_upper(mech);
  Cursor probe = c;
  if (probe.space() && !probe.at_end()) {
    c.space();
    std::string_view ir = c.take_while(is_base64_char);
    if (ir.empty()) {
      return missing_or_invalid(c, "initial response");
    }
    a.initial_response = std::string(ir);
  }
  return CommandArgs(std::move(a));
}

Parsed<CommandArgs> parse_login(Cursor& c, bool /*uid*/) {
  ParseError error;
  if (!space_before(c, "user name", error)) {
    return error;
  }
  Parsed<std::string> user = c.astring("user name");
  if (!user) {
    return user.error();
  }
  if (!space_before(c, "password", error)) {
    return error;
  }
  Parsed<std::string> password = c.astring("password");
  if (!password) {
    return password.error();
  }
  return CommandArgs(Login{std::move(*user), std::move(*password)});
}

Parsed<CommandArgs> parse_enable(Cursor& c, bool /*uid*/) {
  Enable e;
  ParseError error;
  if (!space_before(c, "capability", error)) {
    return error;
  }
  do {
    std::string_view cap = c.atom();
    if (cap.empty()) {
      return missing_or_invalid(c, "capability");
    }
    e.capabilities.push_back(base::to_upper(cap));
  } while (c.space() && !c.at_end());
  return CommandArgs(std::move(e));
}

Parsed<CommandArgs> parse_id(Cursor& c, bool /*uid*/) {
  Id id;
  ParseError error;
  if (!space_before(c, "ID parameters", error)) {
    return error;
  }
  if (c.keyword("NIL")) {
    return CommandArgs(std::move(id));
  }
  if (!c.consume('(')) {
    return missing_or_invalid(c, "ID parameters");
  }
  std::vector<IdField> fields;
  c.space();
  while (!c.consume(')')) {
    if (!fields.empty() && !c.space()) {
      return missing_or_invalid(c, "\")\" after ID parameters");
    }
    if (c.consume(')')) {
      break;
    }
    if (fields.size() >= kMaxIdFields) {
      return parse_error("too many ID fields");
    }
    IdField f;
    Parsed<std::string> name = c.string("ID field name");
    if (!name) {
      return name.error();
    }
    if (!space_before(c, "ID field value", error)) {
      return error;
    }
    Parsed<std::optional<std::string>> value = c.nstring("ID field value");
    if (!value) {
      return value.error();
    }
    fields.push_back(IdField{std::move(*name), std::move(*value)});
  }
  id.fields = std::move(fields);
  return CommandArgs(std::move(id));
}

}  // namespace internal

Parsed<Command> parse_command(const FramedCommand& framed) {
  Cursor c(framed);
  Command cmd;
  std::string_view tag = c.take_while(is_tag_char);
  if (tag.empty() || (!c.at_end() && c.peek() != ' ')) {
    return parse_error(c.at_end() && tag.empty() ? "empty command line" : "invalid tag");
  }
  cmd.tag = std::string(tag);
  auto fail = [&](std::string message) { return ParseError{cmd.tag, std::move(message)}; };
  if (!c.space() || c.at_end()) {
    return fail("missing command name");
  }
  std::string_view name = c.atom();
  if (base::iequals(name, "UID")) {
    cmd.uid = true;
    if (!c.space() || c.at_end()) {
      return fail("UID: missing command name");
    }
    name = c.atom();
  }
  if (name.empty()) {
    return fail("invalid command name " + excerpt(c.rest_of_line()));
  }
  const internal::CommandSyntax* syntax = nullptr;
  for (const internal::CommandSyntax& s : internal::kCommands) {
    if (base::iequals(name, s.name)) {
      syntax = &s;
      break;
    }
  }
  if (syntax == nullptr) {
    return fail("unknown command " + std::string(cmd.uid ? "UID " : "") + excerpt(name));
  }
  if (cmd.uid && !syntax->uid_allowed) {
    return fail("UID " + std::string(syntax->name) + " is not a command");
  }
  cmd.id = syntax->id;
  std::string prefix = std::string(cmd.uid ? "UID " : "") + std::string(syntax->name) + ": ";
  Parsed<CommandArgs> args = syntax->parse(c, cmd.uid);
  if (!args) {
    return fail(prefix + args.error().message);
  }
  if (!c.finish()) {
    return fail(prefix + internal::trailing_error(c).message);
  }
  cmd.args = std::move(*args);
  return cmd;
}

bool is_idle_done(const FramedCommand& line) {
  return line.lines.size() == 1 && line.literals.empty() &&
         base::iequals(base::trim(line.lines[0]), "DONE");
}

Parsed<AuthResponse> parse_auth_response(const FramedCommand& line) {
  if (line.lines.size() != 1 || !line.literals.empty()) {
    return parse_error("unexpected literal in authentication response");
  }
  std::string_view text = line.lines[0];
  while (!text.empty() && (text.back() == ' ' || text.back() == '\t')) {
    text.remove_suffix(1);
  }
  AuthResponse r;
  if (text == "*") {
    r.cancelled = true;
    return r;
  }
  for (char ch : text) {
    if (!internal::is_base64_char(ch)) {
      return parse_error("invalid base64 in authentication response");
    }
  }
  r.base64 = std::string(text);
  return r;
}

}  // namespace peregrine::imap
