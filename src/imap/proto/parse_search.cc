// SEARCH, SORT and THREAD, and the search-key grammar they share.

#include "base/ascii.h"
#include "imap/proto/chars.h"
#include "imap/proto/parse_commands.h"
#include "imap/proto/parse_common.h"

namespace peregrine::imap::internal {
namespace {

using K = SearchKeyKind;

enum class Arg : uint8_t {
  kNone,
  kString,
  kHeader,
  kKeyword,
  kDate,
  kSize,
  kSeconds,
  kSet,
  kNot,
  kOr,
  kModSeq
};

struct KeySyntax {
  std::string_view name;
  K kind;
  Arg arg;
};

constexpr KeySyntax kKeys[] = {
    {"ALL", K::kAll, Arg::kNone},
    {"ANSWERED", K::kAnswered, Arg::kNone},
    {"BCC", K::kBcc, Arg::kString},
    {"BEFORE", K::kBefore, Arg::kDate},
    {"BODY", K::kBody, Arg::kString},
    {"CC", K::kCc, Arg::kString},
    {"DELETED", K::kDeleted, Arg::kNone},
    {"DRAFT", K::kDraft, Arg::kNone},
    {"FLAGGED", K::kFlagged, Arg::kNone},
    {"FROM", K::kFrom, Arg::kString},
    {"HEADER", K::kHeader, Arg::kHeader},
    {"KEYWORD", K::kKeyword, Arg::kKeyword},
    {"LARGER", K::kLarger, Arg::kSize},
    {"MODSEQ", K::kModSeq, Arg::kModSeq},
    {"NEW", K::kNew, Arg::kNone},
    {"NOT", K::kNot, Arg::kNot},
    {"OLD", K::kOld, Arg::kNone},
    {"OLDER", K::kOlder, Arg::kSeconds},
    {"ON", K::kOn, Arg::kDate},
    {"OR", K::kOr, Arg::kOr},
    {"RECENT", K::kRecent, Arg::kNone},
    {"SEEN", K::kSeen, Arg::kNone},
    {"SENTBEFORE", K::kSentBefore, Arg::kDate},
    {"SENTON", K::kSentOn, Arg::kDate},
    {"SENTSINCE", K::kSentSince, Arg::kDate},
    {"SINCE", K::kSince, Arg::kDate},
    {"SMALLER", K::kSmaller, Arg::kSize},
    {"SUBJECT", K::kSubject, Arg::kString},
    {"TEXT", K::kText, Arg::kString},
    {"TO", K::kTo, Arg::kString},
    {"UID", K::kUid, Arg::kSet},
    {"UNANSWERED", K::kUnanswered, Arg::kNone},
    {"UNDELETED", K::kUndeleted, Arg::kNone},
    {"UNDRAFT", K::kUndraft, Arg::kNone},
    {"UNFLAGGED", K::kUnflagged, Arg::kNone},
    {"UNKEYWORD", K::kUnkeyword, Arg::kKeyword},
    {"UNSEEN", K::kUnseen, Arg::kNone},
    {"YOUNGER", K::kYounger, Arg::kSeconds},
};

constexpr uint64_t kMaxNumber64 = 0x7fffffffffffffffull;

Parsed<SearchKey> search_key(Cursor& c, int depth);

Parsed<Date> search_date(Cursor& c) {
  std::string text;
  if (c.peek() == '"') {
    Parsed<std::string> q = c.string("date");
    if (!q) {
      return q.error();
    }
    text = std::move(*q);
  } else {
    text = std::string(c.atom());
    if (text.empty()) {
      return missing_or_invalid(c, "date");
    }
  }
  return parse_date(text);
}

// The argument of `key` (already named), after its SP.
std::optional<ParseError> key_argument(Cursor& c, std::string_view name, Arg arg, SearchKey& key,
                                       int depth) {
  ParseError error;
  if (!space_before(c, "argument of " + std::string(name), error)) {
    return error;
  }
  switch (arg) {
    case Arg::kNone:
      break;
    case Arg::kString: {
      Parsed<std::string> s = c.astring("search string");
      if (!s) {
        return s.error();
      }
      key.text = std::move(*s);
      break;
    }
    case Arg::kHeader: {
      Parsed<std::string> f = c.astring("header field name");
      if (!f) {
        return f.error();
      }
      if (!space_before(c, "search string", error)) {
        return error;
      }
      Parsed<std::string> s = c.astring("search string");
      if (!s) {
        return s.error();
      }
      key.field = std::move(*f);
      key.text = std::move(*s);
      break;
    }
    case Arg::kKeyword: {
      std::string_view k = c.atom();
      if (k.empty()) {
        return missing_or_invalid(c, "keyword");
      }
      key.text = std::string(k);
      break;
    }
    case Arg::kDate: {
      Parsed<Date> d = search_date(c);
      if (!d) {
        return d.error();
      }
      key.date = *d;
      break;
    }
    case Arg::kSize:
    case Arg::kSeconds: {
      Parsed<uint64_t> n = c.number(arg == Arg::kSize ? "size" : "interval",
                                    arg == Arg::kSize ? 0 : 1, kMaxNumber64);
      if (!n) {
        return n.error();
      }
      key.number = *n;
      break;
    }
    case Arg::kSet: {
      Parsed<SequenceSet> s = sequence_set(c);
      if (!s) {
        return s.error();
      }
      key.set = std::move(*s);
      break;
    }
    case Arg::kNot:
    case Arg::kOr: {
      for (int i = 0; i < (arg == Arg::kOr ? 2 : 1); ++i) {
        if (i > 0 && !space_before(c, "search key", error)) {
          return error;
        }
        Parsed<SearchKey> child = search_key(c, depth + 1);
        if (!child) {
          return child.error();
        }
        key.children.push_back(std::move(*child));
      }
      break;
    }
    case Arg::kModSeq: {
      if (c.peek() == '"' || c.at_literal()) {
        // search-modseq-ext: entry-name SP entry-type-req (RFC 7162 §3.1.5)
        Parsed<std::string> entry = c.string("entry name");
        if (!entry) {
          return entry.error();
        }
        if (!space_before(c, "entry type", error)) {
          return error;
        }
        std::string type = base::to_lower(c.atom());
        if (type != "priv" && type != "shared" && type != "all") {
          return parse_error("invalid entry type " + excerpt(type));
        }
        if (!space_before(c, "mod-sequence", error)) {
          return error;
        }
        key.field = std::move(*entry);
        key.text = std::move(type);
      }
      Parsed<uint64_t> n = c.number("mod-sequence", 0, kMaxNumber64);
      if (!n) {
        return n.error();
      }
      key.number = *n;
      break;
    }
  }
  return std::nullopt;
}

// search-key *(SP search-key) up to `close` (")" or the end).
Parsed<SearchKey> key_list(Cursor& c, int depth, bool parenthesised) {
  SearchKey all;
  all.kind = K::kAnd;
  for (;;) {
    Parsed<SearchKey> key = search_key(c, depth);
    if (!key) {
      return key.error();
    }
    all.children.push_back(std::move(*key));
    bool sp = c.space();
    if (parenthesised) {
      if (c.consume(')')) {
        break;
      }
      if (c.at_end()) {
        return parse_error("missing \")\" after search keys");
      }
    } else if (c.at_end()) {
      break;
    }
    if (!sp || c.peek() == ')') {
      return trailing_error(c);
    }
  }
  if (all.children.size() == 1) {
    return std::move(all.children[0]);
  }
  return all;
}

Parsed<SearchKey> search_key(Cursor& c, int depth) {
  if (depth >= kMaxDepth) {
    return parse_error("search keys nested too deeply");
  }
  if (c.consume('(')) {
    c.space();
    return key_list(c, depth + 1, /*parenthesised=*/true);
  }
  int p = c.peek();
  if ((p >= '0' && p <= '9') || p == '*' || p == '$') {
    Parsed<SequenceSet> set = sequence_set(c);
    if (!set) {
      return set.error();
    }
    SearchKey key;
    key.kind = K::kSequenceSet;
    key.set = std::move(*set);
    return key;
  }
  std::string_view name = c.atom();
  if (name.empty()) {
    return missing_or_invalid(c, "search key");
  }
  for (const KeySyntax& k : kKeys) {
    if (base::iequals(name, k.name)) {
      SearchKey key;
      key.kind = k.kind;
      if (k.arg != Arg::kNone) {
        if (std::optional<ParseError> error = key_argument(c, k.name, k.arg, key, depth)) {
          return *error;
        }
      }
      return key;
    }
  }
  return parse_error("unknown search key " + excerpt(name));
}

// "CHARSET" SP astring, when present at the cursor (after an SP).
Parsed<std::string> charset_name(Cursor& c) {
  Parsed<std::string> cs = c.astring("charset");
  if (!cs) {
    return cs;
  }
  return base::to_upper(*cs);
}

// Reads the optional " RETURN (...)" before the arguments.
std::optional<ParseError> optional_return(Cursor& c, std::optional<SearchReturn>& out) {
  Cursor probe = c;
  if (probe.space() && probe.keyword("RETURN")) {
    c.space();
    Parsed<SearchReturn> r = search_return(c);
    if (!r) {
      return r.error();
    }
    out = *r;
  }
  return std::nullopt;
}

Parsed<SortKey> sort_key(Cursor& c) {
  static constexpr std::pair<std::string_view, SortKey> kSortKeys[] = {
      {"ARRIVAL", SortKey::kArrival},
      {"CC", SortKey::kCc},
      {"DATE", SortKey::kDate},
      {"FROM", SortKey::kFrom},
      {"SIZE", SortKey::kSize},
      {"SUBJECT", SortKey::kSubject},
      {"TO", SortKey::kTo},
      {"DISPLAYFROM", SortKey::kDisplayFrom},
      {"DISPLAYTO", SortKey::kDisplayTo},
  };
  std::string_view name = c.atom();
  if (name.empty()) {
    return missing_or_invalid(c, "sort criterion");
  }
  for (const auto& [n, key] : kSortKeys) {
    if (base::iequals(name, n)) {
      return key;
    }
  }
  return parse_error("unknown sort criterion " + excerpt(name));
}

}  // namespace

Parsed<SearchKey> search_keys(Cursor& c) {
  ParseError error;
  if (!space_before(c, "search key", error)) {
    return error;
  }
  return key_list(c, 0, /*parenthesised=*/false);
}

namespace {

// SP charset, into `out` (a std::string or an optional one).
template <typename Out>
std::optional<ParseError> charset_after_space(Cursor& c, Out& out) {
  ParseError error;
  if (!space_before(c, "charset", error)) {
    return error;
  }
  Parsed<std::string> cs = charset_name(c);
  if (!cs) {
    return cs.error();
  }
  out = std::move(*cs);
  return std::nullopt;
}

// The search keys that end SEARCH, SORT and THREAD, into `args.key`.
template <typename Args>
Parsed<CommandArgs> with_search_keys(Cursor& c, Args args) {
  Parsed<SearchKey> key = search_keys(c);
  if (!key) {
    return key.error();
  }
  args.key = std::move(*key);
  return CommandArgs(std::move(args));
}

}  // namespace

Parsed<CommandArgs> parse_search(Cursor& c, bool /*uid*/) {
  Search s;
  if (std::optional<ParseError> e = optional_return(c, s.result_options)) {
    return *e;
  }
  Cursor probe = c;
  if (probe.space() && probe.keyword("CHARSET")) {
    c.space();
    c.keyword("CHARSET");
    if (std::optional<ParseError> e = charset_after_space(c, s.charset)) {
      return *e;
    }
  }
  return with_search_keys(c, std::move(s));
}

Parsed<CommandArgs> parse_sort(Cursor& c, bool /*uid*/) {
  Sort s;
  if (std::optional<ParseError> e = optional_return(c, s.result_options)) {
    return *e;
  }
  ParseError error;
  if (!space_before(c, "sort criteria", error)) {
    return error;
  }
  if (!c.consume('(')) {
    return missing_or_invalid(c, "sort criteria");
  }
  for (;;) {
    c.space();
    SortCriterion criterion;
    if (c.keyword("REVERSE")) {
      criterion.reverse = true;
      if (!space_before(c, "sort criterion", error)) {
        return error;
      }
    }
    Parsed<SortKey> key = sort_key(c);
    if (!key) {
      return key.error();
    }
    criterion.key = *key;
    s.criteria.push_back(criterion);
    c.space();
    if (c.consume(')')) {
      break;
    }
    if (c.at_end()) {
      return parse_error("missing \")\" after sort criteria");
    }
  }
  if (std::optional<ParseError> e = charset_after_space(c, s.charset)) {
    return *e;
  }
  return with_search_keys(c, std::move(s));
}

Parsed<CommandArgs> parse_thread(Cursor& c, bool /*uid*/) {
  Thread t;
  ParseError error;
  if (!space_before(c, "threading algorithm", error)) {
    return error;
  }
  std::string_view alg = c.atom();
  if (alg.empty()) {
    return missing_or_invalid(c, "threading algorithm");
  }
  t.algorithm = base::to_upper(alg);
  if (std::optional<ParseError> e = charset_after_space(c, t.charset)) {
    return *e;
  }
  return with_search_keys(c, std::move(t));
}

}  // namespace peregrine::imap::internal
