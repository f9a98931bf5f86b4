#include "imap/proto/command_reader.h"

#include <algorithm>
#include <cstring>

#include "imap/proto/chars.h"
#include "imap/proto/wire_string.h"

namespace peregrine::imap {
namespace {

// Enough for the longest valid marker, "~{4294967295+}".
constexpr size_t kSkipTailBytes = 32;
// A tag longer than this is not echoed back in an error.
constexpr size_t kMaxEchoedTag = 64;
// Compact the buffer once this many finished bytes sit at its front.
constexpr size_t kCompactBytes = 4096;

// The tag that starts `s`; when `whole` is false, `s` may stop mid-word, so
// the tag must be followed by a space.
std::string_view leading_tag(std::string_view s, bool whole) {
  size_t n = 0;
  while (n < s.size() && n <= kMaxEchoedTag && is_tag_char(s[n])) {
    ++n;
  }
  if (n == 0 || n > kMaxEchoedTag || (n < s.size() ? s[n] != ' ' : !whole)) {
    return {};
  }
  return s.substr(0, n);
}

ReaderEvent need_more() { return ReaderEvent{}; }

}  // namespace

std::string_view FramedCommand::tag() const {
  return lines.empty() ? std::string_view() : leading_tag(lines[0], true);
}

LiteralMarker find_literal_marker(std::string_view line, bool quotes_known) {
  LiteralMarker marker;
  if (line.empty() || line.back() != '}') {
    return marker;
  }
  size_t open = std::string_view::npos;
  if (quotes_known) {
    bool quoted = false;
    bool escaped = false;
    for (size_t i = 0; i < line.size(); ++i) {
      char c = line[i];
      if (quoted) {
        if (escaped) {
          escaped = false;
        } else if (c == '\\') {
          escaped = true;
        } else if (c == '"') {
          quoted = false;
        }
      } else if (c == '"') {
        quoted = true;
      } else if (c == '{') {
        open = i;
      }
    }
    if (quoted) {
      return marker;  // the "}" is inside an unterminated quoted string
    }
  } else {
    open = line.rfind('{');
  }
  if (open == std::string_view::npos) {
    return marker;
  }
  std::string_view digits = line.substr(open + 1, line.size() - open - 2);
  marker.synchronizing = !(!digits.empty() && digits.back() == '+');
  if (!marker.synchronizing) {
    digits.remove_suffix(1);
  }
  marker.binary = open > 0 && line[open - 1] == '~';
  marker.start = marker.binary ? open - 1 : open;
  marker.kind = LiteralMarker::Kind::kBad;
  std::optional<uint64_t> size = parse_number(digits);  // number: at most 2^32-1
  if (!size) {
    return marker;
  }
  marker.kind = LiteralMarker::Kind::kValid;
  marker.size = *size;
  return marker;
}

CommandReader::CommandReader(ReaderLimits limits) : limits_(limits) {}

void CommandReader::compact() {
  if (cmd_start_ == 0) {
    return;
  }
  if (cmd_start_ == buf_.size()) {
    buf_.clear();
  } else if (cmd_start_ >= kCompactBytes && cmd_start_ * 2 >= buf_.size()) {
    buf_.erase(0, cmd_start_);
  } else {
    return;
  }
  seg_start_ -= cmd_start_;
  scan_pos_ -= cmd_start_;
  cmd_start_ = 0;
}

void CommandReader::feed(std::string_view bytes) {
  if (state_ == State::kFailed) {
    return;
  }
  compact();
  buf_.append(bytes);
}

std::span<char> CommandReader::prepare(size_t n) {
  compact();
  size_t old = buf_.size();
  buf_.resize(old + n);
  pending_prepare_ = n;
  return std::span<char>(buf_.data() + old, n);
}

void CommandReader::commit(size_t k) {
  // prepare() grew the buffer by n; keep only the k bytes written.
  buf_.resize(buf_.size() - (pending_prepare_ - std::min(k, pending_prepare_)));
  pending_prepare_ = 0;
  if (state_ == State::kFailed) {
    buf_.resize(cmd_start_);
  }
}

void CommandReader::start_command(size_t at) {
  cmd_start_ = at;
  seg_start_ = at;
  scan_pos_ = at;
  cmd_bytes_ = 0;
  line_spans_.clear();
  literal_spans_.clear();
  state_ = State::kLine;
}

std::string CommandReader::current_tag() const {
  std::string_view rest(buf_.data() + cmd_start_, buf_.size() - cmd_start_);
  return std::string(leading_tag(rest, false));
}

ReaderEvent CommandReader::drop(ReaderError error, std::string message) {
  ReaderEvent ev;
  ev.kind = ReaderEvent::Kind::kError;
  ev.error = error;
  ev.tag = current_tag();
  ev.message = std::move(message);
  line_spans_.clear();
  literal_spans_.clear();
  cmd_bytes_ = 0;
  return ev;
}

ReaderEvent CommandReader::fail(ReaderError error, std::string message) {
  ReaderEvent ev = drop(error, std::move(message));
  ev.fatal = true;
  state_ = State::kFailed;
  buf_.clear();
  cmd_start_ = seg_start_ = scan_pos_ = 0;
  return ev;
}

ReaderEvent CommandReader::on_line(size_t lf) {
  size_t end = lf;
  if (end > seg_start_ && buf_[end - 1] == '\r') {
    --end;
  }
  size_t len = end - seg_start_;
  if (len > limits_.max_line_bytes || cmd_bytes_ + len > limits_.max_command_bytes) {
    bool long_line = len > limits_.max_line_bytes;
    ReaderEvent ev = drop(long_line ? ReaderError::kLineTooLong : ReaderError::kCommandTooBig,
                          long_line ? "line too long" : "command too long");
    // Skip this line the same way as one reported before its end, so a
    // literal it announces is handled identically.
    cmd_start_ = scan_pos_ = seg_start_;
    skip_tail_.clear();
    state_ = State::kSkipLine;
    return ev;
  }
  std::string_view line(buf_.data() + seg_start_, len);
  LiteralMarker marker = find_literal_marker(line);
  if (marker.kind == LiteralMarker::Kind::kNone) {
    line_spans_.push_back(Span{seg_start_ - cmd_start_, len});
    command_.lines.clear();
    command_.literals.clear();
    const char* base = buf_.data() + cmd_start_;
    for (const Span& s : line_spans_) {
      command_.lines.emplace_back(base + s.offset, s.size);
    }
    for (const LiteralSpan& l : literal_spans_) {
      command_.literals.push_back(
          Literal{std::string_view(base + l.span.offset, l.span.size), l.synchronizing, l.binary});
    }
    // The command's bytes stay in the buffer until the next call.
    start_command(lf + 1);
    ReaderEvent ev;
    ev.kind = ReaderEvent::Kind::kCommand;
    ev.command = &command_;
    return ev;
  }
  if (marker.kind == LiteralMarker::Kind::kBad) {
    if (!marker.synchronizing) {
      return fail(ReaderError::kBadLiteral, "bad literal size");
    }
    ReaderEvent ev = drop(ReaderError::kBadLiteral, "bad literal size");
    start_command(lf + 1);
    return ev;
  }
  ReaderError error = ReaderError::kLiteralTooBig;
  std::string message;
  if (marker.size > limits_.max_literal_bytes) {
    message = "literal too big";
  } else if (literal_spans_.size() >= limits_.max_literals) {
    error = ReaderError::kCommandTooBig;
    message = "too many literals";
  } else if (cmd_bytes_ + len + marker.size > limits_.max_command_bytes) {
    error = ReaderError::kCommandTooBig;
    message = "command too long";
  }
  if (!message.empty()) {
    if (!marker.synchronizing) {
      return fail(error, std::move(message));
    }
    // No "+" is sent, so the client does not send the literal: the next
    // line is a new command.
    ReaderEvent ev = drop(error, std::move(message));
    start_command(lf + 1);
    return ev;
  }
  line_spans_.push_back(Span{seg_start_ - cmd_start_, marker.start});
  cmd_bytes_ += len + marker.size;
  lit_size_ = marker.size;
  lit_sync_ = marker.synchronizing;
  lit_binary_ = marker.binary;
  seg_start_ = scan_pos_ = lf + 1;
  state_ = State::kLiteral;
  if (marker.synchronizing) {
    ReaderEvent ev;
    ev.kind = ReaderEvent::Kind::kContinue;
    return ev;
  }
  return need_more();  // the caller loops on; see next()
}

ReaderEvent CommandReader::on_skip_line(size_t lf) {
  skip_tail_.append(buf_.data() + scan_pos_, lf - scan_pos_);
  if (skip_tail_.size() > kSkipTailBytes) {
    skip_tail_.erase(0, skip_tail_.size() - kSkipTailBytes);
  }
  std::string_view tail = skip_tail_;
  if (!tail.empty() && tail.back() == '\r') {
    tail.remove_suffix(1);
  }
  LiteralMarker marker = find_literal_marker(tail, /*quotes_known=*/false);
  skip_tail_.clear();
  start_command(lf + 1);
  if (marker.kind == LiteralMarker::Kind::kNone || marker.synchronizing) {
    // A synchronizing literal is never sent: the client got BAD, not "+".
    return need_more();
  }
  // The dropped command's tag was reported with the first error; what
  // follows in the buffer is not a command.
  ReaderEvent ev;
  if (marker.kind == LiteralMarker::Kind::kBad) {
    ev = fail(ReaderError::kBadLiteral, "bad literal size");
  } else if (marker.size > limits_.max_literal_bytes) {
    ev = fail(ReaderError::kLiteralTooBig, "literal too big");
  }
  if (ev.kind == ReaderEvent::Kind::kError) {
    ev.tag.clear();
    return ev;
  }
  // The dropped command goes on after a non-synchronizing literal: discard
  // its data, then the rest of the command.
  skip_left_ = marker.size;
  state_ = State::kSkipLiteral;
  return need_more();
}

ReaderEvent CommandReader::next() {
  compact();
  for (;;) {
    switch (state_) {
      case State::kFailed:
        return need_more();
      case State::kLine: {
        const void* hit = scan_pos_ < buf_.size()
                              ? std::memchr(buf_.data() + scan_pos_, '\n', buf_.size() - scan_pos_)
                              : nullptr;
        if (hit == nullptr) {
          scan_pos_ = buf_.size();
          if (buf_.size() - seg_start_ > limits_.max_line_bytes + 1) {
            // Reported before the line ends, so a client cannot make us
            // buffer an endless line.
            ReaderEvent ev = drop(ReaderError::kLineTooLong, "line too long");
            cmd_start_ = scan_pos_ = seg_start_;
            skip_tail_.clear();
            state_ = State::kSkipLine;
            return ev;
          }
          return need_more();
        }
        size_t lf = static_cast<size_t>(static_cast<const char*>(hit) - buf_.data());
        ReaderEvent ev = on_line(lf);
        if (ev.kind != ReaderEvent::Kind::kNeedMore) {
          return ev;
        }
        break;  // a non-synchronizing literal follows
      }
      case State::kLiteral: {
        if (buf_.size() - seg_start_ < lit_size_) {
          scan_pos_ = buf_.size();
          return need_more();
        }
        literal_spans_.push_back(LiteralSpan{
            Span{seg_start_ - cmd_start_, static_cast<size_t>(lit_size_)}, lit_sync_, lit_binary_});
        seg_start_ = scan_pos_ = seg_start_ + static_cast<size_t>(lit_size_);
        state_ = State::kLine;
        break;
      }
      case State::kSkipLine: {
        const void* hit = scan_pos_ < buf_.size()
                              ? std::memchr(buf_.data() + scan_pos_, '\n', buf_.size() - scan_pos_)
                              : nullptr;
        if (hit == nullptr) {
          skip_tail_.append(buf_.data() + scan_pos_, buf_.size() - scan_pos_);
          if (skip_tail_.size() > kSkipTailBytes) {
            skip_tail_.erase(0, skip_tail_.size() - kSkipTailBytes);
          }
          cmd_start_ = seg_start_ = scan_pos_ = buf_.size();
          return need_more();
        }
        size_t lf = static_cast<size_t>(static_cast<const char*>(hit) - buf_.data());
        ReaderEvent ev = on_skip_line(lf);
        if (ev.kind != ReaderEvent::Kind::kNeedMore) {
          return ev;
        }
        break;
      }
      case State::kSkipLiteral: {
        uint64_t take = std::min<uint64_t>(buf_.size() - scan_pos_, skip_left_);
        skip_left_ -= take;
        cmd_start_ = seg_start_ = scan_pos_ = scan_pos_ + static_cast<size_t>(take);
        if (skip_left_ > 0) {
          return need_more();
        }
        skip_tail_.clear();
        state_ = State::kSkipLine;
        break;
      }
    }
  }
}

}  // namespace peregrine::imap
