#pragma once

// Rules for flags and keywords that every backend applies the same way:
// which keywords are valid, how a FlagUpdate changes a message.

#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.h"
#include "store/api/types.h"

namespace peregrine::store {

// Succeeds when `keyword` is 1..kMaxKeywordLength printable ASCII characters
// other than space (the store keeps no other meaning in them). kBadInput
// otherwise, naming the keyword.
base::Result<void> check_keyword(std::string_view keyword);

// Checks every keyword (check_keyword) and returns them without
// case-insensitive duplicates, first spelling and order kept. kTooBig when
// more than kMaxKeywordsPerMessage remain.
base::Result<std::vector<std::string>> normalize_keywords(std::span<const std::string> keywords);

// Applies `update` (its op, flags and keywords; unchanged_since is the
// caller's business) to one message's `flags` and `keywords` in place.
// `update.keywords` must be normalized. Returns whether anything changed.
// A kAdd that would exceed kMaxKeywordsPerMessage adds none beyond it.
bool apply_flag_update(const FlagUpdate& update, SystemFlags& flags,
                       std::vector<std::string>& keywords);

}  // namespace peregrine::store
