#include "bench/loadgen/options.h"

#include <CLI/CLI.hpp>
#include <cstdio>
#include <iostream>

namespace peregrine::bench {

namespace {

constexpr std::array<std::string_view, kOpCount> kKeys = {
    "login", "list",    "status", "select", "fetch_meta", "fetch_body",
    "store", "expunge", "append", "search", "idle"};
constexpr std::array<std::string_view, kOpCount> kNames = {
    "LOGIN", "LIST",    "STATUS", "SELECT", "FETCH_META", "FETCH_BODY",
    "STORE", "EXPUNGE", "APPEND", "SEARCH", "IDLE"};

// The default mix, in the manner of imaptest's default: every command of a
// client's life, weighted so that reads dominate and APPEND roughly balances
// EXPUNGE (docs/peregrine-bench.md lists the same numbers).
constexpr Mix kDefaultMix = {
    /*login=*/2,       /*list=*/5,   /*status=*/5,  /*select=*/5,  /*fetch_meta=*/8,
    /*fetch_body=*/20, /*store=*/20, /*expunge=*/8, /*append=*/10, /*search=*/5,
    /*idle=*/2};

}  // namespace

std::string_view op_key(Op op) { return kKeys[static_cast<std::size_t>(op)]; }
std::string_view op_name(Op op) { return kNames[static_cast<std::size_t>(op)]; }

std::string Options::user_for(int index) const {
  int n = index % users + 1;
  std::string out;
  std::size_t at = user_format.find("%d");
  if (at == std::string::npos) {
    return user_format;  // one user for every client
  }
  out = user_format.substr(0, at) + std::to_string(n) + user_format.substr(at + 2);
  return out;
}

std::optional<Mix> preset_mix(std::string_view workload) {
  if (workload == "mix") {
    return kDefaultMix;
  }
  for (std::size_t i = 0; i < kOpCount; ++i) {
    if (workload == kKeys[i]) {
      Mix m{};
      m[i] = 1;
      return m;
    }
  }
  return std::nullopt;
}

std::optional<Mix> parse_mix(std::string_view text, std::string& error) {
  Mix m{};
  double total = 0;
  while (!text.empty()) {
    std::size_t comma = text.find(',');
    std::string_view item = text.substr(0, comma);
    text = comma == std::string_view::npos ? std::string_view() : text.substr(comma + 1);
    std::size_t eq = item.find('=');
    if (eq == std::string_view::npos) {
      error = "mix item without '=': " + std::string(item);
      return std::nullopt;
    }
    std::string_view key = item.substr(0, eq);
    std::string value(item.substr(eq + 1));
    std::size_t i = 0;
    while (i < kOpCount && kKeys[i] != key) {
      ++i;
    }
    if (i == kOpCount) {
      error = "unknown mix command: " + std::string(key);
      return std::nullopt;
    }
    char* end = nullptr;
    double w = std::strtod(value.c_str(), &end);
    if (value.empty() || *end != '\0' || !(w >= 0) || w > 1e9) {
      error = "bad mix weight: " + std::string(item);
      return std::nullopt;
    }
    m[i] = w;
    total += w;
  }
  if (total <= 0) {
    error = "the mix has no positive weight";
    return std::nullopt;
  }
  return m;
}

std::optional<Options> parse_options(int argc, char** argv, int& exit_code) {
  Options o;
  std::string mix_text;
  CLI::App app{"peregrine-bench: a state-checking IMAP load generator"};
  app.add_option("--host", o.host, "server address")->capture_default_str();
  app.add_option("--port", o.port, "server port")->required();
  app.add_option("--user-format", o.user_format, "user name; %d becomes 1..users")
      ->capture_default_str();
  app.add_option("--users", o.users, "number of users")->check(CLI::Range(1, 1000000));
  app.add_option("--password", o.password, "password of every user")->required();
  app.add_option("--clients", o.clients, "concurrent connections")->check(CLI::Range(1, 100000));
  app.add_option("--seconds", o.seconds, "stop after this many seconds")
      ->check(CLI::Range(0.0, 1e7));
  app.add_option("--ops", o.ops, "stop after this many operations");
  app.add_option("--seed", o.seed, "random seed");
  app.add_option("--workload", o.workload,
                 "mix, or one command: login list status select fetch_meta fetch_body "
                 "store expunge append search idle")
      ->capture_default_str();
  app.add_option("--mix", mix_text, "custom mix: login=P,list=P,... (weights)");
  app.add_option("--mailbox", o.mailbox, "mailbox the workload uses")->capture_default_str();
  app.add_option("--append-source", o.append_source, "mbox file with messages for APPEND")
      ->check(CLI::ExistingFile);
  app.add_option("--json", o.json, "write results as JSON to this file");
  app.add_flag("--quiet", o.quiet, "print nothing but errors");
  app.add_option("--idle-ms", o.idle_ms, "milliseconds IDLE waits before DONE")
      ->check(CLI::Range(0.0, 60000.0));
  app.add_option("--timeout", o.timeout, "seconds to wait for a response before giving up")
      ->check(CLI::Range(0.01, 3600.0))
      ->capture_default_str();
  app.add_flag("--tls", o.tls, "implicit TLS (the certificate is not verified)");
  app.add_flag("!--no-check", o.check, "turn the state checks off");
  app.add_flag("--trace", o.trace, "print every command and response to stderr (debugging)");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    exit_code = app.exit(e) == 0 ? 0 : 2;
    return std::nullopt;
  }
  if (o.seconds <= 0 && o.ops == 0) {
    std::cerr << "peregrine-bench: give --seconds or --ops\n";
    exit_code = 2;
    return std::nullopt;
  }
  std::optional<Mix> mix;
  std::string error;
  if (!mix_text.empty()) {
    mix = parse_mix(mix_text, error);
  } else {
    mix = preset_mix(o.workload);
    error = "unknown workload: " + o.workload;
  }
  if (!mix) {
    std::cerr << "peregrine-bench: " << error << "\n";
    exit_code = 2;
    return std::nullopt;
  }
  o.mix = *mix;
  return o;
}

}  // namespace peregrine::bench
