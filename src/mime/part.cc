#include "mime/part.h"

#include <algorithm>
#include <cstring>
#include <limits>

#include "base/ascii.h"
#include "mime/header.h"
#include "mime/transfer.h"

namespace peregrine::mime {

namespace {

constexpr size_t kMaxContentLanguages = 100;

// A boundary line found in the message, or none (level < 0: the end of the
// message was reached first).
struct BoundaryHit {
  size_t line_start = 0;  // first byte of "--boundary"
  size_t line_end = 0;    // just past the boundary line's line end
  int level = -1;         // index into the boundary stack
  bool close = false;     // "--boundary--"
};

uint32_t clamp32(size_t v) {
  return static_cast<uint32_t>(std::min<size_t>(v, std::numeric_limits<uint32_t>::max()));
}

ContentType default_content_type(bool in_digest) {
  ContentType ct;
  if (in_digest) {
    ct.type = "message";
    ct.subtype = "rfc822";
  } else {
    ct.type = "text";
    ct.subtype = "plain";
    ct.params.push_back(Param{"charset", "us-ascii", false});
  }
  return ct;
}

// `value` with its RFC 5322 comments (nested, with quoted-pairs) taken out;
// an unclosed comment runs to the end.
std::string strip_comments(std::string_view value) {
  std::string out;
  out.reserve(value.size());
  size_t depth = 0;
  for (size_t i = 0; i < value.size(); ++i) {
    const char c = value[i];
    if (depth == 0) {
      if (c == '(') {
        depth = 1;
        out.push_back(' ');  // a comment separates what is around it
      } else {
        out.push_back(c);
      }
    } else if (c == '\\') {
      ++i;  // quoted-pair: the next character is literal
    } else if (c == '(') {
      ++depth;
    } else if (c == ')') {
      --depth;
    }
  }
  return out;
}

// Content-Language (RFC 3282 §2): `[CFWS] Language-Tag [CFWS] *("," [CFWS]
// Language-Tag [CFWS])`. Comments are CFWS, not part of a tag; empty list
// items are skipped; anything else is kept as written.
std::vector<std::string> parse_languages(std::string_view value) {
  std::vector<std::string> out;
  std::string text = strip_comments(unfold(value));
  std::string_view rest = text;
  while (!rest.empty() && out.size() < kMaxContentLanguages) {
    size_t comma = rest.find(',');
    std::string_view item = base::trim(rest.substr(0, comma));
    if (!item.empty()) {
      out.emplace_back(item);
    }
    if (comma == std::string_view::npos) {
      break;
    }
    rest.remove_prefix(comma + 1);
  }
  return out;
}

// The Content-* fields of a header, RFC 2046 defaults applied.
void fill_mime_fields(Part& part, const Header& header, bool in_digest) {
  const HeaderField* content_type = nullptr;
  for (const HeaderField& field : header.fields()) {
    std::string_view name = field.name;
    if (!base::istarts_with(name, "Content-")) {
      continue;
    }
    name.remove_prefix(8);
    if (base::iequals(name, "Type")) {
      if (content_type == nullptr) {
        content_type = &field;
      }
    } else if (base::iequals(name, "Transfer-Encoding")) {
      if (!part.content_transfer_encoding) {
        part.content_transfer_encoding = unfold(field.value);
      }
    } else if (base::iequals(name, "ID")) {
      if (!part.content_id) {
        part.content_id = unfold(field.value);
      }
    } else if (base::iequals(name, "Description")) {
      if (!part.content_description) {
        part.content_description = unfold(field.value);
      }
    } else if (base::iequals(name, "MD5")) {
      if (!part.content_md5) {
        part.content_md5 = unfold(field.value);
      }
    } else if (base::iequals(name, "Location")) {
      if (!part.content_location) {
        part.content_location = unfold(field.value);
      }
    } else if (base::iequals(name, "Disposition")) {
      if (!part.disposition) {
        part.disposition = parse_disposition(field.value);
      }
    } else if (base::iequals(name, "Language")) {
      if (part.content_language.empty()) {
        part.content_language = parse_languages(field.value);
      }
    }
  }
  if (content_type != nullptr) {
    std::optional<ContentType> parsed = parse_content_type(content_type->value);
    if (parsed && !parsed->type.empty() && !parsed->subtype.empty()) {
      part.content_type = std::move(*parsed);
      part.content_type_present = true;
      return;
    }
  }
  part.content_type = default_content_type(in_digest);
}

// One pass over the message. Boundary lines are found by searching for '-'
// and checking line starts, so base64 bodies (which have no '-') are skipped
// at memchr speed; a candidate line is compared with every active boundary,
// innermost first.
class Parser {
 public:
  Parser(std::string_view message, const ParseLimits& limits) : msg_(message), limits_(limits) {}

