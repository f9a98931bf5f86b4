#include "base/ascii.h"

namespace peregrine::base {

bool iequals(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) {
    return false;
  }
  for (size_t i = 0; i < a.size(); ++i) {
    if (ascii_lower(a[i]) != ascii_lower(b[i])) {
      return false;
    }
  }
  return true;
}

bool istarts_with(std::string_view s, std::string_view prefix) {
  return s.size() >= prefix.size() && iequals(s.substr(0, prefix.size()), prefix);
}

int icompare(std::string_view a, std::string_view b) {
  size_t n = a.size() < b.size() ? a.size() : b.size();
  for (size_t i = 0; i < n; ++i) {
    auto x = static_cast<unsigned char>(ascii_lower(a[i]));
    auto y = static_cast<unsigned char>(ascii_lower(b[i]));
    if (x != y) {
      return x < y ? -1 : 1;
    }
  }
  if (a.size() == b.size()) {
    return 0;
  }
  return a.size() < b.size() ? -1 : 1;
}

std::string to_lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) {
    c = ascii_lower(c);
  }
  return out;
}

std::string to_upper(std::string_view s) {
  std::string out(s);
  for (char& c : out) {
    c = ascii_upper(c);
  }
  return out;
}

std::string_view trim(std::string_view s) {
  auto junk = [](char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; };
  while (!s.empty() && junk(s.front())) {
    s.remove_prefix(1);
  }
  while (!s.empty() && junk(s.back())) {
    s.remove_suffix(1);
  }
  return s;
}

}  // namespace peregrine::base
