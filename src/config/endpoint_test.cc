#include "config/endpoint.h"

#include <gtest/gtest.h>

namespace peregrine::config {
namespace {

struct Good {
  const char* text;
  const char* host;
  std::uint16_t port;
  Endpoint::Kind kind;
};

TEST(Endpoint, ParsesValidAddresses) {
  const Good cases[] = {
      {"127.0.0.1:1143", "127.0.0.1", 1143, Endpoint::Kind::kIpv4},
      {"0.0.0.0:993", "0.0.0.0", 993, Endpoint::Kind::kIpv4},
      {"[::1]:1143", "::1", 1143, Endpoint::Kind::kIpv6},
      {"[::]:993", "::", 993, Endpoint::Kind::kIpv6},
      {"[2001:db8::5]:143", "2001:db8::5", 143, Endpoint::Kind::kIpv6},
      {"[2001:DB8:0:0::5]:143", "2001:db8::5", 143, Endpoint::Kind::kIpv6},
      {"[::ffff:10.0.0.1]:1", "::ffff:10.0.0.1", 1, Endpoint::Kind::kIpv6},
      {"localhost:65535", "localhost", 65535, Endpoint::Kind::kName},
      {"mail-1.example.org:0143", "mail-1.example.org", 143, Endpoint::Kind::kName},
  };
  for (const Good& c : cases) {
    auto r = parse_endpoint(c.text);
    ASSERT_TRUE(r) << c.text << ": " << r.error().message;
    EXPECT_EQ(r->host, c.host) << c.text;
    EXPECT_EQ(r->port, c.port) << c.text;
    EXPECT_EQ(r->kind, c.kind) << c.text;
  }
}

TEST(Endpoint, ToStringRoundTrips) {
  EXPECT_EQ(parse_endpoint("[::1]:1143")->to_string(), "[::1]:1143");
  EXPECT_EQ(parse_endpoint("127.0.0.1:143")->to_string(), "127.0.0.1:143");
  EXPECT_EQ(parse_endpoint("localhost:0143")->to_string(), "localhost:143");
}

struct Bad {
  const char* text;
  const char* message;
};

TEST(Endpoint, RejectsBadAddressesWithReason) {
  const Bad cases[] = {
      {"127.0.0.1:99999", "port 99999 out of range"},
      {"127.0.0.1:0", "port 0 out of range"},
      {"127.0.0.1:99999999999999999999", "port 99999999999999999999 out of range"},
      {"127.0.0.1:", "missing port in '127.0.0.1:'"},
      {"127.0.0.1", "expected host:port, got '127.0.0.1' (missing port)"},
      {"", "expected host:port, got '' (missing port)"},
      {"127.0.0.1:14a", "bad port '14a'"},
      {"127.0.0.1:-1", "bad port '-1'"},
      {"127.0.0.1: 143", "bad port ' 143'"},
      {":143", "missing host in ':143'"},
      {"::1:1143", "IPv6 address needs brackets: [::1]:1143"},
      {"[::1]", "expected host:port, got '[::1]' (missing port)"},
      {"[::1]1143", "expected host:port, got '[::1]1143' (missing port)"},
      {"[::1:1143", "missing ']' in '[::1:1143'"},
      {"[127.0.0.1]:143", "bad IPv6 address '127.0.0.1'"},
      {"[fe80::1%eth0]:143", "bad IPv6 address 'fe80::1%eth0'"},
      {"256.1.1.1:143", "bad IPv4 address '256.1.1.1'"},
      {"1.2.3:143", "bad IPv4 address '1.2.3'"},
      {"a..b:143", "bad host name 'a..b'"},
      {"-a.example:143", "bad host name '-a.example'"},
      {"a_b:143", "bad host name 'a_b'"},
      {"*:143", "bad host name '*'"},
      {"host name:143", "bad host name 'host name'"},
  };
  for (const Bad& c : cases) {
    auto r = parse_endpoint(c.text);
    ASSERT_FALSE(r) << c.text;
    EXPECT_EQ(r.error().code, base::MailError::kBadInput);
    EXPECT_EQ(r.error().message, c.message) << c.text;
  }
}

TEST(Endpoint, LongHostNames) {
  std::string label63(63, 'a');
  EXPECT_TRUE(parse_endpoint(label63 + ".example:1"));
  EXPECT_FALSE(parse_endpoint(label63 + "a.example:1"));
  std::string name;
  while (name.size() < 254) {
    name += "abcdefghi.";
  }
  EXPECT_FALSE(parse_endpoint(name + "x:1"));
}

}  // namespace
}  // namespace peregrine::config
