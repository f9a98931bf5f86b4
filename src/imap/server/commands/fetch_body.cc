#include "imap/server/commands/fetch_body.h"

#include <algorithm>

#include "imap/proto/fetch_response.h"
#include "mime/transfer.h"

namespace peregrine::imap {

std::optional<mime::CacheRecord> cache_record_of(std::string_view stored, LazyBody& body) {
  if (auto record = mime::deserialize(stored)) {
    return record;
  }
  auto b = body.get();
  if (!b) {
    return std::nullopt;
  }
  auto bytes = (*b)->read_all();
  if (!bytes) {
    return std::nullopt;
  }
  return mime::analyze_message(*bytes, /*with_text=*/false).record;
}

namespace {

// The section a body item stands for.
mime::SectionSpec section_of(const FetchItem& item) {
  switch (item.attr) {
    case FetchAttr::kRfc822:
      return {};
    case FetchAttr::kRfc822Header:
      return mime::SectionSpec{{}, mime::SectionText::kHeader, {}};
    case FetchAttr::kRfc822Text:
      return mime::SectionSpec{{}, mime::SectionText::kText, {}};
    case FetchAttr::kBinary:
    case FetchAttr::kBinarySize:
      return mime::SectionSpec{item.section.part, mime::SectionText::kNone, {}};
    default:
      return item.section;
  }
}

base::Result<std::string> read_range(LazyBody& body, std::uint64_t offset, std::uint64_t size) {
  auto b = body.get();
  if (!b) {
    return std::unexpected(b.error());
  }
  return (*b)->read(offset, static_cast<size_t>(size));
}

// A BINARY part: its node's encoding (the whole message, BINARY[], is not
// decoded).
mime::Encoding encoding_of(const FetchItem& item, const mime::PartMap& parts) {
  if (item.section.part.empty()) {
    return mime::Encoding::kBinary;
  }
  std::optional<size_t> node = parts.locate(item.section.part);
  return node ? parts.nodes()[*node].encoding : mime::Encoding::kBinary;
}

bool is_identity(mime::Encoding e) {
  return e == mime::Encoding::k7Bit || e == mime::Encoding::k8Bit || e == mime::Encoding::kBinary;
}

// The section's bytes in the message: the whole message from its size
// alone, any other section through the PartMap.
base::Result<std::optional<mime::SectionRange>> locate(const FetchItem& item,
                                                       const mime::PartMap& parts, LazyBody& body) {
  if (is_whole_message(item)) {
    auto b = body.get();
    if (!b) {
      return std::unexpected(b.error());
    }
    return mime::SectionRange{0, static_cast<std::uint32_t>((*b)->size()), false};
  }
  return mime::resolve_section(parts, section_of(item));
}

}  // namespace

bool is_whole_message(const FetchItem& item) {
  const mime::SectionSpec spec = section_of(item);
  return spec.part.empty() && spec.text == mime::SectionText::kNone;
}

base::Result<const store::Body*> LazyBody::get() {
  if (!body_) {
    auto opened = store_.open_body(mailbox_, uid_);
    if (!opened) {
      return std::unexpected(opened.error());
    }
    body_ = std::move(*opened);
  }
  return body_.get();
}

base::Result<SectionBytes> read_section(const FetchItem& item, const mime::PartMap& parts,
                                        LazyBody& body) {
  SectionBytes out;
  auto located = locate(item, parts, body);
  if (!located) {
    return std::unexpected(located.error());
  }
  const std::optional<mime::SectionRange>& range = *located;
  if (!range) {
    out.nil = true;
    return out;
  }
  if (item.attr == FetchAttr::kBinary) {
    mime::Encoding encoding = encoding_of(item, parts);
    if (encoding == mime::Encoding::kUnknown) {
      out.unknown_cte = true;
      return out;
    }
    if (is_identity(encoding)) {
      // No decoding: read just the partial, like BODY[].
    } else {
      auto raw = read_range(body, range->offset, range->size);
      if (!raw) {
        return std::unexpected(raw.error());
      }
      std::string decoded = mime::decode_body(*raw, encoding);
      out.bytes = std::string(apply_partial(decoded, item.partial));
      return out;
    }
  }
  if (range->needs_filter) {
    auto header = read_range(body, range->offset, range->size);
    if (!header) {
      return std::unexpected(header.error());
    }
    bool exclude = item.section.text == mime::SectionText::kHeaderFieldsNot;
    std::string filtered = mime::filter_header_fields(*header, item.section.fields, exclude);
    out.bytes = std::string(apply_partial(filtered, item.partial));
  } else {
    std::uint64_t offset = range->offset;
    std::uint64_t size = range->size;
    if (item.partial) {
      std::uint64_t skip = std::min<std::uint64_t>(item.partial->offset, size);
      offset += skip;
      size = std::min<std::uint64_t>(item.partial->length, size - skip);
    }
    auto bytes = read_range(body, offset, size);
    if (!bytes) {
      return std::unexpected(bytes.error());
    }
    out.bytes = std::move(*bytes);
  }
  if (item.attr != FetchAttr::kBinary) {
    std::replace(out.bytes.begin(), out.bytes.end(), '\0', '\x80');
  }
  return out;
}

base::Result<SectionSize> binary_size(const FetchItem& item, const mime::PartMap& parts,
                                      LazyBody& body) {
  SectionSize out;
  auto located = locate(item, parts, body);
  if (!located) {
    return std::unexpected(located.error());
  }
  const std::optional<mime::SectionRange>& range = *located;
  if (!range) {
    return out;
  }
  mime::Encoding encoding = encoding_of(item, parts);
  if (encoding == mime::Encoding::kUnknown) {
    out.unknown_cte = true;
    return out;
  }
  if (is_identity(encoding)) {
    out.size = range->size;
    return out;
  }
  auto raw = read_range(body, range->offset, range->size);
  if (!raw) {
    return std::unexpected(raw.error());
  }
  out.size = mime::decode_body(*raw, encoding).size();
  return out;
}

}  // namespace peregrine::imap