  Part parse() {
    BoundaryHit stop;
    return parse_entity(0, 0, false, nullptr, &stop);
  }

 private:
  // Parses the entity (header, then body) starting at `begin`. It ends at the
  // first boundary line of any active multipart, returned in *stop, or at the
  // end of the message.
  Part parse_entity(size_t begin, uint32_t depth, bool in_digest, Envelope* envelope,
                    BoundaryHit* stop) {
    ++parts_;
    Part part;
    size_t header_end = find_header_end(begin);
    Header header = Header::parse(msg_.substr(begin, header_end - begin));
    const size_t body_start = begin + header.size();
    part.header_offset = clamp32(begin);
    part.header_size = clamp32(header.size());
    part.body_offset = clamp32(body_start);
    fill_mime_fields(part, header, in_digest);
    if (envelope != nullptr) {
      *envelope = build_envelope(header);
    }

    const ContentType& ct = part.content_type;
    const bool can_nest = depth < limits_.max_depth;
    const Param* boundary = ct.is_multipart() ? find_param(ct.params, "boundary") : nullptr;
    if (ct.is_multipart() && can_nest && boundary != nullptr && !boundary->value.empty()) {
      part.kind = PartKind::kMultipart;
      *stop = parse_multipart_body(part, body_start, depth, boundary->value);
    } else if (ct.is_message_rfc822() && can_nest && parts_ < limits_.max_parts &&
               is_identity_encoding(part)) {
      part.kind = PartKind::kMessage;
      auto inner = std::make_unique<Envelope>();
      part.children.push_back(parse_entity(body_start, depth + 1, false, inner.get(), stop));
      part.envelope = std::move(inner);
    } else if (ct.is_multipart() && can_nest) {
      // A multipart without a usable boundary has no subparts.
      part.kind = PartKind::kMultipart;
      *stop = find_boundary(body_start);
    } else {
      part.kind = PartKind::kLeaf;
      *stop = find_boundary(body_start);
    }
    set_body_end(part, end_after_children(part, content_end(body_start, *stop)));
    return part;
  }

  // A part never ends before its last child. They differ only when a
  // subpart is empty and starts right at the boundary line that ends its
  // parent ("--inner CRLF --outer"): that one line end both closes the inner
  // boundary line and precedes the outer one.
  static size_t end_after_children(const Part& part, size_t end) {
    if (!part.children.empty()) {
      const Part& last = part.children.back();
      end = std::max(end, size_t{last.body_offset} + last.body_size);
    }
    return end;
  }

  // Subparts of a multipart whose body starts at `body_start`. Returns the
  // boundary line that ends the multipart (an outer one) or none.
  BoundaryHit parse_multipart_body(Part& part, size_t body_start, uint32_t depth,
                                   const std::string& boundary) {
    boundaries_.push_back(boundary);
    const int level = static_cast<int>(boundaries_.size()) - 1;
    const bool is_digest = part.content_type.is("multipart", "digest");
    // Past the part limit, further subparts fold into the last one, which
    // then ends at `last_child_stop`.
    bool folding = false;
    BoundaryHit last_child_stop;
    BoundaryHit hit = find_boundary(body_start);
    while (hit.level == level) {
      if (hit.close) {
        part.closed = true;
        boundaries_.pop_back();
        // The epilogue runs to an outer boundary or the end.
        return finish_multipart(part, folding, last_child_stop, find_boundary(hit.line_end));
      }
      if (parts_ >= limits_.max_parts) {
        folding = true;
        hit = find_boundary(hit.line_end);
        last_child_stop = hit;
        continue;
      }
      BoundaryHit child_stop;
      part.children.push_back(
          parse_entity(hit.line_end, depth + 1, is_digest, nullptr, &child_stop));
      hit = child_stop;
    }
    boundaries_.pop_back();
    return finish_multipart(part, folding, last_child_stop, hit);
  }

