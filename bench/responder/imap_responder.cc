// imap-responder: the ceiling for bench/compare.sh.
//
// A do-nothing IMAP server: one thread, epoll, canned answers. It keeps no
// mailbox state and touches no disk, so what a benchmark row reaches against
// it is what the load generator and the loopback can do on this machine with
// an infinitely fast server. compare.sh prints Peregrine's throughput as a
// share of it (docs/benchmarks.md, "Peregrine against Dovecot").
//
// It answers the commands peregrine-bench sends (greeting, CAPABILITY, LOGIN,
// AUTHENTICATE PLAIN with SASL-IR, LOGOUT, LIST, LSUB, STATUS, SELECT,
// EXAMINE, FETCH, STORE, APPEND, EXPUNGE, SEARCH, IDLE/DONE, NOOP, CHECK,
// CREATE, DELETE, ...; each also with a UID prefix) with fixed, plausible
// responses: every mailbox holds --count messages, UID n is message n, flags
// never change. Answers are consistent enough for the workloads to run, not
// for the load generator's state checks (use its --no-check).
//
// Only for loopback benchmarks: it binds 127.0.0.1 by default, bounds lines
// at 64 KiB and skips literal bytes without keeping them.
//
//   imap-responder --port N [--host 127.0.0.1] [--count 100] [--messages DIR]
//
// --messages DIR: the BODY[] of message n is the n-th file of DIR (sorted by
// name, line ends made CRLF), so FETCH BODY[] sends real sizes; without it,
// every body is a 4 KiB text message.

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "base/ascii.h"

namespace {

using peregrine::base::to_upper;

constexpr std::size_t kMaxLine = 64 * 1024;
constexpr std::string_view kCapabilities =
    "IMAP4rev1 LITERAL+ SASL-IR IDLE UIDPLUS NAMESPACE UNSELECT ENABLE AUTH=PLAIN";

struct Message {
  std::string body;      // CRLF line ends
  std::string metadata;  // "FLAGS ... BODYSTRUCTURE (...)" without UID
};

struct Mailboxes {
  std::vector<Message> messages;
};

// ---- canned data ----------------------------------------------------------

std::string crlf(std::string_view text) {
  std::string out;
  out.reserve(text.size() + text.size() / 40);
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '\n' && (i == 0 || text[i - 1] != '\r')) {
      out += '\r';
    }
    out += text[i];
  }
  return out;
}

std::string synthetic_body(std::size_t n) {
  std::string out =
      "From: Alice <alice@example.org>\r\nTo: Bob <bob@example.org>\r\nSubject: Message " +
      std::to_string(n) + "\r\nDate: Mon, 7 Feb 1994 21:52:25 -0800\r\nMessage-ID: <" +
      std::to_string(n) +
      "@example.org>\r\nMIME-Version: 1.0\r\nContent-Type: text/plain; "
      "charset=utf-8\r\n\r\n";
  while (out.size() < 4096) {
    out += "The quick brown fox jumps over the lazy dog; the meeting is at ten.\r\n";
  }
  return out;
}

// A metadata answer shaped like a real one: a multipart/mixed message with a
// text part and a PDF attachment, the envelope of a reply in a thread.
std::string metadata_for(std::size_t n, std::size_t size) {
  std::size_t lines = size / 70 + 1;
  std::string num = std::to_string(n);
  std::string flags = n % 3 == 0 ? "(\\Seen \\Answered)" : (n % 3 == 1 ? "(\\Seen)" : "()");
  return "FLAGS " + flags + " INTERNALDATE \"07-Feb-1994 21:52:25 -0800\" RFC822.SIZE " +
         std::to_string(size) +
         " ENVELOPE (\"Mon, 7 Feb 1994 21:52:25 -0800\" \"Re: Quarterly report, part " + num +
         "\" ((\"Alice Example\" NIL \"alice\" \"example.org\")) ((\"Alice Example\" NIL "
         "\"alice\" \"example.org\")) ((\"Alice Example\" NIL \"alice\" \"example.org\")) "
         "((\"Bob Example\" NIL \"bob\" \"example.org\")) ((NIL NIL \"team\" \"example.org\")) "
         "NIL \"<" +
         std::to_string(n - 1) + "@example.org>\" \"<" + num +
         "@example.org>\") BODYSTRUCTURE ((\"text\" \"plain\" (\"charset\" \"utf-8\") NIL NIL "
         "\"quoted-printable\" " +
         std::to_string(size / 3) + " " + std::to_string(lines / 3 + 1) +
         " NIL NIL NIL NIL)(\"application\" \"pdf\" (\"name\" \"report-" + num +
         ".pdf\") NIL NIL \"base64\" " + std::to_string(size / 2) +
         " NIL (\"attachment\" "
         "(\"filename\" \"report-" +
         num +
         ".pdf\")) NIL NIL) \"mixed\" (\"boundary\" "
         "\"=-=-=-" +
         num + "\") NIL NIL NIL)";
}

