#include "mime/cache_record.h"

#include <algorithm>
#include <array>
#include <cstring>
#include <limits>
#include <utility>

#include "mime/address.h"
#include "mime/envelope.h"
#include "mime/header.h"
#include "mime/imap_output.h"

// The binary layout is specified in docs/formats/cache_record.md; keep the
// two in step.

namespace peregrine::mime {
namespace {

constexpr uint8_t kMagic = 0xC5;
constexpr size_t kPrefixSize = 2;  // magic, version
constexpr size_t kCrcSize = 4;
constexpr size_t kMaxVarintBytes = 10;  // a uint64 in LEB128

// CRC-32C (Castagnoli, reflected, polynomial 0x82F63B78), as in iSCSI/ext4.
constexpr std::array<uint32_t, 256> make_crc_table() {
  std::array<uint32_t, 256> table{};
  for (uint32_t i = 0; i < 256; ++i) {
    uint32_t c = i;
    for (int k = 0; k < 8; ++k) {
      c = (c & 1) ? (c >> 1) ^ 0x82F63B78u : c >> 1;
    }
    table[i] = c;
  }
  return table;
}
constexpr std::array<uint32_t, 256> kCrcTable = make_crc_table();

uint32_t crc32c_table(uint32_t c, std::string_view bytes) {
  for (char ch : bytes) {
    c = kCrcTable[(c ^ static_cast<uint8_t>(ch)) & 0xFF] ^ (c >> 8);
  }
  return c;
}

#if defined(__x86_64__)
// SSE 4.2's crc32 instruction computes CRC-32C, eight bytes at a time:
// reading the cache records of a 100,000-message mailbox (SORT, THREAD)
// spent most of its time in the byte-wise loop above.
__attribute__((target("sse4.2"))) uint32_t crc32c_sse42(uint32_t c, std::string_view bytes) {
  const char* p = bytes.data();
  size_t n = bytes.size();
  uint64_t c64 = c;
  for (; n >= 8; p += 8, n -= 8) {
    uint64_t word;
    std::memcpy(&word, p, sizeof(word));
    c64 = __builtin_ia32_crc32di(c64, word);
  }
  c = static_cast<uint32_t>(c64);
  for (; n > 0; ++p, --n) {
    c = __builtin_ia32_crc32qi(c, static_cast<uint8_t>(*p));
  }
  return c;
}
#endif

uint32_t crc32c(std::string_view bytes) {
#if defined(__x86_64__)
  static const bool sse42 = __builtin_cpu_supports("sse4.2");
  if (sse42) {
    return crc32c_sse42(0xFFFFFFFFu, bytes) ^ 0xFFFFFFFFu;
  }
#endif
  return crc32c_table(0xFFFFFFFFu, bytes) ^ 0xFFFFFFFFu;
}

uint64_t zigzag(int64_t v) {
  return (static_cast<uint64_t>(v) << 1) ^ static_cast<uint64_t>(v >> 63);
}
int64_t unzigzag(uint64_t v) { return static_cast<int64_t>(v >> 1) ^ -static_cast<int64_t>(v & 1); }

class Writer {
 public:
  void u8(uint8_t v) { out_.push_back(static_cast<char>(v)); }
  void varint(uint64_t v) {
    while (v >= 0x80) {
      out_.push_back(static_cast<char>((v & 0x7F) | 0x80));
      v >>= 7;
    }
    out_.push_back(static_cast<char>(v));
  }
  void svarint(int64_t v) { varint(zigzag(v)); }
  void str(std::string_view s) {
    varint(s.size());
    out_.append(s);
  }
  std::string take() && { return std::move(out_); }
  std::string& buffer() { return out_; }

 private:
  std::string out_;
};

// Reads the payload. Every read checks the remaining bytes; a failed read
// sets ok_ to false and every later read returns zero, so callers check ok()
// once per structure rather than after each field.
class Reader {
 public:
  explicit Reader(std::string_view in) : in_(in) {}

  bool ok() const { return ok_; }
  size_t remaining() const { return in_.size() - pos_; }
  bool at_end() const { return pos_ == in_.size(); }
  void fail() { ok_ = false; }

