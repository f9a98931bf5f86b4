#include "app/settings.h"

#include <sysexits.h>

#include <iostream>

namespace peregrine::app {

std::optional<config::Settings> load_settings(const std::filesystem::path& path) {
  auto settings = config::load_config(path);
  if (!settings) {
    std::cerr << "peregrine: configuration error:\n" << settings.error().message << "\n";
    return std::nullopt;
  }
  return std::move(*settings);
}

UserLookup lookup_user(const config::Settings& settings, const std::string& user,
                       std::string_view command) {
  auth::Authenticator authenticator(settings.auth.passwd_file);
  auto found = authenticator.lookup(user);
  if (found) {
    return UserLookup{std::move(*found), 0};
  }
  const bool unknown = found.error().code == base::MailError::kNotFound;
  std::cerr << "peregrine " << command << ": "
            << (unknown ? "no such user: " + user : found.error().message) << "\n";
  return UserLookup{std::nullopt, unknown ? EX_NOUSER : EX_TEMPFAIL};
}

}  // namespace peregrine::app
