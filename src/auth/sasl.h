#pragma once

// SASL server side for the plaintext mechanisms: PLAIN (RFC 4616) and LOGIN
// (draft-murchison-sasl-login). Values in, values out: no I/O and no password
// checking (the caller passes the Credentials to Authenticator::verify).
//
// The protocol layer owns the framing: in IMAP it strips the CRLF, treats a
// lone "*" as the client cancelling, and turns a SASL-IR initial response of
// "=" into the empty string before calling SaslServer::step.

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>
#include <variant>

#include "base/result.h"

namespace peregrine::auth {

// Base64 of RFC 4648 section 4 with padding.
std::string encode_base64(std::string_view data);
// Strict decoding: the length must be a multiple of 4, '=' only as the final
// one or two characters, no whitespace or other characters, and the unused
// low bits of the last symbol must be zero (so every input has one canonical
// encoding). Errors: kBadInput "bad base64".
base::Result<std::string> decode_base64(std::string_view text);

// What a plaintext mechanism yields.
struct Credentials {
  std::string authzid;  // requested authorization identity; empty if none
  std::string authcid;  // the user name
  std::string password;
};

// Bounds on a client's messages, so a client cannot make us buffer much.
inline constexpr std::size_t kMaxSaslFieldBytes = 1024;     // RFC 4616 requires accepting 255
inline constexpr std::size_t kMaxSaslResponseBytes = 4096;  // base64 text of one response

// Decodes an RFC 4616 message "[authzid] NUL authcid NUL passwd", already
// base64-decoded. Errors (kBadInput): not exactly two NULs, an empty authcid
// or password, invalid UTF-8, or a field over kMaxSaslFieldBytes.
base::Result<Credentials> parse_sasl_plain(std::string_view message);
// The same, from the base64 text a client sends. Errors: kTooBig for text over
// kMaxSaslResponseBytes, kBadInput for bad base64 or a bad message.
base::Result<Credentials> decode_sasl_plain(std::string_view base64);

// The server sends a challenge (base64 text, possibly empty), or the exchange
// is complete and yields credentials.
struct SaslChallenge {
  std::string base64;
};
using SaslStep = std::variant<SaslChallenge, Credentials>;

// One exchange of one mechanism. Not thread-safe; one per AUTHENTICATE.
class SaslServer {
 public:
  virtual ~SaslServer() = default;
  // "PLAIN", "LOGIN".
  virtual const char* mechanism() const = 0;
  // The first challenge, when the client gave no initial response.
  virtual SaslChallenge initial_challenge() const = 0;
  // Feeds one client response (base64 text, without CRLF). Returns the next
  // challenge or the credentials. Errors: kBadInput for a malformed response
  // (the exchange is over; AUTHENTICATE fails), kTooBig for an over-long one,
  // kInternal when called after the exchange completed or failed.
  virtual base::Result<SaslStep> step(std::string_view response) = 0;
};

// A server for `mechanism` (case-insensitive "PLAIN" or "LOGIN"); nullptr
// for a mechanism we do not offer.
std::unique_ptr<SaslServer> make_sasl_server(std::string_view mechanism);

}  // namespace peregrine::auth
