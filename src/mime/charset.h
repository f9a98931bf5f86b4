#pragma once

// Charset conversion to UTF-8 through ICU: every charset ICU knows, under
// every alias ICU knows (plus the common misspellings real mail carries, e.g.
// "utf8", "ks_c_5601-1987", "x-unknown" read as Windows-1252). Converters are
// cached per thread.

#include <optional>
#include <string>
#include <string_view>

namespace peregrine::mime {

// Converts `bytes` in `charset` to UTF-8. Unconvertible sequences become
// U+FFFD. Returns nullopt only when the charset is unknown. Labels are read the
// way mail means them (WHATWG Encoding Standard): iso-8859-1 / latin1 as
// Windows-1252, gb2312 as GBK, euc-kr as Windows-949, shift_jis as
// Windows-31J; us-ascii text that carries 8-bit bytes anyway is read as
// ensure_utf8() reads it.
std::optional<std::string> convert_to_utf8(std::string_view bytes, std::string_view charset);

// True when `charset` names a charset the converter knows.
bool is_known_charset(std::string_view charset);

bool is_valid_utf8(std::string_view bytes);

// `bytes` when it is valid UTF-8; otherwise the bytes read as Windows-1252.
std::string ensure_utf8(std::string_view bytes);

}  // namespace peregrine::mime
