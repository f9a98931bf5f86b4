#include "auth/passwd_file.h"

#include <unordered_map>
#include <utility>

#include "base/ascii.h"

namespace peregrine::auth {
namespace {

using base::fail;
using base::MailError;
using base::Result;

constexpr std::size_t kMaxUserNameBytes = 255;

bool is_control(char c) { return static_cast<unsigned char>(c) < 0x20 || c == 0x7f; }

bool has_colon_or_control(std::string_view s) {
  for (char c : s) {
    if (c == ':' || is_control(c)) {
      return true;
    }
  }
  return false;
}

// A line without its "\n" or "\r\n".
std::string_view content_of(std::string_view line) {
  if (!line.empty() && line.back() == '\n') {
    line.remove_suffix(1);
  }
  if (!line.empty() && line.back() == '\r') {
    line.remove_suffix(1);
  }
  return line;
}

bool is_skipped(std::string_view content) {
  std::string_view trimmed = base::trim(content);
  return trimmed.empty() || trimmed.front() == '#';
}

std::string line_error(std::size_t line, std::string_view text) {
  return "line " + std::to_string(line) + ": " + std::string(text);
}

Result<std::optional<std::uint32_t>> parse_id(std::string_view field, std::string_view what,
                                              std::size_t line) {
  if (field.empty()) {
    return std::nullopt;
  }
  std::uint64_t value = 0;
  for (char c : field) {
    if (!base::is_digit(c)) {
      return fail(
          MailError::kBadInput,
          line_error(line, std::string(what) + " '" + std::string(field) + "' is not a number"));
    }
    if (value <= UINT32_MAX) {  // saturates above the range, so no overflow
      value = value * 10 + static_cast<std::uint64_t>(c - '0');
    }
  }
  if (value > UINT32_MAX) {
    return fail(MailError::kBadInput,
                line_error(line, std::string(what) + " " + std::string(field) + " out of range"));
  }
  return static_cast<std::uint32_t>(value);
}

Result<PasswdEntry> parse_line(std::string_view content, std::size_t line) {
  std::string_view fields[8];
  std::size_t count = 0;
  std::string_view rest = content;
  while (count < 7) {
    std::size_t colon = rest.find(':');
    if (colon == std::string_view::npos) {
      break;
    }
    fields[count++] = rest.substr(0, colon);
    rest.remove_prefix(colon + 1);
  }
  fields[count++] = rest;  // the last field, or the extra fields (ignored)
  if (count < 2) {
    return fail(MailError::kBadInput, line_error(line, "missing ':' after the user name"));
  }
  if (auto ok = check_user_name(fields[0]); !ok) {
    return fail(MailError::kBadInput, line_error(line, "bad user name: " + ok.error().message));
  }
  PasswdEntry entry;
  entry.line = line;
  entry.user = std::string(fields[0]);
  entry.password = std::string(fields[1]);
  auto uid = parse_id(fields[2], "uid", line);
  if (!uid) {
    return std::unexpected(uid.error());
  }
  entry.uid = *uid;
  auto gid = parse_id(fields[3], "gid", line);
  if (!gid) {
    return std::unexpected(gid.error());
  }
  entry.gid = *gid;
  entry.gecos = std::string(fields[4]);
  entry.home = std::string(fields[5]);
  entry.shell = std::string(fields[6]);
  return entry;
}

// Calls fn(line_with_ending) for each line of `text`.
template <typename Fn>
void for_each_line(std::string_view text, Fn&& fn) {
  while (!text.empty()) {
    std::size_t newline = text.find('\n');
    std::size_t end = newline == std::string_view::npos ? text.size() : newline + 1;
    fn(text.substr(0, end));
    text.remove_prefix(end);
  }
}

Result<std::vector<PasswdEntry>> parse_lines(const std::vector<std::string>& lines) {
  std::vector<PasswdEntry> entries;
  std::unordered_map<std::string_view, std::size_t> first_line;
  for (std::size_t i = 0; i < lines.size(); ++i) {
    std::string_view content = content_of(lines[i]);
    if (is_skipped(content)) {
      continue;
    }
    auto entry = parse_line(content, i + 1);
    if (!entry) {
      return std::unexpected(entry.error());
    }
    entries.push_back(std::move(*entry));
  }
  for (const PasswdEntry& entry : entries) {
    auto [it, inserted] = first_line.emplace(entry.user, entry.line);
    if (!inserted) {
      return fail(MailError::kBadInput,
                  line_error(entry.line, "duplicate user " + entry.user + " (first on line " +
                                             std::to_string(it->second) + ")"));
    }
  }
  return entries;
}

std::vector<std::string> split_lines(std::string_view text) {
  std::vector<std::string> lines;
  for_each_line(text, [&](std::string_view line) { lines.emplace_back(line); });
  return lines;
}

}  // namespace

Result<void> check_user_name(std::string_view name) {
  if (name.empty()) {
    return fail(MailError::kBadInput, "empty user name");
  }
  if (name.size() > kMaxUserNameBytes) {
    return fail(MailError::kBadInput,
                "user name longer than " + std::to_string(kMaxUserNameBytes) + " bytes");
  }
  for (char c : name) {
    if (c == ':') {
      return fail(MailError::kBadInput, "user name contains ':'");
    }
    if (is_control(c)) {
      return fail(MailError::kBadInput, "user name contains a control character");
    }
  }
  if (name.front() == '#') {
    return fail(MailError::kBadInput, "user name starts with '#'");
  }
  if (base::is_wsp(name.front()) || base::is_wsp(name.back())) {
    return fail(MailError::kBadInput, "user name starts or ends with a space");
  }
  return {};
}

Result<std::vector<PasswdEntry>> parse_passwd(std::string_view text) {
  return parse_lines(split_lines(text));
}

Result<PasswdFile> PasswdFile::parse(std::string text) {
  PasswdFile file;
  file.lines_ = split_lines(text);
  if (auto r = file.reparse(); !r) {
    return std::unexpected(r.error());
  }
  return file;
}

Result<PasswdFile> PasswdFile::read(base::FileSystem& fs, const std::filesystem::path& path,
                                    MissingFile missing) {
  auto text = fs.read_file(path, base::kDefaultMaxReadBytes);
  if (!text) {
    if (text.error().code == MailError::kNotFound && missing == MissingFile::kEmpty) {
      return PasswdFile();
    }
    return std::unexpected(text.error());
  }
  auto file = parse(std::move(*text));
  if (!file) {
    return fail(file.error().code, path.string() + ": " + file.error().message);
  }
  return file;
}

Result<void> PasswdFile::reparse() {
  auto entries = parse_lines(lines_);
  if (!entries) {
    return std::unexpected(entries.error());
  }
  entries_ = std::move(*entries);
  return {};
}

const PasswdEntry* PasswdFile::find(std::string_view user) const {
  for (const PasswdEntry& entry : entries_) {
    if (entry.user == user) {
      return &entry;
    }
  }
  return nullptr;
}

Result<void> PasswdFile::add(const NewUser& user) {
  if (auto ok = check_user_name(user.name); !ok) {
    return ok;
  }
  if (has_colon_or_control(user.password)) {
    return fail(MailError::kBadInput, "password field contains ':' or a control character");
  }
  if (has_colon_or_control(user.home)) {
    return fail(MailError::kBadInput, "home contains ':' or a control character");
  }
  if (find(user.name) != nullptr) {
    return fail(MailError::kExists, "user " + user.name + " already exists");
  }
  if (!lines_.empty() && lines_.back().back() != '\n') {
    lines_.back() += '\n';
  }
  std::string line = user.name + ":" + user.password + ":";
  line += user.uid ? std::to_string(*user.uid) : "";
  line += ":";
  line += user.gid ? std::to_string(*user.gid) : "";
  line += "::" + user.home + "::\n";
  lines_.push_back(std::move(line));
  return reparse();
}

Result<void> PasswdFile::set_password(std::string_view user, std::string_view password) {
  if (has_colon_or_control(password)) {
    return fail(MailError::kBadInput, "password field contains ':' or a control character");
  }
  const PasswdEntry* entry = find(user);
  if (entry == nullptr) {
    return fail(MailError::kNotFound, "no user " + std::string(user));
  }
  std::string& line = lines_[entry->line - 1];
  std::size_t start = line.find(':') + 1;  // parsing guaranteed the ':'
  std::size_t end = content_of(line).size();
  std::size_t next = line.find(':', start);
  if (next != std::string::npos && next < end) {
    end = next;
  }
  line.replace(start, end - start, password);
  return reparse();
}

Result<void> PasswdFile::remove(std::string_view user) {
  const PasswdEntry* entry = find(user);
  if (entry == nullptr) {
    return fail(MailError::kNotFound, "no user " + std::string(user));
  }
  lines_.erase(lines_.begin() + static_cast<std::ptrdiff_t>(entry->line - 1));
  return reparse();
}

std::string PasswdFile::text() const {
  std::string out;
  for (const std::string& line : lines_) {
    out += line;
  }
  return out;
}

Result<void> PasswdFile::write(base::FileSystem& fs, const std::filesystem::path& path) const {
  return base::atomic_write(fs, path, text(), base::AtomicWriteOptions{.new_file_mode = 0600});
}

}  // namespace peregrine::auth
