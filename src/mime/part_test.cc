#include "mime/part.h"

#include <gtest/gtest.h>

#include <string>
#include <string_view>
#include <vector>

#include "base/ascii.h"

namespace peregrine::mime {
namespace {

// "type/subtype", with "(child,child)" for multiparts and "[child]" for
// encapsulated messages; lower case.
std::string shape(const Part& part) {
  std::string out =
      base::to_lower(part.content_type.type) + "/" + base::to_lower(part.content_type.subtype);
  if (part.kind == PartKind::kMultipart) {
    out += "(";
    for (size_t i = 0; i < part.children.size(); ++i) {
      out += (i ? "," : "") + shape(part.children[i]);
    }
    out += ")";
  } else if (part.kind == PartKind::kMessage) {
    out += "[";
    for (const Part& child : part.children) {
      out += shape(child);
    }
    out += "]";
  }
  return out;
}

std::string header_of(std::string_view msg, const Part& part) {
  return std::string(msg.substr(part.header_offset, part.header_size));
}

std::string body_of(std::string_view msg, const Part& part) {
  return std::string(msg.substr(part.body_offset, part.body_size));
}

// Every byte range inside the message, headers followed by bodies, and
// children inside their parent's body.
void check_invariants(std::string_view msg, const Part& part, size_t depth = 0) {
  ASSERT_LE(size_t{part.header_offset} + part.header_size, msg.size());
  ASSERT_LE(size_t{part.body_offset} + part.body_size, msg.size());
  ASSERT_EQ(part.body_offset, part.header_offset + part.header_size);
  ASSERT_LE(part.body_lines, part.body_size);
  ASSERT_LT(depth, 100u);
  if (part.kind == PartKind::kMessage) {
    ASSERT_EQ(part.children.size(), 1u);
    ASSERT_NE(part.envelope, nullptr);
    ASSERT_EQ(part.children[0].header_offset, part.body_offset);
    ASSERT_EQ(size_t{part.children[0].body_offset} + part.children[0].body_size,
              size_t{part.body_offset} + part.body_size);
  } else if (part.kind == PartKind::kLeaf) {
    ASSERT_TRUE(part.children.empty());
  }
  uint32_t previous_end = part.body_offset;
  for (const Part& child : part.children) {
    ASSERT_GE(child.header_offset, previous_end);
    ASSERT_LE(size_t{child.body_offset} + child.body_size,
              size_t{part.body_offset} + part.body_size);
    previous_end = child.body_offset + child.body_size;
    check_invariants(msg, child, depth + 1);
  }
}

struct ShapeCase {
  const char* name;
  std::string message;
  std::string shape;
  // Bodies of the leaves, in pre-order.
  std::vector<std::string> leaf_bodies;
};

void collect_leaf_bodies(std::string_view msg, const Part& part, std::vector<std::string>& out) {
  if (part.kind == PartKind::kLeaf) {
    out.push_back(body_of(msg, part));
  }
  for (const Part& child : part.children) {
    collect_leaf_bodies(msg, child, out);
  }
}

TEST(PartParse, ShapeTable) {
  const std::vector<ShapeCase> cases = {
      {"single part", "Subject: x\r\n\r\nhello\r\n", "text/plain", {"hello\r\n"}},
      {"no body", "Subject: x\r\n", "text/plain", {""}},
      {"empty message", "", "text/plain", {""}},
      {"preamble and epilogue skipped",
       "Content-Type: multipart/mixed; boundary=\"b\"\r\n\r\npre\r\n--b\r\n"
       "Content-Type: text/plain\r\n\r\nhello\r\n--b\r\n\r\nworld\r\n\r\n--b--\r\nepi\r\n",
       "multipart/mixed(text/plain,text/plain)",
       {"hello", "world\r\n"}},
      {"nested",
       "Content-Type: multipart/mixed; boundary=o\r\n\r\n--o\r\n"
       "Content-Type: multipart/alternative; boundary=i\r\n\r\n--i\r\n\r\nin1\r\n--i\r\n"
       "Content-Type: text/html\r\n\r\n<p>in2</p>\r\n--i--\r\n--o\r\n\r\nlast\r\n--o--\r\n",
       "multipart/mixed(multipart/alternative(text/plain,text/html),text/plain)",
       {"in1", "<p>in2</p>", "last"}},
      {"outer boundary ends the inner multipart",
       "Content-Type: multipart/mixed; boundary=o\r\n\r\n--o\r\n"
       "Content-Type: multipart/alternative; boundary=i\r\n\r\n--i\r\n\r\nin1\r\n--i\r\n\r\n"
       "in2\r\n--o\r\n\r\nlast\r\n--o--\r\n",
       "multipart/mixed(multipart/alternative(text/plain,text/plain),text/plain)",
       {"in1", "in2", "last"}},
      {"missing final boundary",
       "Content-Type: multipart/mixed; boundary=b\r\n\r\n--b\r\n\r\nx\r\n--b\r\n\r\n"
       "last line\r\nno end",
       "multipart/mixed(text/plain,text/plain)",
       {"x", "last line\r\nno end"}},
      {"boundary as a prefix is body text",
       "Content-Type: multipart/mixed; boundary=b\r\n\r\n--b\r\n\r\nx\r\n--bX\r\ny\r\n"
       "--b--x\r\n--b -\r\nz\r\n--b \t\r\n\r\nsecond\r\n--b--",
       "multipart/mixed(text/plain,text/plain)",
       {"x\r\n--bX\r\ny\r\n--b--x\r\n--b -\r\nz", "second"}},
      {"boundary not at a line start",
       "Content-Type: multipart/mixed; boundary=b\r\n\r\n--b\r\n\r\nx --b\r\n--b--\r\n",
       "multipart/mixed(text/plain)",
       {"x --b"}},
      {"close boundary with trailing whitespace",
       "Content-Type: multipart/mixed; boundary=b\r\n\r\n--b\r\n\r\nx\r\n--b--  \r\nepi",
       "multipart/mixed(text/plain)",
       {"x"}},
      {"empty parts",
       "Content-Type: multipart/mixed; "
       "boundary=b\r\n\r\n--b\r\n--b\r\n\r\n--b\r\n\r\n\r\n--b--\r\n",
       "multipart/mixed(text/plain,text/plain,text/plain)",
       {"", "", ""}},
      {"encapsulated header cut short by a boundary",
       "Content-Type: multipart/mixed; boundary=b\r\n\r\n--b\r\n"
       "Content-Type: message/rfc822\r\n\r\nSubject: x\r\n--b--\r\n",
       "multipart/mixed(message/rfc822[text/plain])",
       {""}},
      {"header cut short by a boundary",
       "Content-Type: multipart/mixed; boundary=b\r\n\r\n--b\r\nContent-Type: text/html\r\n--b\r\n"
       "Content-Type: text/html\r\nX: y\r\n--b--\r\n",
       "multipart/mixed(text/html,text/html)",
       {"", ""}},
      {"digest children default to message/rfc822",
       "Content-Type: multipart/digest; boundary=d\r\n\r\n--d\r\n\r\nSubject: one\r\n\r\n"
       "body one\r\n--d\r\nContent-Type: text/plain\r\n\r\nplain\r\n--d--\r\n",
       "multipart/digest(message/rfc822[text/plain],text/plain)",
       {"body one", "plain"}},
      {"message/rfc822 with its own multipart",
       "Content-Type: multipart/mixed; boundary=x\r\n\r\n--x\r\n\r\nfirst\r\n--x\r\n"
       "Content-Type: message/rfc822\r\n\r\nSubject: inner\r\n"
       "Content-Type: multipart/alternative; boundary=y\r\n\r\n--y\r\n\r\nalt1\r\n--y\r\n"
       "Content-Type: text/html\r\n\r\n<b>alt2</b>\r\n--y--\r\n--x--\r\n",
       "multipart/mixed(text/plain,message/rfc822[multipart/alternative(text/plain,text/html)])",
       {"first", "alt1", "<b>alt2</b>"}},
      {"base64 message/rfc822 stays a leaf",
       "Content-Type: multipart/mixed; boundary=b\r\n\r\n--b\r\nContent-Type: message/rfc822\r\n"
       "Content-Transfer-Encoding: base64\r\n\r\nU3ViamVjdDogeA0KDQp5DQo=\r\n--b--\r\n",
       "multipart/mixed(message/rfc822)",
       {"U3ViamVjdDogeA0KDQp5DQo="}},
      {"message/global recurses",
       "Content-Type: message/global\r\nContent-Transfer-Encoding: 8bit\r\n\r\nSubject: "
       "x\r\n\r\nb\r\n",
       "message/global[text/plain]",
       {"b\r\n"}},
      {"top-level message/rfc822",
       "Content-Type: message/rfc822\r\n\r\nSubject: in\r\n\r\nbody\r\n",
       "message/rfc822[text/plain]",
       {"body\r\n"}},
      {"multipart without boundary has no subparts",
       "Content-Type: multipart/mixed\r\n\r\n--b\r\n\r\nx\r\n",
       "multipart/mixed()",
       {}},
      {"multipart without any boundary line",
       "Content-Type: multipart/mixed; boundary=b\r\n\r\njust text\r\n",
       "multipart/mixed()",
       {}},
      {"unparseable content type gets defaults", "Content-Type: ;;\r\n\r\nx", "text/plain", {"x"}},
      {"boundary line at the very end without a line end",
       "Content-Type: multipart/mixed; boundary=b\r\n\r\n--b\r\n\r\nx\r\n--b",
       "multipart/mixed(text/plain,text/plain)",
       {"x", ""}},
      {"epilogue boundary lines are ignored",
       "Content-Type: multipart/mixed; boundary=b\r\n\r\n--b\r\n\r\nx\r\n--b--\r\n--b\r\n\r\ny\r\n",
       "multipart/mixed(text/plain)",
       {"x"}},
      {"inner boundary equal to the outer one: innermost wins",
       "Content-Type: multipart/mixed; boundary=b\r\n\r\n--b\r\n"
       "Content-Type: multipart/mixed; boundary=b\r\n\r\n--b\r\n\r\nx\r\n--b--\r\n--b\r\n\r\ny\r\n",
       "multipart/mixed(multipart/mixed(text/plain),text/plain)",
       {"x", "y\r\n"}},
  };
  for (const ShapeCase& c : cases) {
    SCOPED_TRACE(c.name);
    Part root = parse_message(c.message);
    EXPECT_EQ(shape(root), c.shape);
    std::vector<std::string> leaves;
    collect_leaf_bodies(c.message, root, leaves);
    EXPECT_EQ(leaves, c.leaf_bodies);
    check_invariants(c.message, root);
  }
}

TEST(PartParse, ExactOffsetsSizesAndLines) {
  const std::string msg =
      "Subject: t\r\n"
      "Content-Type: multipart/mixed; boundary=\"b\"\r\n"
      "\r\n"
      "pre\r\n"
      "--b\r\n"
      "Content-Type: text/plain\r\n"
      "\r\n"
      "hello\r\n"
      "--b\r\n"
      "\r\n"
      "world\r\n"
      "\r\n"
      "--b--\r\n"
      "epi\r\n";
  Part root = parse_message(msg);
  ASSERT_EQ(root.kind, PartKind::kMultipart);
  EXPECT_TRUE(root.closed);
  EXPECT_EQ(root.header_offset, 0u);
  EXPECT_EQ(root.header_size, 59u);
  EXPECT_EQ(root.body_offset, 59u);
  EXPECT_EQ(root.body_size, msg.size() - 59);  // TEXT runs through the epilogue
  EXPECT_EQ(root.body_lines, 11u);
  ASSERT_EQ(root.children.size(), 2u);
  const Part& p1 = root.children[0];
  EXPECT_EQ(p1.header_offset, 59u + 5 + 5);
  EXPECT_EQ(header_of(msg, p1), "Content-Type: text/plain\r\n\r\n");
  EXPECT_EQ(p1.body_size, 5u);   // the CRLF before "--b" belongs to the boundary
  EXPECT_EQ(p1.body_lines, 0u);  // "hello" has no line end of its own
  const Part& p2 = root.children[1];
  EXPECT_EQ(header_of(msg, p2), "\r\n");  // no header: defaults
  EXPECT_FALSE(p2.content_type_present);
  EXPECT_EQ(p2.body_size, 7u);
  EXPECT_EQ(p2.body_lines, 1u);
  EXPECT_EQ(body_of(msg, p2), "world\r\n");
}

// body-fld-lines counts line ends: a last line without one is no line
// (RFC 5322 §2.1; Dovecot and UW c-client count the same way).
TEST(PartParse, LineCounting) {
  struct Case {
    std::string body;
    uint32_t lines;
  };
  const std::vector<Case> cases = {
      {"", 0},         {"x", 0},      {"x\r\n", 1}, {"x\r\ny", 1},      {"\r\n", 1},
      {"\r\n\r\n", 2}, {"a\nb\n", 2}, {"a\rb", 0},  {"a\r\nb\nc\r", 2}, {"\n", 1},
  };
  for (const Case& c : cases) {
    std::string msg = "Subject: x\r\n\r\n" + c.body;
    Part root = parse_message(msg);
    EXPECT_EQ(root.body_size, c.body.size()) << c.body;
    EXPECT_EQ(root.body_lines, c.lines) << c.body;
  }
}

// In a multipart the CRLF before each boundary belongs to the boundary
// (RFC 2046 §5.1.1), so a subpart's last line has no line end of its own.
// The counts are Dovecot 2.3's for the same message.
TEST(PartParse, SubpartLinesEndAtTheBoundary) {
  const std::string msg =
      "Content-Type: multipart/mixed; boundary=b\r\n\r\n"
      "--b\r\n\r\nhello\r\n"
      "--b\r\n\r\none\r\ntwo\r\n"
      "--b\r\n\r\nthree\r\n\r\n"
      "--b\r\n\r\n\r\n"
      "--b\r\nContent-Type: message/rfc822\r\n\r\nSubject: s\r\n\r\nbody\r\n"
      "--b--\r\n";
  Part root = parse_message(msg);
  ASSERT_EQ(root.children.size(), 5u);
  const std::vector<uint32_t> lines = {0, 1, 1, 0, 2};
  for (size_t i = 0; i < lines.size(); ++i) {
    EXPECT_EQ(root.children[i].body_lines, lines[i]) << body_of(msg, root.children[i]);
  }
  EXPECT_EQ(root.children[4].children[0].body_lines, 0u);  // "body"
  EXPECT_EQ(root.body_lines, 21u);
}

TEST(PartParse, ContentLanguage) {
  struct Case {
    std::string value;
    std::vector<std::string> tags;
  };
  const std::vector<Case> cases = {
      {"en", {"en"}},
      {"en, de-CH ,, fr", {"en", "de-CH", "fr"}},
      // Comments are CFWS, not part of a tag (RFC 3282 §2).
      {"en (English), fr", {"en", "fr"}},
      {"(c) de", {"de"}},
      {"en-US(x),fr", {"en-US", "fr"}},
      {"en (a (nested) b), fr", {"en", "fr"}},
      {"en (a\\) b), fr", {"en", "fr"}},
      {"en,(only a comment),fr", {"en", "fr"}},
      {"en\r\n (folded), fr", {"en", "fr"}},
      {"en (unclosed, fr", {"en"}},
      {"(all comment)", {}},
      {"", {}},
      {"x-klingon, i-default", {"x-klingon", "i-default"}},
  };
  for (const Case& c : cases) {
    Part root = parse_message("Content-Language: " + c.value + "\r\n\r\nx");
    EXPECT_EQ(root.content_language, c.tags) << c.value;
  }
}

TEST(PartParse, ContentFields) {
  const std::string msg =
      "Content-Type: text/plain; charset=\"ISO-8859-1\"; format=flowed\r\n"
      "Content-Transfer-Encoding:  Quoted-Printable \r\n"
      "Content-ID: <id@x>\r\n"
      "Content-Description: a\r\n  folded description\r\n"
      "Content-MD5: Q2hlY2sgSW50ZWdyaXR5IQ==\r\n"
      "Content-Location: http://example.com/x\r\n"
      "Content-Disposition: attachment; filename=a.txt\r\n"
      "Content-Language: en, de-CH ,, fr\r\n"
      "Content-ID: <second@x>\r\n"
      "\r\n"
      "body";
  Part root = parse_message(msg);
  EXPECT_TRUE(root.content_type_present);
  EXPECT_EQ(root.content_type.type, "text");
  EXPECT_EQ(root.content_type.subtype, "plain");
  ASSERT_NE(find_param(root.content_type.params, "charset"), nullptr);
  EXPECT_EQ(find_param(root.content_type.params, "charset")->value, "ISO-8859-1");
  EXPECT_EQ(root.content_transfer_encoding, "Quoted-Printable");
  EXPECT_EQ(root.content_id, "<id@x>");
  EXPECT_EQ(root.content_description, "a  folded description");
  EXPECT_EQ(root.content_md5, "Q2hlY2sgSW50ZWdyaXR5IQ==");
  EXPECT_EQ(root.content_location, "http://example.com/x");
  ASSERT_TRUE(root.disposition.has_value());
  EXPECT_EQ(root.disposition->type, "attachment");
  EXPECT_EQ((std::vector<std::string>{"en", "de-CH", "fr"}), root.content_language);

  Part plain = parse_message("Subject: x\r\n\r\nbody");
  EXPECT_FALSE(plain.content_type_present);
  EXPECT_EQ(plain.content_type.type, "text");
  EXPECT_EQ(plain.content_type.subtype, "plain");
  ASSERT_NE(find_param(plain.content_type.params, "charset"), nullptr);
  EXPECT_EQ(find_param(plain.content_type.params, "charset")->value, "us-ascii");
  EXPECT_FALSE(plain.content_transfer_encoding);
  EXPECT_FALSE(plain.content_id);
  EXPECT_FALSE(plain.disposition);
  EXPECT_TRUE(plain.content_language.empty());
}

TEST(PartParse, EncapsulatedMessage) {
  const std::string msg =
      "Subject: outer\r\nContent-Type: multipart/mixed; boundary=x\r\n\r\n"
      "--x\r\nContent-Type: message/rfc822\r\n\r\nSubject: inner\r\n\r\ninner body\r\n"
      "--x--\r\n";
  Part root = parse_message(msg);
  EXPECT_EQ(root.envelope, nullptr);
  ASSERT_EQ(root.children.size(), 1u);
  const Part& m = root.children[0];
  ASSERT_EQ(m.kind, PartKind::kMessage);
  ASSERT_NE(m.envelope, nullptr);
  EXPECT_EQ(m.envelope->subject, "inner");
  EXPECT_EQ(body_of(msg, m), "Subject: inner\r\n\r\ninner body");
  EXPECT_EQ(m.body_lines, 2u);
  ASSERT_EQ(m.children.size(), 1u);
  EXPECT_EQ(header_of(msg, m.children[0]), "Subject: inner\r\n\r\n");
  EXPECT_EQ(body_of(msg, m.children[0]), "inner body");
}

std::string to_lf(std::string s) {
  std::string out;
  for (char c : s) {
    if (c != '\r') {
      out.push_back(c);
    }
  }
  return out;
}

TEST(PartParse, BareLfGivesTheSameStructure) {
  const std::string crlf =
      "Subject: t\r\nContent-Type: multipart/mixed; boundary=o\r\n\r\npre\r\n--o\r\n"
      "Content-Type: multipart/alternative; boundary=i\r\n\r\n--i\r\n\r\nin1\r\n\r\n--i\r\n"
      "Content-Type: text/html\r\n\r\n<p>x</p>\r\n--i--\r\n--o\r\n"
      "Content-Type: message/rfc822\r\n\r\nSubject: in\r\n\r\nbody\r\nmore\r\n--o--\r\n";
  const std::string lf = to_lf(crlf);
  Part a = parse_message(crlf);
  Part b = parse_message(lf);
  EXPECT_EQ(shape(a), shape(b));
  std::vector<std::string> leaves_a;
  std::vector<std::string> leaves_b;
  collect_leaf_bodies(crlf, a, leaves_a);
  collect_leaf_bodies(lf, b, leaves_b);
  ASSERT_EQ(leaves_a.size(), leaves_b.size());
  for (size_t i = 0; i < leaves_a.size(); ++i) {
    EXPECT_EQ(to_lf(leaves_a[i]), leaves_b[i]);
  }
  // Lines do not depend on the line-end style.
  EXPECT_EQ(a.body_lines, b.body_lines);
  EXPECT_EQ(a.children[1].body_lines, b.children[1].body_lines);
  EXPECT_EQ(a.children[0].children[0].body_lines, 1u);  // "in1\r\n"
  check_invariants(crlf, a);
  check_invariants(lf, b);
}

TEST(PartParse, MixedLineEndsBeforeBoundary) {
  // A bare LF before the boundary belongs to it as a CRLF would.
  const std::string msg =
      "Content-Type: multipart/mixed; boundary=b\n\n--b\n\nx\r\n\n--b\r\n\ny\n--b--";
  Part root = parse_message(msg);
  ASSERT_EQ(root.children.size(), 2u);
  EXPECT_EQ(body_of(msg, root.children[0]), "x\r\n");
  EXPECT_EQ(body_of(msg, root.children[1]), "y");
  EXPECT_TRUE(root.closed);
}

std::string nested_multiparts(int levels) {
  std::string msg;
  for (int i = 0; i < levels; ++i) {
    msg += "Content-Type: multipart/mixed; boundary=b" + std::to_string(i) + "\r\n\r\n--b" +
           std::to_string(i) + "\r\n";
  }
  msg += "\r\ndeep\r\n";
  return msg;
}

size_t depth_of(const Part& part) {
  size_t d = 0;
  for (const Part& child : part.children) {
    d = std::max(d, depth_of(child) + 1);
  }
  return d;
}

TEST(PartParse, DepthLimit) {
  std::string msg = nested_multiparts(100);
  Part root = parse_message(msg);
  EXPECT_EQ(depth_of(root), 64u);
  check_invariants(msg, root);

  ParseLimits limits;
  limits.max_depth = 3;
  Part shallow = parse_message(msg, limits);
  EXPECT_EQ(depth_of(shallow), 3u);
  check_invariants(msg, shallow);
  // The deepest part is a leaf holding the rest of the message.
  const Part* p = &shallow;
  while (!p->children.empty()) {
    p = &p->children[0];
  }
  EXPECT_EQ(p->kind, PartKind::kLeaf);
  EXPECT_TRUE(p->content_type.is_multipart());
  EXPECT_EQ(size_t{p->body_offset} + p->body_size, msg.size());

  limits.max_depth = 0;
  Part flat = parse_message(msg, limits);
  EXPECT_EQ(flat.kind, PartKind::kLeaf);
  EXPECT_EQ(count_parts(flat), 1u);
}

TEST(PartParse, DepthLimitOnMessages) {
  std::string msg;
  for (int i = 0; i < 100; ++i) {
    msg += "Content-Type: message/rfc822\r\n\r\n";
  }
  msg += "\r\nbody\r\n";
  Part root = parse_message(msg);
  EXPECT_EQ(depth_of(root), 64u);
  check_invariants(msg, root);
}

TEST(PartParse, PartCountLimitFoldsIntoLastPart) {
  std::string msg = "Content-Type: multipart/mixed; boundary=b\r\n\r\n";
  for (int i = 0; i < 10; ++i) {
    msg += "--b\r\n\r\npart" + std::to_string(i) + "\r\n";
  }
  msg += "--b--\r\nepilogue\r\n";
  ParseLimits limits;
  limits.max_parts = 4;
  Part root = parse_message(msg, limits);
  EXPECT_EQ(count_parts(root), 4u);
  ASSERT_EQ(root.children.size(), 3u);
  EXPECT_EQ(body_of(msg, root.children[0]), "part0");
  EXPECT_EQ(body_of(msg, root.children[1]), "part1");
  std::string folded = "part2";
  for (int i = 3; i < 10; ++i) {
    folded += "\r\n--b\r\n\r\npart" + std::to_string(i);
  }
  EXPECT_EQ(body_of(msg, root.children[2]), folded);
  EXPECT_EQ(root.children[2].body_lines, 21u);
  EXPECT_TRUE(root.closed);
  check_invariants(msg, root);

  Part all = parse_message(msg);
  EXPECT_EQ(count_parts(all), 11u);
}

TEST(PartParse, PartCountLimitNested) {
  std::string msg = "Content-Type: multipart/mixed; boundary=o\r\n\r\n";
  for (int i = 0; i < 20; ++i) {
    msg += "--o\r\nContent-Type: multipart/mixed; boundary=i\r\n\r\n";
    for (int j = 0; j < 20; ++j) {
      msg += "--i\r\nContent-Type: message/rfc822\r\n\r\nSubject: s\r\n\r\nx\r\n";
    }
    msg += "--i--\r\n";
  }
  msg += "--o--\r\n";
  for (uint32_t max : {1u, 2u, 3u, 7u, 50u, 100u, 1000u}) {
    ParseLimits limits;
    limits.max_parts = max;
    Part root = parse_message(msg, limits);
    EXPECT_LE(count_parts(root), max) << max;
    check_invariants(msg, root);
  }
}

// A message with most of the structures above, cut at every byte: whatever
// the cut, the tree must stay inside the bytes and consistent.
TEST(PartParse, TruncatedAtEveryByte) {
  const std::string msg =
      "From: a@b\r\nSubject: t\r\nContent-Type: multipart/mixed;\r\n boundary=\"o o\"\r\n\r\n"
      "preamble\r\n--o o\r\n"
      "Content-Type: multipart/alternative; boundary=i\r\n\r\n--i\r\n\r\nplain\r\n--i\r\n"
      "Content-Type: text/html; charset=utf-8\r\nContent-Transfer-Encoding: quoted-printable\r\n"
      "\r\n<p>caf=C3=A9</p>\r\n--i--\r\n--o o\r\n"
      "Content-Type: message/rfc822\r\n\r\nSubject: inner\r\nContent-Type: multipart/digest;"
      " boundary=d\r\n\r\n--d\r\n\r\nSubject: d1\r\n\r\nd1 body\r\n--d\r\n\r\n"
      "--d--\r\n--o o\r\nContent-Type: application/octet-stream\r\n"
      "Content-Transfer-Encoding: base64\r\n\r\nAAECAwQF\r\nBgcI\r\n--o o--\r\nepilogue\n";
  Part full = parse_message(msg);
  EXPECT_EQ(
      shape(full),
      "multipart/mixed(multipart/alternative(text/plain,text/html),"
      "message/rfc822[multipart/digest(message/rfc822[text/plain],message/rfc822[text/plain])]"
      ",application/octet-stream)");
  for (size_t n = 0; n <= msg.size(); ++n) {
    std::string cut = msg.substr(0, n);
    Part root = parse_message(cut);
    SCOPED_TRACE(n);
    check_invariants(cut, root);
    if (HasFatalFailure()) {
      return;
    }
  }
}

// Random splices of boundary-like fragments into a nested message: the tree
// stays consistent whatever lines appear where.
TEST(PartParse, RandomMutations) {
  const std::string base =
      "Content-Type: multipart/mixed; boundary=o\r\n\r\n--o\r\n"
      "Content-Type: multipart/alternative; boundary=i\r\n\r\n--i\r\n\r\na\r\n--i--\r\n--o\r\n"
      "Content-Type: message/rfc822\r\n\r\nContent-Type: multipart/digest; boundary=d\r\n\r\n"
      "--d\r\n\r\nSubject: x\r\n\r\ny\r\n--d--\r\n--o--\r\n";
  const std::vector<std::string> fragments = {
      "--o\r\n", "--i\r\n", "--d--\r\n", "--o--",    "\r\n",
      "\n",      "-",       "--",        "\r\n\r\n", "Content-Type: message/rfc822\r\n"};
  uint32_t x = 12345;
  auto next = [&x] {
    x ^= x << 13;
    x ^= x >> 17;
    x ^= x << 5;
    return x;
  };
  for (int round = 0; round < 3000; ++round) {
    std::string msg = base;
    for (int k = next() % 6; k >= 0; --k) {
      size_t at = next() % (msg.size() + 1);
      if (next() % 3 == 0 && at < msg.size()) {
        msg.erase(at, next() % 8);
      } else {
        msg.insert(at, fragments[next() % fragments.size()]);
      }
    }
    Part root = parse_message(msg);
    SCOPED_TRACE(msg);
    check_invariants(msg, root);
    if (HasFatalFailure()) {
      return;
    }
  }
}

TEST(PartParse, BytesAreNotSpecial) {
  std::string msg = "Content-Type: multipart/mixed; boundary=b\r\n\r\n--b\r\n\r\n";
  msg += std::string("\0\xff\r\r\n-\n--\n--b\0\r\n", 16);
  msg += "--b--";
  Part root = parse_message(msg);
  ASSERT_EQ(root.children.size(), 1u);
  EXPECT_EQ(root.children[0].body_size, 14u);
  check_invariants(msg, root);
}

TEST(PartParse, HeaderCutShortLeavesTheLineEndToTheBoundary) {
  const std::string msg =
      "Content-Type: multipart/mixed; boundary=b\r\n\r\n--b\r\nContent-Type: text/html\r\n"
      "--b\r\nContent-Type: message/rfc822\r\n\r\nSubject: x\r\n--b--\r\n";
  Part root = parse_message(msg);
  ASSERT_EQ(root.children.size(), 2u);
  EXPECT_EQ(header_of(msg, root.children[0]), "Content-Type: text/html");
  EXPECT_TRUE(root.children[0].content_type.is("text", "html"));
  EXPECT_EQ(root.children[0].body_size, 0u);
  const Part& m = root.children[1];
  EXPECT_EQ(body_of(msg, m), "Subject: x");
  ASSERT_EQ(m.children.size(), 1u);
  EXPECT_EQ(header_of(msg, m.children[0]), "Subject: x");
  EXPECT_EQ(m.envelope->subject, "x");
  check_invariants(msg, root);
}

TEST(PartParse, EmptyLineBeforeBoundaryBelongsToIt) {
  // As Dovecot answers BODY[n.MIME] for these parts.
  const std::string msg =
      "Content-Type: multipart/mixed; boundary=b\r\n\r\n--b\r\nX: y\r\n\r\n--b\r\n\r\n--b\r\n"
      "\n--b\r\nX: z\r\n\r\n\r\n--b--\r\n";
  Part root = parse_message(msg);
  ASSERT_EQ(root.children.size(), 4u);
  const std::vector<std::string> headers = {"X: y\r\n", "", "", "X: z\r\n\r\n"};
  for (size_t i = 0; i < 4; ++i) {
    EXPECT_EQ(header_of(msg, root.children[i]), headers[i]) << i;
    EXPECT_EQ(root.children[i].body_size, 0u) << i;
    EXPECT_EQ(root.children[i].body_lines, 0u) << i;
  }
  check_invariants(msg, root);
}

TEST(PartParse, CountParts) {
  Part root = parse_message(
      "Content-Type: multipart/mixed; boundary=b\r\n\r\n--b\r\n\r\na\r\n--b\r\n"
      "Content-Type: message/rfc822\r\n\r\nSubject: x\r\n\r\ny\r\n--b--\r\n");
  EXPECT_EQ(count_parts(root), 4u);
}

}  // namespace
}  // namespace peregrine::mime
