#include "config/config.h"

namespace peregrine::config {

// Kept identical to the example in docs/configuration.md (config_test checks).
std::string_view default_settings_toml() {
  return R"toml(# Peregrine configuration. Relative paths are relative to this file's directory.

[server]
data_dir = "data"               # one Maildir + index per user lives here
# workers = 4                   # event-loop threads; default: one per hardware thread
# huge_pages = true             # malloc's heap on transparent huge pages, one arena

[imap]
listen = ["127.0.0.1:1143"]     # plain IMAP; STARTTLS is offered when [tls] is set
tls_listen = []                 # implicit TLS, e.g. ["0.0.0.0:993", "[::]:993"]; needs [tls]

[pop3]
listen = ["127.0.0.1:1110"]     # plain POP3; STLS is offered when [tls] is set
tls_listen = []                 # implicit TLS, e.g. ["[::]:995"]; needs [tls]

[lmtp]
listen = []                     # e.g. ["127.0.0.1:2424"]
# unix_socket = "lmtp.sock"     # for an MTA on the same host
max_message_bytes = 67108864    # larger messages are refused (552 5.3.4); 64 MiB

# [tls]
# cert = "cert.pem"             # PEM certificate chain
# key = "key.pem"               # PEM private key

[auth]
passwd_file = "users"           # Dovecot passwd-file format
plaintext = "loopback"          # "always" | "loopback" | "tls-only"
failure_delay_base_ms = 2000    # first failed login from an IP is answered after this
failure_delay_max_ms = 15000    # doubling per recent failure, up to this

[limits]
max_line_bytes = 65536          # one command line, literals not included
max_literal_bytes = 67108864    # one literal, e.g. an APPENDed message (64 MiB)
quota_bytes = 0                 # the most each user's mail may take at delivery; 0: no quota
max_connections_per_ip = 50
autologout_seconds = 1800       # idle logged-in session; RFC 3501 requires >= 1800
autologout_unauthenticated_seconds = 180  # idle session that has not logged in
idle_timeout_seconds = 1800     # longest single IDLE command

[log]
level = "info"                  # "error" | "warn" | "info" | "debug"

[search]
fts = true                      # full-text index for SEARCH; false: SEARCH reads every message
)toml";
}

}  // namespace peregrine::config
