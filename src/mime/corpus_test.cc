// The message corpus (tests/mime/corpus: edge-*.eml isolate one RFC case or
// breakage each, rw-*.eml are realistic messages) against the engine:
//  - golden test: ENVELOPE and BODYSTRUCTURE of every message, after CRLF
//    normalization as the store does at delivery, byte for byte equal to
//    tests/mime/golden/<stem>.golden;
//  - every message, raw, normalized and truncated, parses into a tree that
//    keeps every invariant the rest of the server relies on (ranges inside
//    the message and inside their parent, the part map and sections agree
//    with the tree, the IMAP output is well-formed).
//
// Golden files are written by scripts/update-mime-golden.sh (mime_dump
// --golden-dir), only after a change has been checked against Dovecot with
// tests/mime/dovecot_crosscheck.py. Format: two lines "ENVELOPE <value>" and
// "BODYSTRUCTURE <value>", each ended by LF; in <value> a backslash is
// written "\\", CR "\r", LF "\n", any other byte below 0x20 (except TAB) or
// 0x7F "\xHH"; every other byte as is. tests/mime/mime_dump.cc has the same
// escaping; keep the two in step.
//
// Corpus files are every regular file in the corpus folder except dotfiles
// and README*. A message without a golden file fails, so does a golden file
// without a message, and so does a corpus of fewer than kMinCorpusFiles.

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "mime/cache_record.h"
#include "mime/envelope.h"
#include "mime/header.h"
#include "mime/imap_output.h"
#include "mime/part.h"
#include "mime/section.h"
#include "mime/transfer.h"

namespace peregrine::mime {
namespace {

namespace fs = std::filesystem;

constexpr size_t kMinCorpusFiles = 60;
// Cut points per message in the truncation test.
constexpr size_t kTruncations = 32;

fs::path corpus_dir() { return fs::path(PEREGRINE_CORPUS_DIR); }
fs::path golden_dir() { return (corpus_dir() / ".." / "golden").lexically_normal(); }

std::vector<fs::path> list_files(const fs::path& dir) {
  std::vector<fs::path> out;
  std::error_code ec;
  for (const fs::directory_entry& entry : fs::directory_iterator(dir, ec)) {
    const std::string name = entry.path().filename().string();
    if (entry.is_regular_file() && name[0] != '.' && !name.starts_with("README")) {
      out.push_back(entry.path());
    }
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::optional<std::string> read_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    return std::nullopt;
  }
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

struct CorpusMessage {
  std::string name;  // file name
  std::string raw;
  std::string normalized;  // CRLF line ends, as stored
};

// Every LF not preceded by CR becomes CRLF; a lone CR stays (as mime_dump --crlf).
std::string normalize_crlf(std::string_view in) {
  std::string out;
  out.reserve(in.size() + in.size() / 16);
  for (size_t i = 0; i < in.size(); ++i) {
    if (in[i] == '\n' && (i == 0 || in[i - 1] != '\r')) {
      out.push_back('\r');
    }
    out.push_back(in[i]);
  }
  return out;
}

const std::vector<CorpusMessage>& corpus() {
  static const std::vector<CorpusMessage> messages = [] {
    std::vector<CorpusMessage> out;
    for (const fs::path& path : list_files(corpus_dir())) {
      std::optional<std::string> data = read_file(path);
      if (!data) {
        ADD_FAILURE() << "cannot read " << path;
        continue;
      }
      std::string normalized = normalize_crlf(*data);
      out.push_back({path.filename().string(), std::move(*data), std::move(normalized)});
    }
    return out;
  }();
  return messages;
}

std::string escape_golden(std::string_view s) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  out.reserve(s.size() + 16);
  for (char ch : s) {
    const auto c = static_cast<unsigned char>(ch);
    if (c == '\\') {
      out.append("\\\\");
    } else if (c == '\r') {
      out.append("\\r");
    } else if (c == '\n') {
      out.append("\\n");
    } else if ((c < 0x20 && c != '\t') || c == 0x7F) {
      out.append("\\x");
      out.push_back(kHex[c >> 4]);
      out.push_back(kHex[c & 0xF]);
    } else {
      out.push_back(ch);
    }
  }
  return out;
}

std::string golden_text(const CacheRecord& record) {
  return "ENVELOPE " + escape_golden(record.envelope) + "\nBODYSTRUCTURE " +
         escape_golden(record.bodystructure) + "\n";
}

// ---------------------------------------------------------------- IMAP syntax

// Checks that `s` is exactly one well-formed IMAP parenthesized list as
// ENVELOPE and BODY[STRUCTURE] use (RFC 3501 §9): lists are never empty;
// items are separated by one SP, except that two lists may be adjacent
// (body-type-mpart = 1*body SP media-subtype); atoms are NIL or numbers;
// quoted strings hold 7-bit TEXT-CHARs with only \" and \\ escaped; literals
// are {n}CRLF followed by n CHAR8 (no NUL). Returns "" or what is wrong.
class ImapListChecker {
 public:
  explicit ImapListChecker(std::string_view s) : s_(s) {}

