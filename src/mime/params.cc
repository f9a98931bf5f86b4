#include "mime/params.h"

#include <algorithm>
#include <cstring>

#include "base/ascii.h"
#include "mime/charset.h"
#include "mime/encoded_word.h"
#include "mime/header.h"

namespace peregrine::mime {

namespace {

// Bounds on hostile input: raw parameters read from one value, and the
// highest RFC 2231 section number accepted (name*999).
constexpr size_t kMaxParams = 1000;
constexpr int kMaxSection = 999;
// Comments nest; deeper nesting is read as one comment.
constexpr int kMaxCommentDepth = 32;

// RFC 2045 token characters, plus 8-bit bytes (tolerated, RFC 6532).
bool is_token_char(char c) {
  const auto u = static_cast<unsigned char>(c);
  if (u <= 0x20 || u == 0x7f) {
    return false;
  }
  return std::strchr("()<>@,;:\\\"/[]?=", c) == nullptr;
}

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; }

// Skips whitespace, line ends and (nested) comments from `pos`.
size_t skip_cfws(std::string_view s, size_t pos) {
  while (pos < s.size()) {
    if (is_space(s[pos])) {
      ++pos;
      continue;
    }
    if (s[pos] != '(') {
      break;
    }
    int depth = 0;
    for (; pos < s.size(); ++pos) {
      const char c = s[pos];
      if (c == '\\' && pos + 1 < s.size()) {
        ++pos;
      } else if (c == '(') {
        depth = std::min(depth + 1, kMaxCommentDepth);
      } else if (c == ')' && --depth == 0) {
        ++pos;
        break;
      }
    }
  }
  return pos;
}

// RFC 2231 %XX decoding; a '%' not followed by two hex digits stays as is.
void append_percent_decoded(std::string_view s, std::string& out) {
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '%' && i + 2 < s.size()) {
      const int hi = base::hex_value(s[i + 1]);
      const int lo = base::hex_value(s[i + 2]);
      if (hi >= 0 && lo >= 0) {
        out.push_back(static_cast<char>(hi * 16 + lo));
        i += 2;
        continue;
      }
    }
    out.push_back(s[i]);
  }
}

// One "name=value" as written, before RFC 2231 sections are joined.
struct RawParam {
  std::string_view name;  // without any "*n" / "*" suffix
  int section = -1;       // -1: no section number
  bool extended = false;  // ended in '*'
  std::string value;      // quoting removed
};

// Splits "name*12*" into its base name, section and extended flag (sections
// past kMaxSection come back as kMaxSection + 1). A suffix that is not RFC
// 2231 ("a*b") leaves the name as written.
RawParam split_name(std::string_view name) {
  RawParam raw;
  raw.name = name;
  std::string_view rest = name;
  bool extended = false;
  if (!rest.empty() && rest.back() == '*') {
    extended = true;
    rest.remove_suffix(1);
  }
  const size_t star = rest.rfind('*');
  if (star != std::string_view::npos && star + 1 < rest.size() && star > 0) {
    std::string_view digits = rest.substr(star + 1);
    if (std::all_of(digits.begin(), digits.end(), [](char c) { return base::is_digit(c); })) {
      int n = 0;
      for (char c : digits) {
        n = std::min(n * 10 + (c - '0'), kMaxSection + 1);
      }
      raw.name = rest.substr(0, star);
      raw.section = n;
      raw.extended = extended;
      return raw;
    }
  }
  if (extended && !rest.empty()) {
    raw.name = rest;
    raw.extended = true;
  }
  return raw;
}

// Reads the value starting at `pos` (just after '=' and any CFWS) into
// `value`; returns the position of the ';' that ends the parameter, or the
// end of `s`.
size_t read_value(std::string_view s, size_t pos, std::string& value) {
  if (pos < s.size() && s[pos] == '"') {
    ++pos;
    for (; pos < s.size(); ++pos) {
      const char c = s[pos];
      if (c == '"') {
        ++pos;
        break;
      }
      if (c == '\\' && pos + 1 < s.size()) {
        value.push_back(s[++pos]);
      } else if (c != '\r' && c != '\n') {
        value.push_back(c);
      }
    }
    const size_t semi = s.find(';', pos);
    return semi == std::string_view::npos ? s.size() : semi;
  }
  // Unquoted: up to ';', tolerating spaces inside; a comment after WSP ends it.
  bool after_space = false;
  size_t end = pos;
  for (; end < s.size() && s[end] != ';'; ++end) {
    const char c = s[end];
    if (c == '(' && after_space) {
      break;
    }
    after_space = is_space(c);
    if (c != '\r' && c != '\n') {
      value.push_back(c);
    }
  }
  while (!value.empty() && base::is_wsp(value.back())) {
    value.pop_back();
  }
  if (end < s.size() && s[end] != ';') {
    const size_t semi = s.find(';', end);
    end = semi == std::string_view::npos ? s.size() : semi;
  }
  return end;
}

