// RFC 5256 §2.1 base subjects: a table of subject -> (base, reply/forward).

#include "search/base_subject.h"

#include <gtest/gtest.h>

#include "mime/header.h"

namespace peregrine::search {
namespace {

struct Case {
  std::string_view subject;
  std::string_view base;
  bool reply;
};

TEST(BaseSubject, Table) {
  const Case cases[] = {
      {"", "", false},
      {"Hello", "Hello", false},
      {"  Hello  ", "Hello", false},
      {"Hello\t \r\n world", "Hello world", false},
      // subj-refwd, in either case, with spaces and a blob before the colon.
      {"Re: Hello", "Hello", true},
      {"RE: Hello", "Hello", true},
      {"re:Hello", "Hello", true},
      {"Fwd: Hello", "Hello", true},
      {"FW: Hello", "Hello", true},
      {"Re [2]: Hello", "Hello", true},
      {"Re[2]: Hello", "Hello", true},
      {"Re: Re: Fwd: Hello", "Hello", true},
      {"Re : Hello", "Hello", true},
      // Not a subj-refwd: "Reply", "Fwds", a colon missing.
      {"Reply: Hello", "Reply: Hello", false},
      {"Fwds: Hello", "Fwds: Hello", false},
      {"Re Hello", "Re Hello", false},
      // Blobs before a refwd go with it; a leading blob alone goes only
      // when something is left.
      {"[list] Re: Hello", "Hello", true},
      {"[a][b] Re: [c] Hello", "Hello", true},
      {"[list] Hello", "Hello", false},
      {"[list]", "[list]", false},
      {"[list] [tag]", "[tag]", false},
      {"Re: [list]", "[list]", true},
      // Trailers.
      {"Hello (fwd)", "Hello", true},
      {"Hello (FWD) (fwd)  ", "Hello", true},
      {"Hello(fwd)", "Hello", true},
      {"(fwd)", "", true},
      // The [fwd: ...] wrapper, and what is inside it.
      {"[fwd: Hello]", "Hello", true},
      {"[FWD: Re: Hello (fwd)]", "Hello", true},
      {"[fwd: [fwd: Hello]]", "Hello", true},
      {"[fwd: Hello", "[fwd: Hello", false},  // no closing ']': neither wrapper nor blob
      {"Re: [fwd: Hello] (fwd)", "Hello", true},
      // 8-bit text is never part of a blob (BLOBCHAR is 7-bit).
      {"[\xc3\xa9t\xc3\xa9] Re: Hello", "[\xc3\xa9t\xc3\xa9] Re: Hello", false},
      {"Re: \xc3\x89"
       "cole",
       "\xc3\x89"
       "cole",
       true},
      // Only leading and trailing artifacts go.
      {"Hello Re: world", "Hello Re: world", false},
      {"Hello [x] world", "Hello [x] world", false},
  };
  for (const Case& c : cases) {
    BaseSubject b = extract_base_subject(c.subject);
    EXPECT_EQ(b.text, c.base) << '"' << c.subject << '"';
    EXPECT_EQ(b.reply_or_forward, c.reply) << '"' << c.subject << '"';
  }
}

TEST(BaseSubject, EncodedWordsAreDecodedFirst) {
  // Step (1): an encoded "Re:" is a reply marker too, and the decoded text
  // is what remains.
  std::string decoded = mime::decode_header_value("=?UTF-8?Q?Re=3A_Gr=C3=BC=C3=9Fe?= (fwd)");
  BaseSubject b = extract_base_subject(decoded);
  EXPECT_EQ(b.text,
            "Gr\xc3\xbc\xc3\x9f"
            "e");
  EXPECT_TRUE(b.reply_or_forward);
  // Folded header text: the continuation becomes one space.
  EXPECT_EQ(extract_base_subject(mime::decode_header_value("Re: a\r\n\tlong\r\n  subject")).text,
            "a long subject");
}

TEST(BaseSubject, AsciiCasemap) {
  EXPECT_EQ(ascii_casemap("Hello, World"), "HELLO, WORLD");
  // Only ASCII letters change.
  EXPECT_EQ(ascii_casemap("\xc3\xa9t\xc3\xa9"), "\xc3\xa9T\xc3\xa9");
}

TEST(BaseSubject, LongInputIsLinear) {
  // Many leaders and blobs: each step removes text, so it ends.
  std::string s;
  for (int i = 0; i < 20000; ++i) {
    s += "Re: [x] ";
  }
  s += "end";
  EXPECT_EQ(extract_base_subject(s).text, "end");
  EXPECT_EQ(extract_base_subject(std::string(100000, '[')).text, std::string(100000, '['));
  // A long run of blobs with no "Re:" after it: scanned once, not per blob.
  std::string blobs;
  for (int i = 0; i < 50000; ++i) {
    blobs += "[x]";
  }
  EXPECT_EQ(extract_base_subject(blobs + "end").text, "end");
  EXPECT_EQ(extract_base_subject(blobs).text, "[x]");
}

}  // namespace
}  // namespace peregrine::search
