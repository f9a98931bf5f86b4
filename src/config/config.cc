#include "config/config.h"

#include <sys/un.h>
#include <toml++/toml.h>

#include <algorithm>
#include <cstddef>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <thread>
#include <utility>

#include "base/ascii.h"
#include "base/files.h"

namespace peregrine::config {
namespace {

using base::fail;
using base::MailError;

struct Problem {
  std::uint32_t line = 0;  // 0: no place in the file (a missing key)
  std::string text;
};

const char* type_name(toml::node_type type) {
  switch (type) {
    case toml::node_type::table:
      return "a table";
    case toml::node_type::array:
      return "an array";
    case toml::node_type::string:
      return "a string";
    case toml::node_type::integer:
      return "an integer";
    case toml::node_type::floating_point:
      return "a floating-point number";
    case toml::node_type::boolean:
      return "a boolean";
    case toml::node_type::date:
      return "a date";
    case toml::node_type::time:
      return "a time";
    case toml::node_type::date_time:
      return "a date-time";
    case toml::node_type::none:
      break;
  }
  return "nothing";
}

std::uint32_t line_of(const toml::node& node) {
  return static_cast<std::uint32_t>(node.source().begin.line);
}

// A key as TOML would write it: bare when it can be, quoted otherwise.
std::string key_text(std::string_view key) {
  bool bare = !key.empty();
  for (char c : key) {
    if (!base::is_alpha(c) && !base::is_digit(c) && c != '_' && c != '-') {
      bare = false;
    }
  }
  if (bare) {
    return std::string(key);
  }
  std::string out = "\"";
  for (char c : key) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) {
      static constexpr char kHex[] = "0123456789abcdef";
      out += "\\u00";
      out += kHex[(c >> 4) & 0xf];
      out += kHex[c & 0xf];
    } else {
      out += c;
    }
  }
  out += '"';
  return out;
}

class Loader;

// Reads the keys of one table. Every key looked up is remembered, so that
// finish() can report the ones nobody asked for as unknown.
class TableReader {
 public:
  // `wrong_type`: the section exists but is not a table (already reported),
  // so its required keys are not reported missing as well.
  TableReader(Loader& loader, std::string name, const toml::table* table, bool wrong_type)
      : loader_(loader), name_(std::move(name)), table_(table), wrong_type_(wrong_type) {}

  bool present() const { return table_ != nullptr; }

  std::optional<std::string> string(std::string_view key);
  // An integer in [min, max].
  std::optional<std::int64_t> integer(std::string_view key, std::int64_t min, std::int64_t max);
  std::optional<bool> boolean(std::string_view key);
  // A non-empty path, resolved against the config directory.
  std::optional<std::filesystem::path> path(std::string_view key);
  // One of `choices`; returns its index.
  std::optional<std::size_t> choice(std::string_view key,
                                    std::initializer_list<std::string_view> choices);
  // An array of "host:port" strings; each one is also recorded so that the
  // same address in two places is reported.
  std::vector<Endpoint> endpoints(std::string_view key);

  void require(std::string_view key);
  void finish();

  std::string full(std::string_view key) const { return name_ + "." + key_text(key); }

 private:
  const toml::node* get(std::string_view key);

  Loader& loader_;
  std::string name_;
  const toml::table* table_;
  bool wrong_type_;
  std::set<std::string, std::less<>> known_;
};

class Loader {
 public:
  explicit Loader(std::filesystem::path base_dir) : base_dir_(std::move(base_dir)) {}

  void problem(std::uint32_t line, std::string text) {
    problems_.push_back(Problem{line, std::move(text)});
  }
  void problem(const toml::node& node, std::string text) {
    problem(line_of(node), std::move(text));
  }

  std::filesystem::path resolve(const std::filesystem::path& p) const {
    return p.is_absolute() ? p.lexically_normal() : (base_dir_ / p).lexically_normal();
  }

  // Remembers where each endpoint was configured; reports a second use.
  void use_endpoint(const Endpoint& endpoint, const std::string& where, std::uint32_t line) {
    std::string key = endpoint.to_string();
    auto [it, inserted] = endpoints_.emplace(key, where);
    if (!inserted) {
      problem(line, where + ": " + key + " is also in " + it->second);
    }
  }