std::vector<RawParam> read_raw_params(std::string_view s) {
  std::vector<RawParam> raws;
  size_t pos = s.find(';');
  while (pos < s.size() && raws.size() < kMaxParams) {
    // s[pos] is ';'.
    pos = skip_cfws(s, pos + 1);
    if (pos >= s.size()) {
      break;
    }
    if (s[pos] == ';') {
      continue;
    }
    size_t name_end = pos;
    while (name_end < s.size() && s[name_end] != '=' && s[name_end] != ';') {
      ++name_end;
    }
    std::string_view name = s.substr(pos, name_end - pos);
    while (!name.empty() && is_space(name.back())) {
      name.remove_suffix(1);
    }
    if (name_end >= s.size() || s[name_end] == ';' || name.empty()) {
      // No '=' (or no name): nothing to keep; go on with the next one.
      pos = name_end < s.size() && s[name_end] == ';' ? name_end : s.find(';', name_end);
      if (pos == std::string_view::npos) {
        break;
      }
      continue;
    }
    RawParam raw = split_name(name);
    pos = read_value(s, skip_cfws(s, name_end + 1), raw.value);
    if (raw.section <= kMaxSection) {
      raws.push_back(std::move(raw));
    }
  }
  return raws;
}

// True for a raw parameter in RFC 2231 syntax (name*=, name*0=, name*1*=...).
bool is_rfc2231(const RawParam& raw) { return raw.section >= 0 || raw.extended; }

// The raw parameters that make up one Param: those sharing a name
// (case-insensitively) and either all plain or all RFC 2231.
struct Group {
  std::string_view name;
  bool rfc2231 = false;
  const RawParam* plain = nullptr;        // name=
  const RawParam* unsectioned = nullptr;  // name*=
  std::vector<const RawParam*> sections;  // name*0=, name*1*=, ...
};

// Percent-decodes "charset'lang'value" and converts it to UTF-8.
std::string decode_extended(std::string_view charset, const std::string& bytes) {
  if (!charset.empty()) {
    if (std::optional<std::string> converted = convert_to_utf8(bytes, charset)) {
      return std::move(*converted);
    }
  }
  return ensure_utf8(bytes);
}

// RFC 2231 §7 `extended-initial-value := [charset] "'" [language] "'"
// extended-other-values`: the part before the value.
struct ExtendedPrefix {
  std::string_view charset;
  std::string_view language;
};

// A language tag (RFC 2231 §7 refers to RFC 1766; RFC 5646 adds digits) is
// kept only when it is made of ALPHA, DIGIT and '-', so that it can be written
// back into an extended value as it is.
bool is_language_tag(std::string_view s) {
  return std::all_of(s.begin(), s.end(),
                     [](char c) { return base::is_alpha(c) || base::is_digit(c) || c == '-'; });
}

// Splits off "charset'lang'" from the first section's value, leaving the rest
// in `value`. Without two quotes there is neither charset nor language.
ExtendedPrefix split_prefix(std::string_view& value) {
  const size_t q1 = value.find('\'');
  if (q1 == std::string_view::npos) {
    return {};
  }
  const size_t q2 = value.find('\'', q1 + 1);
  if (q2 == std::string_view::npos) {
    return {};
  }
  ExtendedPrefix prefix{value.substr(0, q1), value.substr(q1 + 1, q2 - q1 - 1)};
  if (!is_language_tag(prefix.language)) {
    prefix.language = {};
  }
  value.remove_prefix(q2 + 1);
  return prefix;
}

Param join_rfc2231(const Group& group) {
  Param param;
  param.name = std::string(group.name);
  if (group.unsectioned != nullptr) {
    std::string_view text = group.unsectioned->value;
    const ExtendedPrefix prefix = split_prefix(text);
    std::string bytes;
    append_percent_decoded(text, bytes);
    param.value = decode_extended(prefix.charset, bytes);
    param.extended = true;
    param.language = std::string(prefix.language);
    return param;
  }
  std::vector<const RawParam*> sections = group.sections;
  std::stable_sort(sections.begin(), sections.end(),
                   [](const RawParam* a, const RawParam* b) { return a->section < b->section; });
  ExtendedPrefix prefix;
  std::string bytes;
  int last_section = -1;
  for (const RawParam* section : sections) {
    if (section->section == last_section) {
      continue;  // duplicate section number: the first one wins
    }
    last_section = section->section;
    std::string_view text = section->value;
    if (section->extended) {
      param.extended = true;
      if (section->section == 0) {
        prefix = split_prefix(text);
        param.language = std::string(prefix.language);
      }
      append_percent_decoded(text, bytes);
    } else {
      bytes.append(text);
    }
  }
  param.value = param.extended ? decode_extended(prefix.charset, bytes) : std::move(bytes);
  return param;
}