  BoundaryHit finish_multipart(Part& part, bool folding, const BoundaryHit& last_child_stop,
                               const BoundaryHit& stop) {
    if (folding && !part.children.empty()) {
      extend_body(part.children.back(), last_child_stop);
    }
    return stop;
  }

  // Moves the end of `part` to `stop`; an encapsulated message ends with the
  // part that holds it.
  void extend_body(Part& part, const BoundaryHit& stop) {
    if (part.kind == PartKind::kMessage && !part.children.empty()) {
      extend_body(part.children.back(), stop);
    }
    set_body_end(part, end_after_children(part, content_end(part.body_offset, stop)));
  }

  static bool is_identity_encoding(const Part& part) {
    if (!part.content_transfer_encoding) {
      return true;
    }
    Encoding e = parse_encoding(*part.content_transfer_encoding);
    return e == Encoding::k7Bit || e == Encoding::k8Bit || e == Encoding::kBinary;
  }

  // End of the header starting at `begin`: just past its empty line, or the
  // end of the message. The line end before a boundary line belongs to the
  // boundary (RFC 2046 §5.1.1), so a header cut short by a boundary line ends
  // before it, and so does one whose empty line is followed by a boundary
  // ("X: y CRLF CRLF --b" is a header without a body).
  size_t find_header_end(size_t begin) const {
    auto boundary_at = [this](size_t pos) {
      return !boundaries_.empty() && pos < msg_.size() && msg_[pos] == '-' &&
             match_boundary(pos).level >= 0;
    };
    auto end_before = [this, begin](size_t boundary_line) {
      BoundaryHit hit;
      hit.line_start = boundary_line;
      hit.level = 0;
      return content_end(begin, hit);
    };
    size_t pos = begin;
    while (pos < msg_.size()) {
      if (boundary_at(pos)) {
        return end_before(pos);
      }
      const void* lf = std::memchr(msg_.data() + pos, '\n', msg_.size() - pos);
      if (lf == nullptr) {
        return msg_.size();
      }
      size_t nl = static_cast<size_t>(static_cast<const char*>(lf) - msg_.data());
      if (nl == pos || (nl == pos + 1 && msg_[pos] == '\r')) {
        return boundary_at(nl + 1) ? end_before(nl + 1) : nl + 1;
      }
      pos = nl + 1;
    }
    return msg_.size();
  }

  // The next boundary line at or after `pos` (a line start).
  BoundaryHit find_boundary(size_t pos) const {
    BoundaryHit none;
    none.line_start = msg_.size();
    none.line_end = msg_.size();
    if (boundaries_.empty()) {
      return none;
    }
    const size_t line_start = pos;
    const char* data = msg_.data();
    while (pos + 1 < msg_.size()) {
      const void* dash = std::memchr(data + pos, '-', msg_.size() - pos);
      if (dash == nullptr) {
        break;
      }
      size_t p = static_cast<size_t>(static_cast<const char*>(dash) - data);
      if (p == line_start || data[p - 1] == '\n') {
        BoundaryHit hit = match_boundary(p);
        if (hit.level >= 0) {
          return hit;
        }
      }
      pos = p + 1;
    }
    return none;
  }

