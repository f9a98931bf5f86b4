// libFuzzer target for the IMAP grammar (src/imap/proto): client bytes go
// through the CommandReader, then every framed command through the parser.
// Invariants (any broken one aborts, so the fuzzer keeps the input):
//
// - framing is the same whether the input arrives whole or in chunks of the
//   size the first input byte picks (Dovecot-style byte-at-a-time checking);
// - parse errors are short single lines (safe to echo in a BAD response);
// - a parsed SEARCH key tree and FETCH item list, written back in IMAP
//   syntax (to_string / append_fetch_item_request), parse to the same value;
// - sequence sets written back parse to the same set.

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "imap/proto/command_reader.h"
#include "imap/proto/fetch_item.h"
#include "imap/proto/fetch_response.h"
#include "imap/proto/parser.h"
#include "imap/proto/response_writer.h"
#include "imap/proto/search_key.h"
#include "imap/proto/sequence_set.h"

namespace peregrine::imap {
namespace {

void check(bool ok, const char* what) {
  if (!ok) {
    std::fprintf(stderr, "imap_proto_fuzz: invariant broken: %s\n", what);
    std::abort();
  }
}

ReaderLimits fuzz_limits() {
  ReaderLimits l;
  l.max_line_bytes = 256;
  l.max_literal_bytes = 2048;
  l.max_command_bytes = 8192;
  l.max_literals = 8;
  return l;
}

// Frames `wire` (one command, CRLF added) with roomy limits and parses it.
Parsed<Command> reparse(const std::string& wire) {
  CommandReader reader;
  reader.feed(wire + "\r\n");
  for (;;) {
    ReaderEvent ev = reader.next();
    if (ev.kind == ReaderEvent::Kind::kContinue) {
      continue;
    }
    check(ev.kind == ReaderEvent::Kind::kCommand, "re-rendered command frames as one command");
    Parsed<Command> cmd = parse_command(*ev.command);
    // APPEND data would dangle once the reader goes; nothing here keeps it.
    return cmd;
  }
}

void check_round_trips(const Command& cmd) {
  if (const Search* s = std::get_if<Search>(&cmd.args)) {
    Parsed<Command> again = reparse("x SEARCH " + to_string(s->key));
    check(again.ok(), "written SEARCH key parses");
    check(std::get<Search>(again->args).key == s->key, "SEARCH key round trip");
  }
  if (const Fetch* f = std::get_if<Fetch>(&cmd.args)) {
    std::string wire = "x FETCH " + to_string(f->set) + " (";
    for (size_t i = 0; i < f->items.size(); ++i) {
      if (i > 0) {
        wire += ' ';
      }
      append_fetch_item_request(wire, f->items[i]);
    }
    wire += ')';
    Parsed<Command> again = reparse(wire);
    check(again.ok(), "written FETCH items parse");
    check(std::get<Fetch>(again->args).items == f->items, "FETCH items round trip");
    check(std::get<Fetch>(again->args).set == f->set, "sequence set round trip");
    // The response side must accept every item.
    std::string out;
    FetchResponse r(out, 1);
    for (const FetchItem& item : f->items) {
      r.section_nil(item);
    }
    r.finish();
  }
}

void check_parse(const FramedCommand& framed) {
  Parsed<Command> cmd = parse_command(framed);
  if (!cmd) {
    const std::string& m = cmd.error().message;
    check(!m.empty() && m.size() < 300, "error message is short");
    check(m.find_first_of(std::string_view("\r\n\0", 3)) == std::string::npos,
          "error message is one line");
    std::string out;
    write_tagged(out, cmd.error().tag.empty() ? "*" : cmd.error().tag, ResponseStatus::kBad, m);
    check(out.find('\n') == out.size() - 1, "BAD response is one line");
  } else {
    check(!cmd->tag.empty(), "a parsed command has a tag");
    check_round_trips(*cmd);
  }
  (void)is_idle_done(framed);
  (void)parse_auth_response(framed);
}

// One line per reader event, so two feeding patterns can be compared.
std::vector<std::string> frame(std::string_view in, size_t chunk, bool parse) {
  CommandReader reader(fuzz_limits());
  std::vector<std::string> events;
  auto drain = [&] {
    for (;;) {
      ReaderEvent ev = reader.next();
      switch (ev.kind) {
        case ReaderEvent::Kind::kNeedMore:
          return;
        case ReaderEvent::Kind::kContinue:
          events.emplace_back("+");
          break;
        case ReaderEvent::Kind::kError:
          events.push_back("E" + std::to_string(static_cast<int>(ev.error)) +
                           (ev.fatal ? "!" : "") + ev.tag);
          check(!ev.fatal || reader.failed(), "fatal error leaves the reader failed");
          break;
        case ReaderEvent::Kind::kCommand: {
          const FramedCommand& c = *ev.command;
          check(c.lines.size() == c.literals.size() + 1, "lines = literals + 1");
          std::string s = "C";
          for (size_t i = 0; i < c.lines.size(); ++i) {
            s += c.lines[i];
            if (i < c.literals.size()) {
              s += c.literals[i].binary ? "<~" : "<";
              s += c.literals[i].synchronizing ? "" : "+";
              s.append(c.literals[i].data);
              s += ">";
            }
          }
          events.push_back(std::move(s));
          if (parse) {
            check_parse(c);
          }
          break;
        }
      }
    }
  };
  if (chunk == 0) {
    reader.feed(in);
    drain();
  } else {
    for (size_t i = 0; i < in.size(); i += chunk) {
      reader.feed(in.substr(i, chunk));
      drain();
    }
  }
  return events;
}

}  // namespace
}  // namespace peregrine::imap

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace peregrine::imap;
  if (size == 0) {
    return 0;
  }
  size_t chunk = 1 + data[0] % 16;
  std::string_view in(reinterpret_cast<const char*>(data) + 1, size - 1);
  std::vector<std::string> whole = frame(in, 0, /*parse=*/true);
  std::vector<std::string> pieces = frame(in, chunk, /*parse=*/false);
  check(whole == pieces, "framing does not depend on how input is split");
  return 0;
}
