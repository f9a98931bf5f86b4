// The byte form of SearchText (search_text.h).

#include <cstdint>

#include "mime/search_text.h"

namespace peregrine::mime {
namespace {

constexpr char kVersion = 1;

void put(std::string& out, const std::string& field) {
  auto n = static_cast<std::uint32_t>(field.size());
  for (int i = 0; i < 4; ++i) {
    out.push_back(static_cast<char>((n >> (8 * i)) & 0xff));
  }
  out += field;
}

bool get(std::string_view& in, std::string& field) {
  if (in.size() < 4) {
    return false;
  }
  std::uint32_t n = 0;
  for (int i = 0; i < 4; ++i) {
    n |= static_cast<std::uint32_t>(static_cast<unsigned char>(in[i])) << (8 * i);
  }
  in.remove_prefix(4);
  if (in.size() < n) {
    return false;
  }
  field.assign(in.substr(0, n));
  in.remove_prefix(n);
  return true;
}

}  // namespace

std::string serialize_search_text(const SearchText& text) {
  std::string out;
  out.reserve(1 + 7 * 4 + text.from.size() + text.to.size() + text.cc.size() + text.bcc.size() +
              text.subject.size() + text.headers.size() + text.body.size());
  out.push_back(kVersion);
  for (const std::string* s :
       {&text.from, &text.to, &text.cc, &text.bcc, &text.subject, &text.headers, &text.body}) {
    put(out, *s);
  }
  return out;
}

std::optional<SearchText> deserialize_search_text(std::string_view bytes) {
  if (bytes.empty() || bytes[0] != kVersion) {
    return std::nullopt;
  }
  bytes.remove_prefix(1);
  SearchText text;
  for (std::string* s :
       {&text.from, &text.to, &text.cc, &text.bcc, &text.subject, &text.headers, &text.body}) {
    if (!get(bytes, *s)) {
      return std::nullopt;
    }
  }
  if (!bytes.empty()) {
    return std::nullopt;
  }
  return text;
}

}  // namespace peregrine::mime
