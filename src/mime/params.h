#pragma once

// Content-Type and Content-Disposition values (RFC 2045, RFC 2183) with their
// parameters, including RFC 2231 continuations (name*0=, name*1*=) and charset
// / language tagged values (name*=utf-8'en'%E2%82%AC).

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace peregrine::mime {

struct Param {
  // Name as written, without any RFC 2231 "*n" / "*" suffix; callers compare
  // it case-insensitively.
  std::string name;
  // Value with quoting removed and RFC 2231 continuations joined. For RFC 2231
  // encoded values the percent-decoding is done and the result converted to
  // UTF-8 from the declared charset. RFC 2047 encoded words in a quoted value
  // (a common violation, e.g. Outlook's filename="=?utf-8?B?...?=") are left
  // here as written; decoded_value() decodes them.
  std::string value;
  // True when the value came from RFC 2231 extended syntax (name*= or a
  // name*n*= section), i.e. it was charset-tagged and is now UTF-8.
  bool extended = false;
  // RFC 2231 language tag of an extended value ("en-us" in
  // name*=utf-8'en-us'...), as written; empty when there is none, or when it is
  // not a tag (only ALPHA, DIGIT and '-' are kept). The declared charset is not
  // kept: `value` is already converted from it.
  std::string language = {};
};

// UTF-8 text of a parameter value, with RFC 2047 encoded words decoded.
std::string decoded_value(const Param& param);

// The parameter called `name` (compared case-insensitively), nullptr if none.
// When both a plain name= and an RFC 2231 extended name*= / name*0*= are
// present, the extended one: it is the sender's real value, decoded to UTF-8,
// and the plain one only a fallback for readers without RFC 2231 (typically
// an RFC 2047 encoded or ASCII-only file name). Otherwise the first.
const Param* find_param(const std::vector<Param>& params, std::string_view name);

// Parses a parameter list starting at the first ';' of `text`. Tolerates
// missing values (the parameter is skipped), unquoted values with spaces,
// comments, stray semicolons and duplicate names (the first wins). A plain
// name= and an RFC 2231 name*= / name*0= of the same name are two parameters
// and both are kept, in the order written (Dovecot keeps both too; RFC 9051
// §7.5.2 only asks that RFC 2231 sections be joined and decoded). Bounded: at most
// 1000 parameters are read and continuation numbers stop at 999.
std::vector<Param> parse_params(std::string_view text);

struct ContentType {
  // As written (case kept). Never empty in a value parse_content_type
  // returns (an unparseable field gives nullopt instead).
  std::string type;
  std::string subtype;
  std::vector<Param> params;

  bool is(std::string_view t, std::string_view s) const;  // case-insensitive
  bool is_multipart() const;
  bool is_message_rfc822() const;  // message/rfc822 or message/global
  bool is_text() const;
};

// Parses a Content-Type value (raw, may be folded). Returns nullopt when it
// is syntactically invalid: no "type/subtype", or anything but comments,
// white space and ";" parameters after the subtype ("text/html/plain",
// "text/plain charset=x"). The RFC 2045 §5.2 default then applies: the caller
// uses text/plain; charset=us-ascii, or message/rfc822 inside a digest.
// (Junk inside the parameter list is skipped by parse_params instead.)
std::optional<ContentType> parse_content_type(std::string_view value);

struct Disposition {
  std::string type;  // as written, e.g. "attachment"
  std::vector<Param> params;
};

std::optional<Disposition> parse_disposition(std::string_view value);

}  // namespace peregrine::mime
