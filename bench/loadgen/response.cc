#include "bench/loadgen/response.h"

namespace peregrine::bench {

namespace {

constexpr std::size_t kMaxLiteralDigits = 10;
constexpr int kMaxDepth = 64;

char upper(char c) { return (c >= 'a' && c <= 'z') ? static_cast<char>(c - 'a' + 'A') : c; }

bool is_digit(char c) { return c >= '0' && c <= '9'; }

// The literal length a line announces at its end ("{12}" or "~{12}", the
// "+" form too), or -1 when it announces none, -2 when the braces hold junk.
long long literal_at_end(std::string_view line) {
  if (line.empty() || line.back() != '}') {
    return -1;
  }
  std::size_t open = line.rfind('{');
  if (open == std::string_view::npos) {
    return -1;
  }
  std::string_view digits = line.substr(open + 1, line.size() - open - 2);
  if (!digits.empty() && digits.back() == '+') {
    digits.remove_suffix(1);
  }
  if (digits.empty() || digits.size() > kMaxLiteralDigits) {
    return -2;
  }
  long long n = 0;
  for (char c : digits) {
    if (!is_digit(c)) {
      return -2;
    }
    n = n * 10 + (c - '0');
  }
  return n;
}

// A cursor over one response, without its CRLF.
class Cursor {
 public:
  explicit Cursor(std::string_view s) : s_(s) {}

  bool at_end() const { return pos_ >= s_.size(); }
  char peek() const { return at_end() ? '\0' : s_[pos_]; }
  std::size_t pos() const { return pos_; }
  std::string_view rest() const { return s_.substr(pos_); }
  std::string_view slice(std::size_t from, std::size_t to) const {
    return s_.substr(from, to - from);
  }

  bool eat(char c) {
    if (peek() != c) {
      return false;
    }
    ++pos_;
    return true;
  }

  // Characters up to a space, parenthesis, bracket or the end.
  std::string_view atom() {
    std::size_t start = pos_;
    while (!at_end()) {
      char c = s_[pos_];
      if (c == ' ' || c == '(' || c == ')' || c == '[' || c == ']' || c == '{' || c == '"' ||
          static_cast<unsigned char>(c) < 0x20) {
        break;
      }
      ++pos_;
    }
    return s_.substr(start, pos_ - start);
  }

  bool number(std::uint32_t& out) {
    std::size_t start = pos_;
    unsigned long long n = 0;
    while (!at_end() && is_digit(s_[pos_])) {
      n = n * 10 + static_cast<unsigned>(s_[pos_] - '0');
      if (n > 0xffffffffULL) {
        return false;
      }
      ++pos_;
    }
    out = static_cast<std::uint32_t>(n);
    return pos_ > start;
  }

  // A string (quoted or literal) or NIL; `size` is its length in bytes.
  bool nstring(std::size_t& size) {
    if (peek() == '"') {
      return quoted(size);
    }
    if (peek() == '{' || (peek() == '~' && s_.substr(pos_ + 1, 1) == "{")) {
      return literal(size);
    }
    std::string_view a = atom();
    size = 0;
    return iequals(a, "NIL");
  }

  bool quoted(std::size_t& size) {
    if (!eat('"')) {
      return false;
    }
    size = 0;
    while (!at_end()) {
      char c = s_[pos_++];
      if (c == '"') {
        return true;
      }
      if (c == '\\') {
        if (at_end()) {
          return false;
        }
        ++pos_;
      }
      if (c == '\r' || c == '\n') {
        return false;
      }
      ++size;
    }
    return false;
  }

  bool literal(std::size_t& size) {
    eat('~');
    if (!eat('{')) {
      return false;
    }
    std::uint32_t n = 0;
    if (!number(n) || !eat('}') || !eat('\r') || !eat('\n')) {
      return false;
    }
    if (s_.size() - pos_ < n) {
      return false;
    }
    pos_ += n;
    size = n;
    return true;
  }