  uint8_t u8() {
    if (!ok_ || remaining() < 1) {
      ok_ = false;
      return 0;
    }
    return static_cast<uint8_t>(in_[pos_++]);
  }

  // LEB128; rejects overlong (non-canonical) forms and values past 64 bits,
  // so that a record has exactly one encoding.
  uint64_t varint() {
    uint64_t v = 0;
    for (size_t i = 0; i < kMaxVarintBytes; ++i) {
      if (!ok_ || remaining() < 1) {
        ok_ = false;
        return 0;
      }
      uint8_t b = static_cast<uint8_t>(in_[pos_++]);
      if (i == kMaxVarintBytes - 1 && b > 1) {
        ok_ = false;  // more than 64 bits
        return 0;
      }
      v |= static_cast<uint64_t>(b & 0x7F) << (7 * i);
      if ((b & 0x80) == 0) {
        if (b == 0 && i > 0) {
          ok_ = false;  // overlong: a trailing zero group
          return 0;
        }
        return v;
      }
    }
    ok_ = false;
    return 0;
  }

  uint32_t u32() {
    uint64_t v = varint();
    if (v > std::numeric_limits<uint32_t>::max()) {
      ok_ = false;
      return 0;
    }
    return static_cast<uint32_t>(v);
  }

  int64_t svarint() { return unzigzag(varint()); }

  bool flag() {
    uint8_t b = u8();
    if (b > 1) {
      ok_ = false;
    }
    return b == 1;
  }

  // A count of items that each take at least `min_item_bytes`: bounded by
  // what is left, so a corrupt count cannot make the caller reserve or loop
  // past the input.
  size_t count(size_t min_item_bytes) {
    uint64_t n = varint();
    if (!ok_ || n > remaining() / min_item_bytes) {
      ok_ = false;
      return 0;
    }
    return static_cast<size_t>(n);
  }

  std::string_view str() {
    uint64_t n = varint();
    if (!ok_ || n > remaining()) {
      ok_ = false;
      return {};
    }
    std::string_view s = in_.substr(pos_, static_cast<size_t>(n));
    pos_ += static_cast<size_t>(n);
    return s;
  }

