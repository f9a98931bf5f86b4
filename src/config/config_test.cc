#include "config/config.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>

#include "test_support/temp_dir.h"

namespace peregrine::config {
namespace {

namespace fs = std::filesystem;
using test_support::TempDir;
using namespace std::chrono_literals;

// The smallest valid file; tests append sections to it.
constexpr const char* kMinimal = R"([server]
data_dir = "data"
[imap]
listen = ["127.0.0.1:1143"]
[auth]
passwd_file = "users"
)";

class ConfigTest : public ::testing::Test {
 protected:
  base::Result<Settings> load(const std::string& text) {
    return load_config_string(text, dir_.path());
  }
  // The error text of a config that must fail.
  std::string error(const std::string& text) {
    auto r = load(text);
    if (r) {
      return "(loaded)";
    }
    EXPECT_EQ(r.error().code, base::MailError::kBadInput);
    return r.error().message;
  }
  TempDir dir_;
};

TEST_F(ConfigTest, MinimalConfigGetsDefaults) {
  auto r = load(kMinimal);
  ASSERT_TRUE(r) << r.error().message;
  const Settings& s = *r;
  EXPECT_EQ(s.config_dir, dir_.path());
  EXPECT_EQ(s.server.data_dir, dir_.path() / "data");
  unsigned hardware = std::thread::hardware_concurrency();
  EXPECT_EQ(s.server.workers, hardware == 0 ? 1u : hardware);
  EXPECT_TRUE(s.server.huge_pages);
  ASSERT_EQ(s.imap.listen.size(), 1u);
  EXPECT_EQ(s.imap.listen[0].to_string(), "127.0.0.1:1143");
  EXPECT_TRUE(s.imap.tls_listen.empty());
  EXPECT_TRUE(s.pop3.listen.empty());
  EXPECT_TRUE(s.pop3.tls_listen.empty());
  EXPECT_TRUE(s.lmtp.listen.empty());
  EXPECT_TRUE(s.lmtp.unix_socket.empty());
  EXPECT_FALSE(s.tls.enabled());
  EXPECT_EQ(s.auth.passwd_file, dir_.path() / "users");
  EXPECT_EQ(s.auth.plaintext, PlaintextAuth::kLoopback);
  EXPECT_EQ(s.auth.failure_delay_base, 2000ms);
  EXPECT_EQ(s.auth.failure_delay_max, 15000ms);
  EXPECT_EQ(s.limits.max_line_bytes, 65536u);
  EXPECT_EQ(s.limits.max_literal_bytes, 64u * 1024 * 1024);
  EXPECT_EQ(s.limits.max_connections_per_ip, 50u);
  EXPECT_EQ(s.limits.autologout, 1800s);
  EXPECT_EQ(s.limits.autologout_unauthenticated, 180s);
  EXPECT_EQ(s.limits.idle_timeout, 1800s);
  EXPECT_EQ(s.log.level, LogLevel::kInfo);
}

TEST_F(ConfigTest, EveryKeySet) {
  dir_.write("cert.pem", "-----BEGIN CERTIFICATE-----\n");
  dir_.write("key.pem", "-----BEGIN PRIVATE KEY-----\n");
  auto r = load(R"(
[server]
data_dir = "/srv/mail"
workers = 3
huge_pages = false
[imap]
listen = ["127.0.0.1:143", "[::1]:143"]
tls_listen = ["0.0.0.0:993"]
[pop3]
listen = ["127.0.0.1:110"]
tls_listen = ["[::]:995"]
[lmtp]
listen = ["localhost:24"]
unix_socket = "run/lmtp.sock"
[tls]
cert = "cert.pem"
key = "./key.pem"
[auth]
passwd_file = "../etc/users"
plaintext = "tls-only"
failure_delay_base_ms = 500
failure_delay_max_ms = 8000
[limits]
max_line_bytes = 8192
max_literal_bytes = 1048576
max_connections_per_ip = 7
autologout_seconds = 3600
autologout_unauthenticated_seconds = 30
idle_timeout_seconds = 2000
[log]
level = "debug"
)");
  ASSERT_TRUE(r) << r.error().message;
  const Settings& s = *r;
  EXPECT_EQ(s.server.data_dir, "/srv/mail");
  EXPECT_EQ(s.server.workers, 3u);
  EXPECT_FALSE(s.server.huge_pages);
  ASSERT_EQ(s.imap.listen.size(), 2u);
  EXPECT_EQ(s.imap.listen[1].host, "::1");
  EXPECT_EQ(s.imap.listen[1].port, 143);
  EXPECT_EQ(s.imap.listen[1].kind, Endpoint::Kind::kIpv6);
  ASSERT_EQ(s.imap.tls_listen.size(), 1u);
  EXPECT_EQ(s.imap.tls_listen[0].to_string(), "0.0.0.0:993");
  ASSERT_EQ(s.pop3.listen.size(), 1u);
  EXPECT_EQ(s.pop3.listen[0].port, 110);
  ASSERT_EQ(s.pop3.tls_listen.size(), 1u);
  EXPECT_EQ(s.pop3.tls_listen[0].to_string(), "[::]:995");
  ASSERT_EQ(s.lmtp.listen.size(), 1u);
  EXPECT_EQ(s.lmtp.listen[0].host, "localhost");
  EXPECT_EQ(s.lmtp.unix_socket, dir_.path() / "run/lmtp.sock");
  EXPECT_TRUE(s.tls.enabled());
  EXPECT_EQ(s.tls.cert, dir_.path() / "cert.pem");
  EXPECT_EQ(s.tls.key, dir_.path() / "key.pem");
  EXPECT_EQ(s.auth.passwd_file, dir_.path().parent_path() / "etc/users");
  EXPECT_EQ(s.auth.plaintext, PlaintextAuth::kTlsOnly);
  EXPECT_EQ(s.auth.failure_delay_base, 500ms);
  EXPECT_EQ(s.auth.failure_delay_max, 8000ms);
  EXPECT_EQ(s.limits.max_line_bytes, 8192u);
  EXPECT_EQ(s.limits.max_literal_bytes, 1048576u);
  EXPECT_EQ(s.limits.max_connections_per_ip, 7u);
  EXPECT_EQ(s.limits.autologout, 3600s);
  EXPECT_EQ(s.limits.autologout_unauthenticated, 30s);
  EXPECT_EQ(s.limits.idle_timeout, 2000s);
  EXPECT_EQ(s.log.level, LogLevel::kDebug);
}

TEST_F(ConfigTest, EnumValues) {
  struct Case {
    const char* text;
    PlaintextAuth mode;
  };
  for (const Case& c :
       {Case{"always", PlaintextAuth::kAlways}, Case{"loopback", PlaintextAuth::kLoopback},
        Case{"tls-only", PlaintextAuth::kTlsOnly}}) {
    auto r = load(std::string(kMinimal) + "plaintext = \"" + c.text + "\"\n");
    ASSERT_TRUE(r) << r.error().message;
    EXPECT_EQ(r->auth.plaintext, c.mode);
    EXPECT_STREQ(to_string(c.mode), c.text);
  }
  struct LevelCase {
    const char* text;
    LogLevel level;
  };
  for (const LevelCase& c :
       {LevelCase{"error", LogLevel::kError}, LevelCase{"warn", LogLevel::kWarn},
        LevelCase{"info", LogLevel::kInfo}, LevelCase{"debug", LogLevel::kDebug}}) {
    auto r = load(std::string(kMinimal) + "[log]\nlevel = \"" + c.text + "\"\n");
    ASSERT_TRUE(r) << r.error().message;
    EXPECT_EQ(r->log.level, c.level);
    EXPECT_STREQ(to_string(c.level), c.text);
  }
}

// The limits of every bounded integer key are inclusive.
TEST_F(ConfigTest, IntegerBoundsAreAccepted) {
  struct Case {
    const char* table;
    const char* key;
    std::int64_t min;
    std::int64_t max;
  };
  const Case cases[] = {
      {"server", "workers", 1, 1024},
      {"limits", "max_line_bytes", 8192, 16777216},
      {"limits", "max_literal_bytes", 1024, 4294967295},
      {"limits", "max_connections_per_ip", 1, 1000000},
      {"limits", "autologout_seconds", 1800, 86400},
      {"limits", "autologout_unauthenticated_seconds", 10, 1800},
      {"limits", "idle_timeout_seconds", 1800, 86400},
      {"auth", "failure_delay_base_ms", 0, 2000},  // at most the max delay
      {"auth", "failure_delay_max_ms", 2000, 60000},
  };
  for (const Case& c : cases) {
    for (std::int64_t value : {c.min, c.max}) {
      std::string text = R"([server]
data_dir = "data"
[imap]
listen = ["127.0.0.1:1143"]
[auth]
passwd_file = "users"
)";
      std::string line = std::string(c.key) + " = " + std::to_string(value) + "\n";
      std::string table = std::string("[") + c.table + "]\n";
      std::size_t at = text.find(table);
      if (at == std::string::npos) {
        text += table + line;
      } else {
        text.insert(at + table.size(), line);
      }
      auto r = load(text);
      EXPECT_TRUE(r) << c.table << "." << c.key << " = " << value << ": " << r.error().message;
    }
  }
}

