#include "mime/address.h"

#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace peregrine::mime {
namespace {

using std::nullopt;
using Opt = std::optional<std::string>;

Address addr(Opt name, Opt adl, Opt mailbox, Opt host) {
  return Address{std::move(name), std::move(adl), std::move(mailbox), std::move(host)};
}
Address mbox(Opt name, std::string mailbox, std::string host) {
  return addr(std::move(name), nullopt, std::move(mailbox), std::move(host));
}
Address group(std::string name) { return addr(nullopt, nullopt, std::move(name), nullopt); }
Address group_end() { return Address{}; }

std::string show(const Opt& s) { return s ? "\"" + *s + "\"" : "NIL"; }
std::string show(const std::vector<Address>& list) {
  std::string out;
  for (const Address& a : list) {
    out +=
        "(" + show(a.name) + " " + show(a.adl) + " " + show(a.mailbox) + " " + show(a.host) + ")";
  }
  return out;
}

struct Case {
  std::string_view wire;
  std::vector<Address> expected;
};

const std::vector<Case>& cases() {
  static const std::vector<Case> kCases = {
      // Empty and blank.
      {"", {}},
      {"   \r\n\t ", {}},
      // addr-spec and name-addr.
      {"user@example.com", {mbox(nullopt, "user", "example.com")}},
      {"<user@example.com>", {mbox(nullopt, "user", "example.com")}},
      {"  user@example.com  ", {mbox(nullopt, "user", "example.com")}},
      {"John Doe <jdoe@example.com>", {mbox("John Doe", "jdoe", "example.com")}},
      {"\"Joe Q. Public\" <john.q.public@example.com>",
       {mbox("Joe Q. Public", "john.q.public", "example.com")}},
      // obs-phrase: a '.' inside the phrase.
      {"Joe Q. Public <john.q.public@example.com>",
       {mbox("Joe Q. Public", "john.q.public", "example.com")}},
      {"Dr. Who <who@tardis.test>", {mbox("Dr. Who", "who", "tardis.test")}},
      // Quoted display names with escapes and specials.
      {R"("Joe \"Q\" Public" <joe@example.com>)", {mbox("Joe \"Q\" Public", "joe", "example.com")}},
      {R"("Giant; \"Big\" Box" <sysservices@example.net>)",
       {mbox("Giant; \"Big\" Box", "sysservices", "example.net")}},
      {"\"quoted\" display <a@b>", {mbox("quoted display", "a", "b")}},
      {"\"\" <a@b>", {mbox(nullopt, "a", "b")}},
      {"Name  With   Spaces <a@b>", {mbox("Name With Spaces", "a", "b")}},
      // Quoted local parts are kept unquoted.
      {"\"john doe\"@example.com", {mbox(nullopt, "john doe", "example.com")}},
      {"<\"john doe\"@example.com>", {mbox(nullopt, "john doe", "example.com")}},
      {R"("us\"er"@host)", {mbox(nullopt, "us\"er", "host")}},
      // Comments are removed; a trailing comment is not the display name.
      {"user@host (Real Name)", {mbox(nullopt, "user", "host")}},
      {"(Comment) user@host", {mbox(nullopt, "user", "host")}},
      {"a@b (c1) (c2)", {mbox(nullopt, "a", "b")}},
      {R"(Pete(A nice \) chap) <pete(his account)@silly.test(his host)>)",
       {mbox("Pete", "pete", "silly.test")}},
      {"<a@b> (Real)", {mbox(nullopt, "a", "b")}},
      // Lists.
      {"Mary Smith <mary@x.test>, jdoe@example.org, Who? <one@y.test>",
       {mbox("Mary Smith", "mary", "x.test"), mbox(nullopt, "jdoe", "example.org"),
        mbox("Who?", "one", "y.test")}},
      {"a@b,\r\n\tc@d", {mbox(nullopt, "a", "b"), mbox(nullopt, "c", "d")}},
      {",,a@b,,,c@d,", {mbox(nullopt, "a", "b"), mbox(nullopt, "c", "d")}},
      {"a@b; c@d", {mbox(nullopt, "a", "b"), mbox(nullopt, "c", "d")}},
      // Groups.
      {"undisclosed-recipients:;", {group("undisclosed-recipients"), group_end()}},
      {"Undisclosed recipients:;", {group("Undisclosed recipients"), group_end()}},
      {"Team: a@b, c@d;",
       {group("Team"), mbox(nullopt, "a", "b"), mbox(nullopt, "c", "d"), group_end()}},
      {"A Group:Ed Jones <c@a.test>,joe@where.test,John <jdoe@one.test>;",
       {group("A Group"), mbox("Ed Jones", "c", "a.test"), mbox(nullopt, "joe", "where.test"),
        mbox("John", "jdoe", "one.test"), group_end()}},
      {"Group: a@b", {group("Group"), mbox(nullopt, "a", "b"), group_end()}},
      {"G1: a@b; G2: c@d;",
       {group("G1"), mbox(nullopt, "a", "b"), group_end(), group("G2"), mbox(nullopt, "c", "d"),
        group_end()}},
      {"G1: G2: a@b;;", {group("G1"), mbox(nullopt, "a", "b"), group_end()}},
      {": a@b;", {group(""), mbox(nullopt, "a", "b"), group_end()}},
      {"x@y, Team: ; z@w",
       {mbox(nullopt, "x", "y"), group("Team"), group_end(), mbox(nullopt, "z", "w")}},
      // Obsolete routes.
      {"<@route1,@route2:user@host>", {addr(nullopt, "@route1,@route2", "user", "host")}},
      {"Name <@a.com, @b.com:user@host>", {addr("Name", "@a.com,@b.com", "user", "host")}},
      {"<@route:user>", {addr(nullopt, "@route", "user", "")}},
      {"<@host>", {mbox(nullopt, "", "host")}},
      // obs-local-part and obs-domain: CFWS around dots.
      {"john . doe @ example . com", {mbox(nullopt, "john.doe", "example.com")}},
      {"user @ host", {mbox(nullopt, "user", "host")}},
      {"a.@b", {mbox(nullopt, "a.", "b")}},
      {".a@b", {mbox(nullopt, ".a", "b")}},
      // Domain literals.
      {"user@[1.2.3.4]", {mbox(nullopt, "user", "[1.2.3.4]")}},
      {"<user@[IPv6:::1]>", {mbox(nullopt, "user", "[IPv6:::1]")}},
      // Missing parts.
      {"root", {mbox(nullopt, "root", "")}},
      {"user@", {mbox(nullopt, "user", "")}},
      {"@host", {mbox(nullopt, "", "host")}},
      {"Name <user@host", {mbox("Name", "user", "host")}},
      {"\"Name\" <>", {mbox("Name", "", "")}},
      {"<>", {}},
      {"Just A Phrase", {mbox("Just A Phrase", "", "")}},
      // 8-bit UTF-8 (RFC 6532) and RFC 2047 names kept raw.
      {"J\xC3\xB6rg M\xC3\xBCller <j@x.de>", {mbox("J\xC3\xB6rg M\xC3\xBCller", "j", "x.de")}},
      {"\"M\xC3\xBCller, J\xC3\xB6rg\" <j@x.de>",
       {mbox("M\xC3\xBCller, J\xC3\xB6rg", "j", "x.de")}},
      {"j\xC3\xB6rg@m\xC3\xBCller.de", {mbox(nullopt, "j\xC3\xB6rg", "m\xC3\xBCller.de")}},
      {"=?utf-8?q?J=C3=B6rg?= <j@x.de>", {mbox("=?utf-8?q?J=C3=B6rg?=", "j", "x.de")}},
      {"=?utf-8?q?a?= \"quoted\" <x@y>", {mbox("=?utf-8?q?a?= quoted", "x", "y")}},
      // Folding inside a phrase and inside a quoted string.
      {"Joe\r\n Smith <x@y>", {mbox("Joe Smith", "x", "y")}},
      {"\"Joe\r\n Smith\" <x@y>", {mbox("Joe Smith", "x", "y")}},
      // Breakage seen in real mail.
      {"John Smith john@x.com", {mbox("John Smith", "john", "x.com")}},
      {"a@b c@d", {mbox(nullopt, "a", "b")}},
      {"Name <a@b> garbage, c@d", {mbox("Name", "a", "b"), mbox(nullopt, "c", "d")}},
      {"Name <a@b> <c@d>", {mbox("Name", "a", "b")}},
      {"Name <<a@b>>", {mbox("Name", "a", "b")}},
      {"<a@b>>", {mbox(nullopt, "a", "b")}},
      {"<a@b@c>", {mbox(nullopt, "a", "b")}},
      {"a@b@c", {mbox(nullopt, "a", "b")}},
      {"\"unterminated <a@b>", {mbox("unterminated", "a", "b")}},
      {"(unterminated comment a@b", {}},
      {R"(Joe \"Q <x@y>)", {mbox("Joe \"Q", "x", "y")}},
      {"Name <a@b, c@d>", {mbox("Name", "a", "b"), mbox(nullopt, "c", "d")}},
      {")(<>@,;:\\\".[]", {}},
      {";", {}},
      {"@", {}},
      {":", {group(""), group_end()}},
  };
  return kCases;
}

