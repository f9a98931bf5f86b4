#include "imap/proto/flags.h"

#include "base/ascii.h"
#include "imap/proto/chars.h"

namespace peregrine::imap {
namespace {

constexpr std::string_view kSystemFlags[] = {"\\Answered", "\\Flagged", "\\Deleted",
                                             "\\Seen",     "\\Draft",   "\\Recent"};

}  // namespace

bool is_system_flag(std::string_view flag) {
  for (std::string_view f : kSystemFlags) {
    if (base::iequals(flag, f)) {
      return true;
    }
  }
  return false;
}

std::string canonical_flag(std::string_view flag) {
  for (std::string_view f : kSystemFlags) {
    if (base::iequals(flag, f)) {
      return std::string(f);
    }
  }
  return std::string(flag);
}

bool is_valid_flag(std::string_view flag) {
  if (!flag.empty() && flag[0] == '\\') {
    flag.remove_prefix(1);
  }
  if (flag.empty()) {
    return false;
  }
  for (char c : flag) {
    if (!is_atom_char(c)) {
      return false;
    }
  }
  return true;
}

}  // namespace peregrine::imap