Mailboxes load_messages(std::size_t count, const std::string& dir) {
  Mailboxes out;
  std::vector<std::filesystem::path> files;
  if (!dir.empty()) {
    for (const auto& entry : std::filesystem::directory_iterator(dir)) {
      if (entry.is_regular_file()) {
        files.push_back(entry.path());
      }
    }
    std::sort(files.begin(), files.end());
  }
  for (std::size_t n = 1; n <= count; ++n) {
    Message m;
    if (!files.empty()) {
      std::ifstream in(files[(n - 1) % files.size()], std::ios::binary);
      std::stringstream text;
      text << in.rdbuf();
      m.body = crlf(text.str());
    } else {
      m.body = synthetic_body(n);
    }
    m.metadata = metadata_for(n, m.body.size());
    out.messages.push_back(std::move(m));
  }
  return out;
}

// ---- command handling -----------------------------------------------------

// Splits off the next space-separated word.
std::string_view next_word(std::string_view& rest) {
  std::size_t sp = rest.find(' ');
  std::string_view word = rest.substr(0, sp);
  rest = sp == std::string_view::npos ? std::string_view{} : rest.substr(sp + 1);
  return word;
}

std::size_t parse_number(std::string_view s, std::size_t star) {
  if (s == "*") {
    return star;
  }
  std::size_t v = 0;
  std::from_chars(s.data(), s.data() + s.size(), v);
  return v;
}

// Message numbers of a sequence set ("1:*", "4,7:9"), clamped to 1..count.
std::vector<std::size_t> parse_set(std::string_view set, std::size_t count) {
  std::vector<std::size_t> out;
  while (!set.empty()) {
    std::size_t comma = set.find(',');
    std::string_view range = set.substr(0, comma);
    set = comma == std::string_view::npos ? std::string_view{} : set.substr(comma + 1);
    std::size_t colon = range.find(':');
    std::size_t lo = parse_number(range.substr(0, colon), count);
    std::size_t hi =
        colon == std::string_view::npos ? lo : parse_number(range.substr(colon + 1), count);
    if (lo > hi) {
      std::swap(lo, hi);
    }
    lo = std::max<std::size_t>(lo, 1);
    hi = std::min(hi, count);
    for (std::size_t n = lo; n <= hi && out.size() < count; ++n) {
      out.push_back(n);
    }
  }
  return out;
}

class Connection {
 public:
  Connection(int fd, const Mailboxes& boxes) : fd_(fd), boxes_(boxes) {
    out_ = "* OK [CAPABILITY " + std::string(kCapabilities) + "] imap-responder ready.\r\n";
  }
  ~Connection() { ::close(fd_); }

  int fd() const { return fd_; }
  bool closing() const { return closing_; }
  bool want_write() const { return sent_ < out_.size(); }

  // Reads what is there and answers every whole command. False: close now.
  bool on_readable() {
    char buf[65536];
    for (;;) {
      ssize_t n = ::read(fd_, buf, sizeof buf);
      if (n > 0) {
        in_.append(buf, static_cast<std::size_t>(n));
        continue;
      }
      if (n == 0) {
        return false;
      }
      if (errno == EAGAIN || errno == EWOULDBLOCK) {
        break;
      }
      if (errno == EINTR) {
        continue;
      }
      return false;
    }
    process();
    return true;
  }

