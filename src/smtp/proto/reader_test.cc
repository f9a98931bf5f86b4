#include "smtp/proto/reader.h"

#include <gtest/gtest.h>

#include <cstring>

namespace peregrine::smtp {
namespace {

void feed(Reader& reader, std::string_view bytes) {
  std::span<char> space = reader.prepare(bytes.size());
  std::memcpy(space.data(), bytes.data(), bytes.size());
  reader.commit(bytes.size());
}

struct Decoded {
  std::string text;
  std::string rest;  // bytes after the end marker
  bool done = false;
  bool too_big = false;
  std::uint64_t size = 0;
};

// Decodes `wire` whole and, separately, one byte at a time; both must agree.
Decoded decode(std::string_view wire, std::uint64_t max = 1 << 20) {
  Decoded whole;
  {
    DataDecoder decoder(max);
    std::size_t used = decoder.feed(wire);
    whole = {decoder.text(), std::string(wire.substr(used)), decoder.done(), decoder.too_big(),
             decoder.size()};
  }
  DataDecoder decoder(max);
  std::size_t pos = 0;
  while (pos < wire.size() && !decoder.done()) {
    pos += decoder.feed(wire.substr(pos, 1));
  }
  EXPECT_EQ(decoder.text(), whole.text) << "byte at a time differs";
  EXPECT_EQ(std::string(wire.substr(pos)), whole.rest);
  EXPECT_EQ(decoder.done(), whole.done);
  EXPECT_EQ(decoder.size(), whole.size);
  return whole;
}

TEST(DataDecoder, PlainMessage) {
  Decoded d = decode("Subject: x\r\n\r\nbody\r\n.\r\nQUIT\r\n");
  EXPECT_TRUE(d.done);
  EXPECT_EQ(d.text, "Subject: x\r\n\r\nbody\r\n");
  EXPECT_EQ(d.rest, "QUIT\r\n");
  EXPECT_EQ(d.size, d.text.size());
}

TEST(DataDecoder, DotStuffing) {
  // A line "." is sent "..", a line "..x" is sent "...x" (RFC 5321 §4.5.2).
  Decoded d = decode("a\r\n..\r\n...x\r\n.y\r\n.\r\n");
  EXPECT_TRUE(d.done);
  EXPECT_EQ(d.text, "a\r\n.\r\n..x\r\ny\r\n");
  // A dot at the start of the text, and an empty message.
  EXPECT_EQ(decode("..\r\n.\r\n").text, ".\r\n");
  Decoded empty = decode(".\r\n");
  EXPECT_TRUE(empty.done);
  EXPECT_EQ(empty.text, "");
  // A dot not at a line start stays.
  EXPECT_EQ(decode("a.b\r\n. \r\n.\r\n").text, "a.b\r\n \r\n");
  // ".\r" followed by other text: the dot was stuffing, the CR is text.
  EXPECT_EQ(decode(".\rx\r\n.\r\n").text, "\rx\r\n");
}

TEST(DataDecoder, BareLineFeeds) {
  Decoded d = decode("a\nb\r\n\n.\n");
  EXPECT_TRUE(d.done);
  EXPECT_EQ(d.text, "a\r\nb\r\n\r\n");
  EXPECT_EQ(decode("a\r\r\n.\r\n").text, "a\r\r\n");
}

TEST(DataDecoder, NotDoneWithoutTheMarker) {
  Decoded d = decode("a\r\n.x");
  EXPECT_FALSE(d.done);
  d = decode("a\r\n.\r");
  EXPECT_FALSE(d.done);
  EXPECT_EQ(d.text, "a\r\n");
}

TEST(DataDecoder, OverTheLimitIsCountedNotKept) {
  Decoded d = decode("0123456789\r\n0123456789\r\n.\r\nNOOP\r\n", 15);
  EXPECT_TRUE(d.done);
  EXPECT_TRUE(d.too_big);
  EXPECT_EQ(d.size, 24u);
  EXPECT_TRUE(d.text.empty());
  EXPECT_EQ(d.rest, "NOOP\r\n");
}

TEST(Reader, LinesAndPipelining) {
  Reader reader(100);
  feed(reader, "LHLO x\r\nMAIL FROM:<a@b>\nRCPT");
  Reader::Line line = reader.next_line();
  ASSERT_EQ(line.kind, Reader::Line::Kind::kLine);
  EXPECT_EQ(line.text, "LHLO x");
  line = reader.next_line();
  ASSERT_EQ(line.kind, Reader::Line::Kind::kLine);
  EXPECT_EQ(line.text, "MAIL FROM:<a@b>");
  EXPECT_EQ(reader.next_line().kind, Reader::Line::Kind::kNeedMore);
  feed(reader, " TO:<c>\r\nDATA\r\nhi\r\n.\r\nQUIT\r\n");
  EXPECT_EQ(reader.next_line().text, "RCPT TO:<c>");
  EXPECT_EQ(reader.next_line().text, "DATA");
  DataDecoder decoder(1000);
  EXPECT_TRUE(reader.read_data(decoder));
  EXPECT_EQ(decoder.text(), "hi\r\n");
  EXPECT_EQ(reader.next_line().text, "QUIT");
  EXPECT_EQ(reader.buffered(), 0u);
}

TEST(Reader, OverlongLineIsSkipped) {
  Reader reader(10);
  feed(reader, "NOOP 1234567890123");
  EXPECT_EQ(reader.next_line().kind, Reader::Line::Kind::kTooLong);
  EXPECT_EQ(reader.next_line().kind, Reader::Line::Kind::kNeedMore);
  feed(reader, "4567\r\nNOOP\r\n");
  EXPECT_EQ(reader.next_line().text, "NOOP");
  // Whole in one piece: reported once, then the next line.
  feed(reader, "NOOP 1234567890123\r\nQUIT\r\n");
  EXPECT_EQ(reader.next_line().kind, Reader::Line::Kind::kTooLong);
  EXPECT_EQ(reader.next_line().text, "QUIT");
  // A line of exactly the limit passes.
  feed(reader, "0123456789\r\n");
  EXPECT_EQ(reader.next_line().text, "0123456789");
}

TEST(Reader, ByteAtATimeLines) {
  Reader reader(100);
  std::string_view wire = "NOOP\r\nQUIT\r\n";
  std::vector<std::string> lines;
  for (char c : wire) {
    feed(reader, std::string_view(&c, 1));
    Reader::Line line = reader.next_line();
    if (line.kind == Reader::Line::Kind::kLine) {
      lines.emplace_back(line.text);
    }
  }
  EXPECT_EQ(lines, (std::vector<std::string>{"NOOP", "QUIT"}));
}

}  // namespace
}  // namespace peregrine::smtp