TEST(AddressParse, Table) {
  EXPECT_GE(cases().size(), 40u);
  for (const Case& c : cases()) {
    std::vector<Address> got = parse_address_list(c.wire);
    EXPECT_EQ(show(got), show(c.expected)) << "input: " << c.wire;
    EXPECT_EQ(got, c.expected) << "input: " << c.wire;
  }
}

// What must hold for any input: balanced, non-nested group markers, no line
// ends in any field, and output no larger than the input.
void check_invariants(std::string_view input, const std::vector<Address>& list) {
  bool in_group = false;
  size_t total = 0;
  for (const Address& a : list) {
    for (const Opt* f : {&a.name, &a.adl, &a.mailbox, &a.host}) {
      if (*f) {
        total += (*f)->size();
        EXPECT_EQ((*f)->find_first_of("\r\n"), std::string::npos) << input;
      }
    }
    if (a.is_group_start()) {
      EXPECT_FALSE(in_group) << input;
      in_group = true;
    } else if (a.is_group_end()) {
      EXPECT_TRUE(in_group) << input;
      in_group = false;
    } else {
      EXPECT_TRUE(a.mailbox.has_value()) << input;
      EXPECT_TRUE(a.host.has_value()) << input;
    }
  }
  EXPECT_FALSE(in_group) << input;
  EXPECT_LE(total, input.size()) << input;
  EXPECT_LE(list.size(), input.size() + 1) << input;  // ":" gives a group and its end
}

