// lmtpload: LMTP delivery load for bench/lmtp-compare.sh. N parallel
// clients, each one connection: LHLO once, then a loop of MAIL, RCPT, DATA
// (the three pipelined, as Postfix's LMTP client sends them) with messages
// from a directory of .eml files (bench/gen_mail.py output), recipients
// taken in turn from --users. Prints one line of results, ending with the
// percentiles of the time from a message's last byte sent to its 250:
//
//   clients=10 messages=2000 seconds=3.210 msgs_per_s=623.1 mb_per_s=14.2 errors=0
//   reply_ms_p50=1.20 p90=2.10 p99=9.80 max=31.00        (on the same line)
//
// Every message must get 250; anything else counts as an error (and the
// run fails with exit status 1). Standalone: standard C++ and POSIX only.
//
// Usage: lmtpload --port P [--host 127.0.0.1] --dir DIR --users a,b,c
//                 [--domain example.org] [--clients 1] [--messages 500]
//        (--messages is per client)

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

namespace {

struct Options {
  std::string host = "127.0.0.1";
  int port = 0;
  std::string dir;
  std::vector<std::string> users;
  std::string domain = "example.org";
  int clients = 1;
  int messages = 500;
};

[[noreturn]] void die(const std::string& why) {
  std::fprintf(stderr, "lmtpload: %s\n", why.c_str());
  std::exit(2);
}

// The message as DATA sends it: CRLF line ends, dot-stuffed, ending in
// CRLF, followed by the ".\r\n" terminator.
std::string wire_form(const std::string& raw) {
  std::string out;
  out.reserve(raw.size() + raw.size() / 50 + 8);
  bool line_start = true;
  for (size_t i = 0; i < raw.size(); ++i) {
    char c = raw[i];
    if (line_start && c == '.') {
      out += '.';
    }
    if (c == '\n' && (i == 0 || raw[i - 1] != '\r')) {
      out += '\r';
    }
    out += c;
    line_start = c == '\n';
  }
  if (!line_start) {
    out += "\r\n";
  }
  out += ".\r\n";
  return out;
}

class Conn {
 public:
  explicit Conn(const Options& o) {
    fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(static_cast<uint16_t>(o.port));
    if (fd_ < 0 || ::inet_pton(AF_INET, o.host.c_str(), &addr.sin_addr) != 1 ||
        ::connect(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
      die("cannot connect to " + o.host + ":" + std::to_string(o.port));
    }
    int one = 1;
    ::setsockopt(fd_, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  }
  ~Conn() { ::close(fd_); }

  void send(const std::string& bytes) {
    size_t done = 0;
    while (done < bytes.size()) {
      ssize_t n = ::send(fd_, bytes.data() + done, bytes.size() - done, MSG_NOSIGNAL);
      if (n <= 0) {
        die("send failed");
      }
      done += static_cast<size_t>(n);
    }
  }

  // The code of the next (possibly multi-line) reply.
  int reply() {
    for (;;) {
      std::string line = read_line();
      if (line.size() < 3) {
        die("short reply: " + line);
      }
      if (line.size() < 4 || line[3] != '-') {
        return std::atoi(line.substr(0, 3).c_str());
      }
    }
  }

 private:
  std::string read_line() {
    for (;;) {
      size_t lf = buf_.find('\n');
      if (lf != std::string::npos) {
        std::string line = buf_.substr(0, lf);
        buf_.erase(0, lf + 1);
        return line;
      }
      char chunk[4096];
      ssize_t n = ::recv(fd_, chunk, sizeof chunk, 0);
      if (n <= 0) {
        die("connection closed by the server");
      }
      buf_.append(chunk, static_cast<size_t>(n));
    }
  }

  int fd_ = -1;
  std::string buf_;
};

}  // namespace

int main(int argc, char** argv) {
  Options o;
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string k = argv[i], v = argv[i + 1];
    if (k == "--host") o.host = v;
    else if (k == "--port") o.port = std::atoi(v.c_str());
    else if (k == "--dir") o.dir = v;
    else if (k == "--domain") o.domain = v;
    else if (k == "--clients") o.clients = std::atoi(v.c_str());
    else if (k == "--messages") o.messages = std::atoi(v.c_str());
    else if (k == "--users") {
      std::stringstream ss(v);
      for (std::string u; std::getline(ss, u, ',');) o.users.push_back(u);
    } else die("unknown option " + k);
  }
  if (o.port <= 0 || o.dir.empty() || o.users.empty() || o.clients < 1 || o.messages < 1) {
    die("usage: lmtpload --port P --dir DIR --users a,b [--clients N] [--messages M]");
  }
  std::vector<std::filesystem::path> files;
  for (const auto& e : std::filesystem::directory_iterator(o.dir)) {
    if (e.path().extension() == ".eml") files.push_back(e.path());
  }
  std::sort(files.begin(), files.end());
  if (files.empty()) die("no .eml files in " + o.dir);
  std::vector<std::string> wire;
  for (const auto& f : files) {
    std::ifstream in(f, std::ios::binary);
    std::stringstream s;
    s << in.rdbuf();
    wire.push_back(wire_form(s.str()));
  }

