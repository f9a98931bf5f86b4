// libFuzzer target for the MIME engine: the whole delivery path
// (analyze_message), the cache record's serialize/deserialize round trip and
// its reader on arbitrary bytes, section resolution, and the header-value
// parsers on a prefix of the input. Any broken invariant aborts, so the
// fuzzer saves the input. See tests/fuzz/README.md.

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "mime/address.h"
#include "mime/cache_record.h"
#include "mime/charset.h"
#include "mime/date.h"
#include "mime/encoded_word.h"
#include "mime/envelope.h"
#include "mime/header.h"
#include "mime/params.h"
#include "mime/part.h"
#include "mime/search_text.h"
#include "mime/section.h"

namespace peregrine::mime {
namespace {

void check(bool ok, const char* what) {
  if (!ok) {
    std::fprintf(stderr, "mime_fuzz: invariant broken: %s\n", what);
    std::abort();
  }
}

// CRC-32C as in docs/formats/cache_record.md, so arbitrary payloads can be
// wrapped into records that pass the checksum and reach the field reader.
uint32_t crc32c(std::string_view bytes) {
  uint32_t c = 0xFFFFFFFFu;
  for (char ch : bytes) {
    c ^= static_cast<uint8_t>(ch);
    for (int k = 0; k < 8; ++k) {
      c = (c & 1) ? (c >> 1) ^ 0x82F63B78u : c >> 1;
    }
  }
  return c ^ 0xFFFFFFFFu;
}

void check_record_reader(std::string_view in) {
  // Raw bytes: almost always rejected by the CRC, must never crash.
  (void)deserialize(in);

  // The input as a payload behind a valid header and CRC.
  std::string sealed;
  sealed.reserve(in.size() + 6);
  sealed.push_back(static_cast<char>(0xC5));
  sealed.push_back(static_cast<char>(kCacheRecordVersion));
  sealed.append(in);
  uint32_t crc = crc32c(sealed);
  for (int i = 0; i < 4; ++i) {
    sealed.push_back(static_cast<char>((crc >> (8 * i)) & 0xFF));
  }
  std::optional<CacheRecord> r = deserialize(sealed);
  if (r) {
    check(serialize(*r) == sealed, "accepted record bytes are canonical");
    for (const PartSpan& n : r->parts.nodes()) {
      check(uint64_t{n.body_offset} + n.body_size <= r->message_size,
            "deserialized node inside message");
    }
  }
}

void check_range(const std::optional<SectionRange>& range, size_t size) {
  if (range) {
    check(uint64_t{range->offset} + range->size <= size, "section range inside message");
  }
}

void check_sections(std::string_view message, const PartMap& parts) {
  for (const PartSpan& n : parts.nodes()) {
    check(uint64_t{n.header_offset} + n.header_size <= message.size(), "header inside message");
    check(uint64_t{n.body_offset} + n.body_size <= message.size(), "body inside message");
  }
  static const std::vector<std::vector<uint32_t>> kPaths = {
      {},     {1},       {2},       {3},          {1, 1}, {1, 2}, {2, 1},
      {2, 2}, {1, 1, 1}, {2, 1, 1}, {1, 1, 1, 1}, {0},    {99}};
  static const SectionText kTexts[] = {SectionText::kNone,         SectionText::kHeader,
                                       SectionText::kHeaderFields, SectionText::kHeaderFieldsNot,
                                       SectionText::kText,         SectionText::kMime};
  const std::vector<std::string> fields = {"From", "Subject", "Content-Type"};
  for (const std::vector<uint32_t>& path : kPaths) {
    std::optional<size_t> index = parts.locate(path);
    if (index) {
      check(*index < parts.nodes().size(), "locate inside the map");
    }
    for (SectionText text : kTexts) {
      SectionSpec spec{path, text, fields};
      std::optional<SectionRange> range = resolve_section(parts, spec);
      check_range(range, message.size());
      if (range && range->needs_filter) {
        std::string filtered = filter_header_fields(message.substr(range->offset, range->size),
                                                    fields, text == SectionText::kHeaderFieldsNot);
        // At most a line end for an unterminated last field, and the empty line.
        check(filtered.size() <= range->size + 4, "filtered header no larger than the header");
      }
    }
  }
}

void check_value_parsers(std::string_view in) {
  std::string_view prefix = in.substr(0, 4096);
  std::vector<Address> addresses = parse_address_list(prefix);
  check(addresses.size() <= kMaxAddresses, "address count bounded");
  for (const Address& a : addresses) {
    (void)decoded_name(a);
    (void)addr_spec(a);
  }
  (void)parse_date(prefix);
  (void)decode_encoded_words(prefix);
  (void)has_encoded_words(prefix);
  std::optional<ContentType> ct = parse_content_type(prefix);
  if (ct) {
    for (const Param& p : ct->params) {
      (void)decoded_value(p);
    }
  }
  (void)parse_disposition(prefix);
  check(parse_message_ids(prefix).size() <= kMaxMessageIds, "message id count bounded");
  check(is_valid_utf8(decode_header_value(prefix)), "decoded header value is UTF-8");
}

}  // namespace
}  // namespace peregrine::mime

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace peregrine::mime;  // NOLINT: one entry point
  std::string_view in(reinterpret_cast<const char*>(data), size);

  AnalyzedMessage a = analyze_message(in);
  check(a.record.message_size == size, "record message_size");
  check(a.record.header_size <= size, "record header_size");
  check(!a.record.parts.nodes().empty(), "part map has the message node");
  check(a.record.parts.nodes()[0].subtree_size == a.record.parts.nodes().size(),
        "root subtree covers the map");
  check(is_valid_utf8(a.record.subject), "subject is UTF-8");
  check(a.text.body.size() <= SearchTextLimits{}.max_body_bytes + 4096, "search text bounded");

  std::string bytes = serialize(a.record);
  std::optional<CacheRecord> back = deserialize(bytes);
  check(back.has_value(), "serialized record reads back");
  check(*back == a.record, "round trip is exact");

  check_sections(in, a.record.parts);
  check_value_parsers(in);
  check_record_reader(in);
  return 0;
}
