#include "mime/address.h"

#include <algorithm>
#include <array>
#include <cstdint>
#include <utility>

#include "base/ascii.h"
#include "mime/header.h"

// RFC 5322 §3.4 address lists with the §4.4 obsolete forms, parsed leniently:
// a small lexer turns the value into words (atoms, quoted strings, domain
// literals), dots and specials, dropping CFWS but remembering where it was;
// a loop over elements builds the addresses. Nothing recurses, every loop
// consumes input, and each input byte is scanned a bounded number of times.

namespace peregrine::mime {
namespace {

enum class TokenKind : uint8_t {
  kAtom,           // text: the atom as written (a '\' outside quotes escapes a byte)
  kQuoted,         // text: the content between the quotes, escapes not yet removed
  kDomainLiteral,  // text: "[...]" as written
  kSpecial,        // text: the one special byte (the dot included)
  kEnd,
};

struct Token {
  TokenKind kind = TokenKind::kEnd;
  std::string_view text;
  bool space_before = false;  // CFWS came before it

  bool is(char c) const { return kind == TokenKind::kSpecial && text[0] == c; }
  bool is_dot() const { return is('.'); }
  bool is_word() const { return kind == TokenKind::kAtom || kind == TokenKind::kQuoted; }
  bool is_end() const { return kind == TokenKind::kEnd; }
};

// atext (RFC 5322 §3.2.3) plus 8-bit bytes (RFC 6532) and, leniently, control
// bytes: anything that is not whitespace, a special or a quote.
constexpr std::array<bool, 256> kAtomByte = [] {
  std::array<bool, 256> table{};
  table.fill(true);
  for (unsigned char c : std::string_view(" \t\r\n()<>[]:;@\\,.\"")) {
    table[c] = false;
  }
  return table;
}();

constexpr bool is_atom_byte(char c) { return kAtomByte[static_cast<unsigned char>(c)]; }

class Lexer {
 public:
  explicit Lexer(std::string_view s) : s_(s) {}

  Token peek() {
    if (!has_peeked_) {
      size_t start = pos_;
      peeked_ = scan();
      peeked_end_ = pos_;
      pos_ = start;
      has_peeked_ = true;
    }
    return peeked_;
  }

  Token next() {
    Token t = peek();
    pos_ = peeked_end_;
    has_peeked_ = false;
    return t;
  }

  size_t position() const { return pos_; }
  void rewind(size_t pos) {
    pos_ = pos;
    has_peeked_ = false;
  }

 private:
  // Skips whitespace, line ends and comments; true when anything was skipped.
  bool skip_cfws() {
    size_t start = pos_;
    while (pos_ < s_.size()) {
      char c = s_[pos_];
      if (c == ' ' || c == '\t' || c == '\r' || c == '\n') {
        ++pos_;
      } else if (c == '(') {
        skip_comment();
      } else {
        break;
      }
    }
    return pos_ != start;
  }

  // Nested comment with quoted-pairs; an unclosed one runs to the end.
  void skip_comment() {
    size_t depth = 0;
    while (pos_ < s_.size()) {
      char c = s_[pos_++];
      if (c == '\\') {
        if (pos_ < s_.size()) {
          ++pos_;
        }
      } else if (c == '(') {
        ++depth;
      } else if (c == ')') {
        if (--depth == 0) {
          return;
        }
      }
    }
  }

  Token scan() {
    Token t;
    t.space_before = skip_cfws();
    while (pos_ < s_.size()) {
      size_t start = pos_;
      char c = s_[pos_];
      if (c == '"') {
        if (!unclosed_quote_seen_) {
          size_t end = find_quote_end(start + 1);
          if (end != std::string_view::npos) {
            pos_ = end + 1;
            t.kind = TokenKind::kQuoted;
            t.text = s_.substr(start + 1, end - start - 1);
            return t;
          }
          // No closing quote anywhere after this one, so none after any later
          // quote either: from now on a quote is ignored (it usually is a
          // stray, as in `"unterminated <a@b>`).
          unclosed_quote_seen_ = true;
        }
        ++pos_;
        t.space_before = skip_cfws() || t.space_before;
        continue;
      }
      if (c == '[') {
        ++pos_;
        while (pos_ < s_.size() && s_[pos_] != ']') {
          pos_ += (s_[pos_] == '\\' && pos_ + 1 < s_.size()) ? 2 : 1;
        }
        if (pos_ < s_.size()) {
          ++pos_;
        }
        t.kind = TokenKind::kDomainLiteral;
        t.text = s_.substr(start, pos_ - start);
        return t;
      }
      if (is_atom_byte(c) || c == '\\') {
        while (pos_ < s_.size() && (is_atom_byte(s_[pos_]) || s_[pos_] == '\\')) {
          pos_ += (s_[pos_] == '\\' && pos_ + 1 < s_.size()) ? 2 : 1;
        }
        t.kind = TokenKind::kAtom;
        t.text = s_.substr(start, pos_ - start);
        return t;
      }
      ++pos_;
      t.kind = TokenKind::kSpecial;
      t.text = s_.substr(start, 1);
      return t;
    }
    t.kind = TokenKind::kEnd;
    return t;
  }

