#include "store/maildir/names.h"

#include <algorithm>
#include <charconv>

#include "base/ascii.h"

namespace peregrine::store::maildir {
namespace {

constexpr std::size_t kMaxDirNameBytes = 255;

// The flag letters Maildir defines that are IMAP system flags, sorted.
struct Letter {
  char letter;
  SystemFlags flag;
};
constexpr Letter kLetters[] = {
    {'D', kFlagDraft}, {'F', kFlagFlagged}, {'R', kFlagAnswered},
    {'S', kFlagSeen},  {'T', kFlagDeleted},
};

bool is_flag_letter(char c) {
  return std::any_of(std::begin(kLetters), std::end(kLetters),
                     [c](const Letter& l) { return l.letter == c; });
}

void append_escaped_level(std::string& out, std::string_view level) {
  for (char c : level) {
    if (c == '%') {
      out += "%25";
    } else if (c == '.') {
      out += "%2E";
    } else {
      out += c;
    }
  }
}

}  // namespace

base::Result<std::string> normalize_mailbox_name(std::string_view name) {
  if (name.size() > 1 && name.back() == kHierarchyDelimiter) {
    name.remove_suffix(1);
  }
  if (name.empty()) {
    return base::fail(base::MailError::kBadInput, "empty mailbox name");
  }
  for (char c : name) {
    auto u = static_cast<unsigned char>(c);
    if (u < 0x20 || u > 0x7e) {
      return base::fail(base::MailError::kBadInput,
                        "mailbox name has a character outside printable ASCII");
    }
  }
  if (name.front() == kHierarchyDelimiter || name.find("//") != std::string_view::npos ||
      name.back() == kHierarchyDelimiter) {
    return base::fail(base::MailError::kBadInput,
                      "mailbox name \"" + std::string(name) + "\" has an empty level");
  }
  // "." and ".." levels are stored safely (escaped), but they read as path
  // steps to people and tools, and LIST would show odd \Noselect parents.
  for (std::string_view rest = name; !rest.empty();) {
    std::size_t end = rest.find(kHierarchyDelimiter);
    std::string_view level = rest.substr(0, end);
    if (level == "." || level == "..") {
      return base::fail(base::MailError::kBadInput,
                        "mailbox name \"" + std::string(name) + "\" has a \".\" or \"..\" level");
    }
    rest = end == std::string_view::npos ? std::string_view() : rest.substr(end + 1);
  }
  std::string out(name);
  std::size_t first_end = out.find(kHierarchyDelimiter);
  std::string_view first = std::string_view(out).substr(0, first_end);
  if (base::iequals(first, kInbox)) {
    out.replace(0, first.size(), kInbox);
  }
  if (out != kInbox && folder_dir(out).size() > kMaxDirNameBytes) {
    return base::fail(base::MailError::kBadInput, "mailbox name too long");
  }
  return out;
}

std::string folder_dir(std::string_view canonical_name) {
  if (canonical_name == kInbox) {
    return {};
  }
  std::string out = ".";
  std::size_t start = 0;
  for (;;) {
    std::size_t end = canonical_name.find(kHierarchyDelimiter, start);
    append_escaped_level(out, canonical_name.substr(start, end - start));
    if (end == std::string_view::npos) {
      break;
    }
    out += '.';
    start = end + 1;
  }
  return out;
}

std::optional<std::string> mailbox_name_from_dir(std::string_view dir) {
  if (dir.size() < 2 || dir.front() != '.' || dir[1] == '.') {
    return std::nullopt;
  }
  std::string name;
  for (std::size_t i = 1; i < dir.size(); ++i) {
    char c = dir[i];
    if (c == '.') {
      name += kHierarchyDelimiter;
    } else if (c == '%') {
      std::string_view code = dir.substr(i + 1, 2);
      if (code == "25") {
        name += '%';
      } else if (code == "2E") {
        name += '.';
      } else {
        return std::nullopt;
      }
      i += 2;
    } else if (c == kHierarchyDelimiter) {
      return std::nullopt;
    } else {
      name += c;
    }
  }
  auto canonical = normalize_mailbox_name(name);
  if (!canonical || *canonical == kInbox || folder_dir(*canonical) != dir) {
    return std::nullopt;
  }
  return *canonical;
}

bool is_same_or_below(std::string_view name, std::string_view parent) {
  if (name.size() < parent.size() || name.substr(0, parent.size()) != parent) {
    return false;
  }
  return name.size() == parent.size() || name[parent.size()] == kHierarchyDelimiter;
}

base::Result<void> check_user_name(std::string_view user) {
  if (user.empty() || user.size() > kMaxDirNameBytes || user == "." || user == "..") {
    return base::fail(base::MailError::kBadInput, "invalid user name");
  }
  for (char c : user) {
    auto u = static_cast<unsigned char>(c);
    if (c == '/' || u < 0x20 || u == 0x7f) {
      return base::fail(base::MailError::kBadInput, "invalid user name");
    }
  }
  return {};
}

FileName split_file_name(std::string_view name) {
  FileName out;
  std::size_t colon = name.find(':');
  out.base = name.substr(0, colon);
  if (colon != std::string_view::npos && name.substr(colon, 3) == ":2,") {
    out.letters = name.substr(colon + 3);
  }
  return out;
}

SystemFlags flags_from_letters(std::string_view letters) {
  SystemFlags flags = 0;
  for (char c : letters) {
    for (const Letter& l : kLetters) {
      if (l.letter == c) {
        flags |= l.flag;
      }
    }
  }
  return flags;
}

std::string file_name_with_flags(std::string_view base, std::string_view old_letters,
                                 SystemFlags flags) {
  std::string letters;
  for (char c : old_letters) {
    if (!is_flag_letter(c) && letters.find(c) == std::string::npos) {
      letters += c;
    }
  }
  for (const Letter& l : kLetters) {
    if (flags & l.flag) {
      letters += l.letter;
    }
  }
  std::sort(letters.begin(), letters.end());
  std::string out(base);
  out += ":2,";
  out += letters;
  return out;
}

std::string make_base_name(std::int64_t unix_micros, long pid, std::uint64_t counter,
                           std::string_view host, std::uint64_t size) {
  std::string out = std::to_string(unix_micros / 1'000'000);
  out += ".M";
  out += std::to_string(unix_micros % 1'000'000);
  out += 'P';
  out += std::to_string(pid);
  out += 'Q';
  out += std::to_string(counter);
  out += '.';
  for (char c : host) {
    if (c == '/') {
      out += "\\057";
    } else if (c == ':') {
      out += "\\072";
    } else {
      out += c;
    }
  }
  out += ",S=";
  out += std::to_string(size);
  return out;
}

namespace {

// The position of the ",S=" field's digits and their length.
std::optional<std::pair<std::size_t, std::size_t>> size_field(std::string_view base) {
  std::size_t pos = base.find(",S=");
  if (pos == std::string_view::npos) {
    return std::nullopt;
  }
  std::size_t start = pos + 3;
  std::size_t end = start;
  while (end < base.size() && base::is_digit(base[end])) {
    ++end;
  }
  if (end == start) {
    return std::nullopt;
  }
  return std::make_pair(start, end - start);
}

}  // namespace

std::optional<std::uint64_t> size_from_base_name(std::string_view base) {
  auto field = size_field(base);
  if (!field) {
    return std::nullopt;
  }
  std::uint64_t value = 0;
  auto digits = base.substr(field->first, field->second);
  auto [ptr, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), value);
  if (ec != std::errc() || ptr != digits.data() + digits.size()) {
    return std::nullopt;
  }
  return value;
}