  Settings load(const toml::table& root);
  std::vector<Problem>& problems() { return problems_; }

 private:
  TableReader section(const toml::table& root, std::string_view name);
  // One per section; each reads its table and reports its problems.
  void load_server(const toml::table& root, ServerSettings& server);
  void load_listeners(const toml::table& root, Settings& s);
  void load_tls(const toml::table& root, Settings& s);
  void load_auth(const toml::table& root, AuthSettings& auth);
  void load_limits(const toml::table& root, LimitSettings& limits);
  void load_log(const toml::table& root, LogSettings& log);
  void load_search(const toml::table& root, SearchSettings& search);

  std::filesystem::path base_dir_;
  std::vector<Problem> problems_;
  std::map<std::string, std::string> endpoints_;
  std::set<std::string, std::less<>> sections_;
};

const toml::node* TableReader::get(std::string_view key) {
  known_.emplace(key);
  if (table_ == nullptr) {
    return nullptr;
  }
  return table_->get(key);
}

void TableReader::require(std::string_view key) {
  if (get(key) == nullptr && !wrong_type_) {
    loader_.problem(0, full(key) + ": required");
  }
}

std::optional<std::string> TableReader::string(std::string_view key) {
  const toml::node* node = get(key);
  if (node == nullptr) {
    return std::nullopt;
  }
  if (!node->is_string()) {
    loader_.problem(*node, full(key) + ": expected a string, got " + type_name(node->type()));
    return std::nullopt;
  }
  return node->as_string()->get();
}

std::optional<std::int64_t> TableReader::integer(std::string_view key, std::int64_t min,
                                                 std::int64_t max) {
  const toml::node* node = get(key);
  if (node == nullptr) {
    return std::nullopt;
  }
  if (!node->is_integer()) {
    loader_.problem(*node, full(key) + ": expected an integer, got " + type_name(node->type()));
    return std::nullopt;
  }
  std::int64_t value = node->as_integer()->get();
  if (value < min || value > max) {
    loader_.problem(*node, full(key) + ": " + std::to_string(value) + " out of range (" +
                               std::to_string(min) + "-" + std::to_string(max) + ")");
    return std::nullopt;
  }
  return value;
}

std::optional<bool> TableReader::boolean(std::string_view key) {
  const toml::node* node = get(key);
  if (node == nullptr) {
    return std::nullopt;
  }
  if (!node->is_boolean()) {
    loader_.problem(*node, full(key) + ": expected a boolean, got " + type_name(node->type()));
    return std::nullopt;
  }
  return node->as_boolean()->get();
}

std::optional<std::filesystem::path> TableReader::path(std::string_view key) {
  std::optional<std::string> text = string(key);
  if (!text) {
    return std::nullopt;
  }
  const toml::node& node = *table_->get(key);
  if (text->empty()) {
    loader_.problem(node, full(key) + ": must not be empty");
    return std::nullopt;
  }
  if (text->find('\0') != std::string::npos) {
    loader_.problem(node, full(key) + ": must not contain NUL");
    return std::nullopt;
  }
  return loader_.resolve(*text);
}

std::optional<std::size_t> TableReader::choice(std::string_view key,
                                               std::initializer_list<std::string_view> choices) {
  std::optional<std::string> text = string(key);
  if (!text) {
    return std::nullopt;
  }
  std::size_t index = 0;
  for (std::string_view c : choices) {
    if (*text == c) {
      return index;
    }
    ++index;
  }
  std::string expected;
  index = 0;
  for (std::string_view c : choices) {
    if (index > 0) {
      expected += index + 1 == choices.size() ? " or " : ", ";
    }
    // Appended piece by piece: GCC 12 at -O3 takes "..." + std::string(...)
    // for an overlapping copy (a false -Wrestrict).
    expected += '"';
    expected += c;
    expected += '"';
    ++index;
  }
  loader_.problem(*table_->get(key),
                  full(key) + ": expected " + expected + ", got \"" + *text + "\"");
  return std::nullopt;
}

