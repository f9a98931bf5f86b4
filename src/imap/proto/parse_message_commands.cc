// FETCH, STORE, COPY/MOVE and EXPUNGE: the commands on messages of the
// selected mailbox.

#include "base/ascii.h"
#include "imap/proto/parse_commands.h"
#include "imap/proto/parse_common.h"

namespace peregrine::imap::internal {
namespace {

constexpr uint64_t kMaxNumber64 = 0x7fffffffffffffffull;
// Part numbers deeper than this name no part a parsed message can have
// (mime::ParseLimits::max_depth is 64).
constexpr size_t kMaxPartDepth = 100;

bool is_name_char(char c) { return base::is_alpha(c) || base::is_digit(c) || c == '.'; }

FetchItem item(FetchAttr attr) {
  FetchItem i;
  i.attr = attr;
  return i;
}

// header-list: "(" header-fld-name *(SP header-fld-name) ")".
std::optional<ParseError> header_list(Cursor& c, std::vector<std::string>& fields) {
  if (!c.consume('(')) {
    return missing_or_invalid(c, "header field list");
  }
  for (;;) {
    c.space();
    Parsed<std::string> f = c.astring("header field name");
    if (!f) {
      return f.error();
    }
    fields.push_back(std::move(*f));
    bool sp = c.space();
    if (c.consume(')')) {
      return std::nullopt;
    }
    if (!sp) {
      return missing_or_invalid(c, "\")\" after header fields");
    }
  }
}

// "[" section-spec "]" (binary: "[" [section-part] "]"), the cursor at "[".
std::optional<ParseError> section(Cursor& c, bool binary, mime::SectionSpec& spec) {
  if (!c.consume('[')) {
    return parse_error("missing section");
  }
  std::string_view text = c.take_while(is_name_char);
  // Leading numeric components are the part; the rest names the text.
  while (!text.empty() && base::is_digit(text[0])) {
    size_t dot = text.find('.');
    std::string_view num = text.substr(0, dot);
    uint64_t value = 0;
    for (char ch : num) {
      if (!base::is_digit(ch)) {
        return parse_error("invalid section part " + excerpt(text));
      }
      value = value * 10 + static_cast<uint64_t>(ch - '0');
      if (value > 0xffffffffu) {
        return parse_error("invalid section part " + excerpt(text));
      }
    }
    if (value == 0 || num[0] == '0' || spec.part.size() >= kMaxPartDepth) {
      return parse_error("invalid section part " + excerpt(text));
    }
    spec.part.push_back(static_cast<uint32_t>(value));
    if (dot == std::string_view::npos) {
      text = {};
      break;
    }
    text.remove_prefix(dot + 1);
    if (text.empty()) {
      return parse_error("invalid section part");  // trailing "."
    }
  }
  if (binary && !text.empty()) {
    return parse_error("invalid binary section " + excerpt(text));
  }
  if (text.empty()) {
    spec.text = mime::SectionText::kNone;
  } else if (base::iequals(text, "HEADER")) {
    spec.text = mime::SectionText::kHeader;
  } else if (base::iequals(text, "TEXT")) {
    spec.text = mime::SectionText::kText;
  } else if (base::iequals(text, "MIME") && !spec.part.empty()) {
    spec.text = mime::SectionText::kMime;
  } else if (base::iequals(text, "HEADER.FIELDS") || base::iequals(text, "HEADER.FIELDS.NOT")) {
    spec.text =
        text.size() == 13 ? mime::SectionText::kHeaderFields : mime::SectionText::kHeaderFieldsNot;
    if (!c.space()) {
      return parse_error("missing header field list");
    }
    if (std::optional<ParseError> e = header_list(c, spec.fields)) {
      return e;
    }
  } else {
    return parse_error("invalid section " + excerpt(text));
  }
  if (!c.consume(']')) {
    return parse_error("missing \"]\" after section");
  }
  return std::nullopt;
}

// "<" number "." nz-number ">", when the cursor is at "<".
std::optional<ParseError> partial(Cursor& c, std::optional<FetchPartial>& out) {
  if (!c.consume('<')) {
    return std::nullopt;
  }
  FetchPartial p;
  Parsed<uint64_t> offset = c.number("partial offset", 0, kMaxNumber64);
  if (!offset) {
    return offset.error();
  }
  if (!c.consume('.')) {
    return parse_error("invalid partial: missing length");
  }
  Parsed<uint64_t> length = c.number("partial length", 1, kMaxNumber64);
  if (!length) {
    return length.error();
  }
  if (!c.consume('>')) {
    return parse_error("invalid partial: missing \">\"");
  }
  p.offset = *offset;
  p.length = *length;
  out = p;
  return std::nullopt;
}

// One fetch-att, appended to `items` (a macro appends several).
std::optional<ParseError> fetch_att(Cursor& c, bool allow_macro, std::vector<FetchItem>& items) {
  std::string_view name = c.take_while(is_name_char);
  if (name.empty()) {
    return missing_or_invalid(c, "fetch item");
  }
  auto is = [&](std::string_view n) { return base::iequals(name, n); };
  const bool has_section = c.peek() == '[';
  static constexpr std::pair<std::string_view, FetchAttr> kSimple[] = {
      {"ENVELOPE", FetchAttr::kEnvelope},
      {"FLAGS", FetchAttr::kFlags},
      {"INTERNALDATE", FetchAttr::kInternalDate},
      {"RFC822", FetchAttr::kRfc822},
      {"RFC822.HEADER", FetchAttr::kRfc822Header},
      {"RFC822.SIZE", FetchAttr::kRfc822Size},
      {"RFC822.TEXT", FetchAttr::kRfc822Text},
      {"BODYSTRUCTURE", FetchAttr::kBodyStructure},
      {"UID", FetchAttr::kUid},
      {"MODSEQ", FetchAttr::kModSeq},
  };
  if (!has_section) {
    for (const auto& [n, attr] : kSimple) {
      if (is(n)) {
        items.push_back(item(attr));
        return std::nullopt;
      }
    }
    if (is("BODY")) {
      items.push_back(item(FetchAttr::kBody));
      return std::nullopt;
    }
    if (allow_macro && (is("ALL") || is("FAST") || is("FULL"))) {
      items.push_back(item(FetchAttr::kFlags));
      items.push_back(item(FetchAttr::kInternalDate));
      items.push_back(item(FetchAttr::kRfc822Size));
      if (!is("FAST")) {
        items.push_back(item(FetchAttr::kEnvelope));
      }
      if (is("FULL")) {
        items.push_back(item(FetchAttr::kBody));
      }
      return std::nullopt;
    }
  }
  FetchItem fi;
  if (is("BODY") || is("BODY.PEEK")) {
    fi.attr = FetchAttr::kBodySection;
  } else if (is("BINARY") || is("BINARY.PEEK")) {
    fi.attr = FetchAttr::kBinary;
  } else if (is("BINARY.SIZE")) {
    fi.attr = FetchAttr::kBinarySize;
  } else {
    return parse_error("unknown item " + excerpt(std::string(name) + std::string(c.atom())));
  }
  fi.peek = is("BODY.PEEK") || is("BINARY.PEEK");
  if (!has_section) {
    return parse_error("missing section after " + base::to_upper(name));
  }
  if (std::optional<ParseError> e = section(c, fi.attr != FetchAttr::kBodySection, fi.section)) {
    return e;
  }
  if (fi.attr != FetchAttr::kBinarySize) {
    if (std::optional<ParseError> e = partial(c, fi.partial)) {
      return e;
    }
  }
  items.push_back(std::move(fi));
  return std::nullopt;
}

// Modifiers in "(...)" after a FETCH or STORE: CHANGEDSINCE / VANISHED /
// UNCHANGEDSINCE.
std::optional<ParseError> modifiers(Cursor& c, Fetch* fetch, Store* store) {
  if (!c.consume('(')) {
    return missing_or_invalid(c, "modifiers");
  }
  for (;;) {
    c.space();
    std::string_view name = c.atom();
    if (name.empty()) {
      return missing_or_invalid(c, "modifier");
    }
    auto value = [&](std::optional<uint64_t>& out, std::string_view what) {
      ParseError error;
      if (!space_before(c, what, error)) {
        return std::optional<ParseError>(error);
      }
      Parsed<uint64_t> n = c.number(what, 0, kMaxNumber64);
      if (!n) {
        return std::optional<ParseError>(n.error());
      }
      out = *n;
      return std::optional<ParseError>();
    };
    std::optional<ParseError> e;
    if (fetch != nullptr && base::iequals(name, "CHANGEDSINCE")) {
      e = value(fetch->changed_since, "mod-sequence");
    } else if (fetch != nullptr && base::iequals(name, "VANISHED")) {
      fetch->vanished = true;
    } else if (store != nullptr && base::iequals(name, "UNCHANGEDSINCE")) {
      e = value(store->unchanged_since, "mod-sequence");
    } else {
      return parse_error("unknown modifier " + excerpt(name));
    }
    if (e) {
      return e;
    }
    bool sp = c.space();
    if (c.consume(')')) {
      return std::nullopt;
    }
    if (!sp) {
      return missing_or_invalid(c, "\")\" after modifiers");
    }
  }
}

Parsed<SequenceSet> set_after_space(Cursor& c) {
  ParseError error;
  if (!space_before(c, "sequence set", error)) {
    return error;
  }
  return sequence_set(c);
}

}  // namespace

Parsed<CommandArgs> parse_fetch(Cursor& c, bool uid) {
  Fetch f;
  Parsed<SequenceSet> set = set_after_space(c);
  if (!set) {
    return set.error();
  }
  f.set = std::move(*set);
  ParseError error;
  if (!space_before(c, "fetch items", error)) {
    return error;
  }
  if (c.consume('(')) {
    for (;;) {
      c.space();
      if (std::optional<ParseError> e = fetch_att(c, /*allow_macro=*/false, f.items)) {
        return *e;
      }
      bool sp = c.space();
      if (c.consume(')')) {
        break;
      }
      if (!sp) {
        return c.at_end() ? parse_error("missing \")\" after fetch items")
                          : parse_error("unknown item " + excerpt(c.rest_of_line()));
      }
    }
  } else if (std::optional<ParseError> e = fetch_att(c, /*allow_macro=*/true, f.items)) {
    return *e;
  }
  Cursor probe = c;
  if (probe.space() && probe.peek() == '(') {
    c.space();
    if (std::optional<ParseError> e = modifiers(c, &f, nullptr)) {
      return *e;
    }
    if (f.vanished && (!uid || !f.changed_since)) {
      return parse_error("VANISHED needs UID FETCH and CHANGEDSINCE");
    }
  }
  return CommandArgs(std::move(f));
}

Parsed<CommandArgs> parse_store(Cursor& c, bool /*uid*/) {
  Store s;
  Parsed<SequenceSet> set = set_after_space(c);
  if (!set) {
    return set.error();
  }
  s.set = std::move(*set);
  ParseError error;
  if (!space_before(c, "store item", error)) {
    return error;
  }
  if (c.peek() == '(') {
    if (std::optional<ParseError> e = modifiers(c, nullptr, &s)) {
      return *e;
    }
    if (!space_before(c, "store item", error)) {
      return error;
    }
  }
  if (c.consume('+')) {
    s.mode = StoreMode::kAdd;
  } else if (c.consume('-')) {
    s.mode = StoreMode::kRemove;
  }
  std::string_view name = c.take_while(is_name_char);
  if (base::iequals(name, "FLAGS.SILENT")) {
    s.silent = true;
  } else if (!base::iequals(name, "FLAGS")) {
    if (name.empty()) {
      return missing_or_invalid(c, "store item");
    }
    return parse_error("unknown store item " + excerpt(name));
  }
  if (!space_before(c, "flags", error)) {
    return error;
  }
  if (c.peek() == '(') {
    Parsed<std::vector<std::string>> flags = flag_list(c);
    if (!flags) {
      return flags.error();
    }
    s.flags = std::move(*flags);
  } else {
    // flag *(SP flag)
    for (;;) {
      Parsed<std::string> f = flag(c);
      if (!f) {
        return f.error();
      }
      s.flags.push_back(std::move(*f));
      bool sp = c.space();
      if (c.at_end()) {
        break;
      }
      if (!sp) {
        return trailing_error(c);
      }
    }
  }
  return CommandArgs(std::move(s));
}

Parsed<CommandArgs> parse_copy(Cursor& c, bool /*uid*/) {
  Copy cp;
  Parsed<SequenceSet> set = set_after_space(c);
  if (!set) {
    return set.error();
  }
  cp.set = std::move(*set);
  ParseError error;
  if (!space_before(c, "mailbox name", error)) {
    return error;
  }
  Parsed<std::string> name = mailbox(c);
  if (!name) {
    return name.error();
  }
  cp.mailbox = std::move(*name);
  return CommandArgs(std::move(cp));
}

Parsed<CommandArgs> parse_expunge(Cursor& c, bool uid) {
  Expunge e;
  if (uid) {
    Parsed<SequenceSet> set = set_after_space(c);
    if (!set) {
      return set.error();
    }
    e.uids = std::move(*set);
  }
  return CommandArgs(std::move(e));
}

}  // namespace peregrine::imap::internal