  std::string check() {
    if (s_.empty() || s_[0] != '(') {
      return "does not start with '('";
    }
    if (!list(0)) {
      return error_ + " at offset " + std::to_string(pos_);
    }
    if (pos_ != s_.size()) {
      return "trailing bytes at offset " + std::to_string(pos_);
    }
    return "";
  }

 private:
  static constexpr int kMaxDepth = 1000;

  bool fail(std::string what) {
    error_ = std::move(what);
    return false;
  }
  bool at_end() const { return pos_ >= s_.size(); }

  bool list(int depth) {
    if (depth > kMaxDepth) {
      return fail("nesting too deep");
    }
    ++pos_;  // '('
    if (!at_end() && s_[pos_] == ')') {
      return fail("empty list");
    }
    while (true) {
      if (!value(depth)) {
        return false;
      }
      if (at_end()) {
        return fail("list not closed");
      }
      if (s_[pos_] == ')') {
        ++pos_;
        return true;
      }
      if (s_[pos_] == '(' && s_[pos_ - 1] == ')') {
        continue;  // adjacent bodies of a multipart
      }
      if (s_[pos_] != ' ') {
        return fail("expected SP or ')'");
      }
      ++pos_;
    }
  }

  bool value(int depth) {
    if (at_end()) {
      return fail("value expected");
    }
    char c = s_[pos_];
    if (c == '(') {
      return list(depth + 1);
    }
    if (c == '"') {
      return quoted();
    }
    if (c == '{') {
      return literal();
    }
    size_t start = pos_;
    while (!at_end() && s_[pos_] != ' ' && s_[pos_] != ')' && s_[pos_] != '(') {
      ++pos_;
    }
    std::string_view atom = s_.substr(start, pos_ - start);
    if (atom == "NIL") {
      return true;
    }
    if (atom.empty() || atom.size() > 10 ||
        !std::all_of(atom.begin(), atom.end(), [](char d) { return d >= '0' && d <= '9'; })) {
      pos_ = start;
      return fail("atom that is neither NIL nor a number");
    }
    return true;
  }

  bool quoted() {
    ++pos_;
    while (!at_end()) {
      const auto c = static_cast<unsigned char>(s_[pos_]);
      if (c == '"') {
        ++pos_;
        return true;
      }
      if (c == '\\') {
        if (pos_ + 1 >= s_.size() || (s_[pos_ + 1] != '"' && s_[pos_ + 1] != '\\')) {
          return fail("bad escape in a quoted string");
        }
        pos_ += 2;
        continue;
      }
      if (c == 0 || c == '\r' || c == '\n' || c >= 0x80) {
        return fail("NUL, CR, LF or 8-bit byte in a quoted string");
      }
      ++pos_;
    }
    return fail("quoted string not closed");
  }

  bool literal() {
    size_t close = s_.find('}', pos_);
    if (close == std::string_view::npos || close == pos_ + 1 || close - pos_ > 11) {
      return fail("bad literal length");
    }
    size_t n = 0;
    for (size_t i = pos_ + 1; i < close; ++i) {
      if (s_[i] < '0' || s_[i] > '9') {
        return fail("bad literal length");
      }
      n = n * 10 + static_cast<size_t>(s_[i] - '0');
    }
    if (s_.substr(close + 1, 2) != "\r\n") {
      return fail("literal length not followed by CRLF");
    }
    size_t start = close + 3;
    if (s_.size() - std::min(start, s_.size()) < n) {
      return fail("literal runs past the end");
    }
    if (s_.substr(start, n).find('\0') != std::string_view::npos) {
      pos_ = start;
      return fail("NUL in a literal (CHAR8 excludes it)");
    }
    pos_ = start + n;
    return true;
  }

