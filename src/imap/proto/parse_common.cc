#include "imap/proto/parse_common.h"

#include "base/ascii.h"
#include "imap/proto/chars.h"
#include "imap/proto/flags.h"
#include "imap/proto/utf7.h"

namespace peregrine::imap::internal {
namespace {

bool is_set_char(char c) {
  return base::is_digit(c) || c == ':' || c == ',' || c == '*' || c == '$';
}

Parsed<ExtValue> ext_value(Cursor& c, int depth);

// tagged-ext-comp: astring, "\"-flag, or a nested list.
Parsed<ExtValue> ext_comp(Cursor& c, int depth) {
  if (c.peek() == '(') {
    return ext_value(c, depth);
  }
  ExtValue v;
  if (c.peek() == '\\') {
    Parsed<std::string> f = flag(c);
    if (!f) {
      return f.error();
    }
    v.text = std::move(*f);
    return v;
  }
  Parsed<std::string> s = c.astring("parameter value");
  if (!s) {
    return s.error();
  }
  v.text = std::move(*s);
  return v;
}

// tagged-ext-val: a simple value or "(" [comp *(SP comp)] ")".
Parsed<ExtValue> ext_value(Cursor& c, int depth) {
  ExtValue v;
  if (!c.consume('(')) {
    std::string_view simple = c.take_while(is_set_char);
    if (simple.empty()) {
      return missing_or_invalid(c, "parameter value");
    }
    v.text = std::string(simple);
    return v;
  }
  if (depth >= kMaxDepth) {
    return parse_error("parameters nested too deeply");
  }
  v.is_list = true;
  c.space();
  while (!c.consume(')')) {
    if (!v.items.empty() && !c.space()) {
      return missing_or_invalid(c, "\")\"");
    }
    if (c.consume(')')) {
      break;
    }
    Parsed<ExtValue> item = ext_comp(c, depth + 1);
    if (!item) {
      return item.error();
    }
    v.items.push_back(std::move(*item));
  }
  return v;
}

}  // namespace

bool space_before(Cursor& c, std::string_view what, ParseError& error) {
  if (c.space() && !c.at_end() && c.peek() != ')') {
    return true;
  }
  if (c.at_end() || c.peek() == ')') {
    error = parse_error("missing " + std::string(what));
  } else {
    error = parse_error("expected space before " + std::string(what));
  }
  return false;
}

Parsed<std::string> mailbox(Cursor& c, std::string_view what) {
  Parsed<std::string> name = c.astring(what);
  if (!name) {
    return name;
  }
  return normalize_inbox(std::move(*name));
}

Parsed<SequenceSet> sequence_set(Cursor& c) {
  std::string_view text = c.take_while(is_set_char);
  if (text.empty()) {
    return missing_or_invalid(c, "sequence set");
  }
  int next = c.peek();
  if (next != -1 && next != ' ' && next != ')') {
    std::string_view rest = c.take_while([](char ch) { return ch != ' ' && ch != ')'; });
    return parse_error("invalid sequence set " + excerpt(std::string(text) + std::string(rest)));
  }
  return parse_sequence_set(text);
}

Parsed<std::string> flag(Cursor& c) {
  bool backslash = c.consume('\\');
  std::string_view name = c.atom();
  if (name.empty()) {
    if (backslash) {
      return parse_error("invalid flag \\" + excerpt(base::trim(c.rest_of_line())));
    }
    return missing_or_invalid(c, "flag");
  }
  if (!backslash) {
    return std::string(name);
  }
  std::string flag = "\\";  // not "\\" + std::string: a false -Wrestrict of GCC 12
  flag += name;
  return canonical_flag(flag);
}

Parsed<std::vector<std::string>> flag_list(Cursor& c) {
  if (!c.consume('(')) {
    return missing_or_invalid(c, "flag list");
  }
  std::vector<std::string> flags;
  c.space();
  while (!c.consume(')')) {
    if (!flags.empty() && !c.space()) {
      return parse_error("invalid flag list");
    }
    if (c.consume(')')) {
      break;
    }
    Parsed<std::string> f = flag(c);
    if (!f) {
      return f.error();
    }
    flags.push_back(std::move(*f));
  }
  return flags;
}

Parsed<std::vector<ExtParam>> ext_params(Cursor& c, std::string_view what) {
  if (!c.consume('(')) {
    return missing_or_invalid(c, what);
  }
  std::vector<ExtParam> params;
  c.space();
  while (!c.consume(')')) {
    if (!params.empty() && !c.space()) {
      return missing_or_invalid(c, "\")\" after " + std::string(what));
    }
    if (c.consume(')')) {
      break;
    }
    std::string_view name = c.atom();
    if (name.empty()) {
      return missing_or_invalid(c, what);
    }
    ExtParam p;
    p.name = base::to_upper(name);
    int next = -1;
    {
      // A value follows when the next token after SP starts like one.
      Cursor probe = c;
      if (probe.space()) {
        next = probe.peek();
      }
    }
    if (next == '(' || next == '*' || next == '$' || (next >= '0' && next <= '9')) {
      c.space();
      Parsed<ExtValue> v = ext_value(c, 0);
      if (!v) {
        return v.error();
      }
      p.value = std::move(*v);
    }
    params.push_back(std::move(p));
  }
  return params;
}

Parsed<SearchReturn> search_return(Cursor& c) {
  if (!c.keyword("RETURN")) {
    return missing_or_invalid(c, "RETURN");
  }
  SearchReturn r;
  if (!c.space() || !c.consume('(')) {
    return parse_error("missing result options after RETURN");
  }
  c.space();
  bool any = false;
  while (!c.consume(')')) {
    if (any && !c.space()) {
      return parse_error("invalid result options");
    }
    if (c.consume(')')) {
      break;
    }
    std::string_view opt = c.atom();
    if (base::iequals(opt, "MIN")) {
      r.min = true;
    } else if (base::iequals(opt, "MAX")) {
      r.max = true;
    } else if (base::iequals(opt, "ALL")) {
      r.all = true;
    } else if (base::iequals(opt, "COUNT")) {
      r.count = true;
    } else if (base::iequals(opt, "SAVE")) {
      r.save = true;
    } else if (opt.empty()) {
      return missing_or_invalid(c, "result option");
    } else {
      return parse_error("unknown result option " + excerpt(opt));
    }
    any = true;
  }
  if (!any) {
    r.all = true;  // "RETURN ()" (RFC 4731 §3.1)
  }
  return r;
}

ParseError trailing_error(Cursor& c) {
  if (c.at_literal()) {
    return parse_error("unexpected literal");
  }
  return parse_error("unexpected " + excerpt(base::trim(c.rest_of_line())));
}

}  // namespace peregrine::imap::internal
