#pragma once

// Loading the configuration for a subcommand.

#include <filesystem>
#include <optional>

#include "config/config.h"

namespace peregrine::app {

// The settings at `path`, or nullopt after writing every problem (each
// naming its key) to stderr.
std::optional<config::Settings> load_settings(const std::filesystem::path& path);

}  // namespace peregrine::app