struct ErrorCase {
  const char* name;
  std::string toml;
  std::string message;
};

void PrintTo(const ErrorCase& c, std::ostream* os) { *os << c.name; }

class ConfigErrors : public ConfigTest, public ::testing::WithParamInterface<ErrorCase> {};

TEST_P(ConfigErrors, NamesTheKey) { EXPECT_EQ(error(GetParam().toml), GetParam().message); }

// kMinimal spans lines 1-6; a line appended to it is line 7.
std::string with(const std::string& extra) { return std::string(kMinimal) + extra; }

INSTANTIATE_TEST_SUITE_P(
    Config, ConfigErrors,
    ::testing::Values(
        // Unknown keys and tables, anywhere.
        ErrorCase{"UnknownServerKey",
                  "[server]\ndata_dri = \"x\"\ndata_dir = \"d\"\n"
                  "[imap]\nlisten = [\"127.0.0.1:1\"]\n"
                  "[auth]\npasswd_file = \"u\"\n",
                  "config:2: unknown key server.data_dri"},
        ErrorCase{"UnknownTopTable", with("[smtp]\nlisten = []\n"), "config:7: unknown table smtp"},
        ErrorCase{"UnknownTopKey", "debug = true\n" + std::string(kMinimal),
                  "config:1: unknown key debug"},
        ErrorCase{"UnknownSubTable", with("[imap.extra]\nx = 1\n"),
                  "config:7: unknown table imap.extra"},
        ErrorCase{"UnknownQuotedKey", with("\"a b\" = 1\n"), "config:7: unknown key auth.\"a b\""},
        ErrorCase{"UnknownLimitsKey", with("[limits]\nmax_lines = 5\n"),
                  "config:8: unknown key limits.max_lines"},
        ErrorCase{"UnknownLogKey", with("[log]\nformat = \"json\"\n"),
                  "config:8: unknown key log.format"},
        ErrorCase{"UnknownTlsKey", with("[tls]\nciphers = \"x\"\n"),
                  "config:8: unknown key tls.ciphers"},
        ErrorCase{"UnknownLmtpKey", with("[lmtp]\nsocket = \"x\"\n"),
                  "config:8: unknown key lmtp.socket"},
        ErrorCase{"UnknownPop3Key", with("[pop3]\nport = 110\n"),
                  "config:8: unknown key pop3.port"},
        ErrorCase{"DottedKeyUnknown", with("server.data_dri = \"x\"\n"),
                  "config:7: unknown table auth.server"},
        // Missing required keys.
        ErrorCase{"MissingDataDir",
                  "[imap]\nlisten = [\"127.0.0.1:1\"]\n[auth]\npasswd_file = \"u\"\n",
                  "config: server.data_dir: required"},
        ErrorCase{"MissingPasswdFile",
                  "[server]\ndata_dir = \"d\"\n[imap]\nlisten = [\"127.0.0.1:1\"]\n",
                  "config: auth.passwd_file: required"},
        ErrorCase{"NoListeners", "[server]\ndata_dir = \"d\"\n[auth]\npasswd_file = \"u\"\n",
                  "config: no listeners: set imap.listen or imap.tls_listen"},
        ErrorCase{"EmptyFile", "",
                  "config: server.data_dir: required\nconfig: auth.passwd_file: required"},
        // Wrong types.
        ErrorCase{"SectionNotTable",
                  "server = 5\n[imap]\nlisten = [\"127.0.0.1:1\"]\n"
                  "[auth]\npasswd_file = \"u\"\n",
                  "config:1: server: expected a table, got an integer"},
        ErrorCase{"SectionArrayOfTables",
                  "[[server]]\ndata_dir = \"d\"\n[imap]\nlisten = [\"127.0.0.1:1\"]\n"
                  "[auth]\npasswd_file = \"u\"\n",
                  "config:1: server: expected a table, got an array"},
        ErrorCase{"DataDirNotString",
                  "[server]\ndata_dir = 5\n[imap]\nlisten = [\"127.0.0.1:1\"]\n"
                  "[auth]\npasswd_file = \"u\"\n",
                  "config:2: server.data_dir: expected a string, got an integer"},
        ErrorCase{"WorkersString",
                  "[server]\ndata_dir = \"d\"\nworkers = \"4\"\n"
                  "[imap]\nlisten = [\"127.0.0.1:1\"]\n[auth]\npasswd_file = \"u\"\n",
                  "config:3: server.workers: expected an integer, got a string"},
        ErrorCase{"WorkersFloat",
                  "[server]\ndata_dir = \"d\"\nworkers = 4.0\n"
                  "[imap]\nlisten = [\"127.0.0.1:1\"]\n[auth]\npasswd_file = \"u\"\n",
                  "config:3: server.workers: expected an integer, got a floating-point number"},
        ErrorCase{"ListenString",
                  "[server]\ndata_dir = \"d\"\n[imap]\nlisten = \"127.0.0.1:1\"\n"
                  "[auth]\npasswd_file = \"u\"\n",
                  "config:4: imap.listen: expected an array of \"host:port\" strings, got a "
                  "string"},
        ErrorCase{"ListenItemInteger",
                  "[server]\ndata_dir = \"d\"\n[imap]\n"
                  "listen = [\"127.0.0.1:1\", 143]\n"
                  "[auth]\npasswd_file = \"u\"\n",
                  "config:4: imap.listen[1]: expected a string, got an integer"},
        ErrorCase{"PlaintextBool", with("plaintext = true\n"),
                  "config:7: auth.plaintext: expected a string, got a boolean"},
        ErrorCase{"LevelDate", with("[log]\nlevel = 2024-01-01\n"),
                  "config:8: log.level: expected a string, got a date"},
        ErrorCase{"LimitTable", with("[limits]\nmax_line_bytes = { a = 1 }\n"),
                  "config:8: limits.max_line_bytes: expected an integer, got a table"},
        ErrorCase{"DelayArray", with("failure_delay_base_ms = [1]\n"),
                  "config:7: auth.failure_delay_base_ms: expected an integer, got an array"},
        // Bad values.
        ErrorCase{"PortOutOfRange",
                  "[server]\ndata_dir = \"d\"\n[imap]\n"
                  "listen = [\"127.0.0.1:1143\", \"127.0.0.1:99999\"]\n"
                  "[auth]\npasswd_file = \"u\"\n",
                  "config:4: imap.listen[1]: port 99999 out of range"},
        ErrorCase{"Ipv6WithoutBrackets", with("[pop3]\nlisten = [\"::1:110\"]\n"),
                  "config:8: pop3.listen[0]: IPv6 address needs brackets: [::1]:110"},
        ErrorCase{"BadLmtpHost", with("[lmtp]\nlisten = [\"a..b:24\"]\n"),
                  "config:8: lmtp.listen[0]: bad host name 'a..b'"},
        ErrorCase{"DuplicateEndpoint", with("[pop3]\nlisten = [\"127.0.0.1:1143\"]\n"),
                  "config:8: pop3.listen[0]: 127.0.0.1:1143 is also in imap.listen[0]"},
        ErrorCase{"DuplicateEndpointSameList",
                  "[server]\ndata_dir = \"d\"\n[imap]\n"
                  "listen = [\"[::1]:143\", \"[0:0::1]:143\"]\n[auth]\npasswd_file = \"u\"\n",
                  "config:4: imap.listen[1]: [::1]:143 is also in imap.listen[0]"},
        ErrorCase{"EmptyDataDir",
                  "[server]\ndata_dir = \"\"\n[imap]\nlisten = [\"127.0.0.1:1\"]\n"
                  "[auth]\npasswd_file = \"u\"\n",
                  "config:2: server.data_dir: must not be empty"},
        ErrorCase{"NulInPath", with("[lmtp]\nunix_socket = \"a\\u0000b\"\n"),
                  "config:8: lmtp.unix_socket: must not contain NUL"},
        ErrorCase{"WorkersZero",
                  "[server]\ndata_dir = \"d\"\nworkers = 0\n"
                  "[imap]\nlisten = [\"127.0.0.1:1\"]\n[auth]\npasswd_file = \"u\"\n",
                  "config:3: server.workers: 0 out of range (1-1024)"},
        ErrorCase{"WorkersHuge",
                  "[server]\ndata_dir = \"d\"\nworkers = 100000\n"
                  "[imap]\nlisten = [\"127.0.0.1:1\"]\n[auth]\npasswd_file = \"u\"\n",
                  "config:3: server.workers: 100000 out of range (1-1024)"},
        ErrorCase{"Plaintext", with("plaintext = \"sometimes\"\n"),
                  "config:7: auth.plaintext: expected \"always\", \"loopback\" or \"tls-only\", "
                  "got \"sometimes\""},
        ErrorCase{"PlaintextCase", with("plaintext = \"Always\"\n"),
                  "config:7: auth.plaintext: expected \"always\", \"loopback\" or \"tls-only\", "
                  "got \"Always\""},
        ErrorCase{"LogLevel", with("[log]\nlevel = \"trace\"\n"),
                  "config:8: log.level: expected \"error\", \"warn\", \"info\" or \"debug\", got "
                  "\"trace\""},
        ErrorCase{"NegativeDelay", with("failure_delay_base_ms = -1\n"),
                  "config:7: auth.failure_delay_base_ms: -1 out of range (0-60000)"},
        ErrorCase{"DelayMaxTooBig", with("failure_delay_max_ms = 60001\n"),
                  "config:7: auth.failure_delay_max_ms: 60001 out of range (0-60000)"},
        ErrorCase{"DelayMaxBelowBase",
                  with("failure_delay_base_ms = 5000\n"
                       "failure_delay_max_ms = 1000\n"),
                  "config:8: auth.failure_delay_max_ms: 1000 is less than "
                  "auth.failure_delay_base_ms (5000)"},
        ErrorCase{"DelayBaseAboveDefaultMax", with("failure_delay_base_ms = 20000\n"),
                  "config:7: auth.failure_delay_max_ms: 15000 is less than "
                  "auth.failure_delay_base_ms (20000)"},
        ErrorCase{"LineTooShort", with("[limits]\nmax_line_bytes = 1000\n"),
                  "config:8: limits.max_line_bytes: 1000 out of range (8192-16777216)"},
        ErrorCase{"LiteralTooBig", with("[limits]\nmax_literal_bytes = 4294967296\n"),
                  "config:8: limits.max_literal_bytes: 4294967296 out of range (1024-4294967295)"},
        ErrorCase{"ConnectionsZero", with("[limits]\nmax_connections_per_ip = 0\n"),
                  "config:8: limits.max_connections_per_ip: 0 out of range (1-1000000)"},
        ErrorCase{"AutologoutBelowRfc", with("[limits]\nautologout_seconds = 600\n"),
                  "config:8: limits.autologout_seconds: 600 out of range (1800-86400)"},
        ErrorCase{"PreauthAutologout", with("[limits]\nautologout_unauthenticated_seconds = 5\n"),
                  "config:8: limits.autologout_unauthenticated_seconds: 5 out of range (10-1800)"},
        ErrorCase{"IdleTimeout", with("[limits]\nidle_timeout_seconds = 60\n"),
                  "config:8: limits.idle_timeout_seconds: 60 out of range (1800-86400)"},
        // TLS: both or neither, files must be readable, implicit TLS needs it.
        ErrorCase{"TlsListenWithoutTls",
                  "[server]\ndata_dir = \"d\"\n[imap]\n"
                  "tls_listen = [\"127.0.0.1:993\"]\n"
                  "[auth]\npasswd_file = \"u\"\n",
                  "config:4: imap.tls_listen: needs [tls] with cert and key"},
        ErrorCase{"Pop3TlsListenWithoutTls", with("[pop3]\ntls_listen = [\"127.0.0.1:995\"]\n"),
                  "config:8: pop3.tls_listen: needs [tls] with cert and key"},
        ErrorCase{"CertWithoutKey", with("[tls]\ncert = \"cert.pem\"\n"),
                  "config:8: tls.key: required when tls.cert is set"},
        ErrorCase{"KeyWithoutCert", with("[tls]\nkey = \"key.pem\"\n"),
                  "config:8: tls.cert: required when tls.key is set"}),
    [](const auto& info) { return std::string(info.param.name); });