  std::atomic<long> ok{0}, errors{0}, bytes{0};
  // Each delivery's time from the end of its body to its 250, by client.
  std::vector<std::vector<double>> waits(static_cast<size_t>(o.clients));
  auto start = std::chrono::steady_clock::now();
  std::vector<std::thread> threads;
  for (int c = 0; c < o.clients; ++c) {
    threads.emplace_back([&, c] {
      Conn conn(o);
      if (conn.reply() != 220) die("no greeting");
      conn.send("LHLO lmtpload.example\r\n");
      if (conn.reply() != 250) die("LHLO refused");
      for (int i = 0; i < o.messages; ++i) {
        size_t n = static_cast<size_t>(c) * static_cast<size_t>(o.messages) + static_cast<size_t>(i);
        const std::string& msg = wire[n % wire.size()];
        const std::string& user = o.users[n % o.users.size()];
        conn.send("MAIL FROM:<load@example.net>\r\nRCPT TO:<" + user + "@" + o.domain +
                  ">\r\nDATA\r\n");
        int mail = conn.reply(), rcpt = conn.reply(), data = conn.reply();
        if (mail != 250 || rcpt != 250 || data != 354) {
          ++errors;
          if (data == 354) {
            conn.send(".\r\n");
            conn.reply();
          }
          conn.send("RSET\r\n");
          conn.reply();
          continue;
        }
        conn.send(msg);
        auto sent = std::chrono::steady_clock::now();
        if (conn.reply() == 250) {
          waits[static_cast<size_t>(c)].push_back(
              std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - sent)
                  .count());
          ++ok;
          bytes += static_cast<long>(msg.size());
        } else {
          ++errors;
        }
      }
      conn.send("QUIT\r\n");
      conn.reply();
    });
  }
  for (auto& t : threads) t.join();
  double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::vector<double> all;
  for (const auto& w : waits) all.insert(all.end(), w.begin(), w.end());
  std::sort(all.begin(), all.end());
  auto at = [&all](double q) {
    return all.empty() ? 0.0 : all[std::min(all.size() - 1, static_cast<size_t>(q * all.size()))];
  };
  std::printf("clients=%d messages=%ld seconds=%.3f msgs_per_s=%.1f mb_per_s=%.2f errors=%ld "
              "reply_ms_p50=%.2f p90=%.2f p99=%.2f max=%.2f\n",
              o.clients, ok.load(), seconds, static_cast<double>(ok.load()) / seconds,
              static_cast<double>(bytes.load()) / seconds / 1e6, errors.load(), at(0.5), at(0.9),
              at(0.99), at(1.0));
  return errors.load() == 0 ? 0 : 1;
}
