#include "bench/loadgen/messages.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>

namespace peregrine::bench {
namespace {

std::string write_temp(const std::string& content) {
  char path[] = "/tmp/loadgen-mbox-XXXXXX";
  int fd = mkstemp(path);
  EXPECT_GE(fd, 0);
  close(fd);
  std::ofstream(path, std::ios::binary) << content;
  return path;
}

TEST(Mbox, SplitsAndUnescapes) {
  std::string path = write_temp(
      "From a@example.org Mon Nov 30 12:00:00 2026\n"
      "Subject: one\n\nbody\n>From the start\n\n"
      "From b@example.org Mon Nov 30 12:01:00 2026\r\n"
      "Subject: two\r\n\r\nline\r\nFrom inside a paragraph is no separator\r\n");
  auto messages = load_mbox(path);
  std::remove(path.c_str());
  ASSERT_TRUE(messages);
  ASSERT_EQ(messages->size(), 2u);
  EXPECT_EQ((*messages)[0], "Subject: one\r\n\r\nbody\r\nFrom the start\r\n");
  EXPECT_EQ((*messages)[1],
            "Subject: two\r\n\r\nline\r\nFrom inside a paragraph is no separator\r\n");
}

TEST(Mbox, EmptyOrMissing) {
  std::string path = write_temp("not an mbox\n");
  EXPECT_FALSE(load_mbox(path));
  std::remove(path.c_str());
  EXPECT_FALSE(load_mbox("/nonexistent/loadgen.mbox"));
}

TEST(Generated, DeterministicAndCrlf) {
  auto a = generated_messages(5, 4);
  auto b = generated_messages(5, 4);
  ASSERT_EQ(a.size(), 4u);
  EXPECT_EQ(a, b);
  for (const std::string& m : a) {
    EXPECT_EQ(m.find("\n"), m.find("\r\n") + 1);
    EXPECT_NE(m.find("\r\n\r\n"), std::string::npos);
  }
}

}  // namespace
}  // namespace peregrine::bench