  std::string_view s_;
  size_t pos_ = 0;
  std::string error_;
};

// ---------------------------------------------------------------- invariants

uint64_t body_end(const Part& p) { return uint64_t{p.body_offset} + p.body_size; }

// body-fld-lines: the line ends (a last line without one is not a line).
uint32_t count_lines(std::string_view body) {
  return static_cast<uint32_t>(std::count(body.begin(), body.end(), '\n'));
}

void flatten(const Part& part, std::vector<const Part*>& out) {
  out.push_back(&part);
  for (const Part& child : part.children) {
    flatten(child, out);
  }
}

// IMAP part numbers (RFC 3501 §6.4.5), each with the node whose body is
// BODY[number] and whose header is BODY[number.MIME]: a multipart's children
// are n.1..; a message part's encapsulated message gives its multipart
// children n.1.., or, when not multipart, is itself n.1.
struct NumberedPart {
  std::vector<uint32_t> number;
  const Part* part;
};

void number_parts(const Part& node, const std::vector<uint32_t>& number,
                  std::vector<NumberedPart>& out) {
  auto add = [&](const Part& part, uint32_t n) {
    std::vector<uint32_t> sub = number;
    sub.push_back(n);
    out.push_back({sub, &part});
    number_parts(part, sub, out);
  };
  if (node.kind == PartKind::kMultipart) {
    for (size_t i = 0; i < node.children.size(); ++i) {
      add(node.children[i], static_cast<uint32_t>(i + 1));
    }
  } else if (node.kind == PartKind::kMessage && !node.children.empty()) {
    if (node.children.front().kind == PartKind::kMultipart) {
      number_parts(node.children.front(), number, out);
    } else {
      add(node.children.front(), 1);
    }
  }
}

std::string dotted(const std::vector<uint32_t>& number) {
  std::string s;
  for (uint32_t n : number) {
    s += (s.empty() ? "" : ".") + std::to_string(n);
  }
  return s;
}

class TreeChecker {
 public:
  TreeChecker(std::string_view message, const ParseLimits& limits)
      : message_(message), limits_(limits) {}

  void check(const Part& root) {
    EXPECT_EQ(root.header_offset, 0u);
    EXPECT_EQ(root.header_size, Header::parse(message_).size());
    EXPECT_EQ(body_end(root), message_.size()) << "the message body runs to the end";
    check_node(root, 0, message_.size(), 0, "[]");
    check_part_map(root);
    check_sections(root);
    check_record(root);
  }

 private:
  void check_node(const Part& p, uint64_t lo, uint64_t hi, uint32_t depth,
                  const std::string& where) {
    SCOPED_TRACE("part " + where);
    EXPECT_EQ(uint64_t{p.body_offset}, uint64_t{p.header_offset} + p.header_size);
    EXPECT_GE(p.header_offset, lo);
    EXPECT_LE(body_end(p), hi);
    EXPECT_LE(body_end(p), message_.size());
    EXPECT_LE(depth, limits_.max_depth + 1);
    EXPECT_FALSE(p.content_type.type.empty());
    EXPECT_FALSE(p.content_type.subtype.empty());
    if (body_end(p) <= message_.size()) {
      EXPECT_EQ(p.body_lines, count_lines(message_.substr(p.body_offset, p.body_size)));
    }
    switch (p.kind) {
      case PartKind::kLeaf:
        EXPECT_TRUE(p.children.empty());
        break;
      case PartKind::kMultipart:
        EXPECT_TRUE(p.content_type.is_multipart());
        break;
      case PartKind::kMessage:
        EXPECT_TRUE(p.content_type.is_message_rfc822());
        EXPECT_EQ(p.children.size(), 1u);
        EXPECT_NE(p.envelope, nullptr);
        if (p.children.size() == 1) {
          // The encapsulated message is the whole body of its part.
          EXPECT_EQ(p.children[0].header_offset, p.body_offset);
          EXPECT_EQ(body_end(p.children[0]), body_end(p));
        }
        break;
    }
    if (p.kind != PartKind::kMessage) {
      EXPECT_EQ(p.envelope, nullptr);
    }
    uint64_t previous_end = p.body_offset;
    for (size_t i = 0; i < p.children.size(); ++i) {
      const Part& child = p.children[i];
      EXPECT_GE(child.header_offset, previous_end) << "child " << i + 1 << " overlaps";
      check_node(child, p.body_offset, body_end(p), depth + 1, where + "/" + std::to_string(i + 1));
      previous_end = body_end(child);
    }
  }

