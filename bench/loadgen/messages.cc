#include "bench/loadgen/messages.h"

#include <fmt/core.h>

#include <fstream>
#include <random>
#include <sstream>

namespace peregrine::bench {

namespace {

void add_line(std::string& message, std::string_view line) {
  if (!line.empty() && line.back() == '\r') {
    line.remove_suffix(1);
  }
  if (line.starts_with(">From ")) {
    line.remove_prefix(1);
  }
  message.append(line);
  message.append("\r\n");
}

}  // namespace

std::optional<std::vector<std::string>> load_mbox(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    return std::nullopt;
  }
  std::stringstream buffer;
  buffer << in.rdbuf();
  std::string data = buffer.str();
  std::vector<std::string> messages;
  std::string current;
  bool in_message = false;
  bool previous_blank = true;
  std::size_t pos = 0;
  while (pos < data.size()) {
    std::size_t lf = data.find('\n', pos);
    std::size_t end = lf == std::string::npos ? data.size() : lf;
    std::string_view line(data.data() + pos, end - pos);
    pos = lf == std::string::npos ? data.size() : lf + 1;
    if (previous_blank && line.starts_with("From ")) {
      if (in_message && !current.empty()) {
        // The blank line before a separator belongs to the mbox, not the message.
        if (current.ends_with("\r\n\r\n")) {
          current.resize(current.size() - 2);
        }
        messages.push_back(std::move(current));
      }
      current.clear();
      in_message = true;
      previous_blank = false;
      continue;
    }
    previous_blank = line.empty() || line == "\r";
    if (in_message) {
      add_line(current, line);
    }
  }
  if (in_message && !current.empty()) {
    messages.push_back(std::move(current));
  }
  if (messages.empty()) {
    return std::nullopt;
  }
  return messages;
}

const std::vector<std::string>& search_words() {
  static const std::vector<std::string> words = {"meeting", "report", "falcon", "budget",
                                                 "zyxwvut-nowhere"};
  return words;
}

std::vector<std::string> generated_messages(std::uint64_t seed, int count) {
  static const char* const kWords[] = {"meeting", "report", "falcon", "budget", "the",
                                       "a",       "plan",   "review", "next",   "week",
                                       "server",  "mail",   "quick",  "notes",  "draft"};
  std::mt19937_64 rng(seed);
  std::vector<std::string> out;
  for (int i = 0; i < count; ++i) {
    std::string m = fmt::format(
        "From: Sender {0} <sender{0}@example.org>\r\n"
        "To: bench@example.com\r\n"
        "Subject: Benchmark message {0}\r\n"
        "Date: Mon, 30 Nov 2026 12:{1:02}:00 +0000\r\n"
        "Message-ID: <bench-{2}-{0}@example.org>\r\n"
        "MIME-Version: 1.0\r\n"
        "Content-Type: text/plain; charset=us-ascii\r\n"
        "\r\n",
        i, i % 60, seed);
    int lines = 10 + static_cast<int>(rng() % 60);
    for (int l = 0; l < lines; ++l) {
      std::string line;
      for (int w = 0; w < 10; ++w) {
        line.append(w ? " " : "").append(kWords[rng() % std::size(kWords)]);
      }
      m += line + "\r\n";
    }
    out.push_back(std::move(m));
  }
  return out;
}

}  // namespace peregrine::bench
