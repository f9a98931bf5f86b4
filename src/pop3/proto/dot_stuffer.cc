#include "pop3/proto/dot_stuffer.h"

#include <cstring>

namespace peregrine::pop3 {

void DotStuffer::line_ended(std::size_t length, char first) {
  if (!body_lines_) {
    return;
  }
  if (in_header_) {
    // The header ends at the first empty line ("" or a lone CR before LF).
    if (length == 0 || (length == 1 && first == '\r')) {
      in_header_ = false;
      done_ = *body_lines_ == 0;
    }
    return;
  }
  if (--*body_lines_ == 0) {
    done_ = true;
  }
}

void DotStuffer::feed(std::string_view chunk, std::string& out) {
  while (!chunk.empty() && !done_) {
    if (at_line_start_) {
      if (chunk.front() == '.') {
        out.push_back('.');
      }
      line_first_ = chunk.front();
      line_length_ = 0;
      at_line_start_ = false;
    }
    const void* lf = std::memchr(chunk.data(), '\n', chunk.size());
    if (lf == nullptr) {
      out.append(chunk);
      line_length_ += chunk.size();
      last_ = chunk.back();
      return;
    }
    const std::size_t upto = static_cast<std::size_t>(static_cast<const char*>(lf) - chunk.data());
    out.append(chunk.substr(0, upto + 1));
    line_length_ += upto;
    last_ = '\n';
    at_line_start_ = true;
    line_ended(line_length_, line_first_);
    chunk.remove_prefix(upto + 1);
  }
}

void DotStuffer::finish(std::string& out) {
  if (!at_line_start_) {
    // The message's last line has no LF; a trailing CR is its start.
    out.append(last_ == '\r' ? "\n" : "\r\n");
    at_line_start_ = true;
  }
  out.append(".\r\n");
}

}  // namespace peregrine::pop3
