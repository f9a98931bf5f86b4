#include "mime/header.h"

#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

namespace peregrine::mime {
namespace {

using Fields = std::vector<std::pair<std::string, std::string>>;

Fields fields_of(const Header& header) {
  Fields out;
  for (const HeaderField& f : header.fields()) {
    out.emplace_back(std::string(f.name), std::string(f.value));
  }
  return out;
}

struct ParseCase {
  std::string input;
  Fields fields;
  size_t size;
  bool has_separator;
};

TEST(HeaderParse, Table) {
  const std::vector<ParseCase> cases = {
      {"", {}, 0, false},
      {"\r\n", {}, 2, true},
      {"\n", {}, 1, true},
      {"\r\nbody", {}, 2, true},
      {"Subject: hi\r\n\r\nbody", {{"Subject", " hi"}}, 15, true},
      {"Subject: hi\n\nbody", {{"Subject", " hi"}}, 13, true},
      {"Subject: hi\r\n\nbody", {{"Subject", " hi"}}, 14, true},
      {"Subject: hi\n\r\nbody", {{"Subject", " hi"}}, 14, true},
      {"Subject: hi", {{"Subject", " hi"}}, 11, false},
      {"Subject: hi\r\n", {{"Subject", " hi"}}, 13, false},
      {"A: 1\r\nB: 2\r\n\r\n", {{"A", " 1"}, {"B", " 2"}}, 14, true},
      {"Subject: a\r\n b\r\n\tc\r\n\r\n", {{"Subject", " a\r\n b\r\n\tc"}}, 22, true},
      {"Subject: a\n b\n\n", {{"Subject", " a\n b"}}, 15, true},
      {"Subject :x\n", {{"Subject", "x"}}, 11, false},
      {"Subject \t:x\n", {{"Subject", "x"}}, 12, false},
      {"X:\n", {{"X", ""}}, 3, false},
      {"X:a:b\n", {{"X", "a:b"}}, 6, false},
      {"no colon here\nA: 1\n", {{"no colon here", ""}, {"A", " 1"}}, 19, false},
      {"From a@b Mon Jan 12 10:00:00 2004\nA: 1\n\n",
       {{"From a@b Mon Jan 12 10:00:00 2004", ""}, {"A", " 1"}},
       40,
       true},
      {" leading wsp\nA: 1\n", {{" leading wsp", ""}, {"A", " 1"}}, 18, false},
      {": empty name\n", {{": empty name", ""}}, 13, false},
      {std::string("A: x\0y\n\n", 8), {{"A", std::string(" x\0y", 4)}}, 8, true},
      {"A: \xe2\x82\xac\n", {{"A", " \xe2\x82\xac"}}, 7, false},
      {"A: 1\r\n \r\n\r\n", {{"A", " 1\r\n "}}, 11, true},
      {"A: bare\rcr\n", {{"A", " bare\rcr"}}, 11, false},
  };
  for (const ParseCase& c : cases) {
    SCOPED_TRACE(c.input);
    Header header = Header::parse(c.input);
    EXPECT_EQ(fields_of(header), c.fields);
    EXPECT_EQ(header.size(), c.size);
    EXPECT_EQ(header.has_separator(), c.has_separator);
  }
}

TEST(HeaderParse, RawCoversFieldAndLineEnd) {
  std::string input = "Subject: a\r\n b\r\nTo: x\n\nbody";
  Header header = Header::parse(input);
  ASSERT_EQ(header.fields().size(), 2u);
  EXPECT_EQ(header.fields()[0].raw, "Subject: a\r\n b\r\n");
  EXPECT_EQ(header.fields()[1].raw, "To: x\n");
  EXPECT_EQ(input.substr(header.size()), "body");
  // Views point into the input.
  EXPECT_EQ(header.fields()[0].name.data(), input.data());
}

TEST(HeaderParse, RawOfLastFieldWithoutLineEnd) {
  Header header = Header::parse("A: 1\nB: 2");
  ASSERT_EQ(header.fields().size(), 2u);
  EXPECT_EQ(header.fields()[1].raw, "B: 2");
}

TEST(HeaderParse, ConcatenatedRawsRebuildTheHeader) {
  std::string input = "X\nA: 1\r\n\t2\n  3\r\nB:\nnot a field\n C\n\r\nbody";
  Header header = Header::parse(input);
  std::string rebuilt;
  for (const HeaderField& f : header.fields()) {
    rebuilt += f.raw;
  }
  EXPECT_EQ(rebuilt + "\r\n", input.substr(0, header.size()));
}

TEST(HeaderParse, FindIsCaseInsensitive) {
  Header header = Header::parse("Received: 1\nSUBJECT: s\nreceived: 2\nReceived : 3\n\n");
  const HeaderField* subject = header.find("subject");
  ASSERT_NE(subject, nullptr);
  EXPECT_EQ(subject->value, " s");
  EXPECT_EQ(header.find("Subjec"), nullptr);
  EXPECT_EQ(header.find(""), nullptr);
  std::vector<const HeaderField*> received = header.find_all("RECEIVED");
  ASSERT_EQ(received.size(), 3u);
  EXPECT_EQ(received[0]->value, " 1");
  EXPECT_EQ(received[1]->value, " 2");
  EXPECT_EQ(received[2]->value, " 3");
  EXPECT_TRUE(header.find_all("to").empty());
}

TEST(HeaderParse, FieldLimitStillCountsSize) {
  std::string input;
  for (size_t i = 0; i < Header::kMaxFields + 5; ++i) {
    input += "X: 1\n continued\n";
  }
  input += "\nbody";
  Header header = Header::parse(input);
  EXPECT_EQ(header.fields().size(), Header::kMaxFields);
  EXPECT_EQ(header.fields().back().value, " 1\n continued");
  EXPECT_TRUE(header.has_separator());
  EXPECT_EQ(input.substr(header.size()), "body");
}

TEST(HeaderParse, LongLine) {
  std::string input = "Subject: " + std::string(1 << 20, 'x') + "\n\n";
  Header header = Header::parse(input);
  ASSERT_EQ(header.fields().size(), 1u);
  EXPECT_EQ(header.fields()[0].value.size(), (size_t{1} << 20) + 1);
  EXPECT_EQ(header.size(), input.size());
}

// Every prefix parses, views stay inside the prefix, and size never passes it.
TEST(HeaderParse, EveryPrefix) {
  const std::string input =
      "From x Mon Jan 12 10:00:00 2004\r\nSubject: a\r\n\tb\nTo : c\r\n"
      " \nbroken\n\r\nbody\n";
  for (size_t n = 0; n <= input.size(); ++n) {
    std::string prefix = input.substr(0, n);
    Header header = Header::parse(prefix);
    ASSERT_LE(header.size(), n);
    for (const HeaderField& f : header.fields()) {
      ASSERT_GE(f.raw.data(), prefix.data());
      ASSERT_LE(f.raw.data() + f.raw.size(), prefix.data() + prefix.size());
      ASSERT_GE(f.value.data(), f.raw.data());
      ASSERT_LE(f.value.data() + f.value.size(), f.raw.data() + f.raw.size());
    }
  }
}

struct UnfoldCase {
  std::string input;
  std::string expected;
};

TEST(Unfold, Table) {
  const std::vector<UnfoldCase> cases = {
      {"", ""},
      {" hi", "hi"},
      {" hi \t", "hi"},
      {" a\r\n b", "a b"},
      {" a\n\tb", "a\tb"},
      {" a\r\n  b", "a  b"},
      {" a\r\n b\r\n", "a b"},
      {"\r\n \r\n ", ""},
      // A line end not followed by WSP, or a CR alone, is no fold: it becomes
      // a space so the words around it stay apart (edge-09).
      {" a\rb\nc", "a b c"},
      {"lone\rCR", "lone CR"},
      {" a\r\nb", "a b"},
      {" a\r \tb", "a  \tb"},
      {" a\r\r\n b", "a  b"},
      {" a\n\r\n b", "a  b"},
      {" a\r\n\r\n b", "a  b"},
      {" a\r", "a"},
      {"\ra", "a"},
  };
  for (const UnfoldCase& c : cases) {
    SCOPED_TRACE(c.input);
    EXPECT_EQ(unfold(c.input), c.expected);
  }
}

}  // namespace
}  // namespace peregrine::mime
