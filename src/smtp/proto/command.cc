#include "smtp/proto/command.h"

#include "base/ascii.h"

namespace peregrine::smtp {
namespace {

ParseResult refuse(int code, std::string_view enhanced, std::string_view text) {
  ParseResult result;
  result.error = Reply{code, std::string(enhanced), std::string(text)};
  return result;
}

ParseResult bad_args(std::string_view text) { return refuse(501, "5.5.4", text); }

bool is_utf8_octet(char c) { return static_cast<unsigned char>(c) >= 0x80; }

// atext of RFC 5322 §3.2.3, with UTF-8 octets as RFC 6531 §3.3 allows.
bool is_atext(char c) {
  if (base::is_alpha(c) || base::is_digit(c) || is_utf8_octet(c)) {
    return true;
  }
  switch (c) {
    case '!':
    case '#':
    case '$':
    case '%':
    case '&':
    case '\'':
    case '*':
    case '+':
    case '-':
    case '/':
    case '=':
    case '?':
    case '^':
    case '_':
    case '`':
    case '{':
    case '|':
    case '}':
    case '~':
      return true;
    default:
      return false;
  }
}

// A cursor over the rest of a line.
struct Cursor {
  std::string_view s;
  size_t pos = 0;
  bool at_end() const { return pos >= s.size(); }
  char peek() const { return at_end() ? '\0' : s[pos]; }
};

// Local-part = Dot-string / Quoted-string (RFC 5321 §4.1.2), unquoted into
// `out`. False on a syntax error.
bool parse_local_part(Cursor& c, std::string& out, bool& utf8) {
  if (c.peek() == '"') {
    ++c.pos;
    for (;;) {
      if (c.at_end()) {
        return false;
      }
      char ch = c.s[c.pos++];
      if (ch == '"') {
        break;
      }
      if (ch == '\\') {
        if (c.at_end()) {
          return false;
        }
        ch = c.s[c.pos++];
        if (static_cast<unsigned char>(ch) < 32 || ch == 127) {
          return false;
        }
      } else if (static_cast<unsigned char>(ch) < 32 || ch == 127) {
        return false;
      }
      utf8 = utf8 || is_utf8_octet(ch);
      out.push_back(ch);
    }
    return true;
  }
  // Dot-string = Atom *("." Atom)
  bool need_atom = true;
  while (!c.at_end()) {
    char ch = c.peek();
    if (is_atext(ch)) {
      utf8 = utf8 || is_utf8_octet(ch);
      out.push_back(ch);
      need_atom = false;
    } else if (ch == '.' && !need_atom) {
      out.push_back(ch);
      need_atom = true;
    } else {
      break;
    }
    ++c.pos;
  }
  return !need_atom;
}

// Domain / address-literal (RFC 5321 §4.1.2, §4.1.3), loosely: labels of
// letters, digits, '-' and UTF-8 octets (U-labels, RFC 6531), or a bracketed
// literal of printable characters.
bool parse_domain(Cursor& c, std::string& out, bool& utf8) {
  if (c.peek() == '[') {
    size_t start = c.pos++;
    while (!c.at_end() && c.peek() != ']') {
      char ch = c.peek();
      if (ch == '[' || ch == '\\' || static_cast<unsigned char>(ch) <= 32 || ch == 127) {
        return false;
      }
      ++c.pos;
    }
    if (c.at_end() || c.pos == start + 1) {
      return false;
    }
    ++c.pos;
    out.assign(c.s.substr(start, c.pos - start));
    return true;
  }
  bool need_label = true;
  while (!c.at_end()) {
    char ch = c.peek();
    if (base::is_alpha(ch) || base::is_digit(ch) || ch == '-' || is_utf8_octet(ch)) {
      utf8 = utf8 || is_utf8_octet(ch);
      need_label = false;
    } else if (ch == '.' && !need_label) {
      need_label = true;
    } else {
      break;
    }
    out.push_back(ch);
    ++c.pos;
  }
  return !need_label && out.size() <= kMaxDomain;
}

// "<" [ A-d-l ":" ] Mailbox ">", or "<>" when `allow_null`. Leaves the
// cursor after '>'. An empty string on success, else the error text.
std::string parse_path(Cursor& c, bool allow_null, Address& address) {
  if (c.peek() != '<') {
    return "Syntax: expected <address>";
  }
  ++c.pos;
  const size_t start = c.pos;
  if (c.peek() == '>') {
    ++c.pos;
    if (!allow_null) {
      return "A null address is not a recipient";
    }
    address = Address{};
    return "";
  }
  // A source route (@a,@b:) is obsolete and ignored (RFC 5321 §4.1.2, C.).
  if (c.peek() == '@') {
    while (!c.at_end() && c.peek() != ':' && c.peek() != '>') {
      ++c.pos;
    }
    if (c.peek() != ':') {
      return "Syntax error in the source route";
    }
    ++c.pos;
  }
  const size_t mailbox_start = c.pos;
  if (!parse_local_part(c, address.local, address.utf8)) {
    return "Syntax error in the local part";
  }
  if (address.local.empty() || address.local.size() > kMaxLocalPart) {
    return "Local part empty or longer than 64 octets";
  }
  if (c.peek() == '@') {
    ++c.pos;
    if (!parse_domain(c, address.domain, address.utf8)) {
      return "Syntax error in the domain";
    }
  }
  if (c.peek() != '>') {
    return "Syntax: expected '>' after the address";
  }
  address.text.assign(c.s.substr(mailbox_start, c.pos - mailbox_start));
  ++c.pos;
  if (c.pos - start + 1 > kMaxPath) {
    return "Path longer than 256 octets";
  }
  return "";
}

// Splits "KEY=VALUE KEY2" after the path; fills the MAIL parameters.
ParseResult parse_mail_params(std::string_view rest, ParseResult result) {
  bool seen_size = false, seen_body = false;
  while (!rest.empty()) {
    size_t space = rest.find(' ');
    std::string_view param = rest.substr(0, space);
    rest = space == std::string_view::npos ? std::string_view() : rest.substr(space + 1);
    if (param.empty()) {
      continue;  // several spaces
    }
    size_t eq = param.find('=');
    std::string_view key = param.substr(0, eq);
    std::string_view value =
        eq == std::string_view::npos ? std::string_view() : param.substr(eq + 1);
    if (base::iequals(key, "SIZE")) {
      if (seen_size || value.empty() || value.size() > 19) {
        return refuse(555, "5.5.4", "Bad SIZE parameter");
      }
      std::uint64_t size = 0;
      for (char ch : value) {
        if (!base::is_digit(ch)) {
          return refuse(555, "5.5.4", "Bad SIZE parameter");
        }
        size = size * 10 + static_cast<std::uint64_t>(ch - '0');
      }
      seen_size = true;
      result.command.size = size;
    } else if (base::iequals(key, "BODY")) {
      if (seen_body) {
        return refuse(555, "5.5.4", "Bad BODY parameter");
      }
      seen_body = true;
      if (base::iequals(value, "7BIT")) {
        result.command.body = BodyType::k7Bit;
      } else if (base::iequals(value, "8BITMIME")) {
        result.command.body = BodyType::k8BitMime;
      } else {
        return refuse(555, "5.5.4", "Unsupported BODY type");
      }
    } else if (base::iequals(key, "SMTPUTF8") && eq == std::string_view::npos) {
      result.command.smtputf8 = true;
    } else {
      return refuse(555, "5.5.4", "Unsupported MAIL FROM parameter");
    }
  }
  return result;
}

// MAIL FROM:<path> [params] / RCPT TO:<path> [params].
ParseResult parse_path_command(Verb verb, std::string_view args) {
  const std::string_view keyword = verb == Verb::kMail ? "FROM:" : "TO:";
  if (!base::istarts_with(args, keyword)) {
    return bad_args(verb == Verb::kMail ? "Syntax: MAIL FROM:<address>"
                                        : "Syntax: RCPT TO:<address>");
  }
  Cursor c{args, keyword.size()};
  if (c.peek() == ' ') {
    ++c.pos;
  }
  ParseResult result;
  result.command.verb = verb;
  std::string error = parse_path(c, verb == Verb::kMail, result.command.address);
  if (!error.empty()) {
    return bad_args(error);
  }
  std::string_view rest = args.substr(c.pos);
  if (!rest.empty() && rest[0] != ' ') {
    return bad_args("Syntax: expected a space after the address");
  }
  if (verb == Verb::kRcpt) {
    if (!base::trim(rest).empty()) {
      return refuse(555, "5.5.4", "Unsupported RCPT TO parameter");
    }
  } else {
    result = parse_mail_params(rest, std::move(result));
    if (result.error.code != 0) {
      return result;
    }
  }
  result.ok = true;
  return result;
}

}  // namespace

ParseResult parse_command(std::string_view line) {
  size_t space = line.find(' ');
  std::string_view verb_text = line.substr(0, space);
  std::string_view args =
      space == std::string_view::npos ? std::string_view() : line.substr(space + 1);

  struct Entry {
    std::string_view name;
    Verb verb;
  };
  static constexpr Entry kVerbs[] = {
      {"LHLO", Verb::kLhlo}, {"HELO", Verb::kHelo}, {"EHLO", Verb::kEhlo}, {"MAIL", Verb::kMail},
      {"RCPT", Verb::kRcpt}, {"DATA", Verb::kData}, {"RSET", Verb::kRset}, {"NOOP", Verb::kNoop},
      {"QUIT", Verb::kQuit}, {"VRFY", Verb::kVrfy}, {"HELP", Verb::kHelp},
  };
  const Entry* found = nullptr;
  for (const Entry& entry : kVerbs) {
    if (base::iequals(verb_text, entry.name)) {
      found = &entry;
      break;
    }
  }
  if (found == nullptr) {
    return refuse(500, "5.5.1", "Unknown command");
  }
  const Verb verb = found->verb;
  switch (verb) {
    case Verb::kMail:
    case Verb::kRcpt:
      return parse_path_command(verb, args);
    case Verb::kLhlo:
    case Verb::kHelo:
    case Verb::kEhlo: {
      std::string_view domain = base::trim(args);
      if (domain.empty() || domain.size() > kMaxDomain) {
        return bad_args("Syntax: LHLO domain");
      }
      ParseResult result;
      result.ok = true;
      result.command.verb = verb;
      result.command.domain.assign(domain);
      return result;
    }
    case Verb::kData:
    case Verb::kRset:
    case Verb::kQuit:
      if (!base::trim(args).empty()) {
        return bad_args("No arguments allowed");
      }
      break;
    case Verb::kVrfy:
      if (base::trim(args).empty()) {
        return bad_args("Syntax: VRFY address");
      }
      break;
    case Verb::kNoop:
    case Verb::kHelp:
      break;  // an argument is allowed and ignored
  }
  ParseResult result;
  result.ok = true;
  result.command.verb = verb;
  return result;
}

}  // namespace peregrine::smtp
