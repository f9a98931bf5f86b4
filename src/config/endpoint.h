#pragma once

// A listen address as written in the configuration: "host:port", with IPv6
// literals in brackets ("[::1]:1143", "[::]:993"). The host is an IPv4
// literal, a bracketed IPv6 literal, or a DNS name ("localhost") that the
// network layer resolves when it binds.

#include <cstdint>
#include <string>
#include <string_view>

#include "base/result.h"

namespace peregrine::config {

struct Endpoint {
  enum class Kind { kIpv4, kIpv6, kName };

  // Without brackets: "127.0.0.1", "::1", "localhost". IPv6 literals are kept
  // in their canonical form (RFC 5952, "0:0::1" -> "::1").
  std::string host;
  std::uint16_t port = 0;
  Kind kind = Kind::kName;

  // Back in the configuration's syntax: "127.0.0.1:143", "[::1]:143".
  std::string to_string() const;
  bool operator==(const Endpoint&) const = default;
};

// Parses "host:port". Fails with kBadInput and a message that does not name
// the key (the caller adds it), e.g. "port 99999 out of range",
// "IPv6 address needs brackets: [::1]:143", "bad host name 'a..b'".
base::Result<Endpoint> parse_endpoint(std::string_view text);

}  // namespace peregrine::config