std::vector<Endpoint> TableReader::endpoints(std::string_view key) {
  std::vector<Endpoint> out;
  const toml::node* node = get(key);
  if (node == nullptr) {
    return out;
  }
  const toml::array* array = node->as_array();
  if (array == nullptr) {
    loader_.problem(*node, full(key) + ": expected an array of \"host:port\" strings, got " +
                               type_name(node->type()));
    return out;
  }
  for (std::size_t i = 0; i < array->size(); ++i) {
    const toml::node& item = *array->get(i);
    std::string where = full(key) + "[" + std::to_string(i) + "]";
    if (!item.is_string()) {
      loader_.problem(item, where + ": expected a string, got " + type_name(item.type()));
      continue;
    }
    auto endpoint = parse_endpoint(item.as_string()->get());
    if (!endpoint) {
      loader_.problem(item, where + ": " + endpoint.error().message);
      continue;
    }
    loader_.use_endpoint(*endpoint, where, line_of(item));
    out.push_back(std::move(*endpoint));
  }
  return out;
}

void TableReader::finish() {
  if (table_ == nullptr) {
    return;
  }
  for (const auto& [key, node] : *table_) {
    if (known_.contains(key.str())) {
      continue;
    }
    std::uint32_t line = static_cast<std::uint32_t>(key.source().begin.line);
    loader_.problem(
        line, std::string(node.is_table() ? "unknown table " : "unknown key ") + full(key.str()));
  }
}

TableReader Loader::section(const toml::table& root, std::string_view name) {
  sections_.emplace(name);
  const toml::node* node = root.get(name);
  if (node != nullptr && !node->is_table()) {
    problem(*node, std::string(name) + ": expected a table, got " + type_name(node->type()));
    return TableReader(*this, std::string(name), nullptr, true);
  }
  return TableReader(*this, std::string(name), node == nullptr ? nullptr : node->as_table(), false);
}

void Loader::load_server(const toml::table& root, ServerSettings& out) {
  TableReader server = section(root, "server");
  server.require("data_dir");
  if (auto p = server.path("data_dir")) {
    out.data_dir = *p;
  }
  unsigned hardware = std::thread::hardware_concurrency();
  out.workers = hardware == 0 ? 1 : hardware;
  if (auto n = server.integer("workers", 1, 1024)) {
    out.workers = static_cast<unsigned>(*n);
  }
  if (auto b = server.boolean("huge_pages")) {
    out.huge_pages = *b;
  }
  server.finish();
}

void Loader::load_listeners(const toml::table& root, Settings& s) {
  TableReader imap = section(root, "imap");
  s.imap.listen = imap.endpoints("listen");
  s.imap.tls_listen = imap.endpoints("tls_listen");
  imap.finish();

  TableReader pop3 = section(root, "pop3");
  s.pop3.listen = pop3.endpoints("listen");
  s.pop3.tls_listen = pop3.endpoints("tls_listen");
  pop3.finish();

  TableReader lmtp = section(root, "lmtp");
  s.lmtp.listen = lmtp.endpoints("listen");
  if (auto p = lmtp.path("unix_socket")) {
    // sun_path holds the path and its terminating NUL.
    if (p->native().size() >= sizeof(sockaddr_un{}.sun_path)) {
      problem(*root["lmtp"]["unix_socket"].node(),
              "lmtp.unix_socket: " + p->string() + " is longer than " +
                  std::to_string(sizeof(sockaddr_un{}.sun_path) - 1) + " bytes");
    } else {
      s.lmtp.unix_socket = *p;
    }
  }
  if (auto n = lmtp.integer("max_message_bytes", 1024, std::numeric_limits<std::uint32_t>::max())) {
    s.lmtp.max_message_bytes = static_cast<std::uint64_t>(*n);
  }
  lmtp.finish();
}

