// libFuzzer target for peregrine-bench's response parser
// (bench/loadgen/response.h): server bytes go through the Framer, then every
// framed response through parse_response. Invariants (a broken one aborts):
//
// - framing is the same whether the input arrives whole or in chunks of the
//   size the first input byte picks;
// - a framed response ends with LF and is never longer than the limit;
// - every view a parsed response holds lies inside the response's bytes,
//   and a body section is never longer than the response.

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "bench/loadgen/response.h"

namespace peregrine::bench {
namespace {

constexpr std::size_t kLimit = 1 << 16;

void check(bool ok, const char* what) {
  if (!ok) {
    std::fprintf(stderr, "loadgen_response_fuzz: invariant broken: %s\n", what);
    std::abort();
  }
}

bool inside(std::string_view part, std::string_view whole) {
  return part.empty() ||
         (part.data() >= whole.data() && part.data() + part.size() <= whole.data() + whole.size());
}

// Frames `input` as it arrives in pieces of `chunk` bytes; returns the
// lengths of the whole responses, and stops at a malformed one.
std::vector<std::size_t> frame_all(std::string_view input, std::size_t chunk) {
  std::vector<std::size_t> out;
  Framer framer(kLimit);
  std::size_t start = 0;
  std::size_t have = std::min(input.size(), chunk);
  while (true) {
    Frame f = framer.next(input.substr(start, have - start));
    if (f.status == FrameStatus::kComplete) {
      check(f.length > 0 && f.length <= have - start, "frame length out of range");
      check(input[start + f.length - 1] == '\n', "frame does not end with LF");
      check(f.length <= kLimit, "frame over the limit");
      out.push_back(f.length);
      start += f.length;
      continue;
    }
    if (f.status == FrameStatus::kMalformed || have == input.size()) {
      return out;
    }
    have = std::min(input.size(), have + chunk);
  }
}

void check_parse(std::string_view wire) {
  Response r;
  std::string error;
  if (!parse_response(wire, r, error)) {
    check(!error.empty(), "failure without a reason");
    return;
  }
  check(inside(r.tag, wire) && inside(r.code, wire) && inside(r.text, wire) && inside(r.atom, wire),
        "a view points outside the response");
  for (std::string_view flag : r.fetch.flags) {
    check(!flag.empty() && inside(flag, wire), "a flag points outside the response");
  }
  check(r.fetch.body_size <= wire.size(), "body longer than the response");
}

}  // namespace
}  // namespace peregrine::bench

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace peregrine::bench;
  if (size == 0) {
    return 0;
  }
  std::size_t chunk = 1 + data[0] % 17;
  std::string_view input(reinterpret_cast<const char*>(data) + 1, size - 1);
  std::vector<std::size_t> whole = frame_all(input, input.size() + 1);
  std::vector<std::size_t> pieces = frame_all(input, chunk);
  check(whole == pieces, "framing depends on how the bytes arrive");
  std::size_t start = 0;
  for (std::size_t length : whole) {
    check_parse(input.substr(start, length));
    start += length;
  }
  return 0;
}
