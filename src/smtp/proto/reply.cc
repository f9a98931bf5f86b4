#include "smtp/proto/reply.h"

namespace peregrine::smtp {
namespace {

void append_line(std::string& out, std::string_view text) {
  for (char c : text) {
    out.push_back(c == '\r' || c == '\n' ? ' ' : c);
  }
  out += "\r\n";
}

}  // namespace

std::string format_reply(const Reply& reply) {
  std::string out = std::to_string(reply.code);
  out.push_back(' ');
  if (!reply.enhanced.empty()) {
    out += reply.enhanced;
    out.push_back(' ');
  }
  append_line(out, reply.text);
  return out;
}

std::string format_multiline(int code, const std::vector<std::string>& lines) {
  std::string out;
  const std::string number = std::to_string(code);
  for (size_t i = 0; i < lines.size(); ++i) {
    out += number;
    out.push_back(i + 1 == lines.size() ? ' ' : '-');
    append_line(out, lines[i]);
  }
  return out;
}

}  // namespace peregrine::smtp