std::string base_name_with_size(std::string_view base, std::uint64_t size) {
  auto field = size_field(base);
  if (!field) {
    return std::string(base);
  }
  std::string out(base.substr(0, field->first));
  out += std::to_string(size);
  std::string_view rest = base.substr(field->first + field->second);
  // Drop a ",W=<n>" field: the size with CRLF line ends, now equal to S.
  if (rest.starts_with(",W=")) {
    std::size_t end = 3;
    while (end < rest.size() && base::is_digit(rest[end])) {
      ++end;
    }
    rest.remove_prefix(end);
  }
  out += rest;
  return out;
}

bool has_bare_lf(std::string_view bytes) {
  std::size_t pos = 0;
  while ((pos = bytes.find('\n', pos)) != std::string_view::npos) {
    if (pos == 0 || bytes[pos - 1] != '\r') {
      return true;
    }
    ++pos;
  }
  return false;
}

std::string to_crlf(std::string_view bytes) {
  std::string out;
  out.reserve(bytes.size() + bytes.size() / 32);
  std::size_t start = 0;
  std::size_t pos;
  while ((pos = bytes.find('\n', start)) != std::string_view::npos) {
    if (pos == 0 || bytes[pos - 1] != '\r') {
      out.append(bytes.substr(start, pos - start));
      out += "\r\n";
    } else {
      out.append(bytes.substr(start, pos + 1 - start));
    }
    start = pos + 1;
  }
  out.append(bytes.substr(start));
  return out;
}

}  // namespace peregrine::store::maildir
