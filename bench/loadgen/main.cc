// peregrine-bench: a state-checking IMAP load generator (docs/peregrine-bench.md).
//
// Runs N clients as coroutines on one thread (the generator shares the CPU
// with the server it measures), in three phases: set up every client
// (connect, LOGIN, SELECT; not timed), run ops until --seconds or --ops, then
// LOGOUT. Exit 0: no errors and no violations; 1: some; 2: usage error or
// the clients could not connect or log in.

#include <fmt/core.h>

#include <asio/co_spawn.hpp>
#include <asio/detached.hpp>
#include <asio/io_context.hpp>
#include <asio/ip/tcp.hpp>
#include <asio/steady_timer.hpp>
#include <asio/use_awaitable.hpp>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <memory>
#include <vector>

#include "bench/loadgen/client.h"
#include "bench/loadgen/messages.h"
#include "bench/loadgen/options.h"

namespace bench = peregrine::bench;

namespace {

constexpr int kGeneratedMessages = 16;
constexpr std::chrono::milliseconds kWatchdogPeriod{100};

// Runs `phase` on every client, with the watchdog, until all are done.
template <typename Phase>
void run_phase(bench::Run& run, std::vector<std::unique_ptr<bench::Client>>& clients, Phase phase) {
  std::size_t active = clients.size();
  for (auto& client : clients) {
    asio::co_spawn(
        run.io,
        [&, c = client.get()]() -> asio::awaitable<void> {
          try {
            co_await phase(*c);
          } catch (const std::exception& e) {
            run.stats.violation(std::string("client stopped: ") + e.what());
          }
          --active;
        },
        asio::detached);
  }
  asio::co_spawn(
      run.io,
      [&]() -> asio::awaitable<void> {
        asio::steady_timer timer(run.io);
        while (active > 0) {
          timer.expires_after(kWatchdogPeriod);
          co_await timer.async_wait(asio::use_awaitable);
          run.watchdog.check(std::chrono::steady_clock::now());
        }
      },
      asio::detached);
  run.io.restart();
  run.io.run();
}

}  // namespace

int main(int argc, char** argv) {
  int exit_code = 0;
  std::optional<bench::Options> parsed = bench::parse_options(argc, argv, exit_code);
  if (!parsed) {
    return exit_code;
  }
  const bench::Options& options = *parsed;

  asio::io_context io(1);
  bench::Run run(io, options);
  try {
    asio::ip::tcp::resolver resolver(io);
    auto results = resolver.resolve(options.host, std::to_string(options.port));
    run.endpoint = results.begin()->endpoint();
  } catch (const std::exception& e) {
    std::cerr << "peregrine-bench: cannot resolve " << options.host << ": " << e.what() << "\n";
    return 2;
  }
  if (!options.append_source.empty()) {
    auto messages = bench::load_mbox(options.append_source);
    if (!messages) {
      std::cerr << "peregrine-bench: no messages in " << options.append_source << "\n";
      return 2;
    }
    run.messages = std::move(*messages);
  } else {
    run.messages = bench::generated_messages(options.seed, kGeneratedMessages);
  }

  if (options.tls) {
    // A benchmark on loopback: the server's certificate is not verified.
    run.tls = std::make_unique<asio::ssl::context>(asio::ssl::context::tls_client);
    run.tls->set_verify_mode(asio::ssl::verify_none);
  }

  std::vector<std::unique_ptr<bench::Client>> clients;
  for (int i = 0; i < options.clients; ++i) {
    clients.push_back(std::make_unique<bench::Client>(run, i));
  }

  int failed = 0;
  std::string first_error;
  run_phase(run, clients, [&](bench::Client& c) -> asio::awaitable<void> {
    if (!co_await c.setup()) {
      if (failed++ == 0) {
        first_error = c.setup_error;
      }
    }
  });
  if (failed > 0) {
    std::cerr << "peregrine-bench: " << failed << " of " << options.clients
              << " clients could not start: " << first_error << "\n";
    run_phase(run, clients, [](bench::Client& c) { return c.finish(); });
    return 2;
  }

  auto start = std::chrono::steady_clock::now();
  run.deadline = start + std::chrono::microseconds(static_cast<long long>(options.seconds * 1e6));
  run_phase(run, clients, [](bench::Client& c) { return c.work(); });
  double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  run_phase(run, clients, [](bench::Client& c) { return c.finish(); });

  bench::Stats::RunInfo info{options.workload, options.clients, elapsed};
  if (!options.json.empty()) {
    std::ofstream out(options.json, std::ios::trunc);
    out << run.stats.json(info);
    if (!out) {
      std::cerr << "peregrine-bench: cannot write " << options.json << "\n";
      return 2;
    }
  }
  bool clean = run.stats.errors() == 0 && run.stats.violations() == 0;
  if (!options.quiet) {
    std::cout << run.stats.human(info);
  } else if (!clean) {
    std::cerr << run.stats.human(info);
  }
  return clean ? 0 : 1;
}