 private:
  std::string_view in_;
  size_t pos_ = 0;
  bool ok_ = true;
};

// The smallest node: six one-byte varints (delta, header_size, body delta,
// body_size, subtree_size, kind/encoding).
constexpr size_t kMinNodeBytes = 6;
constexpr uint64_t kMaxKind = static_cast<uint64_t>(PartKind::kMessage);
constexpr uint64_t kMaxEncoding = static_cast<uint64_t>(Encoding::kUnknown);

void write_parts(Writer& w, const PartMap& parts) {
  const std::vector<PartSpan>& nodes = parts.nodes();
  w.varint(nodes.size());
  int64_t previous_header_offset = 0;
  for (const PartSpan& n : nodes) {
    w.svarint(static_cast<int64_t>(n.header_offset) - previous_header_offset);
    w.varint(n.header_size);
    // Zero for every parsed part (body_offset == header_offset + header_size).
    w.svarint(static_cast<int64_t>(n.body_offset) -
              (static_cast<int64_t>(n.header_offset) + n.header_size));
    w.varint(n.body_size);
    w.varint(n.subtree_size);
    w.varint(static_cast<uint64_t>(n.kind) * (kMaxEncoding + 1) +
             static_cast<uint64_t>(n.encoding));
    previous_header_offset = n.header_offset;
  }
}

bool fits_uint32(int64_t v) { return v >= 0 && v <= std::numeric_limits<uint32_t>::max(); }
// A difference of two uint32 offsets (plus a uint32 size) always fits here.
bool fits_delta(int64_t v) { return v >= -(int64_t{1} << 34) && v <= (int64_t{1} << 34); }

// Reads the part map and checks what later readers rely on: every range lies
// inside the message, and the subtree sizes describe one well-nested tree,
// so walking the map by subtree_size can never leave it.
std::optional<PartMap> read_parts(Reader& r, uint32_t message_size) {
  size_t n = r.count(kMinNodeBytes);
  if (!r.ok()) {
    return std::nullopt;
  }
  std::vector<PartSpan> nodes;
  nodes.reserve(n);
  // End index (exclusive) of each open ancestor's subtree.
  std::vector<size_t> open_ends;
  int64_t previous_header_offset = 0;
  for (size_t i = 0; i < n; ++i) {
    PartSpan s;
    int64_t header_delta = r.svarint();
    s.header_size = r.u32();
    int64_t body_delta = r.svarint();
    s.body_size = r.u32();
    s.subtree_size = r.u32();
    uint64_t kind_encoding = r.varint();
    // Deltas are bounded before any addition, so a corrupt one cannot overflow.
    if (!r.ok() || !fits_delta(header_delta) || !fits_delta(body_delta)) {
      return std::nullopt;
    }
    int64_t header_offset = previous_header_offset + header_delta;
    int64_t body_offset = header_offset + s.header_size + body_delta;
    if (!fits_uint32(header_offset) || !fits_uint32(body_offset) ||
        kind_encoding > kMaxKind * (kMaxEncoding + 1) + kMaxEncoding) {
      return std::nullopt;
    }
    s.header_offset = static_cast<uint32_t>(header_offset);
    s.body_offset = static_cast<uint32_t>(body_offset);
    s.kind = static_cast<PartKind>(kind_encoding / (kMaxEncoding + 1));
    s.encoding = static_cast<Encoding>(kind_encoding % (kMaxEncoding + 1));
    previous_header_offset = header_offset;

    if (uint64_t{s.header_offset} + s.header_size > message_size ||
        uint64_t{s.body_offset} + s.body_size > message_size) {
      return std::nullopt;
    }
    while (!open_ends.empty() && open_ends.back() <= i) {
      open_ends.pop_back();
    }
    size_t limit = open_ends.empty() ? n : open_ends.back();
    if (s.subtree_size == 0 || s.subtree_size > limit - i) {
      return std::nullopt;
    }
    if (i == 0 && s.subtree_size != n) {
      return std::nullopt;  // one tree, rooted at the message
    }
    open_ends.push_back(i + s.subtree_size);
    nodes.push_back(s);
  }
  return PartMap(std::move(nodes));
}

// The first real address of a list (group markers skipped).
const Address* first_address(const std::vector<Address>& list) {
  for (const Address& a : list) {
    if (a.host.has_value()) {
      return &a;
    }
  }
  return nullptr;
}

void set_address_keys(const std::vector<Address>& list, std::string& mailbox,
                      std::string& display) {
  const Address* a = first_address(list);
  if (a == nullptr) {
    return;
  }
  mailbox = a->mailbox.value_or("");
  display = decoded_name(*a);
  if (display.empty()) {
    display = addr_spec(*a);
  }
}

std::string_view field_value(const Header& header, std::string_view name) {
  const HeaderField* f = header.find(name);
  return f == nullptr ? std::string_view{} : f->value;
}

}  // namespace

CacheRecord build_cache_record(std::string_view message, const Part& root) {
  CacheRecord r;
  r.message_size =
      static_cast<uint32_t>(std::min<size_t>(message.size(), std::numeric_limits<uint32_t>::max()));
  r.header_size = root.header_size;
  r.body_lines = root.body_lines;

  std::string_view header_bytes;
  if (root.header_offset <= message.size()) {
    header_bytes = message.substr(root.header_offset, root.header_size);
  }
  const Header header = Header::parse(header_bytes);
  const Envelope envelope = build_envelope(header);

  append_envelope(r.envelope, envelope);
  append_body_structure(r.body, root, /*extended=*/false);
  append_body_structure(r.bodystructure, root, /*extended=*/true);
  r.parts = PartMap::from(root);

  if (envelope.date) {
    r.sent_date = parse_date(*envelope.date);
  }
  if (const HeaderField* subject = header.find("Subject")) {
    r.subject = decode_header_value(subject->value);
  }
  set_address_keys(envelope.from, r.from_mailbox, r.from_display);
  set_address_keys(envelope.to, r.to_mailbox, r.to_display);
  set_address_keys(envelope.cc, r.cc_mailbox, r.cc_display);

  std::vector<std::string> ids = parse_message_ids(field_value(header, "Message-ID"));
  if (!ids.empty()) {
    r.message_id = std::move(ids.front());
  }
  // RFC 5256 §2.2 (REFERENCES): the References ids; when there are none
  // (field absent or without a valid id), the first id of In-Reply-To.
  r.references = parse_message_ids(field_value(header, "References"));
  if (r.references.empty()) {
    std::vector<std::string> in_reply_to = parse_message_ids(field_value(header, "In-Reply-To"));
    if (!in_reply_to.empty()) {
      r.references.push_back(std::move(in_reply_to.front()));
    }
  }
  return r;
}

std::string serialize(const CacheRecord& record) {
  Writer w;
  w.buffer().reserve(64 + record.envelope.size() + record.body.size() +
                     record.bodystructure.size() + 8 * record.parts.nodes().size());
  w.u8(kMagic);
  w.u8(kCacheRecordVersion);
  w.varint(record.message_size);
  w.varint(record.header_size);
  w.varint(record.body_lines);
  w.str(record.envelope);
  w.str(record.body);
  w.str(record.bodystructure);
  write_parts(w, record.parts);
  w.u8(record.sent_date ? 1 : 0);
  if (record.sent_date) {
    w.svarint(record.sent_date->utc_seconds);
    w.svarint(record.sent_date->tz_offset_minutes);
  }
  w.str(record.subject);
  w.str(record.from_mailbox);
  w.str(record.from_display);
  w.str(record.to_mailbox);
  w.str(record.to_display);
  w.str(record.cc_mailbox);
  w.str(record.cc_display);
  w.str(record.message_id);
  w.varint(record.references.size());
  for (const std::string& id : record.references) {
    w.str(id);
  }
  uint32_t crc = crc32c(w.buffer());
  for (int i = 0; i < 4; ++i) {
    w.u8(static_cast<uint8_t>(crc >> (8 * i)));
  }
  return std::move(w).take();
}

std::optional<CacheRecord> deserialize(std::string_view bytes) {
  if (bytes.size() < kPrefixSize + kCrcSize) {
    return std::nullopt;
  }
  if (static_cast<uint8_t>(bytes[0]) != kMagic ||
      static_cast<uint8_t>(bytes[1]) != kCacheRecordVersion) {
    return std::nullopt;
  }
  std::string_view covered = bytes.substr(0, bytes.size() - kCrcSize);
  uint32_t stored = 0;
  for (size_t i = 0; i < kCrcSize; ++i) {
    stored |= uint32_t{static_cast<uint8_t>(bytes[covered.size() + i])} << (8 * i);
  }
  if (crc32c(covered) != stored) {
    return std::nullopt;
  }

  Reader r(covered.substr(kPrefixSize));
  CacheRecord rec;
  rec.message_size = r.u32();
  rec.header_size = r.u32();
  rec.body_lines = r.u32();
  rec.envelope = r.str();
  rec.body = r.str();
  rec.bodystructure = r.str();
  if (!r.ok() || rec.header_size > rec.message_size) {
    return std::nullopt;
  }
  std::optional<PartMap> parts = read_parts(r, rec.message_size);
  if (!parts) {
    return std::nullopt;
  }
  rec.parts = std::move(*parts);
  if (r.flag()) {
    DateTime d;
    d.utc_seconds = r.svarint();
    int64_t tz = r.svarint();
    if (tz < std::numeric_limits<int32_t>::min() || tz > std::numeric_limits<int32_t>::max()) {
      return std::nullopt;
    }
    d.tz_offset_minutes = static_cast<int32_t>(tz);
    rec.sent_date = d;
  }
  rec.subject = r.str();
  rec.from_mailbox = r.str();
  rec.from_display = r.str();
  rec.to_mailbox = r.str();
  rec.to_display = r.str();
  rec.cc_mailbox = r.str();
  rec.cc_display = r.str();
  rec.message_id = r.str();
  size_t n = r.count(1);
  rec.references.reserve(n);
  for (size_t i = 0; i < n && r.ok(); ++i) {
    rec.references.emplace_back(r.str());
  }
  if (!r.ok() || !r.at_end()) {
    return std::nullopt;
  }
  return rec;
}

AnalyzedMessage analyze_message(std::string_view message, bool with_text) {
  const Part root = parse_message(message);
  AnalyzedMessage out;
  out.record = build_cache_record(message, root);
  if (with_text) {
    out.text = build_search_text(message, root);
  }
  return out;
}

}  // namespace peregrine::mime