  // The part map section.h describes: the parts in pre-order, plus the ones
  // BODYSTRUCTURE shows that the parse did not find.
  static void expected_spans(const Part& p, std::vector<PartSpan>& out) {
    const size_t index = out.size();
    out.push_back({.header_offset = p.header_offset,
                   .header_size = p.header_size,
                   .body_offset = p.body_offset,
                   .body_size = p.body_size,
                   .kind = p.kind,
                   .encoding = parse_encoding(p.content_transfer_encoding.value_or(""))});
    const auto end = static_cast<uint32_t>(body_end(p));
    if (p.content_type.is("message", "rfc822") && p.kind != PartKind::kMessage) {
      // Unparsed: the stored body is the encapsulated message's header.
      out[index].kind = PartKind::kMessage;
      out.push_back({.header_offset = p.body_offset,
                     .header_size = p.body_size,
                     .body_offset = end,
                     .body_size = 0});
    } else if (p.kind == PartKind::kMultipart && p.children.empty()) {
      out.push_back({.header_offset = end, .header_size = 0, .body_offset = end, .body_size = 0});
    }
    for (const Part& child : p.children) {
      expected_spans(child, out);
    }
    out[index].subtree_size = static_cast<uint32_t>(out.size() - index);
  }

  void check_part_map(const Part& root) {
    std::vector<const Part*> flat;
    flatten(root, flat);
    EXPECT_EQ(count_parts(root), flat.size());
    EXPECT_LE(flat.size(), size_t{limits_.max_parts} + 1);
    const PartMap map = PartMap::from(root);
    std::vector<PartSpan> expected;
    expected_spans(root, expected);
    ASSERT_EQ(map.nodes().size(), expected.size());
    for (size_t i = 0; i < expected.size(); ++i) {
      SCOPED_TRACE("part map node " + std::to_string(i));
      const PartSpan& s = map.nodes()[i];
      const PartSpan& e = expected[i];
      EXPECT_EQ(s.header_offset, e.header_offset);
      EXPECT_EQ(s.header_size, e.header_size);
      EXPECT_EQ(s.body_offset, e.body_offset);
      EXPECT_EQ(s.body_size, e.body_size);
      EXPECT_EQ(s.kind, e.kind);
      EXPECT_EQ(s.encoding, e.encoding);
      EXPECT_EQ(s.subtree_size, e.subtree_size);
    }
  }

  void expect_range(const PartMap& map, const SectionSpec& spec, uint64_t offset, uint64_t size) {
    std::optional<SectionRange> r = resolve_section(map, spec);
    ASSERT_TRUE(r.has_value());
    EXPECT_EQ(r->offset, offset);
    EXPECT_EQ(r->size, size);
  }

  void check_sections(const Part& root) {
    const PartMap map = PartMap::from(root);
    std::vector<NumberedPart> numbers;
    if (root.kind == PartKind::kMultipart) {
      number_parts(root, {}, numbers);
    } else {
      numbers.push_back({{1}, &root});
      number_parts(root, {1}, numbers);
    }
    for (const NumberedPart& n : numbers) {
      SCOPED_TRACE("section " + dotted(n.number));
      const Part& p = *n.part;
      expect_range(map, {n.number, SectionText::kNone, {}}, p.body_offset, p.body_size);
      expect_range(map, {n.number, SectionText::kMime, {}}, p.header_offset, p.header_size);
    }
    const std::vector<std::string> fields = {"From", "Subject"};
    for (SectionText text : {SectionText::kNone, SectionText::kHeader, SectionText::kHeaderFields,
                             SectionText::kHeaderFieldsNot, SectionText::kText}) {
      std::optional<SectionRange> r = resolve_section(map, {{}, text, fields});
      ASSERT_TRUE(r.has_value());
      EXPECT_LE(uint64_t{r->offset} + r->size, message_.size());
    }
    expect_range(map, {{}, SectionText::kHeader, {}}, 0, root.header_size);
    expect_range(map, {{}, SectionText::kText, {}}, root.body_offset, root.body_size);
    expect_range(map, {{}, SectionText::kNone, {}}, 0, message_.size());
  }

  void check_record(const Part& root) {
    const CacheRecord record = build_cache_record(message_, root);
    EXPECT_EQ(record.message_size, message_.size());
    EXPECT_EQ(record.header_size, root.header_size);
    EXPECT_EQ(record.body_lines, root.body_lines);
    EXPECT_EQ(record.parts, PartMap::from(root));
    for (const auto& [item, value] :
         {std::pair<std::string_view, const std::string&>{"ENVELOPE", record.envelope},
          {"BODY", record.body},
          {"BODYSTRUCTURE", record.bodystructure}}) {
      EXPECT_EQ(ImapListChecker(value).check(), "") << item << " " << escape_golden(value);
    }
    std::string envelope;
    append_envelope(envelope, build_envelope(Header::parse(message_.substr(0, root.header_size))));
    EXPECT_EQ(record.envelope, envelope);
    std::string body;
    append_body_structure(body, root, /*extended=*/false);
    EXPECT_EQ(record.body, body);
    std::optional<CacheRecord> copy = deserialize(serialize(record));
    ASSERT_TRUE(copy.has_value());
    EXPECT_TRUE(*copy == record) << "the cache record does not survive serialization";
  }

