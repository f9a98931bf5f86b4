#include "net/tls_context.h"

#include <openssl/err.h>
#include <openssl/ssl.h>

#include <string>

#include "net/tls_context_impl.h"

namespace peregrine::net {
namespace {

// RFC 9325 §4.2: for TLS 1.2, forward-secret (ECDHE) AEAD suites only; the
// FFDHE suites were dropped from its recommendation. TLS 1.3 keeps
// OpenSSL's defaults (all AEAD).
constexpr const char* kTls12Ciphers =
    "ECDHE-ECDSA-AES128-GCM-SHA256:ECDHE-RSA-AES128-GCM-SHA256:"
    "ECDHE-ECDSA-AES256-GCM-SHA384:ECDHE-RSA-AES256-GCM-SHA384:"
    "ECDHE-ECDSA-CHACHA20-POLY1305:ECDHE-RSA-CHACHA20-POLY1305";
// RFC 9325 §4.2.1 / RFC 8446: X25519 and the NIST curves.
constexpr const char* kGroups = "X25519:P-256:P-384";

// OpenSSL's error queue, newest first, emptied; `fallback` if it is empty.
std::string openssl_errors(const char* fallback) {
  std::string text;
  for (unsigned long code = ERR_get_error(); code != 0; code = ERR_get_error()) {
    char buf[256];
    ERR_error_string_n(code, buf, sizeof buf);
    if (!text.empty()) {
      text += "; ";
    }
    text += buf;
  }
  return text.empty() ? fallback : text;
}

}  // namespace

TlsContext::TlsContext(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
TlsContext::~TlsContext() = default;

base::Result<std::shared_ptr<TlsContext>> TlsContext::load(const std::filesystem::path& cert_file,
                                                           const std::filesystem::path& key_file) {
  auto impl = std::make_unique<Impl>();
  SSL_CTX* ctx = impl->context.native_handle();
  ERR_clear_error();

  SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION);
  SSL_CTX_set_options(ctx, SSL_OP_NO_COMPRESSION | SSL_OP_NO_RENEGOTIATION |
                               SSL_OP_CIPHER_SERVER_PREFERENCE | SSL_OP_SINGLE_ECDH_USE);
  // Idle connections do not keep read/write buffers (memory per connection).
  SSL_CTX_set_mode(ctx, SSL_MODE_RELEASE_BUFFERS);
  if (SSL_CTX_set_cipher_list(ctx, kTls12Ciphers) != 1 ||
      SSL_CTX_set1_groups_list(ctx, kGroups) != 1) {
    return base::fail(base::MailError::kInternal,
                      "TLS: cannot set cipher suites: " + openssl_errors("unknown error"));
  }
  // No client certificates are asked for; session resumption by tickets is
  // left on (OpenSSL's default, with keys it rotates itself).

  if (SSL_CTX_use_certificate_chain_file(ctx, cert_file.c_str()) != 1) {
    return base::fail(base::MailError::kBadInput,
                      "TLS certificate " + cert_file.string() + ": " +
                          openssl_errors("cannot load the certificate chain"));
  }
  if (SSL_CTX_use_PrivateKey_file(ctx, key_file.c_str(), SSL_FILETYPE_PEM) != 1) {
    return base::fail(
        base::MailError::kBadInput,
        "TLS key " + key_file.string() + ": " + openssl_errors("cannot load the private key"));
  }
  if (SSL_CTX_check_private_key(ctx) != 1) {
    return base::fail(base::MailError::kBadInput,
                      "TLS key " + key_file.string() + " does not match certificate " +
                          cert_file.string() + ": " + openssl_errors("mismatch"));
  }
  return std::make_shared<TlsContext>(std::move(impl));
}

base::Result<std::shared_ptr<TlsContext>> TlsContext::load(const config::TlsSettings& settings) {
  return load(settings.cert, settings.key);
}

}  // namespace peregrine::net
