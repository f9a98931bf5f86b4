// libFuzzer target for the SMTP/LMTP grammar (src/smtp/proto): client bytes
// go through the Reader as an LMTP session would take them (command lines;
// after a line "DATA", message text through a DataDecoder), and each line
// through parse_command. Invariants (a broken one aborts):
//
// - framing and decoding are the same whether the input arrives whole or in
//   chunks of the size the first input byte picks;
// - decoded message text has no bare LF (every LF follows a CR), is never
//   longer than the decoder's limit, and size() counts what was decoded;
// - a parse error is a 5xx reply with an enhanced code, formatted as one
//   line; a parsed path is within RFC 5321's lengths.

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "smtp/proto/command.h"
#include "smtp/proto/reader.h"
#include "smtp/proto/reply.h"

namespace peregrine::smtp {
namespace {

constexpr std::uint64_t kDataLimit = 2048;

void check(bool ok, const char* what) {
  if (!ok) {
    std::fprintf(stderr, "smtp_proto_fuzz: invariant broken: %s\n", what);
    std::abort();
  }
}

void check_command(std::string_view line) {
  ParseResult result = parse_command(line);
  if (!result.ok) {
    check(result.error.code >= 500 && result.error.code < 600, "error code is 5xx");
    check(!result.error.enhanced.empty(), "error has an enhanced code");
    std::string text = format_reply(result.error);
    check(text.find('\n') == text.size() - 1, "reply is one line");
    return;
  }
  const Address& a = result.command.address;
  check(a.local.size() <= kMaxLocalPart, "local part length");
  check(a.text.size() <= kMaxPath, "path length");
  check(a.domain.size() <= kMaxDomain + 2, "domain length");
}

// Everything the session would see, as one transcript string.
std::string run(std::string_view input, std::size_t chunk) {
  Reader reader(256);
  std::string transcript;
  std::size_t pos = 0;
  bool in_data = false;
  std::optional<DataDecoder> decoder;
  for (int rounds = 0; rounds < 1 << 20; ++rounds) {
    bool progressed = true;
    while (progressed) {
      progressed = false;
      if (in_data) {
        if (reader.read_data(*decoder)) {
          const std::string& text = decoder->text();
          check(decoder->too_big() || text.size() == decoder->size(), "size counts the text");
          check(text.size() <= kDataLimit, "text within the limit");
          for (std::size_t i = 0; i < text.size(); ++i) {
            check(text[i] != '\n' || (i > 0 && text[i - 1] == '\r'), "no bare LF");
          }
          transcript += "DATA[" + std::to_string(decoder->size()) + "]" + text;
          in_data = false;
          progressed = true;
        }
        continue;
      }
      Reader::Line line = reader.next_line();
      if (line.kind == Reader::Line::Kind::kTooLong) {
        transcript += "TOOLONG\n";
        progressed = true;
      } else if (line.kind == Reader::Line::Kind::kLine) {
        check(line.text.size() <= 256, "line within the limit");
        check_command(line.text);
        transcript += "LINE[" + std::string(line.text) + "]\n";
        in_data = line.text == "DATA";
        if (in_data) {
          decoder.emplace(kDataLimit);
        }
        progressed = true;
      }
    }
    if (pos >= input.size()) {
      break;
    }
    std::size_t n = std::min(chunk, input.size() - pos);
    std::span<char> space = reader.prepare(n);
    std::memcpy(space.data(), input.data() + pos, n);
    reader.commit(n);
    pos += n;
  }
  return transcript;
}

}  // namespace
}  // namespace peregrine::smtp

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) {
    return 0;
  }
  const std::size_t chunk = 1 + data[0] % 16;
  std::string_view input(reinterpret_cast<const char*>(data) + 1, size - 1);
  std::string whole = peregrine::smtp::run(input, input.size() + 1);
  std::string pieces = peregrine::smtp::run(input, chunk);
  peregrine::smtp::check(whole == pieces, "chunked framing differs from whole");
  return 0;
}