TEST(AddressParse, EveryPrefixOfEveryCase) {
  for (const Case& c : cases()) {
    for (size_t n = 0; n <= c.wire.size(); ++n) {
      std::string prefix(c.wire.substr(0, n));  // own buffer: ASan sees overreads
      check_invariants(prefix, parse_address_list(prefix));
    }
  }
}

TEST(AddressParse, PrefixesEndingAtASeparatorGiveTheLeadingAddresses) {
  const std::string_view wire =
      "\"Smith, John\" <john@x.test>, (c) jane@y.test, Ops: a@b, c@d;, "
      "<@r1,@r2:bob@z.test>, root";
  const std::vector<Address> full = parse_address_list(wire);
  ASSERT_EQ(full.size(), 8u) << show(full);
  // Cut points just before each top-level ", " and how many leading entries
  // of the full result the prefix must give.
  const std::vector<std::pair<std::string_view, size_t>> cuts = {
      {"\"Smith, John\" <john@x.test>", 1},
      {"\"Smith, John\" <john@x.test>, (c) jane@y.test", 2},
      {"\"Smith, John\" <john@x.test>, (c) jane@y.test, Ops: a@b, c@d;", 6},
      {"\"Smith, John\" <john@x.test>, (c) jane@y.test, Ops: a@b, c@d;, <@r1,@r2:bob@z.test>", 7},
  };
  for (const auto& [prefix, count] : cuts) {
    ASSERT_TRUE(wire.starts_with(prefix));
    std::vector<Address> expected(full.begin(), full.begin() + count);
    EXPECT_EQ(parse_address_list(prefix), expected) << prefix;
  }
  // A prefix cut inside the group still closes it.
  std::vector<Address> inside = parse_address_list(wire.substr(0, wire.find("c@d")));
  ASSERT_FALSE(inside.empty());
  EXPECT_TRUE(inside.back().is_group_end());
}