  size_t find_quote_end(size_t pos) const {
    while (pos < s_.size()) {
      if (s_[pos] == '\\') {
        pos += 2;
      } else if (s_[pos] == '"') {
        return pos;
      } else {
        ++pos;
      }
    }
    return std::string_view::npos;
  }

  std::string_view s_;
  size_t pos_ = 0;
  bool unclosed_quote_seen_ = false;
  bool has_peeked_ = false;
  Token peeked_;
  size_t peeked_end_ = 0;
};

// Appends a token's content: quoting and quoted-pairs removed, folds removed.
void append_content(std::string& out, const Token& t) {
  const bool unescape = t.kind != TokenKind::kDomainLiteral;
  std::string_view s = t.text;
  size_t run = 0;  // start of the bytes not yet appended
  for (size_t i = 0; i < s.size(); ++i) {
    char c = s[i];
    if (c == '\r' || c == '\n') {
      out.append(s.substr(run, i - run));
      run = i + 1;
    } else if (c == '\\' && unescape && i + 1 < s.size()) {
      out.append(s.substr(run, i - run));
      run = ++i;  // the escaped byte starts the next run, unless it is a line end
      if (s[i] == '\r' || s[i] == '\n') {
        run = i + 1;
      }
    }
  }
  out.append(s.substr(run));
}

// A phrase: words joined by one space wherever CFWS separated them.
std::optional<std::string> phrase_text(const Token* begin, const Token* end) {
  std::string out;
  for (const Token* t = begin; t != end; ++t) {
    if (t != begin && t->space_before && !out.empty()) {
      out += ' ';
    }
    append_content(out, *t);
  }
  std::string_view trimmed = base::trim(out);
  if (trimmed.empty()) {
    return std::nullopt;
  }
  if (trimmed.size() != out.size()) {
    return std::string(trimmed);
  }
  return out;
}

// A local part or domain: CFWS around dots is dropped (obs-local-part,
// obs-domain); between two words it stays as one space.
std::string dotted_text(const Token* begin, const Token* end) {
  std::string out;
  for (const Token* t = begin; t != end; ++t) {
    if (t != begin && t->space_before && !t->is_dot() && !t[-1].is_dot()) {
      out += ' ';
    }
    append_content(out, *t);
  }
  return out;
}

class AddressParser {
 public:
  explicit AddressParser(std::string_view value) : lex_(value) {
    size_t ats = 0;  // about one address per '@'
    for (size_t i = value.find('@'); i != std::string_view::npos; i = value.find('@', i + 1)) {
      ++ats;
    }
    out_.reserve(std::min(ats + 1, kMaxAddresses));
    words_.reserve(16);
  }

  std::vector<Address> parse() {
    while (!full_) {
      Token t = lex_.peek();
      if (t.is_end()) {
        break;
      }
      if (t.kind == TokenKind::kSpecial && !t.is('<') && !t.is('@') && !t.is(':') && !t.is('.')) {
        lex_.next();  // stray ',' ';' '>' ')' ']'
        continue;
      }
      if (!parse_element(/*in_group=*/false)) {
        skip_to_separator();  // a group ends at its ';': nothing to skip
      }
    }
    return std::move(out_);
  }

 private:
  // One mailbox, or (outside a group) a whole group; true for a group.
  bool parse_element(bool in_group) {
    for (;;) {
      words_.clear();
      for (;;) {
        Token t = lex_.peek();
        if (t.is_word() || t.is_dot() || t.kind == TokenKind::kDomainLiteral) {
          words_.push_back(lex_.next());
        } else if (t.is(')') || t.is(']') || t.is('>')) {
          lex_.next();
        } else {
          break;
        }
      }
      Token t = lex_.peek();
      if (t.is(':')) {
        lex_.next();
        if (!in_group) {
          parse_group();
          return true;
        }
        continue;  // groups do not nest: drop the inner group's name
      }
      if (t.is('<')) {
        lex_.next();
        parse_angle_addr(phrase_text(words_.data(), words_.data() + words_.size()), in_group);
        return false;
      }
      if (t.is('@')) {
        parse_bare_addr_spec(in_group);
        return false;
      }
      parse_lone_phrase(in_group);
      return false;
    }
  }

  void parse_group() {
    Address start;
    start.mailbox = phrase_text(words_.data(), words_.data() + words_.size()).value_or("");
    if (out_.size() + 2 > kMaxAddresses) {
      full_ = true;  // no room for the group and its end: stop here
      return;
    }
    out_.push_back(std::move(start));
    while (!full_) {
      Token t = lex_.peek();
      if (t.is_end()) {
        break;
      }
      if (t.is(';')) {
        lex_.next();
        break;
      }
      if (t.kind == TokenKind::kSpecial && !t.is('<') && !t.is('@') && !t.is('.')) {
        lex_.next();  // ',' or a stray
        continue;
      }
      parse_element(/*in_group=*/true);
      skip_to_separator();
    }
    out_.emplace_back();  // group end, room kept for it
  }

