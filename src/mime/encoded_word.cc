#include "mime/encoded_word.h"

#include <cstring>
#include <optional>

#include "base/ascii.h"
#include "mime/charset.h"

namespace peregrine::mime {

namespace {

// A charset name (with any "*lang") longer than this is not an encoded word.
constexpr size_t kMaxCharsetLength = 64;

// Appends the decoded B payload; false when it holds a byte that is not
// base64, whitespace or trailing padding. Missing padding is fine.
bool decode_b(std::string_view payload, std::string& out) {
  uint32_t bits = 0;
  int nbits = 0;
  bool padding = false;
  for (char c : payload) {
    if (c == '=') {
      padding = true;
      continue;
    }
    if (base::is_wsp(c)) {
      continue;
    }
    const int v = base::base64_value(c);
    if (v < 0 || padding) {
      return false;
    }
    bits = (bits << 6) | static_cast<uint32_t>(v);
    nbits += 6;
    if (nbits >= 8) {
      nbits -= 8;
      out.push_back(static_cast<char>((bits >> nbits) & 0xFF));
    }
  }
  return true;
}

// Q payload (RFC 2047 §4.2): '_' is a space, =XX a byte; anything else,
// including a '=' without two hex digits, is taken literally.
void decode_q(std::string_view payload, std::string& out) {
  for (size_t i = 0; i < payload.size(); ++i) {
    const char c = payload[i];
    if (c == '_') {
      out.push_back(' ');
    } else if (c == '=' && i + 2 < payload.size()) {
      const int hi = base::hex_value(payload[i + 1]);
      const int lo = base::hex_value(payload[i + 2]);
      if (hi >= 0 && lo >= 0) {
        out.push_back(static_cast<char>(hi * 16 + lo));
        i += 2;
      } else {
        out.push_back(c);
      }
    } else {
      out.push_back(c);
    }
  }
}

struct Word {
  size_t begin = 0;          // at "=?"
  size_t end = 0;            // past "?="
  std::string_view charset;  // without any RFC 2231 "*lang"
};

// Finds encoded words left to right. Every "?=" search resumes where the last
// one stopped, so a hostile run of "=?x?q?" costs linear time.
class WordScanner {
 public:
  explicit WordScanner(std::string_view text) : text_(text) {}

  // The next well-formed word at or after `pos`, its payload decoded into
  // `bytes` (replacing what was there); nullopt when there is none.
  std::optional<Word> next(size_t pos, std::string& bytes) {
    while (pos + 1 < text_.size()) {
      const size_t begin = text_.find("=?", pos);
      if (begin == std::string_view::npos) {
        return std::nullopt;
      }
      pos = begin + 1;
      std::optional<Word> word = parse_at(begin, bytes);
      if (word) {
        return word;
      }
      if (no_more_ends_) {
        return std::nullopt;
      }
    }
    return std::nullopt;
  }

 private:
  std::optional<Word> parse_at(size_t begin, std::string& bytes) {
    size_t pos = begin + 2;
    const size_t charset_begin = pos;
    while (pos < text_.size() && pos - charset_begin <= kMaxCharsetLength) {
      const char c = text_[pos];
      if (c == '?' || base::is_wsp(c) || c == '\r' || c == '\n') {
        break;
      }
      ++pos;
    }
    if (pos >= text_.size() || text_[pos] != '?' || pos == charset_begin) {
      return std::nullopt;
    }
    std::string_view charset = text_.substr(charset_begin, pos - charset_begin);
    if (const size_t star = charset.find('*'); star != std::string_view::npos) {
      charset = charset.substr(0, star);
    }
    // "?B?" or "?Q?"
    if (pos + 2 >= text_.size() || text_[pos + 2] != '?') {
      return std::nullopt;
    }
    const char encoding = base::ascii_lower(text_[pos + 1]);
    if (encoding != 'b' && encoding != 'q') {
      return std::nullopt;
    }
    const size_t payload_begin = pos + 3;
    const size_t payload_end = find_end(payload_begin);
    if (payload_end == std::string_view::npos) {
      return std::nullopt;
    }
    const std::string_view payload = text_.substr(payload_begin, payload_end - payload_begin);
    if (payload.find("=?") != std::string_view::npos) {
      // An unclosed word running into the next one ("=?x?q?a =?x?q?b?="):
      // the inner one is the word. ('=' before '?' is never valid Q text.)
      return std::nullopt;
    }
    bytes.clear();
    if (encoding == 'b') {
      if (!decode_b(payload, bytes)) {
        return std::nullopt;
      }
    } else {
      decode_q(payload, bytes);
    }
    return Word{begin, payload_end + 2, charset};
  }