// Parse errors come from toml++, whose wording is its own: check the place.
TEST_F(ConfigTest, TomlSyntaxErrorsGiveLineAndColumn) {
  std::string e = error("[server\ndata_dir = \"d\"\n");
  EXPECT_EQ(e.rfind("config:1:", 0), 0u) << e;
  e = error(with("passwd_file = \"v\"\n"));
  EXPECT_EQ(e.rfind("config:7:", 0), 0u) << e;
}

TEST_F(ConfigTest, ReportsEveryProblemInLineOrder) {
  EXPECT_EQ(error(R"([server]
data_dir = "d"
workers = -2
colour = "blue"
[imap]
listen = ["127.0.0.1:1143", "localhost:0"]
[auth]
passwd_file = "u"
plaintext = "never"
)"),
            "config:3: server.workers: -2 out of range (1-1024)\n"
            "config:4: unknown key server.colour\n"
            "config:6: imap.listen[1]: port 0 out of range\n"
            "config:9: auth.plaintext: expected \"always\", \"loopback\" or \"tls-only\", got "
            "\"never\"");
}

TEST_F(ConfigTest, TlsFilesMustBeReadable) {
  dir_.write("cert.pem", "x");
  std::string e = error(with("[tls]\ncert = \"cert.pem\"\nkey = \"missing.pem\"\n"));
  EXPECT_EQ(e, "config:9: tls.key: open " + (dir_.path() / "missing.pem").string() +
                   ": No such file or directory");
  fs::create_directory(dir_.path() / "dir.pem");
  e = error(with("[tls]\ncert = \"dir.pem\"\nkey = \"cert.pem\"\n"));
  EXPECT_EQ(
      e, "config:8: tls.cert: open " + (dir_.path() / "dir.pem").string() + ": not a regular file");
}

