#include "mime/section.h"

#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <vector>

#include "base/ascii.h"

namespace peregrine::mime {
namespace {

// "2.1.MIME" -> {part {2, 1}, kMime}.
SectionSpec spec_of(std::string_view text) {
  SectionSpec spec;
  while (!text.empty() && base::is_digit(text[0])) {
    uint32_t n = 0;
    while (!text.empty() && base::is_digit(text[0])) {
      n = n * 10 + static_cast<uint32_t>(text[0] - '0');
      text.remove_prefix(1);
    }
    spec.part.push_back(n);
    if (!text.empty() && text[0] == '.') {
      text.remove_prefix(1);
    }
  }
  if (text == "HEADER") {
    spec.text = SectionText::kHeader;
  } else if (text == "TEXT") {
    spec.text = SectionText::kText;
  } else if (text == "MIME") {
    spec.text = SectionText::kMime;
  } else if (text == "HEADER.FIELDS") {
    spec.text = SectionText::kHeaderFields;
  } else if (text == "HEADER.FIELDS.NOT") {
    spec.text = SectionText::kHeaderFieldsNot;
  }
  return spec;
}

std::optional<std::string> fetch(std::string_view msg, const PartMap& map, std::string_view s) {
  std::optional<SectionRange> range = resolve_section(map, spec_of(s));
  if (!range) {
    return std::nullopt;
  }
  EXPECT_LE(size_t{range->offset} + range->size, msg.size()) << s;
  return std::string(msg.substr(range->offset, range->size));
}

struct SectionCase {
  std::string section;
  std::optional<std::string> bytes;  // nullopt: no such section
};

void run_table(const std::string& msg, const std::vector<SectionCase>& cases) {
  PartMap map = PartMap::from(parse_message(msg));
  for (const SectionCase& c : cases) {
    EXPECT_EQ(fetch(msg, map, c.section), c.bytes) << "BODY[" << c.section << "]";
  }
}

// The expected values below are what Dovecot 2.3 returns for the same
// messages (an empty string where we answer nullopt), except where noted.
const std::string kMixed =
    "Subject: b\r\nContent-Type: multipart/mixed; boundary=x\r\n\r\n"
    "--x\r\n\r\nfirst\r\n"
    "--x\r\nContent-Type: message/rfc822\r\n\r\nSubject: inner\r\n\r\ninner body\r\n"
    "--x\r\nContent-Type: message/rfc822\r\n\r\nSubject: inner2\r\n"
    "Content-Type: multipart/alternative; boundary=y\r\n\r\n"
    "--y\r\n\r\nalt1\r\n--y\r\nContent-Type: text/html\r\n\r\n<b>alt2</b>\r\n--y--\r\n"
    "--x--\r\n";

TEST(SectionResolve, MultipartWithMessages) {
  const std::string header = "Subject: b\r\nContent-Type: multipart/mixed; boundary=x\r\n\r\n";
  run_table(kMixed,
            {
                {"", kMixed},
                {"HEADER", header},
                {"TEXT", kMixed.substr(header.size())},
                {"MIME", std::nullopt},
                {"1", "first"},
                {"1.MIME", "\r\n"},
                {"1.HEADER", std::nullopt},
                {"1.TEXT", std::nullopt},
                {"1.1", "first"},
                {"1.1.MIME", "\r\n"},
                {"1.1.1", std::nullopt},
                {"1.2", std::nullopt},
                {"2", "Subject: inner\r\n\r\ninner body"},
                {"2.MIME", "Content-Type: message/rfc822\r\n\r\n"},
                {"2.HEADER", "Subject: inner\r\n\r\n"},
                {"2.TEXT", "inner body"},
                {"2.1", "inner body"},
                {"2.1.MIME", "Subject: inner\r\n\r\n"},
                {"2.1.HEADER", std::nullopt},
                {"2.1.1", std::nullopt},
                {"2.1.1.MIME", std::nullopt},
                {"2.2", std::nullopt},
                {"3.1", "alt1"},
                {"3.1.MIME", "\r\n"},
                {"3.1.HEADER", std::nullopt},
                {"3.1.1", "alt1"},
                {"3.1.1.MIME", "\r\n"},
                {"3.1.1.1", std::nullopt},
                {"3.2", "<b>alt2</b>"},
                {"3.2.MIME", "Content-Type: text/html\r\n\r\n"},
                {"3.3", std::nullopt},
                // Dovecot adds the CRLF after "--y--" here (and to BODY[3]); that
                // CRLF precedes the outer "--x--", so per RFC 2046 it belongs to
                // the outer boundary.
                {"3.TEXT",
                 "--y\r\n\r\nalt1\r\n--y\r\nContent-Type: text/html\r\n\r\n<b>alt2</b>\r\n--y--"},
                {"4", std::nullopt},
                {"0", std::nullopt},
                {"1.0", std::nullopt},
            });
}

TEST(SectionResolve, SinglePartMessage) {
  const std::string msg = "Subject: a\r\nX: y\r\n\r\nline1\r\nline2\r\n";
  run_table(msg, {
                     {"", msg},
                     {"HEADER", "Subject: a\r\nX: y\r\n\r\n"},
                     {"TEXT", "line1\r\nline2\r\n"},
                     {"1", "line1\r\nline2\r\n"},
                     {"1.MIME", "Subject: a\r\nX: y\r\n\r\n"},
                     {"1.1", std::nullopt},
                     {"2", std::nullopt},
                     {"1.HEADER", std::nullopt},
                     {"1.TEXT", std::nullopt},
                 });
}

TEST(SectionResolve, TopLevelMessageRfc822) {
  const std::string msg =
      "Subject: top\r\nContent-Type: message/rfc822\r\n\r\nSubject: in\r\n\r\nbody\r\n";
  run_table(msg, {
                     {"TEXT", "Subject: in\r\n\r\nbody\r\n"},
                     {"1", "Subject: in\r\n\r\nbody\r\n"},
                     {"1.MIME", "Subject: top\r\nContent-Type: message/rfc822\r\n\r\n"},
                     {"1.HEADER", "Subject: in\r\n\r\n"},
                     {"1.TEXT", "body\r\n"},
                     {"1.1", "body\r\n"},
                     {"1.1.MIME", "Subject: in\r\n\r\n"},
                     {"1.1.1", std::nullopt},
                     {"2", std::nullopt},
                 });
}

TEST(SectionResolve, NestedMessages) {
  // A message/rfc822 part whose message is itself a message/rfc822.
  const std::string msg =
      "Content-Type: multipart/mixed; boundary=x\r\n\r\n--x\r\n\r\nfirst\r\n--x\r\n"
      "Content-Type: message/rfc822\r\n\r\nSubject: m1\r\nContent-Type: message/rfc822\r\n\r\n"
      "Subject: m2\r\n\r\ndeep\r\n--x--\r\n";
  run_table(msg, {
                     {"2.1", "Subject: m2\r\n\r\ndeep"},
                     {"2.1.MIME", "Subject: m1\r\nContent-Type: message/rfc822\r\n\r\n"},
                     {"2.HEADER", "Subject: m1\r\nContent-Type: message/rfc822\r\n\r\n"},
                     {"2.1.HEADER", "Subject: m2\r\n\r\n"},
                     {"2.1.TEXT", "deep"},
                     {"2.1.1", "deep"},
                     {"2.1.1.MIME", "Subject: m2\r\n\r\n"},
                     {"2.1.1.1", std::nullopt},
                 });
}

// BODYSTRUCTURE shows an unparsed message/rfc822 part with an empty envelope
// and an empty text/plain body; its sections are the body read as stored: a
// header without a blank line, and no body (Dovecot 2.3's answers, except
// that its "1" keeps the CRLF that RFC 2046 gives to the boundary).
TEST(SectionResolve, Base64MessageShowsAnEmptyBody) {
  const std::string encoded = "U3ViamVjdDogeA0KDQp5DQo=";
  const std::string msg =
      "Content-Type: multipart/mixed; boundary=b\r\n\r\n--b\r\nContent-Type: message/rfc822\r\n"
      "Content-Transfer-Encoding: base64\r\n\r\n" +
      encoded + "\r\n--b--\r\n";
  run_table(msg, {
                     {"1", encoded},
                     {"1.MIME",
                      "Content-Type: message/rfc822\r\nContent-Transfer-Encoding: base64\r\n\r\n"},
                     {"1.HEADER", encoded},
                     {"1.TEXT", ""},
                     {"1.1", ""},
                     {"1.1.MIME", encoded},
                     {"1.1.1", std::nullopt},
                     {"1.2", std::nullopt},
                     {"2", std::nullopt},
                 });
  PartMap map = PartMap::from(parse_message(msg));
  ASSERT_EQ(map.nodes().size(), 3u);
  EXPECT_EQ(map.nodes()[1].kind, PartKind::kMessage);
  EXPECT_EQ(map.nodes()[1].encoding, Encoding::kBase64);
  EXPECT_EQ(map.nodes()[2].kind, PartKind::kLeaf);
  EXPECT_EQ(map.nodes()[2].encoding, Encoding::k7Bit);
}

TEST(SectionResolve, UnparsedTopLevelMessage) {
  const std::string msg =
      "Content-Type: message/rfc822\r\nContent-Transfer-Encoding: base64\r\n\r\nU3ViamVjdA==\r\n";
  run_table(msg, {
                     {"TEXT", "U3ViamVjdA==\r\n"},
                     {"1", "U3ViamVjdA==\r\n"},
                     {"1.HEADER", "U3ViamVjdA==\r\n"},
                     {"1.TEXT", ""},
                     {"1.1", ""},
                     {"1.1.MIME", "U3ViamVjdA==\r\n"},
                     {"1.1.1", std::nullopt},
                 });
}

TEST(SectionResolve, MessagePastTheDepthLimitShowsAnEmptyBody) {
  const std::string msg = "Content-Type: message/rfc822\r\n\r\nSubject: in\r\n\r\nbody\r\n";
  ParseLimits limits;
  limits.max_depth = 0;
  Part root = parse_message(msg, limits);
  ASSERT_EQ(root.kind, PartKind::kLeaf);
  PartMap map = PartMap::from(root);
  ASSERT_EQ(map.nodes().size(), 2u);
  std::optional<SectionRange> r = resolve_section(map, spec_of("1.1"));
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->size, 0u);
  r = resolve_section(map, spec_of("1.HEADER"));
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(msg.substr(r->offset, r->size), "Subject: in\r\n\r\nbody\r\n");
}

// A multipart without subparts is shown with one empty text/plain part;
// it resolves to empty strings, as Dovecot 2.3 answers.
TEST(SectionResolve, EmptyMultipartShowsOneEmptyPart) {
  for (const std::string& msg : {
           std::string("Content-Type: multipart/mixed; boundary=b\r\n\r\njust text\r\n"),
           std::string("Content-Type: multipart/mixed; boundary=b\r\n\r\n--b--\r\n"),
           std::string("Content-Type: multipart/mixed\r\n\r\n--x\r\n\r\nnot a part\r\n--x--\r\n"),
       }) {
    SCOPED_TRACE(msg);
    const size_t header_size = msg.find("\r\n\r\n") + 4;
    run_table(msg, {
                       {"TEXT", msg.substr(header_size)},
                       {"1", ""},
                       {"1.MIME", ""},
                       {"1.1", ""},
                       {"1.1.MIME", ""},
                       {"1.1.1", std::nullopt},
                       {"1.HEADER", std::nullopt},
                       {"2", std::nullopt},
                   });
    PartMap map = PartMap::from(parse_message(msg));
    ASSERT_EQ(map.nodes().size(), 2u);
    EXPECT_EQ(map.nodes()[0].subtree_size, 2u);
    EXPECT_EQ(map.nodes()[1].header_offset, msg.size());
  }
  // Nested: an empty multipart inside a multipart and inside a message.
  const std::string nested =
      "Content-Type: multipart/mixed; boundary=o\r\n\r\n--o\r\n"
      "Content-Type: multipart/alternative; boundary=i\r\n\r\nno parts\r\n--o\r\n"
      "Content-Type: message/rfc822\r\n\r\nContent-Type: multipart/mixed\r\n\r\nx\r\n"
      "--o--\r\n";
  run_table(nested, {
                        {"1", "no parts"},
                        {"1.1", ""},
                        {"1.2", std::nullopt},
                        {"2.1", ""},
                        {"2.1.MIME", ""},
                        {"2.2", std::nullopt},
                        {"2.TEXT", "x"},
                    });
}

TEST(SectionResolve, HeaderFieldsNeedFilter) {
  PartMap map = PartMap::from(parse_message(kMixed));
  SectionSpec spec = spec_of("3.HEADER.FIELDS");
  spec.fields = {"SUBJECT"};
  std::optional<SectionRange> range = resolve_section(map, spec);
  ASSERT_TRUE(range.has_value());
  EXPECT_TRUE(range->needs_filter);
  std::string_view header(kMixed.data() + range->offset, range->size);
  EXPECT_EQ(filter_header_fields(header, spec.fields, false), "Subject: inner2\r\n\r\n");

  spec = spec_of("HEADER.FIELDS.NOT");
  range = resolve_section(map, spec);
  ASSERT_TRUE(range.has_value());
  EXPECT_TRUE(range->needs_filter);
  EXPECT_EQ(range->offset, 0u);
  EXPECT_FALSE(resolve_section(map, spec_of("1.HEADER.FIELDS")).has_value());
  EXPECT_FALSE(resolve_section(map, spec_of("HEADER"))->needs_filter);
}

std::optional<std::string> fetch_fields(std::string_view msg, std::string_view section,
                                        std::vector<std::string> fields) {
  SectionSpec spec = spec_of(section);
  spec.fields = std::move(fields);
  std::optional<SectionRange> range = resolve_section(PartMap::from(parse_message(msg)), spec);
  if (!range || !range->needs_filter) {
    return std::nullopt;
  }
  return filter_header_fields(msg.substr(range->offset, range->size), spec.fields,
                              spec.text == SectionText::kHeaderFieldsNot);
}

// RFC 3501 §6.4.5: no blank line for "a message which has no body and no
// blank line". Dovecot 2.3 agrees for HEADER.FIELDS.NOT (but not for
// HEADER.FIELDS, where it adds one; docs/compliance.md).
TEST(SectionResolve, HeaderFieldsOfAHeaderOnlyMessage) {
  const std::string msg = "From: a@b\r\nSubject: s\r\nX: last";
  EXPECT_EQ(fetch_fields(msg, "HEADER.FIELDS", {"From"}), "From: a@b\r\n");
  EXPECT_EQ(fetch_fields(msg, "HEADER.FIELDS", {"x"}), "X: last");
  EXPECT_EQ(fetch_fields(msg, "HEADER.FIELDS", {"Missing"}), "");
  EXPECT_EQ(fetch_fields(msg, "HEADER.FIELDS.NOT", {"From"}), "Subject: s\r\nX: last");
  EXPECT_EQ(fetch_fields(msg, "HEADER.FIELDS.NOT", {}),
            fetch(msg, PartMap::from(parse_message(msg)), "HEADER"));

  // An encapsulated message that runs into the boundary: the CRLF before it
  // belongs to the boundary, so the message has no blank line either (Dovecot
  // answers .NOT with "Subject: s\r\n--b--\r\n", past the part's end).
  const std::string nested =
      "Content-Type: multipart/mixed; boundary=b\r\n\r\n--b\r\nContent-Type: message/rfc822\r\n"
      "\r\nFrom: a@b\r\nSubject: s\r\n--b--\r\n";
  EXPECT_EQ(fetch_fields(nested, "1.HEADER.FIELDS", {"From"}), "From: a@b\r\n");
  EXPECT_EQ(fetch_fields(nested, "1.HEADER.FIELDS.NOT", {"From"}), "Subject: s");
  EXPECT_EQ(fetch_fields(nested, "1.HEADER.FIELDS", {"Missing"}), "");

  // With a blank line and an empty body, the blank line is kept.
  const std::string empty_body = "From: a@b\r\nSubject: s\r\n\r\n";
  EXPECT_EQ(fetch_fields(empty_body, "HEADER.FIELDS", {"From"}), "From: a@b\r\n\r\n");
  EXPECT_EQ(fetch_fields(empty_body, "HEADER.FIELDS.NOT", {"From"}), "Subject: s\r\n\r\n");
  EXPECT_EQ(fetch_fields(empty_body, "HEADER.FIELDS", {"Missing"}), "\r\n");
}

TEST(SectionPartMap, FlattenedPreOrder) {
  Part root = parse_message(kMixed);
  PartMap map = PartMap::from(root);
  ASSERT_EQ(map.nodes().size(), 8u);
  std::vector<uint32_t> subtree;
  std::vector<PartKind> kinds;
  for (const PartSpan& node : map.nodes()) {
    subtree.push_back(node.subtree_size);
    kinds.push_back(node.kind);
  }
  EXPECT_EQ(subtree, (std::vector<uint32_t>{8, 1, 2, 1, 4, 3, 1, 1}));
  using K = PartKind;
  EXPECT_EQ(kinds, (std::vector<K>{K::kMultipart, K::kLeaf, K::kMessage, K::kLeaf, K::kMessage,
                                   K::kMultipart, K::kLeaf, K::kLeaf}));
  EXPECT_EQ(map.nodes()[1].body_offset, root.children[0].body_offset);
  EXPECT_EQ(map.nodes()[1].body_size, root.children[0].body_size);
  EXPECT_EQ(map.nodes()[1].header_offset, root.children[0].header_offset);
  EXPECT_EQ(map.nodes()[1].header_size, root.children[0].header_size);

  const uint32_t p31[] = {3, 1};
  EXPECT_EQ(map.locate(p31), 6u);
  EXPECT_EQ(map.locate({}), 0u);
  EXPECT_EQ(map, PartMap::from(root));
}

TEST(SectionPartMap, Encoding) {
  Part root = parse_message(
      "Content-Type: multipart/mixed; boundary=b\r\n\r\n--b\r\n"
      "Content-Transfer-Encoding: BASE64\r\n\r\nQQ==\r\n--b\r\n"
      "Content-Transfer-Encoding: quoted-printable\r\n\r\na=3D\r\n--b\r\n\r\nx\r\n--b--\r\n");
  PartMap map = PartMap::from(root);
  ASSERT_EQ(map.nodes().size(), 4u);
  EXPECT_EQ(map.nodes()[1].encoding, Encoding::kBase64);
  EXPECT_EQ(map.nodes()[2].encoding, Encoding::kQuotedPrintable);
  EXPECT_EQ(map.nodes()[3].encoding, Encoding::k7Bit);
}

TEST(SectionPartMap, CorruptMapsDoNotCrash) {
  std::vector<std::vector<PartSpan>> maps;
  PartSpan multipart;
  multipart.kind = PartKind::kMultipart;
  PartSpan message;
  message.kind = PartKind::kMessage;
  PartSpan zero;
  zero.subtree_size = 0;
  PartSpan huge;
  huge.kind = PartKind::kMultipart;
  huge.subtree_size = 1000;
  maps.push_back({});
  maps.push_back({multipart});
  maps.push_back({message});
  maps.push_back({multipart, zero, zero});
  maps.push_back({huge, zero});
  maps.push_back({huge, huge, message});
  PartSpan message2 = message;
  message2.subtree_size = 5;
  maps.push_back({multipart, message2});
  const std::vector<std::vector<uint32_t>> paths = {{}, {1}, {2}, {1, 1}, {1, 2}, {1, 1, 1}};
  for (const auto& nodes : maps) {
    PartMap map(nodes);
    for (const auto& path : paths) {
      std::optional<size_t> index = map.locate(path);
      if (index) {
        EXPECT_LT(*index, nodes.size());
      }
      SectionSpec spec;
      spec.part = path;
      for (SectionText t :
           {SectionText::kNone, SectionText::kHeader, SectionText::kText, SectionText::kMime}) {
        spec.text = t;
        (void)resolve_section(map, spec);
      }
    }
  }
}

// Whatever the cut of a nested message, every section that resolves lies
// inside the bytes.
TEST(SectionResolve, EveryPrefixStaysInBounds) {
  const std::vector<std::vector<uint32_t>> paths = {
      {},     {1},       {2},       {3},          {1, 1},    {2, 1}, {3, 1},
      {3, 2}, {2, 1, 1}, {3, 1, 1}, {3, 1, 1, 1}, {3, 2, 1}, {4}};
  for (size_t n = 0; n <= kMixed.size(); ++n) {
    const std::string cut = kMixed.substr(0, n);
    PartMap map = PartMap::from(parse_message(cut));
    for (const auto& path : paths) {
      for (SectionText t : {SectionText::kNone, SectionText::kHeader, SectionText::kText,
                            SectionText::kMime, SectionText::kHeaderFields}) {
        SectionSpec spec;
        spec.part = path;
        spec.text = t;
        std::optional<SectionRange> r = resolve_section(map, spec);
        if (r) {
          EXPECT_LE(size_t{r->offset} + r->size, cut.size()) << n;
        }
      }
    }
  }
}

struct FilterCase {
  std::string header;
  std::vector<std::string> names;
  bool exclude;
  std::string out;
};

TEST(SectionFilterHeaderFields, Table) {
  const std::string h =
      "Subject: hi\r\nFrom: a@b\r\nTo: c@d,\r\n e@f\r\nsubject: again\r\nX-Y: z\r\n\r\n";
  const std::vector<FilterCase> cases = {
      {h, {"Subject"}, false, "Subject: hi\r\nsubject: again\r\n\r\n"},
      {h, {"TO", "from"}, false, "From: a@b\r\nTo: c@d,\r\n e@f\r\n\r\n"},
      {h, {"Subject", "X-Y"}, true, "From: a@b\r\nTo: c@d,\r\n e@f\r\n\r\n"},
      {h, {"Missing"}, false, "\r\n"},
      {h, {}, true, h},
      {"\r\n", {"Subject"}, false, "\r\n"},
      // No blank line (a message that is only a header): none is added, and
      // the fields stay as written (RFC 3501 §6.4.5).
      {"", {"Subject"}, false, ""},
      {"", {}, true, ""},
      {"Subject: hi\r\nX: y\r\n", {"subject"}, false, "Subject: hi\r\n"},
      {"Subject: hi\r\nX: y\r\n", {"subject"}, true, "X: y\r\n"},
      {"Subject: hi\r\nX: y\r\n", {"missing"}, false, ""},
      {"Subject: hi\r\nX: y", {"x"}, false, "X: y"},
      {"Subject: hi\r\nX: y", {"x"}, true, "Subject: hi\r\n"},
      {"Subject: hi\r\nX: y", {}, true, "Subject: hi\r\nX: y"},
      {"Subject: hi", {"subject"}, false, "Subject: hi"},
      // The blank line is copied as written: bare-LF headers keep bare LF.
      {"Subject: hi\nX: y\n\n", {"x"}, false, "X: y\n\n"},
      {"Subject: hi\r\n\n", {"x"}, false, "\n"},
      {"Subject: hi\n\r\n", {"x"}, false, "\r\n"},
      {"\n", {}, true, "\n"},
      // A name with WSP before the colon still matches.
      {"Subject : hi\r\n\r\n", {"subject"}, false, "Subject : hi\r\n\r\n"},
      // Lines that are not fields are kept by .NOT and never named.
      {"junk line\r\nA: b\r\n\r\n", {"junk line"}, false, "\r\n"},
      {"junk line\r\nA: b\r\n\r\n", {"a"}, true, "junk line\r\n\r\n"},
  };
  for (const FilterCase& c : cases) {
    EXPECT_EQ(filter_header_fields(c.header, c.names, c.exclude), c.out) << c.header;
  }
}

}  // namespace
}  // namespace peregrine::mime