  // Writes what is queued. False: close now.
  bool on_writable() {
    while (sent_ < out_.size()) {
      ssize_t n = ::send(fd_, out_.data() + sent_, out_.size() - sent_, MSG_NOSIGNAL);
      if (n > 0) {
        sent_ += static_cast<std::size_t>(n);
      } else if (n < 0 && errno == EINTR) {
        continue;
      } else if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
        return true;
      } else {
        return false;
      }
    }
    out_.clear();
    sent_ = 0;
    return !closing_;
  }

 private:
  void process() {
    std::size_t pos = 0;
    while (!closing_) {
      if (skip_ > 0) {  // literal bytes we accept and drop
        std::size_t take = std::min(skip_, in_.size() - pos);
        skip_ -= take;
        pos += take;
        if (skip_ > 0) {
          break;
        }
        continue;
      }
      std::size_t eol = in_.find('\n', pos);
      if (eol == std::string::npos) {
        if (in_.size() - pos > kMaxLine) {
          out_ += "* BYE Line too long.\r\n";
          closing_ = true;
        }
        break;
      }
      std::string_view line(in_.data() + pos, eol - pos);
      pos = eol + 1;
      if (!line.empty() && line.back() == '\r') {
        line.remove_suffix(1);
      }
      if (command_.size() + line.size() > kMaxLine) {
        out_ += "* BYE Command too long.\r\n";
        closing_ = true;
        break;
      }
      command_.append(line);
      // A line ending in {N} or {N+} continues after N literal bytes.
      if (!line.empty() && line.back() == '}') {
        std::size_t open = line.rfind('{');
        if (open != std::string_view::npos) {
          std::string_view digits = line.substr(open + 1, line.size() - open - 2);
          bool non_sync = !digits.empty() && digits.back() == '+';
          if (non_sync) {
            digits.remove_suffix(1);
          }
          std::size_t n = 0;
          auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), n);
          if (ec == std::errc{} && end == digits.data() + digits.size()) {
            if (!non_sync) {
              out_ += "+ Ready for literal data\r\n";
            }
            skip_ = n;
            command_ += "<literal>";
            continue;
          }
        }
      }
      std::string command = std::move(command_);
      command_.clear();
      execute(command);
    }
    in_.erase(0, pos);
  }

  void tagged(std::string_view tag, std::string_view text) {
    out_.append(tag);
    out_ += ' ';
    out_.append(text);
    out_ += "\r\n";
  }

  void execute(std::string_view line) {
    if (idle_tag_.size()) {  // the only thing IDLE accepts is DONE
      tagged(idle_tag_, to_upper(line) == "DONE" ? "OK Idle completed." : "BAD Expected DONE.");
      idle_tag_.clear();
      return;
    }
    std::string_view rest = line;
    std::string tag(next_word(rest));
    std::string name = to_upper(next_word(rest));
    if (name == "UID") {  // UID n is message n here, so UID commands answer alike
      name = to_upper(next_word(rest));
    }
    std::size_t count = boxes_.messages.size();
    if (tag.empty() || name.empty()) {
      out_ += "* BAD Empty command.\r\n";
    } else if (name == "CAPABILITY") {
      out_ += "* CAPABILITY " + std::string(kCapabilities) + "\r\n";
      tagged(tag, "OK Capability completed.");
    } else if (name == "LOGIN" || name == "AUTHENTICATE") {
      tagged(tag, "OK [CAPABILITY " + std::string(kCapabilities) + "] Logged in.");
    } else if (name == "LOGOUT") {
      out_ += "* BYE Logging out.\r\n";
      tagged(tag, "OK Logout completed.");
      closing_ = true;
    } else if (name == "LIST" || name == "LSUB") {
      static constexpr std::string_view kNames[] = {"INBOX", "Archive", "Drafts", "Sent",
                                                    "Trash", "Junk",    "Append", "Lists/dev"};
      for (std::string_view box : kNames) {
        out_ += "* " + name + " (\\HasNoChildren) \"/\" " + std::string(box) + "\r\n";
      }
      tagged(tag, "OK " + name + " completed.");
    } else if (name == "STATUS") {
      status(tag, rest, count);
    } else if (name == "SELECT" || name == "EXAMINE") {
      out_ +=
          "* FLAGS (\\Answered \\Flagged \\Deleted \\Seen \\Draft)\r\n"
          "* OK [PERMANENTFLAGS (\\Answered \\Flagged \\Deleted \\Seen \\Draft \\*)] Flags.\r\n"
          "* " +
          std::to_string(count) +
          " EXISTS\r\n* 0 RECENT\r\n"
          "* OK [UIDVALIDITY 1] UIDs valid.\r\n"
          "* OK [UIDNEXT " +
          std::to_string(count + 1) + "] Predicted next UID.\r\n";
      tagged(tag, name == "SELECT" ? "OK [READ-WRITE] Select completed."
                                   : "OK [READ-ONLY] Examine completed.");
    } else if (name == "FETCH") {
      fetch(tag, rest, count);
    } else if (name == "STORE") {
      store(tag, rest, count);
    } else if (name == "APPEND") {
      tagged(tag, "OK [APPENDUID 1 " + std::to_string(count + ++appended_) + "] Append completed.");
    } else if (name == "SEARCH") {
      out_ += "* SEARCH";
      for (std::size_t n = 7; n <= count; n += 7) {
        out_ += ' ' + std::to_string(n);
      }
      out_ += "\r\n";
      tagged(tag, "OK Search completed.");
    } else if (name == "IDLE") {
      out_ += "+ idling\r\n";
      idle_tag_ = tag;
    } else if (name == "NOOP" || name == "CHECK" || name == "EXPUNGE" || name == "CLOSE" ||
               name == "UNSELECT" || name == "CREATE" || name == "DELETE" || name == "RENAME" ||
               name == "SUBSCRIBE" || name == "UNSUBSCRIBE" || name == "ENABLE" || name == "ID" ||
               name == "NAMESPACE") {
      tagged(tag, "OK " + name + " completed.");
    } else {
      tagged(tag, "BAD Unknown command.");
    }
  }

  void status(std::string_view tag, std::string_view rest, std::size_t count) {
    std::size_t open = rest.find('(');
    std::string_view box = rest.substr(0, open == std::string_view::npos ? rest.size() : open);
    while (!box.empty() && box.back() == ' ') {
      box.remove_suffix(1);
    }
    out_ += "* STATUS " + std::string(box) + " (";
    std::string_view items = open == std::string_view::npos ? "" : rest.substr(open + 1);
    bool first = true;
    while (!items.empty()) {
      std::string item = to_upper(next_word(items));
      while (!item.empty() && (item.back() == ')' || item.back() == ' ')) {
        item.pop_back();
      }
      std::string value;
      if (item == "MESSAGES") {
        value = std::to_string(count);
      } else if (item == "UIDNEXT") {
        value = std::to_string(count + 1);
      } else if (item == "UIDVALIDITY" || item == "HIGHESTMODSEQ") {
        value = "1";
      } else if (item == "UNSEEN") {
        value = std::to_string(count / 3);
      } else if (item == "RECENT") {
        value = "0";
      } else if (item == "SIZE") {
        value = std::to_string(count * 10000);
      } else {
        continue;
      }
      out_ += (first ? "" : " ") + item + ' ' + value;
      first = false;
    }
    out_ += ")\r\n";
    tagged(tag, "OK Status completed.");
  }

  void fetch(std::string_view tag, std::string_view rest, std::size_t count) {
    std::string_view set = next_word(rest);
    std::string items = to_upper(rest);
    bool body =
        items.find("BODY[]") != std::string::npos ||
        items.find("BODY.PEEK[]") != std::string::npos ||
        (items.find("RFC822") != std::string::npos && items.find("RFC822.") == std::string::npos);
    bool meta = items.find("ENVELOPE") != std::string::npos ||
                items.find("BODYSTRUCTURE") != std::string::npos;
    for (std::size_t n : parse_set(set, count)) {
      const Message& m = boxes_.messages[n - 1];
      std::string num = std::to_string(n);
      out_ += "* " + num + " FETCH (UID " + num;
      if (body) {
        out_ += " BODY[] {" + std::to_string(m.body.size()) + "}\r\n";
        out_ += m.body;
      } else if (meta) {
        out_ += ' ';
        out_ += m.metadata;
      } else {
        out_ += " FLAGS (\\Seen)";
      }
      out_ += ")\r\n";
    }
    tagged(tag, "OK Fetch completed.");
  }

  void store(std::string_view tag, std::string_view rest, std::size_t count) {
    std::string_view set = next_word(rest);
    std::string_view op = next_word(rest);
    std::size_t open = rest.find('(');
    std::size_t close = rest.rfind(')');
    std::string_view flags = open == std::string_view::npos || close == std::string_view::npos
                                 ? rest
                                 : rest.substr(open + 1, close - open - 1);
    if (to_upper(op).find(".SILENT") == std::string::npos) {
      for (std::size_t n : parse_set(set, count)) {
        std::string num = std::to_string(n);
        out_ += "* " + num + " FETCH (UID " + num + " FLAGS (" + std::string(flags) + "))\r\n";
      }
    }
    tagged(tag, "OK Store completed.");
  }

  int fd_;
  const Mailboxes& boxes_;
  std::string in_;
  std::string out_;
  std::size_t sent_ = 0;
  std::string command_;  // a command whose literal is still arriving
  std::size_t skip_ = 0;
  std::string idle_tag_;
  std::size_t appended_ = 0;
  bool closing_ = false;
};