// The value of `value` with its line ends removed, viewing `storage` only when
// there were any.
std::string_view without_line_ends(std::string_view value, std::string& storage) {
  if (value.find_first_of("\r\n") == std::string_view::npos) {
    return value;
  }
  storage = unfold(value);
  return storage;
}

}  // namespace

std::string decoded_value(const Param& param) {
  if (param.extended) {
    return param.value;
  }
  return decode_encoded_words_utf8(param.value);
}

const Param* find_param(const std::vector<Param>& params, std::string_view name) {
  const Param* found = nullptr;
  for (const Param& param : params) {
    if (!base::iequals(param.name, name)) {
      continue;
    }
    if (param.extended) {
      return &param;
    }
    if (found == nullptr) {
      found = &param;
    }
  }
  return found;
}

std::vector<Param> parse_params(std::string_view text) {
  std::vector<Param> params;
  std::string storage;
  text = without_line_ends(text, storage);
  const std::vector<RawParam> raws = read_raw_params(text);
  if (raws.empty()) {
    return params;
  }
  // Groups in the order of their first raw parameter, so the result keeps
  // the order written.
  std::vector<Group> groups;
  for (const RawParam& raw : raws) {
    const bool rfc2231 = is_rfc2231(raw);
    auto it = std::find_if(groups.begin(), groups.end(), [&](const Group& g) {
      return g.rfc2231 == rfc2231 && base::iequals(g.name, raw.name);
    });
    if (it == groups.end()) {
      groups.push_back(Group{raw.name, rfc2231, nullptr, nullptr, {}});
      it = groups.end() - 1;
    }
    if (raw.section >= 0) {
      it->sections.push_back(&raw);
    } else if (raw.extended) {
      if (it->unsectioned == nullptr) {
        it->unsectioned = &raw;
      }
    } else if (it->plain == nullptr) {
      it->plain = &raw;
    }
  }
  params.reserve(groups.size());
  for (const Group& group : groups) {
    if (group.rfc2231) {
      params.push_back(join_rfc2231(group));
    } else {
      params.push_back(Param{std::string(group.name), group.plain->value});
    }
  }
  return params;
}

bool ContentType::is(std::string_view t, std::string_view s) const {
  return base::iequals(type, t) && base::iequals(subtype, s);
}

bool ContentType::is_multipart() const { return base::iequals(type, "multipart"); }

bool ContentType::is_message_rfc822() const {
  return is("message", "rfc822") || is("message", "global");
}

bool ContentType::is_text() const { return base::iequals(type, "text"); }

namespace {

std::string_view read_token(std::string_view s, size_t& pos) {
  const size_t begin = pos;
  while (pos < s.size() && is_token_char(s[pos])) {
    ++pos;
  }
  return s.substr(begin, pos - begin);
}

}  // namespace

std::optional<ContentType> parse_content_type(std::string_view value) {
  std::string storage;
  value = without_line_ends(value, storage);
  size_t pos = skip_cfws(value, 0);
  const std::string_view type = read_token(value, pos);
  pos = skip_cfws(value, pos);
  if (type.empty() || pos >= value.size() || value[pos] != '/') {
    return std::nullopt;
  }
  pos = skip_cfws(value, pos + 1);
  const std::string_view subtype = read_token(value, pos);
  if (subtype.empty()) {
    return std::nullopt;
  }
  // RFC 2045 §5.1: only `*(";" parameter)` may follow the subtype.
  pos = skip_cfws(value, pos);
  if (pos < value.size() && value[pos] != ';') {
    return std::nullopt;
  }
  ContentType content_type;
  content_type.type = std::string(type);
  content_type.subtype = std::string(subtype);
  content_type.params = parse_params(value.substr(pos));
  return content_type;
}

std::optional<Disposition> parse_disposition(std::string_view value) {
  std::string storage;
  value = without_line_ends(value, storage);
  size_t pos = skip_cfws(value, 0);
  const std::string_view type = read_token(value, pos);
  if (type.empty()) {
    return std::nullopt;
  }
  Disposition disposition;
  disposition.type = std::string(type);
  disposition.params = parse_params(value.substr(pos));
  return disposition;
}

}  // namespace peregrine::mime
