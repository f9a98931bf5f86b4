#include "config/endpoint.h"

#include <arpa/inet.h>

#include <optional>
#include <string>

#include "base/ascii.h"

namespace peregrine::config {
namespace {

using base::fail;
using base::MailError;

bool is_ipv4(const std::string& host) {
  in_addr addr;
  return inet_pton(AF_INET, host.c_str(), &addr) == 1;
}

// The canonical text of an IPv6 literal ("0:0::1" -> "::1"), or nothing.
std::optional<std::string> canonical_ipv6(const std::string& host) {
  in6_addr addr;
  if (inet_pton(AF_INET6, host.c_str(), &addr) != 1) {
    return std::nullopt;
  }
  char text[INET6_ADDRSTRLEN];
  if (inet_ntop(AF_INET6, &addr, text, sizeof(text)) == nullptr) {
    return std::nullopt;
  }
  return std::string(text);
}

// RFC 1123 host name: dot-separated labels of letters, digits and hyphens,
// not starting or ending with a hyphen, 1-63 octets each, 253 in all.
bool is_host_name(std::string_view host) {
  if (host.empty() || host.size() > 253) {
    return false;
  }
  std::size_t start = 0;
  while (start <= host.size()) {
    std::size_t dot = host.find('.', start);
    if (dot == std::string_view::npos) {
      dot = host.size();
    }
    std::string_view label = host.substr(start, dot - start);
    if (label.empty() || label.size() > 63 || label.front() == '-' || label.back() == '-') {
      return false;
    }
    for (char c : label) {
      if (!base::is_alpha(c) && !base::is_digit(c) && c != '-') {
        return false;
      }
    }
    start = dot + 1;
  }
  return true;
}

bool all_digits_and_dots(std::string_view s) {
  for (char c : s) {
    if (!base::is_digit(c) && c != '.') {
      return false;
    }
  }
  return true;
}

}  // namespace

std::string Endpoint::to_string() const {
  std::string out = kind == Kind::kIpv6 ? "[" + host + "]" : host;
  out += ':';
  out += std::to_string(port);
  return out;
}

base::Result<Endpoint> parse_endpoint(std::string_view text) {
  Endpoint endpoint;
  std::string_view port_text;
  if (!text.empty() && text.front() == '[') {
    std::size_t close = text.find(']');
    if (close == std::string_view::npos) {
      return fail(MailError::kBadInput, "missing ']' in '" + std::string(text) + "'");
    }
    std::string literal(text.substr(1, close - 1));
    std::optional<std::string> canonical = canonical_ipv6(literal);
    if (!canonical) {
      return fail(MailError::kBadInput, "bad IPv6 address '" + literal + "'");
    }
    endpoint.host = std::move(*canonical);
    endpoint.kind = Endpoint::Kind::kIpv6;
    std::string_view rest = text.substr(close + 1);
    if (rest.empty() || rest.front() != ':') {
      return fail(MailError::kBadInput,
                  "expected host:port, got '" + std::string(text) + "' (missing port)");
    }
    port_text = rest.substr(1);
  } else {
    std::size_t colon = text.rfind(':');
    if (colon == std::string_view::npos) {
      return fail(MailError::kBadInput,
                  "expected host:port, got '" + std::string(text) + "' (missing port)");
    }
    std::string_view host = text.substr(0, colon);
    if (host.find(':') != std::string_view::npos) {
      return fail(MailError::kBadInput, "IPv6 address needs brackets: [" + std::string(host) +
                                            "]:" + std::string(text.substr(colon + 1)));
    }
    endpoint.host = std::string(host);
    if (host.empty()) {
      return fail(MailError::kBadInput, "missing host in '" + std::string(text) + "'");
    }
    if (is_ipv4(endpoint.host)) {
      endpoint.kind = Endpoint::Kind::kIpv4;
    } else if (all_digits_and_dots(host)) {
      return fail(MailError::kBadInput, "bad IPv4 address '" + endpoint.host + "'");
    } else if (is_host_name(host)) {
      endpoint.kind = Endpoint::Kind::kName;
    } else {
      return fail(MailError::kBadInput, "bad host name '" + endpoint.host + "'");
    }
    port_text = text.substr(colon + 1);
  }

  if (port_text.empty()) {
    return fail(MailError::kBadInput, "missing port in '" + std::string(text) + "'");
  }
  std::uint32_t port = 0;
  for (char c : port_text) {
    if (!base::is_digit(c)) {
      return fail(MailError::kBadInput, "bad port '" + std::string(port_text) + "'");
    }
    if (port <= 65535) {  // saturates above the range, so no overflow
      port = port * 10 + static_cast<std::uint32_t>(c - '0');
    }
  }
  if (port == 0 || port > 65535) {
    return fail(MailError::kBadInput, "port " + std::string(port_text) + " out of range");
  }
  endpoint.port = static_cast<std::uint16_t>(port);
  return endpoint;
}

}  // namespace peregrine::config