// [tls] needs both files or neither; implicit-TLS listeners need [tls].
void Loader::load_tls(const toml::table& root, Settings& s) {
  TableReader tls = section(root, "tls");
  std::optional<std::filesystem::path> cert = tls.path("cert");
  std::optional<std::filesystem::path> key = tls.path("key");
  bool has_cert = root["tls"]["cert"].node() != nullptr;
  bool has_key = root["tls"]["key"].node() != nullptr;
  if (has_cert && !has_key) {
    problem(*root["tls"]["cert"].node(), "tls.key: required when tls.cert is set");
  } else if (has_key && !has_cert) {
    problem(*root["tls"]["key"].node(), "tls.cert: required when tls.key is set");
  }
  for (auto [name, value] : {std::pair{"cert", &cert}, std::pair{"key", &key}}) {
    if (*value && has_cert && has_key) {
      if (auto readable = base::check_readable_file(**value); !readable) {
        problem(*root["tls"][name].node(),
                std::string("tls.") + name + ": " + readable.error().message);
        value->reset();
      }
    }
  }
  if (cert && key) {
    s.tls.cert = *cert;
    s.tls.key = *key;
  }
  tls.finish();
  if (!has_cert && !has_key) {
    for (auto [table, list] :
         {std::pair{"imap", &s.imap.tls_listen}, std::pair{"pop3", &s.pop3.tls_listen}}) {
      if (!list->empty()) {
        problem(*root[table]["tls_listen"].node(),
                std::string(table) + ".tls_listen: needs [tls] with cert and key");
      }
    }
  }
}

void Loader::load_auth(const toml::table& root, AuthSettings& out) {
  TableReader auth = section(root, "auth");
  auth.require("passwd_file");
  if (auto p = auth.path("passwd_file")) {
    out.passwd_file = *p;
  }
  if (auto c = auth.choice("plaintext", {"always", "loopback", "tls-only"})) {
    static constexpr PlaintextAuth kModes[] = {PlaintextAuth::kAlways, PlaintextAuth::kLoopback,
                                               PlaintextAuth::kTlsOnly};
    out.plaintext = kModes[*c];
  }
  constexpr std::int64_t kMaxDelayMs = 60'000;
  if (auto ms = auth.integer("failure_delay_base_ms", 0, kMaxDelayMs)) {
    out.failure_delay_base = std::chrono::milliseconds(*ms);
  }
  if (auto ms = auth.integer("failure_delay_max_ms", 0, kMaxDelayMs)) {
    out.failure_delay_max = std::chrono::milliseconds(*ms);
  }
  if (out.failure_delay_max < out.failure_delay_base) {
    const toml::node* at = root["auth"]["failure_delay_max_ms"].node();
    if (at == nullptr) {
      at = root["auth"]["failure_delay_base_ms"].node();
    }
    problem(at == nullptr ? 0 : line_of(*at),
            "auth.failure_delay_max_ms: " + std::to_string(out.failure_delay_max.count()) +
                " is less than auth.failure_delay_base_ms (" +
                std::to_string(out.failure_delay_base.count()) + ")");
  }
  auth.finish();
}

void Loader::load_limits(const toml::table& root, LimitSettings& out) {
  TableReader limits = section(root, "limits");
  if (auto n = limits.integer("max_line_bytes", 8192, 16 * 1024 * 1024)) {
    out.max_line_bytes = static_cast<std::uint64_t>(*n);
  }
  // IMAP literal sizes are 32-bit numbers (RFC 3501 "number").
  if (auto n =
          limits.integer("max_literal_bytes", 1024, std::numeric_limits<std::uint32_t>::max())) {
    out.max_literal_bytes = static_cast<std::uint64_t>(*n);
  }
  if (auto n = limits.integer("quota_bytes", 0, std::numeric_limits<std::int64_t>::max())) {
    out.quota_bytes = static_cast<std::uint64_t>(*n);
  }
  if (auto n = limits.integer("max_connections_per_ip", 1, 1'000'000)) {
    out.max_connections_per_ip = static_cast<std::uint32_t>(*n);
  }
  constexpr std::int64_t kDay = 24 * 60 * 60;
  // RFC 3501 5.4: an autologout timer for authenticated sessions MUST be at
  // least 30 minutes; before authentication it may be shorter.
  if (auto n = limits.integer("autologout_seconds", 1800, kDay)) {
    out.autologout = std::chrono::seconds(*n);
  }
  if (auto n = limits.integer("autologout_unauthenticated_seconds", 10, 1800)) {
    out.autologout_unauthenticated = std::chrono::seconds(*n);
  }
  // RFC 2177: clients re-issue IDLE at least every 29 minutes.
  if (auto n = limits.integer("idle_timeout_seconds", 1800, kDay)) {
    out.idle_timeout = std::chrono::seconds(*n);
  }
  limits.finish();
}

