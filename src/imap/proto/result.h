#pragma once

// The result of a parse: a value or a ParseError whose text names what was
// wrong ("FETCH: unknown item FOO"), ready for a BAD response.
//
// imap/proto is also built with clang 14 + libstdc++ 12 for libFuzzer, which
// cannot compile <expected>, so this small type stands in for base::Result.

#include <string>
#include <string_view>
#include <utility>
#include <variant>

namespace peregrine::imap {

struct ParseError {
  // The command's tag when one was read (parse_command fills it in), else
  // empty: the server then answers with an untagged "* BAD".
  std::string tag;
  // For humans, without a trailing period: "missing mailbox name".
  std::string message;

  bool operator==(const ParseError&) const = default;
};

template <typename T>
class Parsed {
 public:
  Parsed(T value) : v_(std::move(value)) {}           // NOLINT: implicit by design
  Parsed(ParseError error) : v_(std::move(error)) {}  // NOLINT: implicit by design

  bool ok() const { return v_.index() == 0; }
  explicit operator bool() const { return ok(); }

  // Precondition: ok().
  T& value() & { return std::get<0>(v_); }
  const T& value() const& { return std::get<0>(v_); }
  T&& value() && { return std::get<0>(std::move(v_)); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }

  // Precondition: !ok().
  ParseError& error() & { return std::get<1>(v_); }
  const ParseError& error() const& { return std::get<1>(v_); }

 private:
  std::variant<T, ParseError> v_;
};

inline ParseError parse_error(std::string message) { return ParseError{{}, std::move(message)}; }

// `s` made safe and short for an error message: at most 40 bytes (then
// "..."), control and 8-bit bytes as "?".
inline std::string excerpt(std::string_view s) {
  constexpr size_t kMax = 40;
  std::string out;
  for (size_t i = 0; i < s.size() && i < kMax; ++i) {
    auto u = static_cast<unsigned char>(s[i]);
    out.push_back(u < 0x20 || u >= 0x7f ? '?' : s[i]);
  }
  if (s.size() > kMax) {
    out += "...";
  }
  return out;
}

}  // namespace peregrine::imap