  // Whether a boundary line of an active multipart starts at `p` (a line
  // start): "--" boundary ["--"] WSP* then a line end or the end of the
  // message. RFC 2046 §5.1.1: a longer line that merely starts with
  // "--boundary" is body text.
  BoundaryHit match_boundary(size_t p) const {
    BoundaryHit hit;
    if (p + 2 > msg_.size() || msg_[p] != '-' || msg_[p + 1] != '-') {
      return hit;
    }
    std::string_view rest = msg_.substr(p + 2);
    for (int level = static_cast<int>(boundaries_.size()) - 1; level >= 0; --level) {
      const std::string& b = boundaries_[static_cast<size_t>(level)];
      if (rest.size() < b.size() || std::memcmp(rest.data(), b.data(), b.size()) != 0) {
        continue;
      }
      size_t q = p + 2 + b.size();
      bool close = false;
      if (q + 1 < msg_.size() && msg_[q] == '-' && msg_[q + 1] == '-') {
        close = true;
        q += 2;
      }
      while (q < msg_.size() && base::is_wsp(msg_[q])) {
        ++q;
      }
      if (q < msg_.size() && msg_[q] == '\r') {
        ++q;
      }
      if (q < msg_.size() && msg_[q] != '\n') {
        continue;
      }
      hit.line_start = p;
      hit.line_end = q < msg_.size() ? q + 1 : q;
      hit.level = level;
      hit.close = close;
      return hit;
    }
    return hit;
  }

  // Where the content before `stop` ends: the line end before a boundary line
  // belongs to the boundary (RFC 2046 §5.1.1).
  size_t content_end(size_t body_start, const BoundaryHit& stop) const {
    if (stop.level < 0) {
      return msg_.size();
    }
    size_t end = stop.line_start;
    if (end > body_start && msg_[end - 1] == '\n') {
      --end;
      if (end > body_start && msg_[end - 1] == '\r') {
        --end;
      }
    }
    return std::max(end, body_start);
  }

  void set_body_end(Part& part, size_t body_end) {
    size_t start = part.body_offset;
    part.body_size = clamp32(body_end - start);
    // Line ends only: a last line without one is not counted (see part.h).
    size_t lines = 0;
    if (body_end > start) {
      lines = newlines_before(body_end) - newlines_before(start);
    }
    part.body_lines = clamp32(lines);
  }

  // Number of '\n' in [0, pos). Parsing asks in nearly increasing order, so a
  // cursor makes the whole parse count each byte about once.
  size_t newlines_before(size_t pos) {
    const char* data = msg_.data();
    if (pos >= line_pos_) {
      line_count_ += count_newlines(data + line_pos_, data + pos);
    } else {
      line_count_ -= count_newlines(data + pos, data + line_pos_);
    }
    line_pos_ = pos;
    return line_count_;
  }

  // memchr skips between line ends with the C library's vector code; mail
  // lines average well over 16 bytes, so this beats a byte-wise count (the
  // byte-wise loop was 77% of a structure parse under callgrind).
  static size_t count_newlines(const char* from, const char* to) {
    size_t n = 0;
    while (from < to) {
      const void* hit = std::memchr(from, '\n', static_cast<size_t>(to - from));
      if (hit == nullptr) {
        break;
      }
      ++n;
      from = static_cast<const char*>(hit) + 1;
    }
    return n;
  }

  std::string_view msg_;
  ParseLimits limits_;
  // Boundaries of the multiparts enclosing the current position, outermost
  // first.
  std::vector<std::string> boundaries_;
  size_t parts_ = 0;
  size_t line_pos_ = 0;
  size_t line_count_ = 0;
};

}  // namespace

Part parse_message(std::string_view message, const ParseLimits& limits) {
  // Offsets are 32-bit: a message over 4 GiB is parsed up to that size.
  if (message.size() > std::numeric_limits<uint32_t>::max()) {
    message = message.substr(0, std::numeric_limits<uint32_t>::max());
  }
  return Parser(message, limits).parse();
}

size_t count_parts(const Part& root) {
  size_t n = 1;
  for (const Part& child : root.children) {
    n += count_parts(child);
  }
  return n;
}

}  // namespace peregrine::mime
