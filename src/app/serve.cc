// `peregrine serve`: wires the layers together and runs the server until a
// signal stops it.

#include <sysexits.h>

#include <algorithm>
#include <filesystem>
#include <iostream>
#include <memory>
#include <system_error>
#include <vector>

#include "app/commands.h"
#include "app/settings.h"
#include "auth/authenticator.h"
#include "auth/failure_tracker.h"
#include "base/log.h"
#include "base/malloc_tuning.h"
#include "imap/server/session.h"
#include "imap/server/user_context.h"
#include "imap/service/imap_handler.h"
#include "lmtp/lmtp_handler.h"
#include "net/runtime.h"
#include "net/storage_pool.h"
#include "net/tls_context.h"
#include "pop3/server/session.h"
#include "pop3/service/pop3_handler.h"
#include "store/maildir/maildir_store.h"

namespace peregrine::app {
namespace {

struct Listener {
  const char* proto = nullptr;  // "imap", "pop3" or "lmtp"; TLS listeners log tls=yes
  config::Endpoint endpoint;
  bool implicit_tls = false;
  std::filesystem::path unix_path;  // when set, instead of endpoint
  std::shared_ptr<net::Handler> handler;
};

}  // namespace

int run_serve(const ServeArgs& args) {
  std::optional<config::Settings> settings = load_settings(args.config);
  if (!settings) {
    return EX_CONFIG;
  }
  base::set_log_level(settings->log.level);
  if (settings->server.huge_pages && args.argv != nullptr) {
    if (auto tunables = base::run_again_with_tuned_malloc(args.argv)) {
      base::log(base::LogLevel::kInfo, "malloc_tuned", {{"glibc_tunables", *tunables}});
    }
  }

  std::error_code ec;
  std::filesystem::create_directories(settings->server.data_dir, ec);
  if (ec) {
    base::log(base::LogLevel::kError, "startup.failed",
              {{"reason", "cannot create data_dir"},
               {"path", settings->server.data_dir.string()},
               {"error", ec.message()}});
    return EX_CANTCREAT;
  }

  // Declared in dependency order: everything a session uses outlives the
  // Runtime, which is destroyed first.
  auth::Authenticator authenticator(settings->auth.passwd_file);
  auth::FailureTracker failures(
      auth::FailureTrackerOptions{.base_delay = settings->auth.failure_delay_base,
                                  .max_delay = settings->auth.failure_delay_max});
  store::maildir::MaildirOptions store_options;
  store_options.data_dir = settings->server.data_dir;
  store_options.max_message_size = settings->limits.max_literal_bytes;
  store_options.full_text_index = settings->search.fts;
  // Sessions run the index's batches after their replies (upkeep), and
  // settle there the files of appends whose bytes the commit holds.
  store_options.upkeep_after_reply = true;
  store_options.settle_files_later = true;
  store::maildir::MaildirStore store(store_options);
  net::StoragePool pool(std::max(4u, settings->server.workers * 2));
  imap::UserRegistry users(store);
  imap::ServerContext server{.authenticator = authenticator,
                             .users = users,
                             .failures = &failures,
                             .plaintext = settings->auth.plaintext};
  auto imap_handler =
      std::make_shared<imap::ImapHandler>(server, pool, imap::imap_handler_options(*settings));
  // POP3 shares the registry, so its sessions and IMAP's use one UserStore
  // per user and IMAP sees POP3's expunges at once.
  pop3::ServerContext pop3_server{.authenticator = authenticator,
                                  .users = users,
                                  .failures = &failures,
                                  .plaintext = settings->auth.plaintext};
  auto pop3_handler =
      std::make_shared<pop3::Pop3Handler>(pop3_server, pool, pop3::pop3_handler_options(*settings));
  // LMTP delivers into the same registry, so IMAP sessions see new mail at once.
  auto lmtp_handler = std::make_shared<lmtp::LmtpHandler>(authenticator, users, pool,
                                                          lmtp::lmtp_options(*settings));

  net::Runtime runtime(net::runtime_options(*settings));
  if (settings->tls.enabled()) {
    auto tls = net::TlsContext::load(settings->tls);
    if (!tls) {
      std::cerr << "peregrine: tls: " << tls.error().message << "\n";
      return EX_CONFIG;
    }
    runtime.set_tls(*tls);
  }

  std::vector<Listener> listeners;
  for (const config::Endpoint& endpoint : settings->imap.listen) {
    listeners.push_back({"imap", endpoint, false, {}, imap_handler});
  }
  for (const config::Endpoint& endpoint : settings->imap.tls_listen) {
    listeners.push_back({"imap", endpoint, true, {}, imap_handler});
  }
  for (const config::Endpoint& endpoint : settings->pop3.listen) {
    listeners.push_back({"pop3", endpoint, false, {}, pop3_handler});
  }
  for (const config::Endpoint& endpoint : settings->pop3.tls_listen) {
    listeners.push_back({"pop3", endpoint, true, {}, pop3_handler});
  }
  for (const config::Endpoint& endpoint : settings->lmtp.listen) {
    listeners.push_back({"lmtp", endpoint, false, {}, lmtp_handler});
  }
  if (!settings->lmtp.unix_socket.empty()) {
    // Filled in by name: from a braced list with an empty endpoint, GCC 12
    // at -O3 warned of the endpoint's host as maybe used uninitialized.
    Listener unix_listener;
    unix_listener.proto = "lmtp";
    unix_listener.unix_path = settings->lmtp.unix_socket;
    unix_listener.handler = lmtp_handler;
    listeners.push_back(std::move(unix_listener));
  }
  if (listeners.empty()) {
    std::cerr << "peregrine: nothing to serve: no [imap], [pop3] or [lmtp] listener\n";
    return EX_CONFIG;
  }
  std::vector<std::string> bound;
  for (const Listener& listener : listeners) {
    const std::string name = std::string(listener.proto) + (listener.implicit_tls ? "s" : "");
    auto port = runtime.listen(net::ListenerOptions{.name = name,
                                                    .endpoint = listener.endpoint,
                                                    .implicit_tls = listener.implicit_tls,
                                                    .unix_path = listener.unix_path,
                                                    .handler = listener.handler});
    if (!port) {
      base::log(base::LogLevel::kError, "startup.failed",
                {{"reason", "listen"}, {"error", port.error().message}});
      return EX_UNAVAILABLE;
    }
    config::Endpoint actual = listener.endpoint;
    actual.port = *port;
    bound.push_back(listener.unix_path.empty() ? actual.to_string()
                                               : "unix:" + listener.unix_path.string());
  }

  runtime.start();
  runtime.stop_on_signals();
  for (size_t i = 0; i < listeners.size(); ++i) {
    base::log(base::LogLevel::kInfo, "listening",
              {{"proto", listeners[i].proto},
               {"addr", bound[i]},
               {"tls", listeners[i].implicit_tls ? "yes" : "no"}});
  }
  runtime.wait();
  base::log(base::LogLevel::kInfo, "stopped");
  return EX_OK;
}

}  // namespace peregrine::app
