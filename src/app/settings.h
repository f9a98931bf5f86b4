#pragma once

// Loading the configuration for a subcommand.

#include <filesystem>
#include <optional>

#include "auth/authenticator.h"
#include "config/config.h"

namespace peregrine::app {

// The settings at `path`, or nullopt after writing every problem (each
// naming its key) to stderr.
std::optional<config::Settings> load_settings(const std::filesystem::path& path);

// The passwd-file entry of `user`, or the exit code to return (EX_NOUSER for
// an unknown user, EX_TEMPFAIL when the file cannot be read) after writing
// "peregrine <command>: <problem>" to stderr.
struct UserLookup {
  std::optional<auth::UserInfo> user;
  int exit_code = 0;
};
UserLookup lookup_user(const config::Settings& settings, const std::string& user,
                       std::string_view command);

}  // namespace peregrine::app
