#include "mime/search_text.h"

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstring>
#include <optional>

#include "base/ascii.h"
#include "mime/address.h"
#include "mime/charset.h"
#include "mime/header.h"
#include "mime/transfer.h"

namespace peregrine::mime {

namespace {

// ---------------------------------------------------------------------------
// HTML

void append_utf8(std::string& out, uint32_t cp) {
  if (cp == 0 || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) {
    cp = 0xFFFD;
  }
  if (cp < 0x80) {
    out.push_back(static_cast<char>(cp));
  } else if (cp < 0x800) {
    out.push_back(static_cast<char>(0xC0 | (cp >> 6)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else if (cp < 0x10000) {
    out.push_back(static_cast<char>(0xE0 | (cp >> 12)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else {
    out.push_back(static_cast<char>(0xF0 | (cp >> 18)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  }
}

struct NamedEntity {
  std::string_view name;
  uint32_t code_point;
};

// Sorted by name (byte order) for binary search. Names are case-sensitive
// (&Eacute; is not &eacute;). &nbsp; is read as a plain space: search text
// wants "a&nbsp;b" to match "a b".
constexpr NamedEntity kEntities[] = {
    {"AElig", 0xC6},    {"Aacute", 0xC1},   {"Acirc", 0xC2},    {"Agrave", 0xC0},
    {"Alpha", 0x391},   {"Aring", 0xC5},    {"Atilde", 0xC3},   {"Auml", 0xC4},
    {"Beta", 0x392},    {"Ccedil", 0xC7},   {"Dagger", 0x2021}, {"Delta", 0x394},
    {"ETH", 0xD0},      {"Eacute", 0xC9},   {"Ecirc", 0xCA},    {"Egrave", 0xC8},
    {"Euml", 0xCB},     {"Gamma", 0x393},   {"Iacute", 0xCD},   {"Icirc", 0xCE},
    {"Igrave", 0xCC},   {"Iuml", 0xCF},     {"Ntilde", 0xD1},   {"OElig", 0x152},
    {"Oacute", 0xD3},   {"Ocirc", 0xD4},    {"Ograve", 0xD2},   {"Omega", 0x3A9},
    {"Oslash", 0xD8},   {"Otilde", 0xD5},   {"Ouml", 0xD6},     {"Pi", 0x3A0},
    {"Prime", 0x2033},  {"Scaron", 0x160},  {"Sigma", 0x3A3},   {"THORN", 0xDE},
    {"Uacute", 0xDA},   {"Ucirc", 0xDB},    {"Ugrave", 0xD9},   {"Uuml", 0xDC},
    {"Yacute", 0xDD},   {"Yuml", 0x178},    {"aacute", 0xE1},   {"acirc", 0xE2},
    {"acute", 0xB4},    {"aelig", 0xE6},    {"agrave", 0xE0},   {"alpha", 0x3B1},
    {"amp", '&'},       {"apos", '\''},     {"aring", 0xE5},    {"atilde", 0xE3},
    {"auml", 0xE4},     {"bdquo", 0x201E},  {"beta", 0x3B2},    {"brvbar", 0xA6},
    {"bull", 0x2022},   {"ccedil", 0xE7},   {"cedil", 0xB8},    {"cent", 0xA2},
    {"circ", 0x2C6},    {"clubs", 0x2663},  {"copy", 0xA9},     {"curren", 0xA4},
    {"dagger", 0x2020}, {"darr", 0x2193},   {"deg", 0xB0},      {"delta", 0x3B4},
    {"diams", 0x2666},  {"divide", 0xF7},   {"eacute", 0xE9},   {"ecirc", 0xEA},
    {"egrave", 0xE8},   {"emsp", 0x2003},   {"ensp", 0x2002},   {"epsilon", 0x3B5},
    {"eth", 0xF0},      {"euml", 0xEB},     {"euro", 0x20AC},   {"fnof", 0x192},
    {"frac12", 0xBD},   {"frac14", 0xBC},   {"frac34", 0xBE},   {"frasl", 0x2044},
    {"gamma", 0x3B3},   {"ge", 0x2265},     {"gt", '>'},        {"harr", 0x2194},
    {"hearts", 0x2665}, {"hellip", 0x2026}, {"iacute", 0xED},   {"icirc", 0xEE},
    {"iexcl", 0xA1},    {"igrave", 0xEC},   {"infin", 0x221E},  {"iquest", 0xBF},
    {"iuml", 0xEF},     {"lambda", 0x3BB},  {"laquo", 0xAB},    {"larr", 0x2190},
    {"ldquo", 0x201C},  {"le", 0x2264},     {"lrm", 0x200E},    {"lsaquo", 0x2039},
    {"lsquo", 0x2018},  {"lt", '<'},        {"macr", 0xAF},     {"mdash", 0x2014},
    {"micro", 0xB5},    {"middot", 0xB7},   {"minus", 0x2212},  {"mu", 0x3BC},
    {"nbsp", ' '},      {"ndash", 0x2013},  {"ne", 0x2260},     {"not", 0xAC},
    {"ntilde", 0xF1},   {"oacute", 0xF3},   {"ocirc", 0xF4},    {"oelig", 0x153},
    {"ograve", 0xF2},   {"oline", 0x203E},  {"omega", 0x3C9},   {"ordf", 0xAA},
    {"ordm", 0xBA},     {"oslash", 0xF8},   {"otilde", 0xF5},   {"ouml", 0xF6},
    {"para", 0xB6},     {"permil", 0x2030}, {"pi", 0x3C0},      {"plusmn", 0xB1},
    {"pound", 0xA3},    {"prime", 0x2032},  {"quot", '"'},      {"raquo", 0xBB},
    {"rarr", 0x2192},   {"rdquo", 0x201D},  {"reg", 0xAE},      {"rlm", 0x200F},
    {"rsaquo", 0x203A}, {"rsquo", 0x2019},  {"sbquo", 0x201A},  {"scaron", 0x161},
    {"sect", 0xA7},     {"shy", 0xAD},      {"sigma", 0x3C3},   {"spades", 0x2660},
    {"sup1", 0xB9},     {"sup2", 0xB2},     {"sup3", 0xB3},     {"szlig", 0xDF},
    {"theta", 0x3B8},   {"thinsp", 0x2009}, {"thorn", 0xFE},    {"tilde", 0x2DC},
    {"times", 0xD7},    {"trade", 0x2122},  {"uacute", 0xFA},   {"uarr", 0x2191},
    {"ucirc", 0xFB},    {"ugrave", 0xF9},   {"uml", 0xA8},      {"uuml", 0xFC},
    {"yacute", 0xFD},   {"yen", 0xA5},      {"yuml", 0xFF},     {"zwj", 0x200D},
    {"zwnj", 0x200C},
};

constexpr bool entities_sorted() {
  for (size_t i = 1; i < std::size(kEntities); ++i) {
    if (!(kEntities[i - 1].name < kEntities[i].name)) {
      return false;
    }
  }
  return true;
}
static_assert(entities_sorted(), "kEntities must be sorted by name");

std::optional<uint32_t> find_entity(std::string_view name) {
  const NamedEntity* end = std::end(kEntities);
  const NamedEntity* it =
      std::lower_bound(std::begin(kEntities), end, name,
                       [](const NamedEntity& e, std::string_view n) { return e.name < n; });
  if (it != end && it->name == name) {
    return it->code_point;
  }
  return std::nullopt;
}

// HTML5 reads &#128; .. &#159; as Windows-1252 (0 = undefined there).
constexpr uint16_t kCp1252High[32] = {
    0x20AC, 0,      0x201A, 0x0192, 0x201E, 0x2026, 0x2020, 0x2021, 0x02C6, 0x2030, 0x0160,
    0x2039, 0x0152, 0,      0x017D, 0,      0,      0x2018, 0x2019, 0x201C, 0x201D, 0x2022,
    0x2013, 0x2014, 0x02DC, 0x2122, 0x0161, 0x203A, 0x0153, 0,      0x017E, 0x0178};

// Value of `c` as a decimal (or hex) digit, or -1.
constexpr int digit_value(char c, bool hex) {
  if (base::is_digit(c)) {
    return c - '0';
  }
  if (hex && base::ascii_lower(c) >= 'a' && base::ascii_lower(c) <= 'f') {
    return base::ascii_lower(c) - 'a' + 10;
  }
  return -1;
}

constexpr bool is_alnum(char c) { return base::is_alpha(c) || base::is_digit(c); }

constexpr bool is_html_space(char c) {
  return c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\f';
}

// Characters that end a run of plain text in HTML.
constexpr bool is_special(char c) { return c == '&' || c == '<' || is_html_space(c); }

// Decodes the character reference at html[pos] == '&'. On success appends
// it and returns the position after it; otherwise returns pos.
size_t decode_entity(std::string_view html, size_t pos, std::string& out) {
  size_t i = pos + 1;
  if (i < html.size() && html[i] == '#') {
    ++i;
    bool hex = i < html.size() && (html[i] == 'x' || html[i] == 'X');
    if (hex) {
      ++i;
    }
    const size_t digits_begin = i;
    uint32_t cp = 0;
    int d = 0;
    while (i < html.size() && (d = digit_value(html[i], hex)) >= 0) {
      // Past eight digits the value is out of range anyway; keep it there.
      cp = i - digits_begin < 8 ? cp * (hex ? 16 : 10) + static_cast<uint32_t>(d) : 0x110000;
      ++i;
    }
    if (i == digits_begin) {
      return pos;
    }
    if (i < html.size() && html[i] == ';') {
      ++i;
    }
    if (cp >= 0x80 && cp < 0xA0 && kCp1252High[cp - 0x80] != 0) {
      cp = kCp1252High[cp - 0x80];
    }
    append_utf8(out, cp);
    return i;
  }
  const size_t name_begin = i;
  while (i < html.size() && i - name_begin < 10 && is_alnum(html[i])) {
    ++i;
  }
  std::string_view name = html.substr(name_begin, i - name_begin);
  if (name.empty()) {
    return pos;
  }
  if (i < html.size() && html[i] == ';') {
    if (std::optional<uint32_t> cp = find_entity(name)) {
      append_utf8(out, *cp);
      return i + 1;
    }
    return pos;
  }
  // The few legacy references browsers take without the ';'.
  for (std::string_view legacy : {"amp", "lt", "gt", "quot", "nbsp"}) {
    if (name == legacy) {
      append_utf8(out, *find_entity(name));
      return i;
    }
  }
  return pos;
}

// Case-insensitive search for `needle` (lower case ASCII) from `pos`.
size_t ifind(std::string_view hay, std::string_view needle, size_t pos) {
  if (needle.empty() || hay.size() < needle.size()) {
    return std::string_view::npos;
  }
  const char first_lower = needle[0];
  const char first_upper = base::ascii_upper(first_lower);
  for (size_t i = pos; i + needle.size() <= hay.size(); ++i) {
    if ((hay[i] == first_lower || hay[i] == first_upper) &&
        base::iequals(hay.substr(i, needle.size()), needle)) {
      return i;
    }
  }
  return std::string_view::npos;
}

bool is_block(std::string_view tag) {
  static constexpr std::string_view kBlocks[] = {
      "address", "article",  "aside",  "blockquote", "br",    "center", "dd",  "div", "dl",
      "dt",      "fieldset", "figure", "footer",     "form",  "h1",     "h2",  "h3",  "h4",
      "h5",      "h6",       "header", "hr",         "li",    "main",   "nav", "ol",  "p",
      "pre",     "section",  "table",  "tbody",      "thead", "title",  "tr",  "ul"};
  for (std::string_view b : kBlocks) {
    if (base::iequals(tag, b)) {
      return true;
    }
  }
  return false;
}

// A case-insensitive search that remembers its last answer, for callers
// whose start positions only grow: each byte is looked at about once.
class ForwardSearch {
 public:
  explicit ForwardSearch(std::string_view needle) : needle_(needle) {}

  size_t find(std::string_view hay, size_t from) {
    if (from < searched_from_ || (found_at_ != std::string_view::npos && found_at_ < from)) {
      searched_from_ = from;
      found_at_ = ifind(hay, needle_, from);
    }
    return found_at_;
  }

 private:
  std::string_view needle_;
  size_t searched_from_ = std::string_view::npos;
  size_t found_at_ = std::string_view::npos;
};

// One pass over the document. Searches ahead (for a closing quote, for the
// end of a <head>) remember their answers, so hostile input such as
// thousands of unclosed quotes or <head> tags stays linear.
class HtmlConverter {
 public:
  explicit HtmlConverter(std::string_view html) : html_(html) { out_.reserve(html.size() / 2); }

  std::string run() {
    const size_t n = html_.size();
    size_t i = 0;
    while (i < n) {
      char c = html_[i];
      if (c == '&') {
        size_t next = decode_entity(html_, i, out_);
        if (next == i) {
          out_.push_back('&');
          ++next;
        }
        i = next;
      } else if (is_html_space(c)) {
        space();
        ++i;
      } else if (c == '<' && i + 1 < n) {
        i = markup(i);
      } else {
        // A run of ordinary text in one append.
        size_t end = i + 1;
        while (end < n && !is_special(html_[end])) {
          ++end;
        }
        out_.append(html_.data() + i, end - i);
        i = end;
      }
    }
    while (!out_.empty() && (out_.back() == ' ' || out_.back() == '\n')) {
      out_.pop_back();
    }
    return std::move(out_);
  }

 private:
  // Handles the markup starting at html_[i] == '<'; returns where text resumes.
  size_t markup(size_t i) {
    const size_t n = html_.size();
    const char next = html_[i + 1];
    if (html_.substr(i, 4) == "<!--") {
      size_t close = html_.find("-->", i + 4);
      return close == std::string_view::npos ? n : close + 3;
    }
    if (next == '!' || next == '?') {
      return tag_end(i);
    }
    const bool closing = next == '/';
    const size_t name_begin = i + (closing ? 2 : 1);
    size_t name_end = name_begin;
    while (name_end < n && is_alnum(html_[name_end])) {
      ++name_end;
    }
    if (name_end == name_begin || !base::is_alpha(html_[name_begin])) {
      // "a < b", "<3", "</ x": text.
      out_.push_back('<');
      return i + 1;
    }
    const std::string_view tag = html_.substr(name_begin, name_end - name_begin);
    const size_t after = tag_end(i);
    if (!closing && (base::iequals(tag, "script") || base::iequals(tag, "style"))) {
      // Contents dropped up to the closing tag, or to the end when none.
      size_t close = ifind(html_, base::iequals(tag, "script") ? "</script" : "</style", after);
      return close == std::string_view::npos ? n : tag_end(close);
    }
    if (!closing && base::iequals(tag, "head")) {
      // A <head> never closed ends at <body>; one that ends nowhere is
      // ignored rather than eating the whole document.
      size_t close = std::min(head_close_.find(html_, after), body_open_.find(html_, after));
      return close == std::string_view::npos ? after : close;
    }
    if (is_block(tag)) {
      line_break();
    } else if (base::iequals(tag, "td") || base::iequals(tag, "th") || base::iequals(tag, "img")) {
      space();
    }
    return after;
  }

  // Position just past the '>' closing the tag that starts at `pos`; a '>'
  // inside a quoted attribute value does not count. When the quote never
  // closes, or there is no '>', the first '>' (or the end).
  size_t tag_end(size_t pos) {
    const size_t n = html_.size();
    size_t i = pos + 1;
    while (i < n) {
      const char c = html_[i];
      if (c == '>') {
        return i + 1;
      }
      if ((c == '"' || c == '\'') && html_[i - 1] == '=') {
        size_t& unclosed_from = unclosed_quote_from_[c == '"' ? 0 : 1];
        size_t close = i >= unclosed_from ? std::string_view::npos : html_.find(c, i + 1);
        if (close == std::string_view::npos) {
          unclosed_from = std::min(unclosed_from, i);
          break;
        }
        i = close + 1;
        continue;
      }
      ++i;
    }
    size_t gt = html_.find('>', pos);
    return gt == std::string_view::npos ? n : gt + 1;
  }

  void space() {
    if (!out_.empty() && out_.back() != ' ' && out_.back() != '\n') {
      out_.push_back(' ');
    }
  }

  void line_break() {
    while (!out_.empty() && out_.back() == ' ') {
      out_.pop_back();
    }
    if (!out_.empty() && out_.back() != '\n') {
      out_.push_back('\n');
    }
  }

  std::string_view html_;
  std::string out_;
  // From here on, an opening '"' / '\'' has no closing one.
  size_t unclosed_quote_from_[2] = {std::string_view::npos, std::string_view::npos};
  // The searches for the end of a <head>.
  ForwardSearch head_close_{"</head"};
  ForwardSearch body_open_{"<body"};
};

}  // namespace

std::string html_to_text(std::string_view html) { return HtmlConverter(html).run(); }

namespace {

// ---------------------------------------------------------------------------
// Search text of a message

// Appends to a string bounded by `limit` bytes, never cutting a UTF-8
// sequence in two.
class BoundedText {
 public:
  BoundedText(std::string& out, size_t limit) : out_(out), limit_(limit) {}

  bool full() const { return full_; }
  size_t room() const { return full_ || out_.size() >= limit_ ? 0 : limit_ - out_.size(); }

  // Appends `text` as one item, separated from the previous one by "\n".
  // Once an item does not fit, the text is full.
  void add(std::string_view text) {
    if (text.empty() || full_) {
      return;
    }
    const size_t separator = out_.empty() ? 0 : 1;
    if (out_.size() + separator >= limit_) {
      full_ = true;
      return;
    }
    if (separator != 0) {
      out_.push_back('\n');
    }
    size_t take = std::min(text.size(), limit_ - out_.size());
    if (take < text.size()) {
      full_ = true;
      // Back off to the start of a UTF-8 sequence.
      while (take > 0 && (static_cast<unsigned char>(text[take]) & 0xC0) == 0x80) {
        --take;
      }
    }
    out_.append(text.data(), take);
  }

 private:
  std::string& out_;
  size_t limit_;
  bool full_ = false;
};

std::string to_utf8(std::string_view bytes, const ContentType& ct) {
  const Param* charset = find_param(ct.params, "charset");
  if (charset == nullptr || charset->value.empty() || base::iequals(charset->value, "us-ascii") ||
      base::iequals(charset->value, "utf-8")) {
    return ensure_utf8(bytes);
  }
  std::optional<std::string> converted = convert_to_utf8(bytes, charset->value);
  return converted ? std::move(*converted) : ensure_utf8(bytes);
}

std::string address_text(const std::vector<const HeaderField*>& fields) {
  std::string out;
  for (const HeaderField* field : fields) {
    std::vector<Address> list = parse_address_list(field->value);
    if (list.empty()) {
      // Unparseable: keep the text so a search still finds it.
      std::string raw = decode_header_value(field->value);
      if (!raw.empty()) {
        out += out.empty() ? "" : ", ";
        out += raw;
      }
      continue;
    }
    for (const Address& a : list) {
      std::string item;
      if (a.is_group_end()) {
        continue;
      }
      if (a.is_group_start()) {
        item = ensure_utf8(*a.mailbox);
      } else {
        std::string name = decoded_name(a);
        std::string spec = ensure_utf8(addr_spec(a));
        item = name.empty() ? spec : name + " <" + spec + ">";
      }
      if (!item.empty()) {
        out += out.empty() ? "" : ", ";
        out += item;
      }
    }
  }
  return out;
}

// A header line that is a field (not a line kept whole as its name).
bool is_field(const HeaderField& field) {
  const size_t n = field.name.size();
  return field.raw.size() > n && (field.raw[n] == ':' || base::is_wsp(field.raw[n]));
}

// Every line of `header`, decoded, one per line: "Name: value\n" for a
// field, the line itself for a line that is not one.
void append_header_text(const Header& header, std::string& out) {
  for (const HeaderField& field : header.fields()) {
    out.append(ensure_utf8(field.name));
    if (is_field(field)) {
      out.append(": ");
      out.append(decode_header_value(field.value));
    }
    out.push_back('\n');
  }
}

class SearchTextBuilder {
 public:
  SearchTextBuilder(std::string_view message, const SearchTextLimits& limits, SearchText& out)
      : msg_(message), body_(out.body, limits.max_body_bytes) {}

  // Walks the tree below the top-level header: `part` is the root when
  // `top`, and its header is SearchText::headers, not body text.
  void walk(const Part& part, bool top) {
    if (body_.full()) {
      return;
    }
    if (!top) {
      add_part_header(part);
    }
    switch (part.kind) {
      case PartKind::kMultipart:
        for (const Part& child : part.children) {
          walk(child, false);
        }
        return;
      case PartKind::kMessage:
        add_file_name(part);
        if (!part.children.empty()) {
          // The encapsulated message's header comes in as its root's header.
          walk(part.children[0], false);
        }
        return;
      case PartKind::kLeaf:
        add_file_name(part);
        if (part.content_type.is_text()) {
          add_text(part);
        }
        return;
    }
  }

 private:
  std::string_view range(uint32_t offset, uint32_t size) const {
    if (offset > msg_.size()) {
      return {};
    }
    return msg_.substr(offset, size);
  }

  void add_file_name(const Part& part) {
    const Param* name = nullptr;
    if (part.disposition) {
      name = find_param(part.disposition->params, "filename");
    }
    if (name == nullptr) {
      name = find_param(part.content_type.params, "name");
    }
    if (name != nullptr) {
      body_.add(decoded_value(*name));
    }
  }

  // The MIME header of a body part (RFC 2046 §5.1.1: "a set of header
  // fields, a blank line, and a body"), or the header of an encapsulated
  // message: part of the body of the message, so BODY and TEXT find it.
  void add_part_header(const Part& part) {
    if (part.header_size == 0) {
      return;
    }
    std::string text;
    append_header_text(Header::parse(range(part.header_offset, part.header_size)), text);
    while (!text.empty() && text.back() == '\n') {
      text.pop_back();
    }
    body_.add(text);
  }

  void add_text(const Part& part) {
    std::string_view raw = range(part.body_offset, part.body_size);
    // Decode no more input than can fill the room left: every encoding and
    // charset here yields at least one output byte per four input bytes.
    const size_t max_input = body_.room() * 4 + 64;
    if (raw.size() > max_input) {
      raw = raw.substr(0, max_input);
    }
    Encoding encoding = part.content_transfer_encoding
                            ? parse_encoding(*part.content_transfer_encoding)
                            : Encoding::k7Bit;
    std::string decoded = decode_body(raw, encoding);
    std::string text = to_utf8(decoded, part.content_type);
    if (base::iequals(part.content_type.subtype, "html")) {
      text = html_to_text(text);
    }
    body_.add(text);
  }

  std::string_view msg_;
  BoundedText body_;
};

}  // namespace

SearchText build_search_text(std::string_view message, const Part& root,
                             const SearchTextLimits& limits) {
  SearchText out;
  Header header = Header::parse(message.substr(
      0, std::min<size_t>(message.size(), size_t{root.header_offset} + root.header_size)));
  out.from = address_text(header.find_all("From"));
  out.to = address_text(header.find_all("To"));
  out.cc = address_text(header.find_all("Cc"));
  out.bcc = address_text(header.find_all("Bcc"));
  if (const HeaderField* subject = header.find("Subject")) {
    out.subject = decode_header_value(subject->value);
  }
  append_header_text(header, out.headers);
  SearchTextBuilder builder(message, limits, out);
  builder.walk(root, true);
  return out;
}

}  // namespace peregrine::mime
