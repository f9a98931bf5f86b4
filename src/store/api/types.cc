#include "store/api/types.h"

#include <array>
#include <utility>

namespace peregrine::store {
namespace {

constexpr std::array<std::pair<SpecialUse, const char*>, 8> kSpecialUseNames = {{
    {SpecialUse::kNone, "none"},
    {SpecialUse::kAll, "all"},
    {SpecialUse::kArchive, "archive"},
    {SpecialUse::kDrafts, "drafts"},
    {SpecialUse::kFlagged, "flagged"},
    {SpecialUse::kJunk, "junk"},
    {SpecialUse::kSent, "sent"},
    {SpecialUse::kTrash, "trash"},
}};

}  // namespace

const char* to_string(SpecialUse use) {
  for (const auto& [value, name] : kSpecialUseNames) {
    if (value == use) {
      return name;
    }
  }
  return "none";
}

std::optional<SpecialUse> special_use_from_string(std::string_view text) {
  for (const auto& [value, name] : kSpecialUseNames) {
    if (text == name) {
      return value;
    }
  }
  return std::nullopt;
}

}  // namespace peregrine::store
