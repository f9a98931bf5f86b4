#pragma once

// Character classes of the IMAP grammar (RFC 3501 §9, RFC 9051 §9).

namespace peregrine::imap {

// ATOM-CHAR: any 7-bit CHAR except atom-specials "(" ")" "{" SP CTL "%" "*"
// DQUOTE "\" "]".
constexpr bool is_atom_char(char c) {
  auto u = static_cast<unsigned char>(c);
  if (u <= 0x20 || u >= 0x7f) {
    return false;
  }
  switch (c) {
    case '(':
    case ')':
    case '{':
    case '%':
    case '*':
    case '"':
    case '\\':
    case ']':
      return false;
    default:
      return true;
  }
}

// ASTRING-CHAR: ATOM-CHAR or "]".
constexpr bool is_astring_char(char c) { return c == ']' || is_atom_char(c); }

// A tag is 1*<any ASTRING-CHAR except "+">.
constexpr bool is_tag_char(char c) { return c != '+' && is_astring_char(c); }

// list-char: ATOM-CHAR, list-wildcards "%" "*", or "]" (LIST patterns).
constexpr bool is_list_char(char c) { return c == '%' || c == '*' || is_astring_char(c); }

// TEXT-CHAR inside a quoted string without escaping: 8-bit allowed (UTF-8,
// RFC 9051 / RFC 6855), never NUL, CR, LF, DQUOTE or "\".
constexpr bool is_quoted_plain_char(char c) {
  return c != '\0' && c != '\r' && c != '\n' && c != '"' && c != '\\';
}

}  // namespace peregrine::imap
