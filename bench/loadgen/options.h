#pragma once

// peregrine-bench's command line (docs/peregrine-bench.md):
// the CLI contract bench/compare.sh drives. Options may be added; the
// existing ones keep their names and meaning.

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace peregrine::bench {

// The operations a client runs; one completed operation is one "op".
enum class Op {
  kLogin,      // logout, new connection, greeting, LOGIN (mix); connect..LOGOUT (preset)
  kList,       // LIST "" *
  kStatus,     // STATUS <mailbox> (MESSAGES UNSEEN RECENT)
  kSelect,     // SELECT <mailbox>
  kFetchMeta,  // FETCH 1:* (UID FLAGS ENVELOPE INTERNALDATE BODYSTRUCTURE)
  kFetchBody,  // UID FETCH <random> BODY.PEEK[]
  kStore,      // UID STORE <random> +FLAGS/-FLAGS (random flags and keywords)
  kExpunge,    // UID STORE <random> +FLAGS (\Deleted), then EXPUNGE
  kAppend,     // APPEND <mailbox> {n} from --append-source
  kSearch,     // SEARCH TEXT <word>
  kIdle,       // IDLE, a short wait, DONE
};
constexpr std::size_t kOpCount = 11;

// Mix names (--mix keys, lower case) and report names (upper case).
std::string_view op_key(Op op);
std::string_view op_name(Op op);

using Mix = std::array<double, kOpCount>;

struct Options {
  std::string host = "127.0.0.1";
  std::uint16_t port = 143;
  std::string user_format = "bench%d";
  int users = 1;
  std::string password;
  int clients = 1;
  double seconds = 0;     // 0: no time limit
  std::uint64_t ops = 0;  // 0: no operation limit
  std::uint64_t seed = 1;
  std::string workload = "mix";
  Mix mix{};  // weights; from --mix or the workload preset
  std::string mailbox = "INBOX";
  std::string append_source;  // mbox file; empty: generated messages
  std::string json;           // results file; empty: none
  bool quiet = false;
  double idle_ms = 20;  // how long IDLE waits before DONE
  bool check = true;    // state checks (--no-check turns them off)
  double timeout = 30;  // seconds a client waits for the server
  bool tls = false;     // implicit TLS (RFC 8314), certificates not verified
  bool trace = false;   // print every command and response to stderr

  // The user name of client `index` (0-based): users round-robin.
  std::string user_for(int index) const;
};

// Parses argv. Returns nullopt after printing help (exit code in `exit_code`:
// 0 for --help, 2 for a usage error).
std::optional<Options> parse_options(int argc, char** argv, int& exit_code);

// The mix of a workload preset, or nullopt for an unknown name.
std::optional<Mix> preset_mix(std::string_view workload);

// Parses "login=1,list=5,..." (unknown keys and bad weights fail).
std::optional<Mix> parse_mix(std::string_view text, std::string& error);

}  // namespace peregrine::bench
