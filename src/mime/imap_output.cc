#include "mime/imap_output.h"

#include <cstdint>

#include "base/ascii.h"

// The forms follow RFC 3501 §9 (body, body-type-1part, body-type-basic,
// body-type-msg, body-type-text, body-fields, body-ext-1part, body-ext-mpart,
// body-fld-dsp, body-fld-lang, envelope, address). Where the grammar leaves a
// choice the output matches Dovecot's: types as written (but "message"
// "rfc822" for encapsulated messages), text parts without a charset get
// ("charset" "us-ascii") appended, body-fld-lang is always a list, every
// extension field is sent, and a plain parameter and an RFC 2231 one of the
// same name are both sent. Unlike Dovecot, which only joins continuations, an
// RFC 2231 parameter is sent as `name*` with its value decoded, converted to
// UTF-8 and re-encoded as one valid extended value, language kept (RFC 9051
// §7.5.2).

namespace peregrine::mime {
namespace {

// Longer strings go out as literals even when they could be quoted.
constexpr size_t kMaxQuotedLength = 4096;

constexpr char kHex[] = "0123456789ABCDEF";
constexpr std::string_view kReplacementCharacter = "\xEF\xBF\xBD";  // U+FFFD

void append_number(std::string& out, uint64_t n) {
  char buf[20];
  size_t len = 0;
  do {
    buf[len++] = static_cast<char>('0' + n % 10);
    n /= 10;
  } while (n != 0);
  while (len > 0) {
    out += buf[--len];
  }
}

void append_nil_or_list_open(std::string& out, bool empty) { out += empty ? "NIL" : "("; }

// RFC 2231 attribute-char: CHAR except SPACE, CTLs, '*', '\'', '%' and tspecials.
bool is_attribute_char(unsigned char c) {
  if (c <= 0x20 || c >= 0x7F) {
    return false;
  }
  switch (c) {
    case '*':
    case '\'':
    case '%':
    case '(':
    case ')':
    case '<':
    case '>':
    case '@':
    case ',':
    case ';':
    case ':':
    case '\\':
    case '"':
    case '/':
    case '[':
    case ']':
    case '?':
    case '=':
      return false;
    default:
      return true;
  }
}

// A decoded RFC 2231 value back in its wire form: UTF-8'language'%XX...
// (`language` is a tag that parse_params checked: ALPHA, DIGIT and '-').
std::string encode_extended_value(std::string_view value, std::string_view language) {
  std::string out = "UTF-8'";
  out += language;
  out += '\'';
  for (char ch : value) {
    auto c = static_cast<unsigned char>(ch);
    if (is_attribute_char(c)) {
      out += ch;
    } else {
      out += '%';
      out += kHex[c >> 4];
      out += kHex[c & 0x0F];
    }
  }
  return out;
}

// body-fld-param: ("name" "value" ...) or NIL. A text part without a charset
// parameter gets the RFC 2045 default added, as Dovecot does.
void append_params(std::string& out, const std::vector<Param>& params, bool add_charset) {
  if (params.empty() && !add_charset) {
    out += "NIL";
    return;
  }
  out += '(';
  bool first = true;
  for (const Param& p : params) {
    if (!first) {
      out += ' ';
    }
    first = false;
    if (p.extended) {
      append_imap_string(out, p.name + "*");
      out += ' ';
      append_imap_string(out, encode_extended_value(p.value, p.language));
    } else {
      append_imap_string(out, p.name);
      out += ' ';
      append_imap_string(out, p.value);
    }
  }
  if (add_charset) {
    if (!first) {
      out += ' ';
    }
    out += "\"charset\" \"us-ascii\"";
  }
  out += ')';
}

void append_address_list(std::string& out, const std::vector<Address>& list) {
  append_nil_or_list_open(out, list.empty());
  if (list.empty()) {
    return;
  }
  for (const Address& a : list) {
    out += '(';
    append_imap_nstring(out, a.name);
    out += ' ';
    append_imap_nstring(out, a.adl);
    out += ' ';
    append_imap_nstring(out, a.mailbox);
    out += ' ';
    append_imap_nstring(out, a.host);
    out += ')';
  }
  out += ')';
}

// body-fld-dsp: ("type" params) or NIL.
void append_disposition(std::string& out, const std::optional<Disposition>& d) {
  if (!d) {
    out += "NIL";
    return;
  }
  out += '(';
  append_imap_string(out, d->type);
  out += ' ';
  append_params(out, d->params, /*add_charset=*/false);
  out += ')';
}

// body-fld-lang: always the list form, NIL when there is none.
void append_languages(std::string& out, const std::vector<std::string>& languages) {
  append_nil_or_list_open(out, languages.empty());
  if (languages.empty()) {
    return;
  }
  for (size_t i = 0; i < languages.size(); ++i) {
    if (i > 0) {
      out += ' ';
    }
    append_imap_string(out, languages[i]);
  }
  out += ')';
}

// body-fld-dsp SP body-fld-lang SP body-fld-loc, shared by both extension forms.
void append_dsp_lang_loc(std::string& out, const Part& part) {
  out += ' ';
  append_disposition(out, part.disposition);
  out += ' ';
  append_languages(out, part.content_language);
  out += ' ';
  append_imap_nstring(out, part.content_location);
}

// What a part with nothing in it looks like (Dovecot's choice for a
// multipart without subparts, and for the body of an unparsed message).
void append_empty_text_part(std::string& out, bool extended) {
  out += "(\"text\" \"plain\" (\"charset\" \"us-ascii\") NIL NIL \"7bit\" 0 0";
  if (extended) {
    out += " NIL NIL NIL NIL";
  }
  out += ')';
}

void append_part(std::string& out, const Part& part, bool extended);

void append_multipart(std::string& out, const Part& part, bool extended) {
  out += '(';
  if (part.children.empty()) {
    append_empty_text_part(out, extended);  // body-type-mpart needs 1*body
  }
  for (const Part& child : part.children) {
    append_part(out, child, extended);
  }
  out += ' ';
  append_imap_string(out, part.content_type.subtype);
  if (extended) {
    out += ' ';
    append_params(out, part.content_type.params, /*add_charset=*/false);
    append_dsp_lang_loc(out, part);
  }
  out += ')';
}

void append_single_part(std::string& out, const Part& part, bool extended) {
  const ContentType& ct = part.content_type;
  // message/global stays a basic part: IMAP4rev1 clients only know the
  // body-type-msg form for message/rfc822 (Dovecot does the same).
  const bool is_message = ct.is("message", "rfc822");
  const bool is_text = !is_message && base::iequals(ct.type, "text");
  out += '(';
  if (is_message) {
    out += "\"message\" \"rfc822\"";
  } else {
    append_imap_string(out, ct.type);
    out += ' ';
    append_imap_string(out, ct.subtype);
  }
  out += ' ';
  append_params(out, ct.params, is_text && find_param(ct.params, "charset") == nullptr);
  out += ' ';
  append_imap_nstring(out, part.content_id);
  out += ' ';
  append_imap_nstring(out, part.content_description);
  out += ' ';
  if (part.content_transfer_encoding && !part.content_transfer_encoding->empty()) {
    append_imap_string(out, *part.content_transfer_encoding);
  } else {
    out += "\"7bit\"";
  }
  out += ' ';
  append_number(out, part.body_size);
  if (is_message) {
    out += ' ';
    // A message/rfc822 part left unparsed (encoded, or past the depth limit)
    // still needs the body-type-msg form: an empty envelope and body.
    const bool parsed = part.kind == PartKind::kMessage && part.children.size() == 1;
    append_envelope(out, parsed && part.envelope ? *part.envelope : Envelope{});
    out += ' ';
    if (parsed) {
      append_part(out, part.children.front(), extended);
    } else {
      append_empty_text_part(out, extended);
    }
  }
  if (is_message || is_text) {
    out += ' ';
    append_number(out, part.body_lines);
  }
  if (extended) {
    out += ' ';
    append_imap_nstring(out, part.content_md5);
    append_dsp_lang_loc(out, part);
  }
  out += ')';
}

void append_part(std::string& out, const Part& part, bool extended) {
  if (part.kind == PartKind::kMultipart) {
    append_multipart(out, part, extended);
  } else {
    append_single_part(out, part, extended);
  }
}

}  // namespace

void append_imap_string(std::string& out, std::string_view s) {
  bool quotable = s.size() <= kMaxQuotedLength;
  size_t nuls = 0;
  for (char ch : s) {
    auto c = static_cast<unsigned char>(ch);
    if (c == 0) {
      ++nuls;
      quotable = false;
    } else if (c == '\r' || c == '\n' || c >= 0x80) {
      quotable = false;
    }
  }
  if (quotable) {
    out.reserve(out.size() + s.size() + 2);
    out += '"';
    for (char c : s) {
      if (c == '"' || c == '\\') {
        out += '\\';
      }
      out += c;
    }
    out += '"';
    return;
  }
  // A literal cannot carry NUL (RFC 3501 CHAR8): it becomes U+FFFD.
  out += '{';
  append_number(out, s.size() + nuls * (kReplacementCharacter.size() - 1));
  out += "}\r\n";
  if (nuls == 0) {
    out += s;
    return;
  }
  for (char c : s) {
    if (c == '\0') {
      out += kReplacementCharacter;
    } else {
      out += c;
    }
  }
}

void append_imap_nstring(std::string& out, const std::optional<std::string>& s) {
  if (s) {
    append_imap_string(out, *s);
  } else {
    out += "NIL";
  }
}

void append_envelope(std::string& out, const Envelope& e) {
  out += '(';
  append_imap_nstring(out, e.date);
  out += ' ';
  append_imap_nstring(out, e.subject);
  out += ' ';
  append_address_list(out, e.from);
  out += ' ';
  append_address_list(out, e.sender);
  out += ' ';
  append_address_list(out, e.reply_to);
  out += ' ';
  append_address_list(out, e.to);
  out += ' ';
  append_address_list(out, e.cc);
  out += ' ';
  append_address_list(out, e.bcc);
  out += ' ';
  append_imap_nstring(out, e.in_reply_to);
  out += ' ';
  append_imap_nstring(out, e.message_id);
  out += ')';
}

void append_body_structure(std::string& out, const Part& root, bool extended) {
  append_part(out, root, extended);
}

}  // namespace peregrine::mime
