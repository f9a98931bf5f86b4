#pragma once

// The load generator's client-side IMAP response parser (RFC 3501 §7,
// RFC 9051 §7): framing of whole responses (lines plus the literals they
// announce) and a lean parse of the responses the generator acts on.
//
// It parses only what the state checks need (EXISTS, EXPUNGE, RECENT, FETCH
// with UID/FLAGS/body sections, SEARCH, STATUS, tagged and untagged status
// responses with their codes) and checks the rest for balanced syntax, so a
// malformed response is reported instead of silently skipped.
//
// Plain C++20 without std::expected: the libFuzzer build (clang 14) compiles
// this file (tests/fuzz/loadgen_response_fuzz.cc).
//
// Thread safety: none needed; a Framer belongs to one connection and the
// functions are pure.

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace peregrine::bench {

// Where the first whole response in a buffer ends.
enum class FrameStatus {
  kComplete,   // `length` bytes (through the final CRLF) form one response
  kNeedMore,   // read more bytes and ask again
  kMalformed,  // a bad literal length or a response over the size limit
};

struct Frame {
  FrameStatus status = FrameStatus::kNeedMore;
  std::size_t length = 0;
};

// Finds response boundaries incrementally: bytes already scanned are not
// scanned again when more arrive (a 10 MB literal costs one pass).
class Framer {
 public:
  explicit Framer(std::size_t max_response) : max_response_(max_response) {}

  // `data` starts at the first byte of the response being framed and only
  // grows between calls until kComplete, after which the caller drops
  // `length` bytes and the next call starts a new response.
  Frame next(std::string_view data);

 private:
  std::size_t max_response_;
  std::size_t scanned_ = 0;  // bytes of `data` known to hold no response end
};

enum class Kind { kTagged, kUntagged, kContinuation };

enum class Status { kNone, kOk, kNo, kBad, kBye, kPreauth };

// What an untagged response carries.
enum class Data {
  kStatus,  // * OK/NO/BAD/BYE/PREAUTH
  kExists,
  kRecent,
  kExpunge,
  kFetch,
  kSearch,
  kMailboxStatus,  // * STATUS
  kOther,          // FLAGS, LIST, CAPABILITY, ... (syntax checked only)
};

struct FetchData {
  std::uint32_t uid = 0;  // 0: no UID item
  bool has_flags = false;
  std::vector<std::string_view> flags;  // as sent (views into the response)
  bool has_body = false;                // BODY[...] / RFC822 / BINARY[...] item
  std::size_t body_size = 0;            // its length (NIL counts as 0)
  bool has_envelope = false;
  bool has_bodystructure = false;
  bool has_internaldate = false;
};

// One parsed response. String views point into the wire bytes given to
// parse_response() and live as long as those bytes.
struct Response {
  Kind kind = Kind::kUntagged;
  std::string_view tag;  // tagged only
  Data data = Data::kOther;
  Status status = Status::kNone;  // tagged, and untagged kStatus
  std::string_view code;          // response code inside [...], without brackets
  std::string_view text;          // human-readable text after the code
  std::uint32_t number = 0;       // EXISTS/RECENT/EXPUNGE count, FETCH sequence number
  FetchData fetch;
  std::vector<std::uint32_t> search;  // SEARCH results
  std::string_view atom;              // the untagged keyword for kOther (e.g. "LIST")
  std::int64_t status_messages = -1;  // STATUS (MESSAGES n), -1 when absent
};

// Parses one framed response (with its CRLF). Returns false with a reason in
// `error` when it does not follow the grammar.
bool parse_response(std::string_view wire, Response& out, std::string& error);

// ASCII case-insensitive equality (flags and keywords compare this way).
bool iequals(std::string_view a, std::string_view b);

}  // namespace peregrine::bench
