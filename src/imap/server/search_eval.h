#pragma once

// Evaluates a SEARCH key tree against the messages of a selected view, by a
// plain scan: flags, sizes, dates and UIDs from the hub's metadata, the
// Date header from the cache record, and text keys (FROM, SUBJECT, HEADER,
// BODY, TEXT, ...) against the message's decoded text (mime::SearchText),
// built by reading and parsing the message only when a text key needs it.
// Substring matching is case-insensitive by Unicode case folding.
//
// Thread safety: none; used on the user's strand only.

#include <cstdint>
#include <ctime>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "base/result.h"
#include "imap/proto/search_key.h"
#include "imap/server/selected_view.h"
#include "store/api/user_store.h"

namespace peregrine::imap {

// Case-folded UTF-8 (ASCII lower-cased; other text folded by ICU).
std::string fold_case(std::string_view utf8);

class SearchEvaluator {
 public:
  // `charset` is the SEARCH CHARSET (empty: US-ASCII/UTF-8). Errors (check
  // them with error() before matching): kBadInput for "$" (SEARCHRES is not
  // offered), kNotFound for a charset we cannot convert.
  SearchEvaluator(SelectedView& view, store::UserStore& store, const SearchKey& key,
                  std::string_view charset, std::int64_t now = std::time(nullptr));
  ~SearchEvaluator();

  const std::optional<base::Error>& error() const { return error_; }

  // Whether message `seq` (not a ghost) matches.
  bool matches(std::uint32_t seq);

 private:
  struct Compiled;
  struct Message;

  bool eval(const Compiled& key, Message& m);

  SelectedView& view_;
  store::UserStore& store_;
  std::int64_t now_;
  std::unique_ptr<Compiled> root_;
  std::optional<base::Error> error_;
};

}  // namespace peregrine::imap