  // Any value: atom, number, string, literal, NIL or a parenthesized list.
  bool value(int depth) {
    if (depth > kMaxDepth) {
      return false;
    }
    char c = peek();
    std::size_t size = 0;
    if (c == '(') {
      ++pos_;
      return list_rest(depth);
    }
    if (c == '"') {
      return quoted(size);
    }
    if (c == '{' || c == '~') {
      return literal(size);
    }
    std::string_view a = atom();
    if (a.empty()) {
      return false;
    }
    if (peek() == '[') {  // BODY[...]<n> style names inside lists are not values
      return false;
    }
    return true;
  }

  // After "(": values separated by single spaces, then ")". A list may
  // follow a list with no space: the parts of a multipart BODYSTRUCTURE
  // (RFC 3501 body-type-mpart = 1*body SP media-subtype).
  bool list_rest(int depth) {
    if (eat(')')) {
      return true;
    }
    while (true) {
      if (!value(depth + 1)) {
        return false;
      }
      if (eat(')')) {
        return true;
      }
      if (peek() == '(' && s_[pos_ - 1] == ')') {
        continue;
      }
      if (!eat(' ')) {
        return false;
      }
    }
  }

  // A FETCH item name: an atom, an optional section "[...]" (which may hold
  // quoted strings and lists), and an optional "<origin>".
  bool fetch_item_name(std::string_view& name) {
    std::size_t start = pos_;
    atom();
    if (pos_ == start) {
      return false;
    }
    if (eat('[')) {
      bool in_quote = false;
      while (true) {
        if (at_end()) {
          return false;
        }
        char c = s_[pos_++];
        if (in_quote && c == '\\') {
          ++pos_;
        } else if (c == '"') {
          in_quote = !in_quote;
        } else if (c == ']' && !in_quote) {
          break;
        }
      }
      if (eat('<')) {
        std::uint32_t origin = 0;
        if (!number(origin) || !eat('>')) {
          return false;
        }
      }
    }
    name = s_.substr(start, pos_ - start);
    return true;
  }

