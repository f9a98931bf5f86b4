#include "pop3/proto/command.h"

#include <array>
#include <utility>

#include "base/ascii.h"

namespace peregrine::pop3 {
namespace {

struct Keyword {
  std::string_view name;
  Verb verb;
};

constexpr std::array<Keyword, 15> kKeywords{{
    {"USER", Verb::kUser},
    {"PASS", Verb::kPass},
    {"APOP", Verb::kApop},
    {"AUTH", Verb::kAuth},
    {"STLS", Verb::kStls},
    {"CAPA", Verb::kCapa},
    {"STAT", Verb::kStat},
    {"LIST", Verb::kList},
    {"RETR", Verb::kRetr},
    {"DELE", Verb::kDele},
    {"NOOP", Verb::kNoop},
    {"RSET", Verb::kRset},
    {"TOP", Verb::kTop},
    {"UIDL", Verb::kUidl},
    {"QUIT", Verb::kQuit},
}};

ParsedCommand failure(std::string message) {
  ParsedCommand parsed;
  parsed.error = std::move(message);
  return parsed;
}

// Splits `args` at single spaces. An empty piece (two spaces in a row, or a
// leading or trailing space) is an error, reported as false.
bool split_args(std::string_view args, std::string_view* out, std::size_t max, std::size_t* count) {
  *count = 0;
  if (args.empty()) {
    return true;
  }
  for (;;) {
    std::size_t space = args.find(' ');
    std::string_view piece = args.substr(0, space);
    if (piece.empty() || *count == max) {
      return false;
    }
    out[(*count)++] = piece;
    if (space == std::string_view::npos) {
      return true;
    }
    args.remove_prefix(space + 1);
  }
}

// A decimal number in [min, kMaxNumber]; false for anything else.
bool parse_number(std::string_view text, std::uint32_t min, std::uint32_t* out) {
  if (text.empty() || text.size() > 10) {
    return false;
  }
  std::uint64_t value = 0;
  for (char c : text) {
    if (!base::is_digit(c)) {
      return false;
    }
    value = value * 10 + static_cast<std::uint64_t>(c - '0');
  }
  if (value < min || value > kMaxNumber) {
    return false;
  }
  *out = static_cast<std::uint32_t>(value);
  return true;
}

}  // namespace

ParsedCommand parse_command(std::string_view line) {
  if (line.empty()) {
    return failure("Empty command line");
  }
  if (line.size() > kMaxCommandLine) {
    return failure("Command line too long");
  }
  for (char c : line) {
    const auto u = static_cast<unsigned char>(c);
    if (u < 0x20 || u == 0x7f) {
      return failure("Control characters are not allowed in a command");
    }
  }
  const std::size_t space = line.find(' ');
  const std::string_view keyword = line.substr(0, space);
  const std::string_view rest =
      space == std::string_view::npos ? std::string_view() : line.substr(space + 1);
  const Keyword* found = nullptr;
  for (const Keyword& k : kKeywords) {
    if (base::iequals(k.name, keyword)) {
      found = &k;
      break;
    }
  }
  if (found == nullptr) {
    return failure("Unknown command");
  }

  ParsedCommand parsed;
  Command& cmd = parsed.command;
  cmd.verb = found->verb;
  if (cmd.verb == Verb::kPass) {
    // The whole rest of the line, spaces included.
    if (rest.empty()) {
      return failure("PASS needs a password");
    }
    cmd.text = std::string(rest);
    return parsed;
  }

  std::string_view args[3];
  std::size_t count = 0;
  if (!split_args(rest, args, 3, &count)) {
    return failure("Invalid arguments");
  }
  auto want = [&](std::size_t min, std::size_t max) { return count >= min && count <= max; };
  switch (cmd.verb) {
    case Verb::kStls:
    case Verb::kCapa:
    case Verb::kStat:
    case Verb::kNoop:
    case Verb::kRset:
    case Verb::kQuit:
      if (!want(0, 0)) {
        return failure(std::string(to_string(cmd.verb)) + " takes no arguments");
      }
      break;
    case Verb::kUser:
      if (!want(1, 1)) {
        return failure("USER needs one argument: a user name");
      }
      cmd.text = std::string(args[0]);
      break;
    case Verb::kApop:
      if (!want(2, 2)) {
        return failure("APOP needs a name and a digest");
      }
      cmd.text = std::string(args[0]);
      cmd.text2 = std::string(args[1]);
      break;
    case Verb::kAuth:
      if (!want(0, 2)) {
        return failure("AUTH takes a mechanism and an optional initial response");
      }
      if (count >= 1) {
        cmd.text = base::to_upper(args[0]);
      }
      if (count == 2) {
        cmd.has_initial = true;
        cmd.text2 = std::string(args[1]);
      }
      break;
    case Verb::kList:
    case Verb::kUidl:
      if (!want(0, 1)) {
        return failure(std::string(to_string(cmd.verb)) + " takes at most one message number");
      }
      if (count == 1) {
        if (!parse_number(args[0], 1, &cmd.msg)) {
          return failure("Invalid message number");
        }
        cmd.has_msg = true;
      }
      break;
    case Verb::kRetr:
    case Verb::kDele:
      if (!want(1, 1)) {
        return failure(std::string(to_string(cmd.verb)) + " needs one message number");
      }
      if (!parse_number(args[0], 1, &cmd.msg)) {
        return failure("Invalid message number");
      }
      cmd.has_msg = true;
      break;
    case Verb::kTop:
      if (!want(2, 2)) {
        return failure("TOP needs a message number and a line count");
      }
      if (!parse_number(args[0], 1, &cmd.msg)) {
        return failure("Invalid message number");
      }
      if (!parse_number(args[1], 0, &cmd.lines)) {
        return failure("Invalid line count");
      }
      cmd.has_msg = true;
      break;
    case Verb::kPass:
      break;
  }
  return parsed;
}

const char* to_string(Verb verb) {
  for (const Keyword& k : kKeywords) {
    if (k.verb == verb) {
      return k.name.data();
    }
  }
  return "?";
}

}  // namespace peregrine::pop3