TEST_F(ConfigTest, TlsEnablesImplicitTlsListeners) {
  dir_.write("c.pem", "x");
  dir_.write("k.pem", "x");
  auto r = load(R"([server]
data_dir = "d"
[imap]
tls_listen = ["[::1]:993"]
[tls]
cert = "c.pem"
key = "k.pem"
[auth]
passwd_file = "u"
)");
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_TRUE(r->imap.listen.empty());
  ASSERT_EQ(r->imap.tls_listen.size(), 1u);
  EXPECT_TRUE(r->tls.enabled());
}

TEST_F(ConfigTest, LmtpUnixSocketAloneIsAListener) {
  auto r = load(
      "[server]\ndata_dir = \"d\"\n[lmtp]\nunix_socket = \"/run/peregrine/lmtp\"\n"
      "[auth]\npasswd_file = \"u\"\n");
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(r->lmtp.unix_socket, "/run/peregrine/lmtp");
}

TEST_F(ConfigTest, LmtpUnixSocketPathLength) {
  std::string path107 = "/" + std::string(106, 's');
  auto ok = load(with("[lmtp]\nunix_socket = \"" + path107 + "\"\n"));
  ASSERT_TRUE(ok) << ok.error().message;
  std::string path108 = path107 + "s";
  EXPECT_EQ(error(with("[lmtp]\nunix_socket = \"" + path108 + "\"\n")),
            "config:8: lmtp.unix_socket: " + path108 + " is longer than 107 bytes");
}

