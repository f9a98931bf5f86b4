#include "search/text_match.h"

#include "base/ascii.h"
#include "mime/case_fold.h"

namespace peregrine::search {
namespace {

bool contains(std::string_view haystack, std::string_view needle) {
  return haystack.find(needle) != std::string_view::npos;
}

// HEADER field string: a line "name: value" of the folded headers whose name
// is `field` and whose value holds `needle` (any value when it is empty).
bool header_matches(std::string_view headers, std::string_view field, std::string_view needle) {
  size_t pos = 0;
  while (pos < headers.size()) {
    size_t end = headers.find('\n', pos);
    std::string_view line = headers.substr(pos, end == std::string_view::npos ? end : end - pos);
    pos = end == std::string_view::npos ? headers.size() : end + 1;
    size_t colon = line.find(':');
    if (colon == std::string_view::npos || !base::iequals(line.substr(0, colon), field)) {
      continue;
    }
    if (contains(line.substr(colon + 1), needle)) {
      return true;
    }
  }
  return false;
}

}  // namespace

bool text_matches(const mime::SearchText& text, const TextKey& key) {
  switch (key.target) {
    case TextTarget::kFrom:
      return contains(text.from, key.needle);
    case TextTarget::kTo:
      return contains(text.to, key.needle);
    case TextTarget::kCc:
      return contains(text.cc, key.needle);
    case TextTarget::kBcc:
      return contains(text.bcc, key.needle);
    case TextTarget::kSubject:
      return contains(text.subject, key.needle);
    case TextTarget::kHeader:
      return header_matches(text.headers, key.field, key.needle);
    case TextTarget::kBody:
      return contains(text.body, key.needle);
    case TextTarget::kText:
      return contains(text.headers, key.needle) || contains(text.body, key.needle);
  }
  return false;
}

store::TextQuery index_query(const TextKey& key) {
  store::TextQuery q;
  switch (key.target) {
    case TextTarget::kFrom:
      q.columns = store::kTextFrom;
      break;
    case TextTarget::kTo:
      q.columns = store::kTextTo;
      break;
    case TextTarget::kCc:
      q.columns = store::kTextCc;
      break;
    case TextTarget::kBcc:
      q.columns = store::kTextBcc;
      break;
    case TextTarget::kSubject:
      q.columns = store::kTextSubject;
      break;
    case TextTarget::kHeader:
      q.columns = store::kTextHeaders;
      // The header lines read "name: value": the name and colon narrow too.
      q.needles.push_back(mime::fold_case(key.field) + ":");
      break;
    case TextTarget::kBody:
      q.columns = store::kTextBody;
      break;
    case TextTarget::kText:
      q.columns = store::kTextHeaders | store::kTextBody;
      break;
  }
  if (!key.needle.empty()) {
    q.needles.push_back(key.needle);
  }
  return q;
}

}  // namespace peregrine::search
