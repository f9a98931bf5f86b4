#include "mime/header.h"

#include <cstring>

#include "base/ascii.h"
#include "mime/encoded_word.h"

namespace peregrine::mime {

namespace {

// One physical line: [begin, content_end) is the text, [content_end, end) the
// line end (LF, CRLF or nothing at the end of the input).
struct Line {
  size_t begin;
  size_t content_end;
  size_t end;
};

Line next_line(std::string_view bytes, size_t pos) {
  const void* lf = std::memchr(bytes.data() + pos, '\n', bytes.size() - pos);
  if (lf == nullptr) {
    return Line{pos, bytes.size(), bytes.size()};
  }
  size_t nl = static_cast<size_t>(static_cast<const char*>(lf) - bytes.data());
  size_t content_end = (nl > pos && bytes[nl - 1] == '\r') ? nl - 1 : nl;
  return Line{pos, content_end, nl + 1};
}

// Length of the field name in `line` (before the colon, trailing WSP trimmed),
// or 0 when the line is not a "name: value" field: no colon, an empty name, or
// a name with WSP inside (e.g. an mbox "From " line, whose time has colons).
size_t field_name_length(std::string_view line, size_t* colon) {
  const void* c = std::memchr(line.data(), ':', line.size());
  if (c == nullptr) {
    return 0;
  }
  size_t pos = static_cast<size_t>(static_cast<const char*>(c) - line.data());
  size_t len = pos;
  while (len > 0 && base::is_wsp(line[len - 1])) {
    --len;
  }
  for (size_t i = 0; i < len; ++i) {
    if (base::is_wsp(line[i])) {
      return 0;
    }
  }
  *colon = pos;
  return len;
}

}  // namespace

Header Header::parse(std::string_view bytes) {
  Header header;
  // Most MIME part headers hold two or three fields; a message header grows
  // from there (a fixed large reserve per part showed up in allocation tests).
  header.fields_.reserve(4);
  size_t pos = 0;
  size_t field_count = 0;
  // Whether continuation lines extend fields_.back() (false past kMaxFields).
  bool open_field = false;
  while (pos < bytes.size()) {
    Line line = next_line(bytes, pos);
    pos = line.end;
    if (line.content_end == line.begin && line.end > line.content_end) {
      header.has_separator_ = true;
      break;
    }
    const char first = bytes[line.begin];
    if (base::is_wsp(first) && field_count > 0) {
      if (open_field) {
        HeaderField& field = header.fields_.back();
        const char* value_begin = field.value.data();
        field.value = std::string_view(
            value_begin, static_cast<size_t>(bytes.data() + line.content_end - value_begin));
        field.raw = std::string_view(
            field.raw.data(), static_cast<size_t>(bytes.data() + line.end - field.raw.data()));
      }
      continue;
    }
    ++field_count;
    open_field = header.fields_.size() < kMaxFields;
    if (!open_field) {
      continue;
    }
    std::string_view text = bytes.substr(line.begin, line.content_end - line.begin);
    std::string_view raw = bytes.substr(line.begin, line.end - line.begin);
    size_t colon = 0;
    size_t name_len = base::is_wsp(first) ? 0 : field_name_length(text, &colon);
    if (name_len == 0) {
      // Not a field: keep the line as a name so HEADER fetches lose nothing.
      header.fields_.push_back(HeaderField{text, text.substr(text.size()), raw});
    } else {
      header.fields_.push_back(HeaderField{text.substr(0, name_len), text.substr(colon + 1), raw});
    }
  }
  header.size_ = pos;
  return header;
}

const HeaderField* Header::find(std::string_view name) const {
  for (const HeaderField& field : fields_) {
    if (base::iequals(field.name, name)) {
      return &field;
    }
  }
  return nullptr;
}

std::vector<const HeaderField*> Header::find_all(std::string_view name) const {
  std::vector<const HeaderField*> found;
  for (const HeaderField& field : fields_) {
    if (base::iequals(field.name, name)) {
      found.push_back(&field);
    }
  }
  return found;
}

std::string unfold(std::string_view value) {
  std::string out;
  out.reserve(value.size());
  const size_t n = value.size();
  size_t i = 0;
  while (i < n) {
    // The text up to the next CR or LF, copied whole (every delivery
    // unfolds every header field for its search text).
    size_t end = i;
    while (end < n && value[end] != '\r' && value[end] != '\n') {
      ++end;
    }
    out.append(value.data() + i, end - i);
    if (end == n) {
      break;
    }
    i = end;
    const char c = value[i];
    // A line end is CRLF or LF; a CR alone is not one.
    const bool crlf = c == '\r' && i + 1 < n && value[i + 1] == '\n';
    if (crlf) {
      ++i;
    }
    const bool line_end = crlf || c == '\n';
    const bool fold = line_end && i + 1 < n && base::is_wsp(value[i + 1]);
    if (!fold) {
      // A stray CR, LF or CRLF: no RFC says what it means, but it stood
      // between two words, so a space keeps them apart (as Dovecot does).
      out.push_back(' ');
    }
    ++i;
  }
  size_t begin = 0;
  while (begin < out.size() && base::is_wsp(out[begin])) {
    ++begin;
  }
  size_t end = out.size();
  while (end > begin && base::is_wsp(out[end - 1])) {
    --end;
  }
  out.erase(end);
  out.erase(0, begin);
  return out;
}

std::string decode_header_value(std::string_view value) {
  return decode_encoded_words_utf8(unfold(value));
}

}  // namespace peregrine::mime