 private:
  std::string_view s_;
  std::size_t pos_ = 0;
};

bool starts_with_ci(std::string_view s, std::string_view prefix) {
  return s.size() >= prefix.size() && iequals(s.substr(0, prefix.size()), prefix);
}

bool fail(std::string& error, const char* what) {
  error = what;
  return false;
}

Status status_of(std::string_view word) {
  if (iequals(word, "OK")) return Status::kOk;
  if (iequals(word, "NO")) return Status::kNo;
  if (iequals(word, "BAD")) return Status::kBad;
  if (iequals(word, "BYE")) return Status::kBye;
  if (iequals(word, "PREAUTH")) return Status::kPreauth;
  return Status::kNone;
}

// "[code] text" or "text" after a status word and its space.
bool resp_text(Cursor& c, Response& out, std::string& error) {
  if (c.eat('[')) {
    std::string_view rest = c.rest();
    std::size_t close = rest.find(']');
    if (close == std::string_view::npos) {
      return fail(error, "response code without ']'");
    }
    out.code = rest.substr(0, close);
    for (std::size_t i = 0; i <= close; ++i) {
      c.eat(rest[i]);
    }
    c.eat(' ');
  }
  out.text = c.rest();
  return true;
}

bool parse_flags(Cursor& c, FetchData& f, std::string& error) {
  if (!c.eat('(')) {
    return fail(error, "FLAGS without '('");
  }
  f.has_flags = true;
  if (c.eat(')')) {
    return true;
  }
  while (true) {
    std::size_t start = c.pos();
    c.eat('\\');
    std::string_view a = c.atom();
    bool star = c.eat('*');  // "\\*" (PERMANENTFLAGS only)
    if (a.empty() && !star) {
      return fail(error, "bad flag in FLAGS");
    }
    f.flags.push_back(c.slice(start, c.pos()));
    if (c.eat(')')) {
      return true;
    }
    if (!c.eat(' ')) {
      return fail(error, "bad separator in FLAGS");
    }
  }
}

bool parse_fetch(Cursor& c, Response& out, std::string& error) {
  if (!c.eat('(')) {
    return fail(error, "FETCH without '('");
  }
  FetchData& f = out.fetch;
  while (true) {
    std::string_view name;
    if (!c.fetch_item_name(name)) {
      return fail(error, "bad FETCH item name");
    }
    if (!c.eat(' ')) {
      return fail(error, "FETCH item without value");
    }
    if (iequals(name, "UID")) {
      if (!c.number(f.uid) || f.uid == 0) {
        return fail(error, "bad UID in FETCH");
      }
    } else if (iequals(name, "FLAGS")) {
      if (!parse_flags(c, f, error)) {
        return false;
      }
    } else if (starts_with_ci(name, "BODY[") || starts_with_ci(name, "BINARY[") ||
               iequals(name, "RFC822") || iequals(name, "RFC822.TEXT") ||
               iequals(name, "RFC822.HEADER")) {
      std::size_t size = 0;
      if (!c.nstring(size)) {
        return fail(error, "bad body section value in FETCH");
      }
      f.has_body = true;
      f.body_size = size;
    } else {
      if (iequals(name, "ENVELOPE")) {
        f.has_envelope = true;
      } else if (iequals(name, "BODYSTRUCTURE")) {
        f.has_bodystructure = true;
      } else if (iequals(name, "INTERNALDATE")) {
        f.has_internaldate = true;
      }
      if (!c.value(0)) {
        return fail(error, "bad FETCH item value");
      }
    }
    if (c.eat(')')) {
      break;
    }
    if (!c.eat(' ')) {
      return fail(error, "bad separator in FETCH");
    }
  }
  if (!c.at_end()) {
    return fail(error, "junk after FETCH");
  }
  return true;
}

bool parse_numbered(Cursor& c, Response& out, std::string& error) {
  if (!c.number(out.number) || !c.eat(' ')) {
    return fail(error, "bad message number");
  }
  std::string_view word = c.atom();
  if (iequals(word, "EXISTS")) {
    out.data = Data::kExists;
  } else if (iequals(word, "RECENT")) {
    out.data = Data::kRecent;
  } else if (iequals(word, "EXPUNGE")) {
    out.data = Data::kExpunge;
    if (out.number == 0) {
      return fail(error, "EXPUNGE of message 0");
    }
  } else if (iequals(word, "FETCH")) {
    out.data = Data::kFetch;
    if (out.number == 0) {
      return fail(error, "FETCH of message 0");
    }
    if (!c.eat(' ')) {
      return fail(error, "FETCH without data");
    }
    return parse_fetch(c, out, error);
  } else {
    return fail(error, "unknown numbered response");
  }
  if (!c.at_end()) {
    return fail(error, "junk after numbered response");
  }
  return true;
}

bool parse_search(Cursor& c, Response& out, std::string& error) {
  while (c.eat(' ')) {
    if (c.peek() == '(') {  // (MODSEQ n) of CONDSTORE
      return c.value(0) && c.at_end() ? true : fail(error, "bad SEARCH modifier");
    }
    std::uint32_t n = 0;
    if (!c.number(n) || n == 0) {
      return fail(error, "bad number in SEARCH");
    }
    out.search.push_back(n);
  }
  return c.at_end() ? true : fail(error, "junk in SEARCH");
}

bool parse_mailbox_status(Cursor& c, Response& out, std::string& error) {
  // STATUS SP mailbox SP "(" [item SP number *(SP item SP number)] ")"
  if (!c.eat(' ') || !c.value(0) || !c.eat(' ') || !c.eat('(')) {
    return fail(error, "bad STATUS response");
  }
  if (!c.eat(')')) {
    while (true) {
      std::string_view item = c.atom();
      std::uint32_t n = 0;
      if (item.empty() || !c.eat(' ') || !c.number(n)) {
        return fail(error, "bad STATUS item");
      }
      if (iequals(item, "MESSAGES")) {
        out.status_messages = n;
      }
      if (c.eat(')')) {
        break;
      }
      if (!c.eat(' ')) {
        return fail(error, "bad STATUS separator");
      }
    }
  }
  return c.at_end() ? true : fail(error, "junk after STATUS");
}

// The rest of an untagged response that is neither numbered nor a status
// response: values separated by spaces, checked for balance only.
bool parse_other(Cursor& c, std::string& error) {
  while (c.eat(' ')) {
    if (c.at_end()) {
      return true;  // a trailing space (some servers send "* SEARCH ")
    }
    if (c.peek() == '[' || c.peek() == ']') {  // LIST-EXTENDED etc. may carry text
      c.eat(c.peek());
      continue;
    }
    if (c.peek() == '\\') {
      c.eat('\\');
    }
    if (!c.value(0)) {
      return fail(error, "unbalanced untagged data");
    }
  }
  return c.at_end() ? true : fail(error, "junk in untagged data");
}

}  // namespace

bool iequals(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) {
    return false;
  }
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (upper(a[i]) != upper(b[i])) {
      return false;
    }
  }
  return true;
}

