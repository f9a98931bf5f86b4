#pragma once

// The server's TLS settings: an OpenSSL context holding the certificate
// chain and key, configured along RFC 9325 (TLS 1.2 and 1.3 only; for 1.2,
// only forward-secret AEAD cipher suites; no compression, no renegotiation).
// One context serves every TLS listener and every STARTTLS.
//
// Thread safety: immutable after load(); shared by all worker threads.

#include <filesystem>
#include <memory>

#include "base/result.h"
#include "config/config.h"

namespace peregrine::net {

class TlsContext {
 public:
  struct Impl;  // tls_context_impl.h

  // Loads a PEM certificate chain (leaf first) and its PEM private key.
  // Errors (kBadInput) name the file and OpenSSL's reason: unreadable or
  // not PEM, or a key that does not match the certificate.
  static base::Result<std::shared_ptr<TlsContext>> load(const std::filesystem::path& cert_file,
                                                        const std::filesystem::path& key_file);
  static base::Result<std::shared_ptr<TlsContext>> load(const config::TlsSettings& settings);

  explicit TlsContext(std::unique_ptr<Impl> impl);
  ~TlsContext();
  TlsContext(const TlsContext&) = delete;
  TlsContext& operator=(const TlsContext&) = delete;

  Impl& impl() const { return *impl_; }

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace peregrine::net
