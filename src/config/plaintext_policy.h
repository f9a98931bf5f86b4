#pragma once

// What [auth] plaintext means for one connection: whether a plaintext
// password (IMAP LOGIN, POP3 USER/PASS, SASL PLAIN and LOGIN) is accepted.
// Every protocol asks here, so they all read the setting the same way.

#include "config/config.h"

namespace peregrine::config {

// `tls`: the connection is TLS now (implicit TLS, or after STARTTLS/STLS);
// `loopback`: the peer is 127.0.0.0/8 or ::1.
bool plaintext_auth_allowed(PlaintextAuth mode, bool tls, bool loopback);

}  // namespace peregrine::config