Frame Framer::next(std::string_view data) {
  std::size_t pos = scanned_;
  while (true) {
    std::size_t lf = data.find('\n', pos);
    if (lf == std::string_view::npos) {
      scanned_ = pos;
      if (data.size() > max_response_) {
        return {FrameStatus::kMalformed, 0};
      }
      return {FrameStatus::kNeedMore, 0};
    }
    std::string_view line = data.substr(pos, lf - pos);
    if (!line.empty() && line.back() == '\r') {
      line.remove_suffix(1);
    }
    long long literal = literal_at_end(line);
    if (literal == -2) {
      scanned_ = 0;
      return {FrameStatus::kMalformed, 0};
    }
    if (literal < 0) {
      scanned_ = 0;
      return {FrameStatus::kComplete, lf + 1};
    }
    std::size_t after = lf + 1 + static_cast<std::size_t>(literal);
    if (after > max_response_) {
      scanned_ = 0;
      return {FrameStatus::kMalformed, 0};
    }
    if (data.size() < after) {
      scanned_ = pos;  // rescan this one line when the literal has arrived
      return {FrameStatus::kNeedMore, 0};
    }
    pos = after;
  }
}

bool parse_response(std::string_view wire, Response& out, std::string& error) {
  out = Response();
  if (wire.size() < 2 || wire.substr(wire.size() - 2) != "\r\n") {
    return fail(error, "response without CRLF");
  }
  Cursor c(wire.substr(0, wire.size() - 2));
  if (c.eat('+')) {
    out.kind = Kind::kContinuation;
    c.eat(' ');
    out.text = c.rest();
    return true;
  }
  if (c.eat('*')) {
    out.kind = Kind::kUntagged;
    if (!c.eat(' ')) {
      return fail(error, "no space after '*'");
    }
    if (is_digit(c.peek())) {
      return parse_numbered(c, out, error);
    }
    std::string_view word = c.atom();
    out.status = status_of(word);
    if (out.status != Status::kNone) {
      out.data = Data::kStatus;
      if (!c.eat(' ')) {
        return c.at_end() ? true : fail(error, "bad untagged status response");
      }
      return resp_text(c, out, error);
    }
    if (word.empty()) {
      return fail(error, "empty untagged response");
    }
    out.atom = word;
    if (iequals(word, "SEARCH")) {
      out.data = Data::kSearch;
      return parse_search(c, out, error);
    }
    if (iequals(word, "STATUS")) {
      out.data = Data::kMailboxStatus;
      return parse_mailbox_status(c, out, error);
    }
    out.data = Data::kOther;
    return parse_other(c, error);
  }
  out.kind = Kind::kTagged;
  out.tag = c.atom();
  if (out.tag.empty() || !c.eat(' ')) {
    return fail(error, "bad tag");
  }
  out.status = status_of(c.atom());
  if (out.status != Status::kOk && out.status != Status::kNo && out.status != Status::kBad) {
    return fail(error, "tagged response is not OK, NO or BAD");
  }
  if (!c.eat(' ')) {
    return c.at_end() ? true : fail(error, "bad tagged response");
  }
  return resp_text(c, out, error);
}

}  // namespace peregrine::bench
