#include "mime/section.h"

#include <algorithm>
#include <cstdint>

#include "base/ascii.h"
#include "mime/header.h"

namespace peregrine::mime {

namespace {

PartSpan span_of(const Part& part) {
  PartSpan span;
  span.header_offset = part.header_offset;
  span.header_size = part.header_size;
  span.body_offset = part.body_offset;
  span.body_size = part.body_size;
  span.kind = part.kind;
  span.encoding = part.content_transfer_encoding ? parse_encoding(*part.content_transfer_encoding)
                                                 : Encoding::k7Bit;
  return span;
}

// An empty leaf: header and body empty at `offset`.
PartSpan empty_span(uint32_t offset) {
  PartSpan span;
  span.header_offset = offset;
  span.body_offset = offset;
  return span;
}

// A message/rfc822 part that BODYSTRUCTURE shows in the body-type-msg form
// although the parse did not enter it (encoded, or past a limit): imap_output
// writes it with an empty envelope and an empty text/plain body.
bool is_unparsed_message(const Part& part) {
  return part.content_type.is("message", "rfc822") &&
         !(part.kind == PartKind::kMessage && part.children.size() == 1);
}

// Appends `part` and its subtree in pre-order, with the parts that
// BODYSTRUCTURE shows but the parse did not find (see section.h).
void flatten(const Part& part, std::vector<PartSpan>& out) {
  const size_t index = out.size();
  out.push_back(span_of(part));
  const auto body_end = static_cast<uint32_t>(
      std::min<uint64_t>(uint64_t{part.body_offset} + part.body_size, UINT32_MAX));
  if (is_unparsed_message(part)) {
    // The encapsulated message, read as stored: a header without a blank
    // line and no body (as Dovecot answers n.HEADER, n.1 and n.1.MIME).
    out[index].kind = PartKind::kMessage;
    PartSpan inner = empty_span(body_end);
    inner.header_offset = part.body_offset;
    inner.header_size = part.body_size;
    out.push_back(inner);
  } else if (part.kind == PartKind::kMultipart && part.children.empty()) {
    out.push_back(empty_span(body_end));  // body-type-mpart needs 1*body
  } else {
    for (const Part& child : part.children) {
      flatten(child, out);
    }
  }
  out[index].subtree_size = static_cast<uint32_t>(out.size() - index);
}

}  // namespace

PartMap PartMap::from(const Part& root) {
  std::vector<PartSpan> nodes;
  nodes.reserve(count_parts(root));
  flatten(root, nodes);
  return PartMap(std::move(nodes));
}

std::optional<size_t> PartMap::locate(std::span<const uint32_t> path) const {
  if (nodes_.empty()) {
    return std::nullopt;
  }
  // The n-th (1-based) child of node `parent`, walking the pre-order skip
  // distances. Checked throughout: the map may come from a stored record.
  auto nth_child = [this](size_t parent, uint32_t n) -> std::optional<size_t> {
    const size_t end = std::min<size_t>(parent + nodes_[parent].subtree_size, nodes_.size());
    size_t child = parent + 1;
    for (uint32_t i = 1; child < end; ++i) {
      if (i == n) {
        return child;
      }
      if (nodes_[child].subtree_size == 0) {
        return std::nullopt;
      }
      child += nodes_[child].subtree_size;
    }
    return std::nullopt;
  };
  size_t index = 0;
  // The node is the top of a message (the message itself or an encapsulated
  // one), whose body is its part 1 when it is not a multipart.
  bool message_root = true;
  // A "1" may still name the node itself (see section.h).
  bool self_allowed = true;
  for (uint32_t n : path) {
    const PartSpan& node = nodes_[index];
    bool enter = false;
    if (node.kind == PartKind::kMultipart) {
      std::optional<size_t> child = nth_child(index, n);
      if (!child) {
        return std::nullopt;
      }
      index = *child;
      message_root = false;
      self_allowed = true;
      continue;
    }
    if (node.kind == PartKind::kMessage && !message_root) {
      enter = true;
    } else if (self_allowed) {
      if (n != 1) {
        return std::nullopt;
      }
      self_allowed = false;
      continue;
    } else if (node.kind == PartKind::kMessage) {
      enter = true;
    }
    if (!enter || index + 1 >= nodes_.size() || node.subtree_size < 2) {
      return std::nullopt;
    }
    // Into the encapsulated message: its subparts, or its body as part 1.
    const size_t inner = index + 1;
    if (nodes_[inner].kind == PartKind::kMultipart) {
      std::optional<size_t> child = nth_child(inner, n);
      if (!child) {
        return std::nullopt;
      }
      index = *child;
      message_root = false;
      self_allowed = true;
    } else if (n == 1) {
      index = inner;
      message_root = true;
      self_allowed = false;
    } else {
      return std::nullopt;
    }
  }
  return index;
}

std::optional<SectionRange> resolve_section(const PartMap& parts, const SectionSpec& spec) {
  const std::vector<PartSpan>& nodes = parts.nodes();
  if (nodes.empty()) {
    return std::nullopt;
  }
  auto header_of = [](const PartSpan& node, bool filter) {
    return SectionRange{node.header_offset, node.header_size, filter};
  };
  auto body_of = [](const PartSpan& node) {
    return SectionRange{node.body_offset, node.body_size, false};
  };
  const bool filter =
      spec.text == SectionText::kHeaderFields || spec.text == SectionText::kHeaderFieldsNot;
  if (spec.part.empty()) {
    const PartSpan& root = nodes[0];
    switch (spec.text) {
      case SectionText::kNone:
        return SectionRange{root.header_offset, root.header_size + root.body_size, false};
      case SectionText::kHeader:
      case SectionText::kHeaderFields:
      case SectionText::kHeaderFieldsNot:
        return header_of(root, filter);
      case SectionText::kText:
        return body_of(root);
      case SectionText::kMime:
        return std::nullopt;
    }
    return std::nullopt;
  }
  std::optional<size_t> index = parts.locate(spec.part);
  if (!index) {
    return std::nullopt;
  }
  const PartSpan& node = nodes[*index];
  switch (spec.text) {
    case SectionText::kNone:
      return body_of(node);
    case SectionText::kMime:
      return header_of(node, false);
    case SectionText::kHeader:
    case SectionText::kHeaderFields:
    case SectionText::kHeaderFieldsNot:
    case SectionText::kText: {
      if (node.kind != PartKind::kMessage || *index + 1 >= nodes.size()) {
        return std::nullopt;
      }
      const PartSpan& inner = nodes[*index + 1];
      return spec.text == SectionText::kText ? body_of(inner) : header_of(inner, filter);
    }
  }
  return std::nullopt;
}

std::string filter_header_fields(std::string_view header, std::span<const std::string> names,
                                 bool exclude) {
  Header parsed = Header::parse(header);
  std::string out;
  out.reserve(header.size());
  for (const HeaderField& field : parsed.fields()) {
    // A line that is not a field (no colon) was kept whole as its name.
    const size_t n = field.name.size();
    const bool is_field =
        field.raw.size() > n && (field.raw[n] == ':' || base::is_wsp(field.raw[n]));
    bool named = false;
    for (const std::string& name : names) {
      if (is_field && base::iequals(field.name, name)) {
        named = true;
        break;
      }
    }
    if (named != exclude) {
      out.append(field.raw);
    }
  }
  if (parsed.has_separator()) {
    // The empty line ends the header: "\r\n", or "\n" (the line before it
    // ends with '\n', so a '\r' just before the last byte is its own).
    const size_t size = parsed.size();
    const size_t separator = size >= 2 && header[size - 2] == '\r' ? 2 : 1;
    out.append(header.substr(size - separator, separator));
  }
  return out;
}

}  // namespace peregrine::mime