  std::string_view message_;
  ParseLimits limits_;
};

void check_message(std::string_view message) {
  const Part root = parse_message(message);
  TreeChecker(message, ParseLimits{}).check(root);
}

// ---------------------------------------------------------------- tests

TEST(CorpusTest, HasEnoughMessages) {
  EXPECT_GE(corpus().size(), kMinCorpusFiles) << "in " << corpus_dir();
}

TEST(CorpusTest, EveryMessageMatchesItsGolden) {
  ASSERT_FALSE(corpus().empty()) << "no corpus in " << corpus_dir();
  for (const CorpusMessage& m : corpus()) {
    SCOPED_TRACE(m.name);
    const fs::path golden = golden_dir() / (fs::path(m.name).stem().string() + ".golden");
    std::optional<std::string> expected = read_file(golden);
    const std::string actual = golden_text(analyze_message(m.normalized).record);
    if (!expected) {
      ADD_FAILURE() << "no golden file " << golden << "; check the message against Dovecot "
                    << "(tests/mime/dovecot_crosscheck.py), then run "
                    << "scripts/update-mime-golden.sh. Current output:\n"
                    << actual;
      continue;
    }
    EXPECT_EQ(*expected, actual);
  }
}

TEST(CorpusTest, EveryGoldenHasAMessage) {
  std::vector<std::string> stems;
  for (const CorpusMessage& m : corpus()) {
    stems.push_back(fs::path(m.name).stem().string());
  }
  for (const fs::path& golden : list_files(golden_dir())) {
    EXPECT_EQ(golden.extension(), ".golden") << golden;
    EXPECT_NE(std::find(stems.begin(), stems.end(), golden.stem().string()), stems.end())
        << "stale golden file " << golden << " (its message is gone from the corpus)";
  }
}

TEST(CorpusTest, AnalyzeAgreesWithParseAndBuild) {
  for (const CorpusMessage& m : corpus()) {
    SCOPED_TRACE(m.name);
    AnalyzedMessage analyzed = analyze_message(m.normalized);
    EXPECT_TRUE(analyzed.record == build_cache_record(m.normalized, parse_message(m.normalized)));
  }
}

TEST(CorpusTest, EveryMessageKeepsTheInvariants) {
  for (const CorpusMessage& m : corpus()) {
    {
      SCOPED_TRACE(m.name + " (as stored, CRLF)");
      check_message(m.normalized);
    }
    if (m.raw != m.normalized) {
      SCOPED_TRACE(m.name + " (raw line ends)");
      check_message(m.raw);
    }
  }
}

TEST(CorpusTest, TruncatedMessagesKeepTheInvariants) {
  for (const CorpusMessage& m : corpus()) {
    const std::string& message = m.normalized;
    for (size_t k = 0; k <= kTruncations; ++k) {
      size_t cut = k == kTruncations ? message.size() - std::min<size_t>(message.size(), 1)
                                     : message.size() * k / kTruncations;
      SCOPED_TRACE(m.name + " cut at " + std::to_string(cut));
      check_message(std::string_view(message).substr(0, cut));
    }
  }
}

TEST(CorpusTest, DegenerateMessagesKeepTheInvariants) {
  for (std::string_view message :
       {std::string_view(), std::string_view("\r\n"), std::string_view("\n"),
        std::string_view("\r"), std::string_view("\r\n\r\n"), std::string_view(":"),
        std::string_view("Content-Type: multipart/mixed; boundary=x\r\n\r\n--x"),
        std::string_view("Content-Type: message/rfc822\r\n\r\n"), std::string_view("\0\0\0", 3)}) {
    SCOPED_TRACE("message \"" + escape_golden(message) + "\"");
    check_message(message);
  }
}

TEST(CorpusTest, DepthAndPartLimitsKeepTheInvariants) {
  // Every edge message parsed with tiny limits still gives a consistent tree.
  const ParseLimits limits{.max_depth = 2, .max_parts = 3};
  for (const CorpusMessage& m : corpus()) {
    SCOPED_TRACE(m.name + " (max_depth 2, max_parts 3)");
    const Part root = parse_message(m.normalized, limits);
    TreeChecker(m.normalized, limits).check(root);
  }
}

}  // namespace
}  // namespace peregrine::mime
