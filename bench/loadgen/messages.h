#pragma once

// The messages APPEND sends: read from an mbox file (--append-source), or,
// without one, a few generated ones. Either way with CRLF line ends.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace peregrine::bench {

// Splits an mbox ("From " separator lines, ">From " unescaped one level) into
// messages with CRLF line ends. Returns nullopt if the file cannot be read
// or holds no message.
std::optional<std::vector<std::string>> load_mbox(const std::string& path);

// `count` small plain-text messages derived from `seed`; their bodies hold
// the words search_words() returns.
std::vector<std::string> generated_messages(std::uint64_t seed, int count);

// Words SEARCH TEXT looks for (some occur in generated messages, one never).
const std::vector<std::string>& search_words();

}  // namespace peregrine::bench
