#include "smtp/proto/reader.h"

#include <cstring>

namespace peregrine::smtp {

void DataDecoder::emit(std::string_view bytes) {
  if (bytes.empty()) {
    return;
  }
  size_ += bytes.size();
  if (size_ <= max_bytes_) {
    text_.append(bytes);
  } else if (!text_.empty()) {
    std::string().swap(text_);  // over the limit: give the memory back
  }
  last_cr_ = bytes.back() == '\r';
}

std::size_t DataDecoder::feed(std::string_view in) {
  std::size_t pos = 0;
  while (pos < in.size() && state_ != State::kDone) {
    switch (state_) {
      case State::kLineStart:
        if (in[pos] == '.') {
          state_ = State::kDot;
          ++pos;
          continue;
        }
        state_ = State::kMid;
        continue;
      case State::kDot:
        if (in[pos] == '\n') {  // ".\n": the end, from a client sending bare LFs
          state_ = State::kDone;
          ++pos;
        } else if (in[pos] == '\r') {
          state_ = State::kDotCr;
          ++pos;
        } else {
          state_ = State::kMid;  // a stuffed dot: dropped, the line goes on
        }
        continue;
      case State::kDotCr:
        if (in[pos] == '\n') {
          state_ = State::kDone;
          ++pos;
        } else {
          emit("\r");  // ".\rX": the dot was stuffing, the CR is text
          state_ = State::kMid;
        }
        continue;
      case State::kMid: {
        const char* start = in.data() + pos;
        const void* lf = std::memchr(start, '\n', in.size() - pos);
        if (lf == nullptr) {
          emit(in.substr(pos));
          pos = in.size();
          continue;
        }
        const std::size_t at = static_cast<const char*>(lf) - in.data();
        emit(in.substr(pos, at - pos));
        emit(last_cr_ ? "\n" : "\r\n");  // a bare LF becomes CRLF
        pos = at + 1;
        state_ = State::kLineStart;
        continue;
      }
      case State::kDone:
        break;
    }
  }
  return pos;
}

std::span<char> Reader::prepare(std::size_t n) {
  if (begin_ == end_) {
    begin_ = end_ = 0;
  }
  if (buf_.size() - end_ < n) {
    if (begin_ > 0) {
      std::memmove(buf_.data(), buf_.data() + begin_, end_ - begin_);
      end_ -= begin_;
      begin_ = 0;
    }
    if (buf_.size() - end_ < n) {
      buf_.resize(end_ + n);
    }
  }
  return std::span<char>(buf_.data() + end_, n);
}

void Reader::commit(std::size_t n) { end_ += n; }

Reader::Line Reader::next_line() {
  if (begin_ == end_) {
    return {};  // nothing buffered (and maybe no buffer yet: no memchr on null)
  }
  if (skipping_) {
    const void* lf = std::memchr(buf_.data() + begin_, '\n', end_ - begin_);
    if (lf == nullptr) {
      begin_ = end_ = 0;
      return {};
    }
    begin_ = static_cast<const char*>(lf) - buf_.data() + 1;
    skipping_ = false;
    if (begin_ == end_) {
      return {};
    }
  }
  const char* start = buf_.data() + begin_;
  const std::size_t avail = end_ - begin_;
  const void* lf = std::memchr(start, '\n', avail);
  if (lf == nullptr) {
    if (avail > max_line_bytes_ + 1) {  // +1: the CR of a line at the limit
      begin_ = end_ = 0;
      skipping_ = true;
      return Line{Line::Kind::kTooLong, {}};
    }
    return {};
  }
  std::size_t len = static_cast<const char*>(lf) - start;
  begin_ += len + 1;
  if (len > 0 && start[len - 1] == '\r') {
    --len;
  }
  if (len > max_line_bytes_) {
    return Line{Line::Kind::kTooLong, {}};
  }
  return Line{Line::Kind::kLine, std::string_view(start, len)};
}

bool Reader::read_data(DataDecoder& decoder) {
  std::size_t used = decoder.feed(std::string_view(buf_.data() + begin_, end_ - begin_));
  begin_ += used;
  return decoder.done();
}

}  // namespace peregrine::smtp