TEST_F(ConfigTest, PathsAreNormalized) {
  auto r = load(
      "[server]\ndata_dir = \"a/./b/../c/\"\n[imap]\nlisten = [\"127.0.0.1:1\"]\n"
      "[auth]\npasswd_file = \"/etc//peregrine/../users\"\n");
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(r->server.data_dir, dir_.path() / "a/c/");
  EXPECT_EQ(r->auth.passwd_file, "/etc/users");
}

TEST_F(ConfigTest, LoadConfigResolvesAgainstTheFilesDirectory) {
  fs::create_directory(dir_.path() / "etc");
  dir_.write("etc/peregrine.toml", kMinimal);
  auto r = load_config(dir_.path() / "etc/peregrine.toml");
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(r->config_dir, dir_.path() / "etc");
  EXPECT_EQ(r->server.data_dir, dir_.path() / "etc/data");
  EXPECT_EQ(r->auth.passwd_file, dir_.path() / "etc/users");
}

TEST_F(ConfigTest, LoadConfigNamesTheFileInErrors) {
  fs::path file = dir_.path() / "bad.toml";
  dir_.write("bad.toml", with("[server.x]\n"));
  auto r = load_config(file);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().message, file.string() + ":7: unknown table server.x");

  auto missing = load_config(dir_.path() / "none.toml");
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.error().code, base::MailError::kNotFound);
  EXPECT_EQ(missing.error().message,
            "open " + (dir_.path() / "none.toml").string() + ": No such file or directory");
}

