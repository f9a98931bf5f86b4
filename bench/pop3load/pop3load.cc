// pop3load: a POP3 download load generator for bench/pop3-compare.sh.
//
// Each client (a thread) takes users from a shared list, one at a time,
// and for each: connects, logs in with USER/PASS, STAT, then RETR and DELE
// of every message in turn, and QUIT (which makes the server expunge them).
// Reports what it moved and how fast, as one line of key=value pairs:
//
//   pop3load clients=5 users=15 messages=5550 bytes=610000000 seconds=4.2
//            msgs_per_s=1321.4 mb_per_s=138.5 errors=0 login_s=0.1 quit_s=0.9
//
// login_s and quit_s are the wall time from connecting to STAT's answer
// and from sending QUIT to its answer (the server's expunge), summed over
// all users.
// bytes counts the message bytes RETR carried, dot-stuffing undone. A
// server answer that is not +OK counts as an error and ends that user.
//
// Usage: pop3load --port N [--host 127.0.0.1] --clients C
//                 --users FILE   (lines "user password")
// Blocking sockets, one thread per client: the server is what is measured.

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <mutex>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace {

struct Account {
  std::string user;
  std::string password;
};

struct Totals {
  std::atomic<std::uint64_t> messages{0};
  std::atomic<std::uint64_t> bytes{0};
  std::atomic<std::uint64_t> errors{0};
  // Wall time the clients spent in each phase, summed over the clients.
  std::atomic<std::uint64_t> login_us{0};
  std::atomic<std::uint64_t> quit_us{0};
};

std::uint64_t micros_since(std::chrono::steady_clock::time_point start) {
  return static_cast<std::uint64_t>(std::chrono::duration_cast<std::chrono::microseconds>(
                                        std::chrono::steady_clock::now() - start)
                                        .count());
}

class Connection {
 public:
  Connection(const std::string& host, int port) {
    fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
    if (fd_ < 0) {
      throw std::runtime_error("socket");
    }
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(static_cast<std::uint16_t>(port));
    if (::inet_pton(AF_INET, host.c_str(), &addr.sin_addr) != 1) {
      throw std::runtime_error("bad host " + host);
    }
    if (::connect(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
      ::close(fd_);
      throw std::runtime_error("connect: " + std::string(std::strerror(errno)));
    }
    int one = 1;
    ::setsockopt(fd_, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    timeval tv{.tv_sec = 60, .tv_usec = 0};
    ::setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  }
  ~Connection() { ::close(fd_); }

  void send(const std::string& text) {
    std::size_t done = 0;
    while (done < text.size()) {
      ssize_t n = ::send(fd_, text.data() + done, text.size() - done, MSG_NOSIGNAL);
      if (n <= 0) {
        throw std::runtime_error("send failed");
      }
      done += static_cast<std::size_t>(n);
    }
  }

  // One line without its CRLF.
  std::string line() {
    for (;;) {
      std::size_t crlf = buf_.find("\r\n", pos_);
      if (crlf != std::string::npos) {
        std::string out = buf_.substr(pos_, crlf - pos_);
        pos_ = crlf + 2;
        return out;
      }
      fill();
    }
  }

  // The body of a multi-line response, up to ".CRLF"; returns the message
  // bytes with the stuffing undone (counted, not kept).
  std::uint64_t multiline() {
    std::uint64_t bytes = 0;
    for (;;) {
      std::size_t crlf = buf_.find("\r\n", pos_);
      if (crlf == std::string::npos) {
        fill();
        continue;
      }
      std::size_t len = crlf - pos_;
      if (len == 1 && buf_[pos_] == '.') {
        pos_ = crlf + 2;
        return bytes;
      }
      bytes += len + 2 - (buf_[pos_] == '.' ? 1 : 0);
      pos_ = crlf + 2;
    }
  }

 private:
  void fill() {
    if (pos_ > 0) {
      buf_.erase(0, pos_);
      pos_ = 0;
    }
    char chunk[65536];
    ssize_t n = ::recv(fd_, chunk, sizeof chunk, 0);
    if (n <= 0) {
      throw std::runtime_error("connection closed");
    }
    buf_.append(chunk, static_cast<std::size_t>(n));
  }

  int fd_ = -1;
  std::string buf_;
  std::size_t pos_ = 0;
};

bool ok(const std::string& line) { return line.rfind("+OK", 0) == 0; }

void expect_ok(Connection& c, const std::string& what) {
  std::string reply = c.line();
  if (!ok(reply)) {
    throw std::runtime_error(what + ": " + reply);
  }
}

void download(const std::string& host, int port, const Account& account, Totals& totals) {
  auto phase = std::chrono::steady_clock::now();
  Connection c(host, port);
  expect_ok(c, "greeting");
  c.send("USER " + account.user + "\r\n");
  expect_ok(c, "USER");
  c.send("PASS " + account.password + "\r\n");
  expect_ok(c, "PASS");
  c.send("STAT\r\n");
  std::string stat = c.line();
  if (!ok(stat)) {
    throw std::runtime_error("STAT: " + stat);
  }
  const unsigned long count = std::strtoul(stat.c_str() + 4, nullptr, 10);
  totals.login_us += micros_since(phase);
  for (unsigned long i = 1; i <= count; ++i) {
    const std::string n = std::to_string(i);
    c.send("RETR " + n + "\r\n");
    expect_ok(c, "RETR " + n);
    totals.bytes += c.multiline();
    c.send("DELE " + n + "\r\n");
    expect_ok(c, "DELE " + n);
    ++totals.messages;
  }
  phase = std::chrono::steady_clock::now();
  c.send("QUIT\r\n");
  expect_ok(c, "QUIT");
  totals.quit_us += micros_since(phase);
}

std::vector<Account> read_accounts(const std::string& path) {
  std::ifstream in(path);
  if (!in) {
    throw std::runtime_error("cannot read " + path);
  }
  std::vector<Account> accounts;
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream fields(line);
    Account a;
    if (fields >> a.user >> a.password) {
      accounts.push_back(a);
    }
  }
  return accounts;
}

}  // namespace

int main(int argc, char** argv) {
  std::string host = "127.0.0.1";
  std::string users_file;
  int port = 0;
  int clients = 1;
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string key = argv[i];
    std::string value = argv[i + 1];
    if (key == "--host") {
      host = value;
    } else if (key == "--port") {
      port = std::atoi(value.c_str());
    } else if (key == "--clients") {
      clients = std::atoi(value.c_str());
    } else if (key == "--users") {
      users_file = value;
    } else {
      std::fprintf(stderr, "pop3load: unknown option %s\n", key.c_str());
      return 64;
    }
  }
  if (port <= 0 || clients <= 0 || users_file.empty()) {
    std::fprintf(stderr, "usage: pop3load --port N --clients C --users FILE [--host H]\n");
    return 64;
  }
  std::vector<Account> accounts;
  try {
    accounts = read_accounts(users_file);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "pop3load: %s\n", e.what());
    return 66;
  }
  Totals totals;
  std::atomic<std::size_t> next{0};
  std::mutex err_mu;
  const auto start = std::chrono::steady_clock::now();
  std::vector<std::thread> threads;
  for (int t = 0; t < clients; ++t) {
    threads.emplace_back([&] {
      for (std::size_t i = next++; i < accounts.size(); i = next++) {
        try {
          download(host, port, accounts[i], totals);
        } catch (const std::exception& e) {
          ++totals.errors;
          std::lock_guard<std::mutex> lock(err_mu);
          std::fprintf(stderr, "pop3load: %s: %s\n", accounts[i].user.c_str(), e.what());
        }
      }
    });
  }
  for (std::thread& t : threads) {
    t.join();
  }
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const double mb = static_cast<double>(totals.bytes) / (1024.0 * 1024.0);
  std::printf(
      "pop3load clients=%d users=%zu messages=%llu bytes=%llu seconds=%.3f msgs_per_s=%.1f "
      "mb_per_s=%.2f errors=%llu login_s=%.3f quit_s=%.3f\n",
      clients, accounts.size(), static_cast<unsigned long long>(totals.messages.load()),
      static_cast<unsigned long long>(totals.bytes.load()), seconds,
      static_cast<double>(totals.messages) / seconds, mb / seconds,
      static_cast<unsigned long long>(totals.errors.load()),
      static_cast<double>(totals.login_us) / 1e6, static_cast<double>(totals.quit_us) / 1e6);
  return totals.errors == 0 ? 0 : 1;
}
