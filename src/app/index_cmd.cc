// `peregrine index rebuild|stats`: the upkeep of a user's full-text index.

#include <sysexits.h>

#include <cstdio>
#include <iostream>

#include "app/commands.h"
#include "app/settings.h"
#include "store/maildir/maildir_store.h"

namespace peregrine::app {
namespace {

int fail(std::string_view what, int code) {
  std::cerr << "peregrine index: " << what << "\n";
  return code;
}

void print(const store::SearchIndexStats& s) {
  const double share =
      s.mail_bytes == 0 ? 0.0 : 100.0 * static_cast<double>(s.index_bytes) / s.mail_bytes;
  std::printf(
      "fts: %s\nmessages: %llu\nindexed: %llu\nindex_bytes: %llu\nmail_bytes: %llu\n"
      "index_share: %.1f%%\nrecords_bytes: %llu\nwords_bytes: %llu\nterms_bytes: %llu\n"
      "pending_purge: %llu\n",
      s.enabled ? "on" : "off", static_cast<unsigned long long>(s.messages),
      static_cast<unsigned long long>(s.indexed), static_cast<unsigned long long>(s.index_bytes),
      static_cast<unsigned long long>(s.mail_bytes), share,
      static_cast<unsigned long long>(s.records_bytes),
      static_cast<unsigned long long>(s.words_bytes),
      static_cast<unsigned long long>(s.terms_bytes),
      static_cast<unsigned long long>(s.pending_purge));
}

}  // namespace

int run_index(const IndexArgs& args) {
  std::optional<config::Settings> settings = load_settings(args.config);
  if (!settings) {
    return EX_CONFIG;
  }
  UserLookup lookup = lookup_user(*settings, args.user, "index");
  if (!lookup.user) {
    return lookup.exit_code;
  }
  const auth::UserInfo* user = &*lookup.user;
  store::maildir::MaildirOptions options;
  options.data_dir = settings->server.data_dir;
  options.max_message_size = settings->limits.max_literal_bytes;
  // A rebuild is asked for explicitly: it builds the index even when
  // [search] fts is off.
  options.full_text_index = settings->search.fts || args.action == "rebuild";
  store::maildir::MaildirStore store(options);
  auto user_store = store.open_user(user->name, user->home);
  if (!user_store) {
    return fail(user_store.error().message, EX_TEMPFAIL);
  }
  auto stats = args.action == "rebuild" ? (*user_store)->rebuild_search_index()
                                        : (*user_store)->search_index_stats();
  if (!stats) {
    return fail(stats.error().message, EX_TEMPFAIL);
  }
  print(*stats);
  return EX_OK;
}

}  // namespace peregrine::app