TEST_F(ConfigTest, DefaultSettingsTomlLoads) {
  auto r = load(std::string(default_settings_toml()));
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(r->server.data_dir, dir_.path() / "data");
  ASSERT_EQ(r->imap.listen.size(), 1u);
  EXPECT_EQ(r->imap.listen[0].to_string(), "127.0.0.1:1143");
  ASSERT_EQ(r->pop3.listen.size(), 1u);
  EXPECT_EQ(r->pop3.listen[0].to_string(), "127.0.0.1:1110");
  EXPECT_EQ(r->auth.passwd_file, dir_.path() / "users");
  // Every value written in the example is the default.
  auto minimal = load(kMinimal);
  ASSERT_TRUE(minimal);
  EXPECT_EQ(r->auth.plaintext, minimal->auth.plaintext);
  EXPECT_EQ(r->auth.failure_delay_base, minimal->auth.failure_delay_base);
  EXPECT_EQ(r->auth.failure_delay_max, minimal->auth.failure_delay_max);
  EXPECT_EQ(r->limits.max_line_bytes, minimal->limits.max_line_bytes);
  EXPECT_EQ(r->limits.max_literal_bytes, minimal->limits.max_literal_bytes);
  EXPECT_EQ(r->limits.max_connections_per_ip, minimal->limits.max_connections_per_ip);
  EXPECT_EQ(r->limits.autologout, minimal->limits.autologout);
  EXPECT_EQ(r->limits.autologout_unauthenticated, minimal->limits.autologout_unauthenticated);
  EXPECT_EQ(r->limits.idle_timeout, minimal->limits.idle_timeout);
  EXPECT_EQ(r->log.level, minimal->log.level);
}