  size_t find_end(size_t from) {
    if (no_more_ends_) {
      return std::string_view::npos;
    }
    if (!have_end_ || last_end_ < from) {
      last_end_ = text_.find("?=", from);
      have_end_ = true;
      if (last_end_ == std::string_view::npos) {
        no_more_ends_ = true;
      }
    }
    return last_end_;
  }

  std::string_view text_;
  size_t last_end_ = 0;
  bool have_end_ = false;
  bool no_more_ends_ = false;
};

bool all_wsp(std::string_view s) {
  for (char c : s) {
    if (!base::is_wsp(c) && c != '\r' && c != '\n') {
      return false;
    }
  }
  return true;
}

// Stateful charsets (ISO-2022-*, UTF-7, HZ) end every encoded word back in
// their initial state (RFC 1468 for ISO-2022-JP), so no character is split
// across words; joined, two words give a shift sequence followed at once by
// another, which ICU converts to U+FFFD. Their words are converted one by one.
bool is_stateful_charset(std::string_view charset) {
  return base::istarts_with(charset, "iso-2022") || base::iequals(charset, "utf-7") ||
         base::iequals(charset, "hz-gb-2312");
}

// Walks `text`, decoding groups of adjacent encoded words (same charset,
// separated by whitespace only: their bytes are joined before conversion so a
// character split across two words survives), and passes the text between
// them through `utf8_text` when it is set. Whitespace between two decoded
// words is dropped (RFC 2047 §6.2).
std::string decode(std::string_view text, bool utf8_text) {
  std::string out;
  out.reserve(text.size());
  // Text not yet copied to `out` starts at `pending`.
  size_t pending = 0;
  // `pending` is the end of a decoded group: whitespace up to the next decoded
  // group is dropped.
  bool after_decoded = false;

  auto flush_text = [&](size_t end) {
    std::string_view run = text.substr(pending, end - pending);
    if (utf8_text) {
      out += ensure_utf8(run);
    } else {
      out.append(run);
    }
    pending = end;
  };

  WordScanner scanner(text);
  std::string word_bytes;
  std::string group_bytes;
  std::optional<Word> group;  // first word of the current group
  size_t group_end = 0;

  auto finish_group = [&]() {
    if (!group) {
      return;
    }
    std::optional<std::string> converted = convert_to_utf8(group_bytes, group->charset);
    if (converted) {
      std::string_view gap = text.substr(pending, group->begin - pending);
      if (!(after_decoded && all_wsp(gap))) {
        flush_text(group->begin);
      }
      out += *converted;
      pending = group_end;
      after_decoded = true;
    } else {
      // Unknown charset: the words stay as written, as ordinary text.
      after_decoded = false;
    }
    group.reset();
  };

  size_t pos = 0;
  while (std::optional<Word> word = scanner.next(pos, word_bytes)) {
    pos = word->end;
    if (group && all_wsp(text.substr(group_end, word->begin - group_end)) &&
        base::iequals(group->charset, word->charset) && !is_stateful_charset(word->charset)) {
      group_bytes += word_bytes;
      group_end = word->end;
      continue;
    }
    finish_group();
    group = word;
    group_bytes.swap(word_bytes);
    group_end = word->end;
  }
  finish_group();
  flush_text(text.size());
  return out;
}

}  // namespace

std::string decode_encoded_words(std::string_view text) {
  if (text.find("=?") == std::string_view::npos) {
    return std::string(text);
  }
  return decode(text, false);
}

std::string decode_encoded_words_utf8(std::string_view text) {
  if (text.find("=?") == std::string_view::npos) {
    return ensure_utf8(text);
  }
  return decode(text, true);
}

bool has_encoded_words(std::string_view text) {
  if (text.find("=?") == std::string_view::npos) {
    return false;
  }
  std::string scratch;
  return WordScanner(text).next(0, scratch).has_value();
}

}  // namespace peregrine::mime
