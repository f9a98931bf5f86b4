#include "store/api/flags.h"

#include <algorithm>

#include "base/ascii.h"

namespace peregrine::store {
namespace {

bool has_keyword(const std::vector<std::string>& keywords, std::string_view keyword) {
  return std::any_of(keywords.begin(), keywords.end(),
                     [&](const std::string& k) { return base::iequals(k, keyword); });
}

}  // namespace

base::Result<void> check_keyword(std::string_view keyword) {
  if (keyword.empty()) {
    return base::fail(base::MailError::kBadInput, "empty keyword");
  }
  if (keyword.size() > kMaxKeywordLength) {
    return base::fail(base::MailError::kBadInput,
                      "keyword longer than " + std::to_string(kMaxKeywordLength) + " bytes");
  }
  for (char c : keyword) {
    auto u = static_cast<unsigned char>(c);
    if (u <= 0x20 || u >= 0x7f) {
      return base::fail(base::MailError::kBadInput,
                        "invalid keyword \"" + std::string(keyword) + "\"");
    }
  }
  return {};
}

base::Result<std::vector<std::string>> normalize_keywords(std::span<const std::string> keywords) {
  std::vector<std::string> out;
  out.reserve(keywords.size());
  for (const std::string& k : keywords) {
    if (auto ok = check_keyword(k); !ok) {
      return std::unexpected(ok.error());
    }
    if (!has_keyword(out, k)) {
      if (out.size() >= kMaxKeywordsPerMessage) {
        return base::fail(base::MailError::kTooBig,
                          "more than " + std::to_string(kMaxKeywordsPerMessage) + " keywords");
      }
      out.push_back(k);
    }
  }
  return out;
}

bool apply_flag_update(const FlagUpdate& update, SystemFlags& flags,
                       std::vector<std::string>& keywords) {
  SystemFlags new_flags = flags;
  std::vector<std::string> new_keywords;
  const SystemFlags given = update.flags & kAllSystemFlags;
  switch (update.op) {
    case FlagOp::kReplace:
      new_flags = given;
      new_keywords = update.keywords;
      break;
    case FlagOp::kAdd:
      new_flags = flags | given;
      new_keywords = keywords;
      for (const std::string& k : update.keywords) {
        if (!has_keyword(new_keywords, k) && new_keywords.size() < kMaxKeywordsPerMessage) {
          new_keywords.push_back(k);
        }
      }
      break;
    case FlagOp::kRemove:
      new_flags = flags & static_cast<SystemFlags>(~given);
      for (const std::string& k : keywords) {
        if (!has_keyword(update.keywords, k)) {
          new_keywords.push_back(k);
        }
      }
      break;
  }
  // Keywords compare as sets: a kReplace with the same keywords in another
  // order or spelling is no change.
  bool same_keywords = new_keywords.size() == keywords.size() &&
                       std::all_of(new_keywords.begin(), new_keywords.end(),
                                   [&](const auto& k) { return has_keyword(keywords, k); });
  if (new_flags == flags && same_keywords) {
    return false;
  }
  flags = new_flags;
  if (!same_keywords) {
    keywords = std::move(new_keywords);
  }
  return true;
}

}  // namespace peregrine::store