  // After '<': [obs-route] addr-spec, then up to the '>' if there is one.
  void parse_angle_addr(std::optional<std::string> name, bool in_group) {
    while (lex_.peek().is('<')) {
      lex_.next();
    }
    Address a;
    a.name = std::move(name);
    if (lex_.peek().is('@')) {
      size_t save = lex_.position();
      std::string route;
      bool closed = false;
      for (;;) {
        Token t = lex_.peek();
        if (t.is('@')) {
          lex_.next();
          if (!route.empty()) {
            route += ',';
          }
          route += '@';
          route += parse_domain();
        } else if (t.is(',')) {
          lex_.next();
        } else {
          closed = t.is(':');
          break;
        }
      }
      if (closed) {
        lex_.next();
        a.adl = std::move(route);
      } else {
        lex_.rewind(save);  // "<@host>": an empty local part, not a route
      }
    }
    words_.clear();
    for (Token t = lex_.peek(); t.is_word() || t.is_dot(); t = lex_.peek()) {
      words_.push_back(lex_.next());
    }
    a.mailbox = dotted_text(words_.data(), words_.data() + words_.size());
    a.host = "";
    if (lex_.peek().is('@')) {
      lex_.next();
      a.host = parse_domain();
    }
    for (Token t = lex_.peek(); !t.is_end(); t = lex_.peek()) {
      if (t.is(',') || (in_group && t.is(';'))) {
        break;
      }
      lex_.next();
      if (t.is('>')) {
        break;
      }
    }
    emit(std::move(a), in_group);
  }

  // words_ end with the local part, '@' is next. Words before the local part
  // (a missing '<', as in `John Smith john@example.com`) become the name.
  void parse_bare_addr_spec(bool in_group) {
    size_t start = words_.size();
    if (start > 0) {
      --start;
      while (start > 0) {
        const Token& cur = words_[start];
        const Token& prev = words_[start - 1];
        if (!cur.is_dot() && !prev.is_dot() && cur.space_before) {
          break;
        }
        --start;
      }
    }
    Address a;
    a.name = phrase_text(words_.data(), words_.data() + start);
    a.mailbox = dotted_text(words_.data() + start, words_.data() + words_.size());
    lex_.next();  // '@'
    a.host = parse_domain();
    emit(std::move(a), in_group);
  }

  // A phrase with no address: one word is a local part without a domain
  // ("root"), several words a display name without an address.
  void parse_lone_phrase(bool in_group) {
    if (words_.empty()) {
      return;
    }
    bool one_word = true;
    for (size_t i = 1; i < words_.size(); ++i) {
      one_word = one_word && !words_[i].space_before;
    }
    Address a;
    if (one_word) {
      a.mailbox = dotted_text(words_.data(), words_.data() + words_.size());
    } else {
      a.name = phrase_text(words_.data(), words_.data() + words_.size());
      a.mailbox = "";
    }
    a.host = "";
    emit(std::move(a), in_group);
  }

  // dot-atom, domain-literal or obs-domain; "" when there is none.
  std::string parse_domain() {
    std::string out;
    bool want_part = true;
    for (;;) {
      Token t = lex_.peek();
      if (t.is_dot()) {
        out += '.';
        want_part = true;
      } else if (want_part && (t.kind == TokenKind::kAtom || t.kind == TokenKind::kDomainLiteral)) {
        append_content(out, t);
        want_part = false;
      } else {
        return out;
      }
      lex_.next();
    }
  }

  // Skips what is left of an element up to the next ',' or ';'.
  void skip_to_separator() {
    for (Token t = lex_.peek(); !t.is_end() && !t.is(',') && !t.is(';'); t = lex_.peek()) {
      lex_.next();
    }
  }

  void emit(Address a, bool in_group) {
    if (!a.name && !a.adl && a.mailbox && a.mailbox->empty() && a.host && a.host->empty()) {
      return;  // nothing there: "<>", a lone "@"
    }
    // Inside a group one slot stays free for the group's end.
    if (out_.size() + (in_group ? 1 : 0) < kMaxAddresses) {
      out_.push_back(std::move(a));
    } else {
      full_ = true;
    }
  }

  Lexer lex_;
  std::vector<Token> words_;
  std::vector<Address> out_;
  bool full_ = false;  // kMaxAddresses reached
};

}  // namespace

std::vector<Address> parse_address_list(std::string_view value) {
  return AddressParser(value).parse();
}

std::string decoded_name(const Address& address) {
  if (!address.name) {
    return "";
  }
  return decode_header_value(*address.name);
}

std::string addr_spec(const Address& address) {
  std::string out = address.mailbox.value_or("");
  if (address.host && !address.host->empty()) {
    out += '@';
    out += *address.host;
  }
  return out;
}

}  // namespace peregrine::mime