TEST(AddressParse, Garbage) {
  const std::vector<std::string> inputs = {
      std::string(100000, '"'),
      std::string(100000, '('),
      std::string(100000, '<'),
      std::string(100000, '\\'),
      std::string(100000, '@'),
      std::string(100000, ':'),
      std::string(50000, '[') + std::string(50000, ']'),
      std::string("a\0b@c\0d", 7),
      "\xff\xfe\x80<\x80@\x81>",
  };
  for (const std::string& in : inputs) {
    check_invariants(in, parse_address_list(in));
  }
  // Every byte value in every position of short lists, escapes included.
  for (std::string_view base : {"Ab <c@d>, e@f", "\"A\\b\" <c\\d@[e\\f]>, G:g\\@h;"}) {
    for (int b = 0; b < 256; ++b) {
      for (size_t i = 0; i <= base.size(); ++i) {
        std::string in(base);
        in.insert(in.begin() + static_cast<std::ptrdiff_t>(i), static_cast<char>(b));
        check_invariants(in, parse_address_list(in));
      }
    }
  }
}

TEST(AddressParse, BoundedCount) {
  std::string many;
  for (size_t i = 0; i < kMaxAddresses + 500; ++i) {
    many += "a@b,";
  }
  EXPECT_EQ(parse_address_list(many).size(), kMaxAddresses);

  // A group cut by the limit still ends with its end marker.
  std::string grouped = "G:";
  for (size_t i = 0; i < kMaxAddresses + 500; ++i) {
    grouped += "a@b,";
  }
  std::vector<Address> list = parse_address_list(grouped);
  ASSERT_EQ(list.size(), kMaxAddresses);
  EXPECT_TRUE(list.front().is_group_start());
  EXPECT_TRUE(list.back().is_group_end());
}

TEST(AddressSpec, JoinsMailboxAndHost) {
  EXPECT_EQ(addr_spec(mbox(nullopt, "user", "example.com")), "user@example.com");
  EXPECT_EQ(addr_spec(mbox(nullopt, "root", "")), "root");
  EXPECT_EQ(addr_spec(group("Team")), "Team");
  EXPECT_EQ(addr_spec(group_end()), "");
}

TEST(AddressDecodedName, DecodesEncodedWords) {
  EXPECT_EQ(decoded_name(mbox(nullopt, "a", "b")), "");
  EXPECT_EQ(decoded_name(mbox("Plain Name", "a", "b")), "Plain Name");
  auto list = parse_address_list("=?utf-8?q?J=C3=B6rg?= =?utf-8?q?_M=C3=BCller?= <j@x.de>");
  ASSERT_EQ(list.size(), 1u);
  EXPECT_EQ(list[0].name, "=?utf-8?q?J=C3=B6rg?= =?utf-8?q?_M=C3=BCller?=");
  EXPECT_EQ(decoded_name(list[0]), "J\xC3\xB6rg M\xC3\xBCller");
  EXPECT_EQ(decoded_name(mbox("=?iso-8859-1?q?caf=E9?=", "a", "b")), "caf\xC3\xA9");
}

}  // namespace
}  // namespace peregrine::mime
