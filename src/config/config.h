#pragma once

// The server's settings: one TOML file read once at start-up into a typed
// Settings value. Validation is complete before anything listens: an unknown
// key or table anywhere, a value of the wrong type or a value out of range
// stops the load with an error that names the full key. docs/configuration.md
// documents every key; default_settings_toml() is its example file.

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "base/log.h"
#include "base/result.h"
#include "config/endpoint.h"

namespace peregrine::config {

// [server]
struct ServerSettings {
  // Where each user's Maildir and index live. Required.
  std::filesystem::path data_dir;
  // Event-loop threads; defaults to the number of hardware threads.
  unsigned workers = 1;
  // glibc's malloc with one arena on transparent huge pages
  // (base/malloc_tuning.h); the server runs itself again to set it.
  bool huge_pages = true;
};

// [imap]. Plain listeners offer STARTTLS when [tls] is set.
struct ImapSettings {
  std::vector<Endpoint> listen;
  std::vector<Endpoint> tls_listen;  // implicit TLS (IMAPS); needs [tls]
};

// [pop3]. Empty lists mean the protocol is off. STLS is offered with [tls].
struct Pop3Settings {
  std::vector<Endpoint> listen;
  std::vector<Endpoint> tls_listen;
};

// [lmtp]: TCP listeners and an optional unix socket.
struct LmtpSettings {
  std::vector<Endpoint> listen;
  std::filesystem::path unix_socket;  // empty: none
  // The largest message accepted (SIZE in the LHLO reply, RFC 1870); larger
  // ones are read to their end and refused with 552 5.3.4. Also the limit
  // of `peregrine deliver`.
  std::uint64_t max_message_bytes = 64ull * 1024 * 1024;
};

// [tls]. Either both files or neither; both are checked to be readable
// regular files at load time (their contents are checked by the TLS layer).
struct TlsSettings {
  std::filesystem::path cert;
  std::filesystem::path key;
  bool enabled() const { return !cert.empty(); }
};

// Where a plaintext password (LOGIN, AUTHENTICATE PLAIN/LOGIN) is accepted.
enum class PlaintextAuth {
  kAlways,    // on any connection
  kLoopback,  // on TLS connections and on connections from 127.0.0.0/8 or ::1
  kTlsOnly,   // only on TLS connections (implicit TLS or after STARTTLS)
};

// [auth]
struct AuthSettings {
  std::filesystem::path passwd_file;  // Dovecot passwd-file format. Required.
  PlaintextAuth plaintext = PlaintextAuth::kLoopback;
  // A failed login is answered after base * 2^(n-1), capped at max, where n
  // counts recent failures from the same IP (auth/failure_tracker.h).
  std::chrono::milliseconds failure_delay_base{2000};
  std::chrono::milliseconds failure_delay_max{15000};
};

// [limits]
struct LimitSettings {
  std::uint64_t max_line_bytes = 64 * 1024;               // one command line, without literals
  std::uint64_t max_literal_bytes = 64ull * 1024 * 1024;  // one literal (e.g. an APPENDed message)
  // The most each user's mail may take, checked when mail is delivered
  // (LMTP, `peregrine deliver`); zero means no quota.
  std::uint64_t quota_bytes = 0;
  std::uint32_t max_connections_per_ip = 50;             // open connections from one address
  std::chrono::seconds autologout{1800};                 // idle, logged in (RFC 3501: >= 30 min)
  std::chrono::seconds autologout_unauthenticated{180};  // idle, not logged in yet
  std::chrono::seconds idle_timeout{1800};               // longest single IMAP IDLE
};

// The level of base/log.h; its to_string() gives the names [log] level takes.
using base::LogLevel;

// [log]
struct LogSettings {
  LogLevel level = LogLevel::kInfo;
};

// [search]
struct SearchSettings {
  // Keep the full-text index (substring SEARCH answered from a word index
  // and its vocabulary, written with every delivery). Off: SEARCH reads each message.
  bool fts = true;
};

struct Settings {
  // The directory relative paths were resolved against (the config file's).
  std::filesystem::path config_dir;
  ServerSettings server;
  ImapSettings imap;
  Pop3Settings pop3;
  LmtpSettings lmtp;
  TlsSettings tls;
  AuthSettings auth;
  LimitSettings limits;
  LogSettings log;
  SearchSettings search;
};

// Reads and validates the file at `path`. Relative paths inside resolve
// against the file's directory. Errors (code kBadInput, or the file error of
// reading it) list every problem found, one per line, each as
// "<path>:<line>: <full key>: <problem>" ("<path>: ..." when a required key is
// missing, so there is no line).
base::Result<Settings> load_config(const std::filesystem::path& path);

// As load_config, from text; relative paths resolve against `base_dir` and
// messages start with `source_name` instead of the file's path.
base::Result<Settings> load_config_string(std::string_view toml,
                                          const std::filesystem::path& base_dir,
                                          std::string_view source_name = "config");

// The example configuration of docs/configuration.md: every key, each at its
// default or a sensible starting value, with comments. It loads as is (the
// [tls] section is commented out); IMAP on 127.0.0.1:1143, POP3 on :1110.
std::string_view default_settings_toml();

// Names as written in the file ("loopback", "tls-only", "info", ...).
const char* to_string(PlaintextAuth mode);

}  // namespace peregrine::config