void Loader::load_log(const toml::table& root, LogSettings& out) {
  TableReader log = section(root, "log");
  if (auto c = log.choice("level", {"error", "warn", "info", "debug"})) {
    static constexpr LogLevel kLevels[] = {LogLevel::kError, LogLevel::kWarn, LogLevel::kInfo,
                                           LogLevel::kDebug};
    out.level = kLevels[*c];
  }
  log.finish();
}

void Loader::load_search(const toml::table& root, SearchSettings& out) {
  TableReader search = section(root, "search");
  if (auto b = search.boolean("fts")) {
    out.fts = *b;
  }
  search.finish();
}

Settings Loader::load(const toml::table& root) {
  Settings s;
  s.config_dir = base_dir_;
  load_server(root, s.server);
  load_listeners(root, s);
  load_tls(root, s);
  load_auth(root, s.auth);
  load_limits(root, s.limits);
  load_log(root, s.log);
  load_search(root, s.search);

  for (const auto& [key, node] : root) {
    if (sections_.contains(key.str())) {
      continue;
    }
    std::uint32_t line = static_cast<std::uint32_t>(key.source().begin.line);
    problem(line,
            std::string(node.is_table() ? "unknown table " : "unknown key ") + key_text(key.str()));
  }

  if (s.imap.listen.empty() && s.imap.tls_listen.empty() && s.pop3.listen.empty() &&
      s.pop3.tls_listen.empty() && s.lmtp.listen.empty() && s.lmtp.unix_socket.empty() &&
      problems_.empty()) {
    problem(0, "no listeners: set imap.listen or imap.tls_listen");
  }
  return s;
}

base::Result<Settings> load(std::string_view toml_text, const std::filesystem::path& base_dir,
                            std::string_view source_name) {
  toml::table root;
  try {
    root = toml::parse(toml_text);
  } catch (const toml::parse_error& e) {
    const auto& begin = e.source().begin;
    return fail(MailError::kBadInput, std::string(source_name) + ":" + std::to_string(begin.line) +
                                          ":" + std::to_string(begin.column) + ": " +
                                          std::string(e.description()));
  }
  Loader loader(base_dir);
  Settings settings = loader.load(root);
  std::vector<Problem>& problems = loader.problems();
  if (problems.empty()) {
    return settings;
  }
  std::stable_sort(problems.begin(), problems.end(),
                   [](const Problem& a, const Problem& b) { return a.line < b.line; });
  std::string message;
  for (const Problem& p : problems) {
    if (!message.empty()) {
      message += '\n';
    }
    message += source_name;
    if (p.line > 0) {
      message += ':';  // not ":" + ...: GCC 12's false -Wrestrict at -O3, as above
      message += std::to_string(p.line);
    }
    message += ": " + p.text;
  }
  return fail(MailError::kBadInput, std::move(message));
}

}  // namespace

base::Result<Settings> load_config(const std::filesystem::path& path) {
  auto text = base::read_file(path, 1024 * 1024);
  if (!text) {
    return std::unexpected(text.error());
  }
  std::filesystem::path absolute = std::filesystem::absolute(path);
  return load(*text, absolute.parent_path(), path.string());
}

base::Result<Settings> load_config_string(std::string_view toml,
                                          const std::filesystem::path& base_dir,
                                          std::string_view source_name) {
  return load(toml, base_dir, source_name);
}

const char* to_string(PlaintextAuth mode) {
  switch (mode) {
    case PlaintextAuth::kAlways:
      return "always";
    case PlaintextAuth::kLoopback:
      return "loopback";
    case PlaintextAuth::kTlsOnly:
      return "tls-only";
  }
  return "unknown";
}

}  // namespace peregrine::config
