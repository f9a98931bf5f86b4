#include "app/settings.h"

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

}  // namespace peregrine::app
