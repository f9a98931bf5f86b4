#include "mime/cache_record.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "mime/address.h"
#include "mime/date.h"
#include "mime/encoded_word.h"
#include "mime/header.h"
#include "mime/imap_output.h"
#include "mime/params.h"
#include "mime/part.h"
#include "mime/search_text.h"
#include "mime/section.h"

namespace peregrine::mime {
namespace {

// An independent bitwise CRC-32C, so the tests check the documented
// algorithm rather than the implementation's table.
uint32_t reference_crc32c(std::string_view bytes) {
  uint32_t c = 0xFFFFFFFFu;
  for (char ch : bytes) {
    c ^= static_cast<uint8_t>(ch);
    for (int k = 0; k < 8; ++k) {
      c = (c & 1) ? (c >> 1) ^ 0x82F63B78u : c >> 1;
    }
  }
  return c ^ 0xFFFFFFFFu;
}

// Replaces the trailing CRC of `bytes` (at least 4 bytes) with a correct one,
// so a test reaches the payload checks behind the CRC.
std::string reseal(std::string bytes) {
  if (bytes.size() < 4) {
    return bytes;
  }
  bytes.resize(bytes.size() - 4);
  uint32_t crc = reference_crc32c(bytes);
  for (int i = 0; i < 4; ++i) {
    bytes.push_back(static_cast<char>((crc >> (8 * i)) & 0xFF));
  }
  return bytes;
}

std::string hex(std::string_view bytes) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out;
  for (char c : bytes) {
    auto b = static_cast<uint8_t>(c);
    out += kDigits[b >> 4];
    out += kDigits[b & 15];
  }
  return out;
}

CacheRecord full_record() {
  CacheRecord r;
  r.message_size = 5'000'000;
  r.header_size = 1234;
  r.body_lines = 70'000;
  r.envelope = "(\"Mon, 1 Jan 2024 10:00:00 +0100\" {5}\r\nh\xc3\xa9llo NIL NIL)";
  r.body = "(\"text\" \"plain\" NIL NIL NIL \"7bit\" 12 1)";
  r.bodystructure = std::string("(\"text\" \"plain\" NIL NIL NIL \"7bit\" 12 1 NIL NIL NIL NIL)") +
                    std::string(1, '\0') + "\xff";
  r.parts = PartMap({
      {.header_offset = 0,
       .header_size = 1234,
       .body_offset = 1234,
       .body_size = 4'998'766,
       .subtree_size = 4,
       .kind = PartKind::kMultipart,
       .encoding = Encoding::k7Bit},
      {.header_offset = 1300,
       .header_size = 80,
       .body_offset = 1380,
       .body_size = 500,
       .subtree_size = 1,
       .kind = PartKind::kLeaf,
       .encoding = Encoding::kQuotedPrintable},
      {.header_offset = 1900,
       .header_size = 90,
       .body_offset = 1990,
       .body_size = 4'000'000,
       .subtree_size = 2,
       .kind = PartKind::kMessage,
       .encoding = Encoding::k8Bit},
      {.header_offset = 1990,
       .header_size = 300,
       .body_offset = 2290,
       .body_size = 3'999'700,
       .subtree_size = 1,
       .kind = PartKind::kLeaf,
       .encoding = Encoding::kBase64},
  });
  r.sent_date = DateTime{.utc_seconds = -86'400 * 365, .tz_offset_minutes = -330};
  r.subject = "R\xc3\xa9sum\xc3\xa9 \xe2\x82\xac";
  r.from_mailbox = "alice";
  r.from_display = "Alice Example";
  r.to_mailbox = "bob";
  r.to_display = "bob@example.org";
  r.cc_mailbox = "";
  r.cc_display = "";
  r.message_id = "<id1@example.org>";
  r.references = {"<root@example.org>", "<mid@example.org>"};
  return r;
}

TEST(CacheRecordFormat, Crc32cCheckValue) { EXPECT_EQ(reference_crc32c("123456789"), 0xE3069283u); }

TEST(CacheRecordFormat, CrcMatchesReferenceAtEveryLength) {
  // The CRC may be computed eight bytes at a time; every tail length must
  // agree with the byte-wise reference.
  for (size_t n = 0; n < 40; ++n) {
    CacheRecord r;
    r.subject = std::string(n, 'x');
    std::string bytes = serialize(r);
    std::string_view covered(bytes.data(), bytes.size() - 4);
    uint32_t stored = 0;
    for (size_t i = 0; i < 4; ++i) {
      stored |= uint32_t{static_cast<uint8_t>(bytes[covered.size() + i])} << (8 * i);
    }
    EXPECT_EQ(stored, reference_crc32c(covered)) << n;
    EXPECT_TRUE(deserialize(bytes).has_value()) << n;
  }
}

TEST(CacheRecordFormat, ExactBytesOfDocumentedExample) {
  // The example in docs/formats/cache_record.md.
  CacheRecord r;
  r.message_size = 300;
  r.header_size = 100;
  r.body_lines = 5;
  r.envelope = "(E)";
  r.body = "(B)";
  r.bodystructure = "(S)";
  r.parts = PartMap({{.header_offset = 0,
                      .header_size = 100,
                      .body_offset = 100,
                      .body_size = 200,
                      .subtree_size = 1}});
  r.subject = "hi";
  r.message_id = "<a@b>";
  std::string bytes = serialize(r);
  ASSERT_GE(bytes.size(), 4u);
  EXPECT_EQ(hex(bytes.substr(0, bytes.size() - 4)),
            "c501"
            "ac026405"
            "03284529"
            "03284229"
            "03285329"
            "01"
            "006400c8010100"
            "00"
            "026869"
            "000000000000"
            "053c6140623e"
            "00");
  EXPECT_EQ(reseal(bytes), bytes);
}

TEST(CacheRecordFormat, RoundTripsFullRecord) {
  CacheRecord r = full_record();
  std::string bytes = serialize(r);
  std::optional<CacheRecord> back = deserialize(bytes);
  ASSERT_TRUE(back.has_value());
  EXPECT_EQ(*back, r);
}

TEST(CacheRecordFormat, RoundTripsDefaultRecord) {
  CacheRecord r;
  std::optional<CacheRecord> back = deserialize(serialize(r));
  ASSERT_TRUE(back.has_value());
  EXPECT_EQ(*back, r);
}

TEST(CacheRecordFormat, RoundTripsExtremeValues) {
  CacheRecord r;
  r.message_size = 0xFFFFFFFFu;
  r.header_size = 0xFFFFFFFFu;
  r.body_lines = 0xFFFFFFFFu;
  r.sent_date = DateTime{.utc_seconds = INT64_MIN, .tz_offset_minutes = INT32_MIN};
  r.parts = PartMap({
      {.header_offset = 0xFFFFFFFFu,
       .header_size = 0,
       .body_offset = 0xFFFFFFFFu,
       .body_size = 0,
       .subtree_size = 2,
       .kind = PartKind::kMessage,
       .encoding = Encoding::kUnknown},
      {.header_offset = 0,
       .header_size = 0,
       .body_offset = 0,
       .body_size = 0xFFFFFFFFu,
       .subtree_size = 1,
       .kind = PartKind::kLeaf,
       .encoding = Encoding::kBinary},
  });
  std::optional<CacheRecord> back = deserialize(serialize(r));
  ASSERT_TRUE(back.has_value());
  EXPECT_EQ(*back, r);

  r.sent_date = DateTime{.utc_seconds = INT64_MAX, .tz_offset_minutes = INT32_MAX};
  back = deserialize(serialize(r));
  ASSERT_TRUE(back.has_value());
  EXPECT_EQ(*back, r);
}

TEST(CacheRecordFormat, EveryTruncationIsRejected) {
  std::string bytes = serialize(full_record());
  for (size_t n = 0; n < bytes.size(); ++n) {
    EXPECT_FALSE(deserialize(std::string_view(bytes).substr(0, n)).has_value()) << n;
    // Also with a valid CRC over the truncated payload: the payload reader
    // itself must notice the missing bytes.
    if (n >= 6) {
      std::string cut = bytes.substr(0, n - 4) + "xxxx";
      EXPECT_FALSE(deserialize(reseal(cut)).has_value()) << n;
    }
  }
}

TEST(CacheRecordFormat, TrailingGarbageIsRejected) {
  std::string bytes = serialize(full_record());
  EXPECT_FALSE(deserialize(bytes + '\0').has_value());
  // Garbage between payload and CRC, with a CRC that covers it.
  std::string padded = bytes.substr(0, bytes.size() - 4) + std::string(1, '\0') + "xxxx";
  EXPECT_FALSE(deserialize(reseal(padded)).has_value());
}

TEST(CacheRecordFormat, EveryByteFlipIsRejected) {
  std::string bytes = serialize(full_record());
  for (size_t i = 0; i < bytes.size(); ++i) {
    for (uint8_t mask : {0x01, 0x80, 0xFF, 0x5A}) {
      std::string bad = bytes;
      bad[i] = static_cast<char>(bad[i] ^ mask);
      EXPECT_FALSE(deserialize(bad).has_value()) << "byte " << i << " mask " << int{mask};
    }
  }
}

TEST(CacheRecordFormat, VersionAndMagicMismatchAreRejected) {
  std::string bytes = serialize(full_record());
  ASSERT_EQ(static_cast<uint8_t>(bytes[1]), kCacheRecordVersion);
  for (int v : {0, kCacheRecordVersion + 1, 0xFF}) {
    std::string other = bytes;
    other[1] = static_cast<char>(v);
    EXPECT_FALSE(deserialize(reseal(other)).has_value()) << v;
  }
  std::string other = bytes;
  other[0] = 'P';
  EXPECT_FALSE(deserialize(reseal(other)).has_value());
  EXPECT_FALSE(deserialize("").has_value());
}

// Mutations behind a valid CRC exercise the payload reader the way a
// corrupt-but-checksummed row (or a bug in a writer) would. Whatever it
// accepts must re-serialize to the same bytes: the format is canonical.
TEST(CacheRecordFormat, RandomMutationsNeverCrashAndAcceptedBytesAreCanonical) {
  const std::string bytes = serialize(full_record());
  std::mt19937 rng(12345);
  int accepted = 0;
  for (int iter = 0; iter < 20000; ++iter) {
    std::string m = bytes.substr(0, bytes.size() - 4);
    int edits = 1 + static_cast<int>(rng() % 4);
    for (int e = 0; e < edits && !m.empty(); ++e) {
      size_t pos = rng() % m.size();
      switch (rng() % 4) {
        case 0:
          m[pos] = static_cast<char>(m[pos] ^ (1u << (rng() % 8)));
          break;
        case 1:
          m[pos] = static_cast<char>(rng());
          break;
        case 2:
          m.erase(pos, 1 + rng() % 3);
          break;
        default:
          m.insert(pos, 1, static_cast<char>(rng()));
          break;
      }
    }
    std::string sealed = reseal(m + "xxxx");
    std::optional<CacheRecord> r = deserialize(sealed);
    if (r) {
      ++accepted;
      EXPECT_EQ(serialize(*r), sealed);
    }
  }
  // Some mutations (inside strings) keep the record well-formed.
  EXPECT_GT(accepted, 0);
}

TEST(CacheRecordFormat, HugeCountsAreRejectedWithoutAllocating) {
  // A header varint claiming 2^40 nodes, then nothing.
  CacheRecord r;
  std::string bytes = serialize(r);
  // Default record: magic, version, 3 zero ints, 3 empty strings, then the
  // node count at offset 8.
  ASSERT_EQ(static_cast<uint8_t>(bytes[8]), 0);
  std::string huge =
      bytes.substr(0, 8) + std::string("\x80\x80\x80\x80\x80\x20", 6) + bytes.substr(9);
  EXPECT_FALSE(deserialize(reseal(huge)).has_value());
  // A string claiming 2^62 bytes.
  std::string long_string =
      bytes.substr(0, 5) + std::string("\xff\xff\xff\xff\xff\xff\xff\xff\x3f", 9) + bytes.substr(6);
  EXPECT_FALSE(deserialize(reseal(long_string)).has_value());
}

TEST(CacheRecordFormat, OverlongAndOversizedVarintsAreRejected) {
  CacheRecord r;
  std::string bytes = serialize(r);
  // message_size (offset 2) written as 0x80 0x00: overlong zero.
  std::string overlong = bytes.substr(0, 2) + std::string("\x80\x00", 2) + bytes.substr(3);
  EXPECT_FALSE(deserialize(reseal(overlong)).has_value());
  // message_size = 2^32: over 32 bits.
  std::string big = bytes.substr(0, 2) + std::string("\x80\x80\x80\x80\x10", 5) + bytes.substr(3);
  EXPECT_FALSE(deserialize(reseal(big)).has_value());
  // 11-byte varint.
  std::string eleven =
      bytes.substr(0, 2) + std::string(10, '\x80') + std::string(1, '\x01') + bytes.substr(3);
  EXPECT_FALSE(deserialize(reseal(eleven)).has_value());
}

struct BadParts {
  const char* what;
  uint32_t message_size;
  std::vector<PartSpan> nodes;
};

TEST(CacheRecordFormat, InconsistentPartMapsAreRejected) {
  const std::vector<BadParts> cases = {
      {"root subtree larger than the map", 100, {{.body_size = 10, .subtree_size = 2}}},
      {"root subtree smaller than the map",
       100,
       {{.body_size = 10, .subtree_size = 1}, {.body_size = 10, .subtree_size = 1}}},
      {"zero subtree", 100, {{.body_size = 10, .subtree_size = 0}}},
      {"body past the message", 100, {{.body_offset = 50, .body_size = 51, .subtree_size = 1}}},
      {"header past the message",
       100,
       {{.header_offset = 90, .header_size = 11, .body_offset = 101, .subtree_size = 1}}},
      {"kind out of range", 100, {{.subtree_size = 1, .kind = static_cast<PartKind>(3)}}},
      {"grandchild overruns its parent",
       100,
       {{.subtree_size = 4}, {.subtree_size = 2}, {.subtree_size = 2}, {.subtree_size = 1}}},
  };
  for (const BadParts& c : cases) {
    CacheRecord r;
    r.message_size = c.message_size;
    r.parts = PartMap(c.nodes);
    EXPECT_FALSE(deserialize(serialize(r)).has_value()) << c.what;
  }
  // Control: a valid tree (root; a multipart holding one leaf; a leaf).
  CacheRecord r;
  r.message_size = 100;
  r.parts =
      PartMap({{.subtree_size = 4}, {.subtree_size = 2}, {.subtree_size = 1}, {.subtree_size = 1}});
  EXPECT_TRUE(deserialize(serialize(r)).has_value());
}

TEST(CacheRecordFormat, HeaderSizeLargerThanMessageIsRejected) {
  CacheRecord r;
  r.message_size = 10;
  r.header_size = 11;
  EXPECT_FALSE(deserialize(serialize(r)).has_value());
}

// ---------------------------------------------------------------------------
// Building records from messages.

CacheRecord build(std::string_view message) {
  return build_cache_record(message, parse_message(message));
}

TEST(CacheRecordBuild, SortAndThreadKeys) {
  const std::string msg =
      "Date: Tue, 2 Jan 2024 10:00:00 +0200\r\n"
      "Subject: =?utf-8?Q?R=C3=A9sum=C3=A9?= for\r\n you\r\n"
      "From: =?iso-8859-1?Q?J=F6rg?= <joerg@example.de>, other@example.de\r\n"
      "To: Team: a@example.org, \"B\" <b@example.org>;, c@example.org\r\n"
      "Cc: cc@example.net\r\n"
      "Message-ID: <self@example.de> (comment)\r\n"
      "In-Reply-To: <parent@example.de>\r\n"
      "References: <root@example.de>\r\n <parent@example.de>\r\n"
      "\r\n"
      "Hello\r\n";
  CacheRecord r = build(msg);
  EXPECT_EQ(r.message_size, msg.size());
  EXPECT_EQ(r.header_size, msg.find("Hello"));
  EXPECT_EQ(r.body_lines, 1u);
  ASSERT_TRUE(r.sent_date.has_value());
  EXPECT_EQ(r.sent_date->utc_seconds, 1704182400);
  EXPECT_EQ(r.sent_date->tz_offset_minutes, 120);
  EXPECT_EQ(r.subject, "R\xc3\xa9sum\xc3\xa9 for you");
  EXPECT_EQ(r.from_mailbox, "joerg");
  EXPECT_EQ(r.from_display, "J\xc3\xb6rg");
  // The group marker is skipped: the first address is a@example.org.
  EXPECT_EQ(r.to_mailbox, "a");
  EXPECT_EQ(r.to_display, "a@example.org");
  EXPECT_EQ(r.cc_mailbox, "cc");
  EXPECT_EQ(r.cc_display, "cc@example.net");
  EXPECT_EQ(r.message_id, "<self@example.de>");
  EXPECT_EQ(r.references, (std::vector<std::string>{"<root@example.de>", "<parent@example.de>"}));
}

TEST(CacheRecordBuild, InReplyToWhenReferencesHasNoId) {
  const std::string base =
      "From: a@b.c\r\n"
      "In-Reply-To: <first@x> <second@x>\r\n";
  EXPECT_EQ(build(base + "\r\nbody").references, (std::vector<std::string>{"<first@x>"}));
  EXPECT_EQ(build(base + "References: (nothing here)\r\n\r\nbody").references,
            (std::vector<std::string>{"<first@x>"}));
  EXPECT_TRUE(build("From: a@b.c\r\n\r\nbody").references.empty());
}

TEST(CacheRecordBuild, EmptyKeysWhenHeadersAreMissing) {
  CacheRecord r = build("X-Nothing: here\r\n\r\nbody\r\n");
  EXPECT_FALSE(r.sent_date.has_value());
  EXPECT_EQ(r.subject, "");
  EXPECT_EQ(r.from_mailbox, "");
  EXPECT_EQ(r.from_display, "");
  EXPECT_EQ(r.to_mailbox, "");
  EXPECT_EQ(r.cc_display, "");
  EXPECT_EQ(r.message_id, "");
  EXPECT_TRUE(r.references.empty());
  // Only a group, no address in it.
  EXPECT_EQ(build("To: undisclosed-recipients:;\r\n\r\n").to_mailbox, "");
}

TEST(CacheRecordBuild, RenderedFormsAndPartMapComeFromTheParse) {
  const std::string msg =
      "From: a@b.c\r\n"
      "Subject: parts\r\n"
      "MIME-Version: 1.0\r\n"
      "Content-Type: multipart/mixed; boundary=\"XX\"\r\n"
      "\r\n"
      "--XX\r\n"
      "Content-Type: text/plain; charset=utf-8\r\n"
      "\r\n"
      "one\r\n"
      "--XX\r\n"
      "Content-Type: application/pdf; name=a.pdf\r\n"
      "Content-Transfer-Encoding: base64\r\n"
      "\r\n"
      "JVBERi0xLjQK\r\n"
      "--XX--\r\n";
  const Part root = parse_message(msg);
  CacheRecord r = build_cache_record(msg, root);

  std::string envelope;
  append_envelope(envelope, build_envelope(Header::parse(msg)));
  std::string body;
  append_body_structure(body, root, false);
  std::string bodystructure;
  append_body_structure(bodystructure, root, true);
  EXPECT_EQ(r.envelope, envelope);
  EXPECT_EQ(r.body, body);
  EXPECT_EQ(r.bodystructure, bodystructure);
  EXPECT_EQ(r.parts, PartMap::from(root));
  ASSERT_EQ(r.parts.nodes().size(), 3u);
  EXPECT_EQ(r.parts.nodes()[2].encoding, Encoding::kBase64);

  std::optional<CacheRecord> back = deserialize(serialize(r));
  ASSERT_TRUE(back.has_value());
  EXPECT_EQ(*back, r);
}

TEST(CacheRecordBuild, AnalyzeMessageIsRecordPlusSearchText) {
  const std::string msg =
      "From: \"Ann\" <ann@example.org>\r\n"
      "Subject: =?utf-8?B?w6l0w6k=?=\r\n"
      "\r\n"
      "summer text\r\n";
  AnalyzedMessage a = analyze_message(msg);
  const Part root = parse_message(msg);
  EXPECT_EQ(a.record, build_cache_record(msg, root));
  SearchText t = build_search_text(msg, root);
  EXPECT_EQ(a.text.subject, t.subject);
  EXPECT_EQ(a.text.from, t.from);
  EXPECT_EQ(a.text.headers, t.headers);
  EXPECT_EQ(a.text.body, t.body);
  EXPECT_EQ(a.record.subject, "\xc3\xa9t\xc3\xa9");
  // Without the text (the full-text index is off): the same record.
  AnalyzedMessage record_only = analyze_message(msg, /*with_text=*/false);
  EXPECT_EQ(record_only.record, a.record);
  EXPECT_TRUE(record_only.text.subject.empty());
  EXPECT_TRUE(record_only.text.body.empty());
  EXPECT_TRUE(record_only.text.headers.empty());
}

TEST(CacheRecordBuild, HostileInputsBuildValidRecords) {
  const std::vector<std::string> inputs = {
      "",
      "\r\n",
      "no header at all",
      "Content-Type: multipart/mixed; boundary=a\r\n\r\n--a\r\n",
      "Content-Type: message/rfc822\r\n\r\n",
      std::string("Subject: \0\xff\r\n\r\n\0", 16),
      "From: <<<@@@>>>\r\nReferences: <<<>>>\r\nDate: 99 Foo 99999 99:99:99\r\n\r\n",
  };
  for (const std::string& in : inputs) {
    CacheRecord r = build(in);
    EXPECT_EQ(r.message_size, in.size());
    std::optional<CacheRecord> back = deserialize(serialize(r));
    ASSERT_TRUE(back.has_value()) << in;
    EXPECT_EQ(*back, r);
  }
}

// ---------------------------------------------------------------------------
// The corpus: every message round-trips; realistic ones stay small.

std::string read_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

std::vector<std::filesystem::path> corpus_files(std::string_view prefix) {
  std::vector<std::filesystem::path> out;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(PEREGRINE_CORPUS_DIR, ec)) {
    std::string name = e.path().filename().string();
    if (e.is_regular_file() && name.starts_with(prefix) && name.ends_with(".eml")) {
      out.push_back(e.path());
    }
  }
  std::sort(out.begin(), out.end());
  return out;
}

TEST(CacheRecordCorpus, EveryMessageRoundTrips) {
  std::vector<std::filesystem::path> files = corpus_files("");
  ASSERT_FALSE(files.empty()) << "no .eml files in " << PEREGRINE_CORPUS_DIR;
  for (const auto& path : files) {
    std::string msg = read_file(path);
    CacheRecord r = analyze_message(msg).record;
    std::optional<CacheRecord> back = deserialize(serialize(r));
    ASSERT_TRUE(back.has_value()) << path;
    EXPECT_EQ(*back, r) << path;
  }
}

// The cache is read on every FETCH of ENVELOPE/BODYSTRUCTURE: a typical
// message's record should fit in one small row. Realistic messages (rw-*.eml)
// are measured; the median must stay under 2 KiB.
TEST(CacheRecordCorpus, RealisticRecordsAreSmall) {
  std::vector<std::filesystem::path> files = corpus_files("rw-");
  ASSERT_FALSE(files.empty()) << "no rw-*.eml files in " << PEREGRINE_CORPUS_DIR
                              << ": the size test needs the realistic corpus";
  std::vector<std::pair<size_t, std::string>> sizes;
  for (const auto& path : files) {
    std::string msg = read_file(path);
    sizes.emplace_back(serialize(analyze_message(msg).record).size(), path.filename().string());
  }
  std::sort(sizes.begin(), sizes.end());
  auto at = [&](double q) {
    return sizes[std::min(sizes.size() - 1, static_cast<size_t>(q * (sizes.size() - 1) + 0.5))]
        .first;
  };
  size_t median = sizes.size() % 2 == 1
                      ? sizes[sizes.size() / 2].first
                      : (sizes[sizes.size() / 2 - 1].first + sizes[sizes.size() / 2].first) / 2;
  std::printf(
      "cache record sizes over %zu realistic messages (bytes): min %zu, p25 %zu, "
      "median %zu, p75 %zu, p90 %zu, max %zu (%s)\n",
      sizes.size(), sizes.front().first, at(0.25), median, at(0.75), at(0.90), sizes.back().first,
      sizes.back().second.c_str());
  EXPECT_LT(median, 2048u);
}

// Inputs the fuzzer once broke something with (tests/fuzz/regressions/), run
// through the checks of tests/fuzz/mime_fuzz.cc under the normal ASan build.
TEST(CacheRecordFuzzRegressions, NoInputBreaksAnInvariant) {
  const std::filesystem::path dir =
      std::filesystem::path(PEREGRINE_CORPUS_DIR) / ".." / ".." / "fuzz" / "regressions";
  ASSERT_TRUE(std::filesystem::is_directory(dir)) << dir;
  for (const auto& e : std::filesystem::directory_iterator(dir)) {
    if (!e.is_regular_file() || e.path().filename() == "README.md") {
      continue;
    }
    SCOPED_TRACE(e.path().string());
    const std::string in = read_file(e.path());
    AnalyzedMessage a = analyze_message(in);
    EXPECT_EQ(a.record.message_size, in.size());
    std::optional<CacheRecord> back = deserialize(serialize(a.record));
    ASSERT_TRUE(back.has_value());
    EXPECT_EQ(*back, a.record);
    for (const PartSpan& n : a.record.parts.nodes()) {
      EXPECT_LE(uint64_t{n.header_offset} + n.header_size, in.size());
      EXPECT_LE(uint64_t{n.body_offset} + n.body_size, in.size());
    }
    const std::vector<std::vector<uint32_t>> paths = {{}, {1}, {2}, {1, 1}, {2, 1}, {1, 1, 1}};
    const std::vector<std::string> fields = {"From", "Subject"};
    for (const auto& path : paths) {
      for (SectionText text : {SectionText::kNone, SectionText::kHeader, SectionText::kHeaderFields,
                               SectionText::kText, SectionText::kMime}) {
        std::optional<SectionRange> range =
            resolve_section(a.record.parts, SectionSpec{path, text, fields});
        if (range) {
          EXPECT_LE(uint64_t{range->offset} + range->size, in.size());
          if (range->needs_filter) {
            (void)filter_header_fields(std::string_view(in).substr(range->offset, range->size),
                                       fields, false);
          }
        }
      }
    }
    std::string_view prefix = std::string_view(in).substr(0, 4096);
    (void)parse_address_list(prefix);
    (void)parse_date(prefix);
    (void)decode_encoded_words(prefix);
    (void)parse_content_type(prefix);
    (void)deserialize(in);
  }
}

}  // namespace
}  // namespace peregrine::mime
