#include "imap/server/flag_names.h"

#include "base/ascii.h"
#include "store/api/flags.h"

namespace peregrine::imap {
namespace {

struct SystemFlagName {
  store::SystemFlags bit;
  std::string_view name;
};

// FETCH FLAGS order, as Dovecot writes them.
constexpr SystemFlagName kSystemFlagNames[] = {
    {store::kFlagAnswered, "\\Answered"}, {store::kFlagFlagged, "\\Flagged"},
    {store::kFlagDeleted, "\\Deleted"},   {store::kFlagSeen, "\\Seen"},
    {store::kFlagDraft, "\\Draft"},
};

}  // namespace

std::string_view system_flag_name(store::SystemFlags bit) {
  for (const SystemFlagName& f : kSystemFlagNames) {
    if (f.bit == bit) {
      return f.name;
    }
  }
  return {};
}

std::vector<std::string> message_flags(const store::MessageMeta& meta, bool recent) {
  std::vector<std::string> out;
  out.reserve(meta.keywords.size() + 3);
  for (const SystemFlagName& f : kSystemFlagNames) {
    if ((meta.flags & f.bit) != 0) {
      out.emplace_back(f.name);
    }
  }
  for (const std::string& k : meta.keywords) {
    out.push_back(k);
  }
  if (recent) {
    out.emplace_back("\\Recent");
  }
  return out;
}

base::Result<ParsedFlags> parse_flags(std::span<const std::string> flags) {
  ParsedFlags parsed;
  for (const std::string& flag : flags) {
    if (flag.empty() || flag[0] != '\\') {
      parsed.keywords.push_back(flag);
      continue;
    }
    if (base::iequals(flag, "\\Recent")) {
      parsed.recent = true;
      continue;
    }
    bool known = false;
    for (const SystemFlagName& f : kSystemFlagNames) {
      if (base::iequals(flag, f.name)) {
        parsed.flags |= f.bit;
        known = true;
        break;
      }
    }
    if (!known) {
      return base::fail(base::MailError::kBadInput, "invalid system flag " + flag);
    }
  }
  auto keywords = store::normalize_keywords(parsed.keywords);
  if (!keywords) {
    return std::unexpected(keywords.error());
  }
  parsed.keywords = std::move(*keywords);
  return parsed;
}

std::vector<std::string> mailbox_flags(std::span<const std::string> keywords) {
  std::vector<std::string> out;
  out.reserve(keywords.size() + 5);
  for (const SystemFlagName& f : kSystemFlagNames) {
    out.emplace_back(f.name);
  }
  out.insert(out.end(), keywords.begin(), keywords.end());
  return out;
}

}  // namespace peregrine::imap
