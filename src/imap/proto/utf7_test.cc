#include "imap/proto/utf7.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace peregrine::imap {
namespace {

struct Pair {
  std::string mutf7;
  std::string utf8;
};

const std::vector<Pair>& pairs() {
  static const std::vector<Pair> kPairs = {
      {"", ""},
      {"INBOX", "INBOX"},
      {"Sent Items", "Sent Items"},
      {"&-", "&"},
      {"A&-B", "A&B"},
      // RFC 3501 §5.1.3's example.
      {"~peter/mail/&U,BTFw-/&ZeVnLIqe-",
       "~peter/mail/\xe5\x8f\xb0\xe5\x8c\x97/\xe6\x97\xa5\xe6\x9c\xac\xe8\xaa\x9e"},
      {"Entw&APw-rfe", "Entw\xc3\xbcrfe"},
      {"&AOQA9gD8-", "\xc3\xa4\xc3\xb6\xc3\xbc"},
      // A supplementary-plane character (U+1F600) as a surrogate pair.
      {"&2D3eAA-", "\xf0\x9f\x98\x80"},
      {"x&AAk-y", "x\ty"},
  };
  return kPairs;
}

TEST(ModifiedUtf7, DecodeTable) {
  for (const Pair& p : pairs()) {
    SCOPED_TRACE(p.mutf7);
    Parsed<std::string> d = decode_mutf7(p.mutf7);
    ASSERT_TRUE(d.ok()) << d.error().message;
    EXPECT_EQ(*d, p.utf8);
    EXPECT_TRUE(is_valid_mutf7(p.mutf7));
  }
}

TEST(ModifiedUtf7, EncodeTable) {
  for (const Pair& p : pairs()) {
    SCOPED_TRACE(p.mutf7);
    Parsed<std::string> e = encode_mutf7(p.utf8);
    ASSERT_TRUE(e.ok()) << e.error().message;
    EXPECT_EQ(*e, p.mutf7);
  }
}

TEST(ModifiedUtf7, DecodeRejects) {
  for (std::string_view name : {
           "&",         // unterminated
           "&U,BTFw",   // unterminated run
           "&U/BTFw-",  // "/" is not in the modified alphabet
           "&AGE-",     // "a" must represent itself
           "&ACY-",     // "&" must be "&-"
           "&2D0-",     // lone high surrogate
           "&3gA-",     // lone low surrogate
           "&AOR-",     // non-zero padding bits
           "&AOQA-",    // a partial unit longer than padding
           "a\x01"
           "b",         // control character
           "\xc3\xa4",  // raw 8-bit
           "a\tb",
       }) {
    SCOPED_TRACE(name);
    EXPECT_FALSE(decode_mutf7(name).ok());
    EXPECT_FALSE(is_valid_mutf7(name));
  }
}

TEST(ModifiedUtf7, EncodeRejectsInvalidUtf8) {
  for (std::string_view s :
       {"\xc3", "\xc0\xaf", "\xed\xa0\x80", "\xf4\x90\x80\x80", "\xff", "a\x80"}) {
    EXPECT_FALSE(encode_mutf7(s).ok());
  }
}

TEST(ModifiedUtf7, RoundTripsEveryBmpCharacter) {
  std::string all;
  for (uint32_t cp = 1; cp < 0x10000; cp += 7) {
    if (cp >= 0xd800 && cp <= 0xdfff) {
      continue;
    }
    std::string one;
    if (cp < 0x80) {
      one.push_back(static_cast<char>(cp));
    } else if (cp < 0x800) {
      one = {static_cast<char>(0xc0 | (cp >> 6)), static_cast<char>(0x80 | (cp & 0x3f))};
    } else {
      one = {static_cast<char>(0xe0 | (cp >> 12)), static_cast<char>(0x80 | ((cp >> 6) & 0x3f)),
             static_cast<char>(0x80 | (cp & 0x3f))};
    }
    all += one;
    Parsed<std::string> e = encode_mutf7(one);
    ASSERT_TRUE(e.ok());
    Parsed<std::string> d = decode_mutf7(*e);
    ASSERT_TRUE(d.ok()) << *e;
    EXPECT_EQ(*d, one);
  }
  EXPECT_EQ(*decode_mutf7(*encode_mutf7(all)), all);
}

TEST(Inbox, Normalization) {
  EXPECT_TRUE(is_inbox("inbox"));
  EXPECT_TRUE(is_inbox("InBoX"));
  EXPECT_FALSE(is_inbox("INBOX.Sent"));
  EXPECT_EQ(normalize_inbox("inBox"), "INBOX");
  EXPECT_EQ(normalize_inbox("inbox/sub"), "inbox/sub");
  EXPECT_EQ(normalize_inbox("Archive"), "Archive");
}

}  // namespace
}  // namespace peregrine::imap