TEST_F(ConfigTest, DefaultSettingsWithTlsUncommentedLoads) {
  dir_.write("cert.pem", "x");
  dir_.write("key.pem", "x");
  std::string text(default_settings_toml());
  for (const char* line : {"# [tls]", "# cert = ", "# key = "}) {
    std::size_t at = text.find(line);
    ASSERT_NE(at, std::string::npos) << line;
    text.erase(at, 2);
  }
  auto r = load(text);
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(r->tls.cert, dir_.path() / "cert.pem");
  EXPECT_EQ(r->tls.key, dir_.path() / "key.pem");
}

// docs/configuration.md shows the example; keep the two identical.
TEST_F(ConfigTest, DocsShowTheDefaultSettings) {
  std::ifstream in(std::string(PEREGRINE_DOCS_DIR) + "/configuration.md");
  ASSERT_TRUE(in) << "docs/configuration.md is missing";
  std::stringstream buffer;
  buffer << in.rdbuf();
  std::string doc = buffer.str();
  const std::string open = "```toml\n";
  std::size_t start = doc.find(open);
  ASSERT_NE(start, std::string::npos);
  start += open.size();
  std::size_t end = doc.find("```\n", start);
  ASSERT_NE(end, std::string::npos);
  EXPECT_EQ(doc.substr(start, end - start), default_settings_toml());
}

}  // namespace
}  // namespace peregrine::config