int usage() {
  std::fprintf(stderr,
               "usage: imap-responder --port N [--host 127.0.0.1] [--count 100] "
               "[--messages DIR]\n");
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  std::string host = "127.0.0.1";
  std::string dir;
  int port = 0;
  std::size_t count = 100;
  for (int i = 1; i < argc; ++i) {
    std::string_view arg = argv[i];
    if (i + 1 >= argc) {
      return usage();
    }
    if (arg == "--port") {
      port = std::atoi(argv[++i]);
    } else if (arg == "--host") {
      host = argv[++i];
    } else if (arg == "--count") {
      count = static_cast<std::size_t>(std::atol(argv[++i]));
    } else if (arg == "--messages") {
      dir = argv[++i];
    } else {
      return usage();
    }
  }
  if (port <= 0 || port > 65535 || count == 0 || count > 1'000'000) {
    return usage();
  }
  ::signal(SIGPIPE, SIG_IGN);
  Mailboxes boxes = load_messages(count, dir);

  int listener = ::socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
  int one = 1;
  ::setsockopt(listener, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<std::uint16_t>(port));
  if (::inet_pton(AF_INET, host.c_str(), &addr.sin_addr) != 1 ||
      ::bind(listener, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 ||
      ::listen(listener, 1024) != 0) {
    std::fprintf(stderr, "imap-responder: cannot listen on %s:%d: %s\n", host.c_str(), port,
                 std::strerror(errno));
    return 1;
  }
  int ep = ::epoll_create1(0);
  epoll_event ev{};
  ev.events = EPOLLIN;
  ev.data.fd = listener;
  ::epoll_ctl(ep, EPOLL_CTL_ADD, listener, &ev);
  std::fprintf(stderr, "imap-responder: listening on %s:%d, %zu messages\n", host.c_str(), port,
               count);

  std::unordered_map<int, std::unique_ptr<Connection>> connections;
  auto update = [&](Connection& c) {
    epoll_event e{};
    e.events = c.want_write() ? (EPOLLIN | EPOLLOUT) : EPOLLIN;
    e.data.fd = c.fd();
    ::epoll_ctl(ep, EPOLL_CTL_MOD, c.fd(), &e);
  };
  epoll_event events[256];
  for (;;) {
    int n = ::epoll_wait(ep, events, 256, -1);
    if (n < 0 && errno == EINTR) {
      continue;
    }
    for (int i = 0; i < n; ++i) {
      int fd = events[i].data.fd;
      if (fd == listener) {
        for (;;) {
          int c = ::accept4(listener, nullptr, nullptr, SOCK_NONBLOCK);
          if (c < 0) {
            break;
          }
          ::setsockopt(c, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
          auto conn = std::make_unique<Connection>(c, boxes);
          epoll_event e{};
          e.events = EPOLLIN | EPOLLOUT;
          e.data.fd = c;
          ::epoll_ctl(ep, EPOLL_CTL_ADD, c, &e);
          connections.emplace(c, std::move(conn));
        }
        continue;
      }
      auto it = connections.find(fd);
      if (it == connections.end()) {
        continue;
      }
      Connection& c = *it->second;
      bool keep = true;
      if (events[i].events & (EPOLLIN | EPOLLHUP | EPOLLERR)) {
        keep = c.on_readable();
      }
      if (keep && c.want_write()) {
        keep = c.on_writable();
      } else if (keep && c.closing()) {
        keep = false;
      }
      if (!keep) {
        connections.erase(it);  // closes the descriptor, which leaves epoll
      } else {
        update(c);
      }
    }
  }
}
