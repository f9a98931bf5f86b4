#include "store/maildir/maildir_fs.h"

#include <gtest/gtest.h>

#include <atomic>
#include <filesystem>
#include <stdexcept>
#include <string>
#include <vector>

#include "store/maildir/sync_threads.h"
#include "store/maildir/test_util.h"

namespace peregrine::store::maildir {
namespace {

using testing::TempDir;

// Refuses to remove files whose name starts with "keep", and throws for
// "boom"; thread-safe, as MaildirFs requires.
class PickyFs : public ForwardingMaildirFs {
 public:
  PickyFs() : ForwardingMaildirFs(real_maildir_fs()) {}
  base::Result<void> remove(const std::filesystem::path& path) override {
    ++calls;
    const std::string name = path.filename().string();
    if (name.starts_with("boom")) {
      throw std::runtime_error("boom");
    }
    if (name.starts_with("keep")) {
      return base::fail(base::MailError::kTemporary, "refused " + name);
    }
    return target_.remove(path);
  }
  std::atomic<int> calls{0};
};

std::vector<std::filesystem::path> make_files(const std::filesystem::path& dir,
                                              const std::vector<std::string>& names) {
  std::vector<std::filesystem::path> paths;
  for (const std::string& name : names) {
    paths.push_back(dir / name);
    testing::write_file(paths.back(), "x");
  }
  return paths;
}

TEST(RemoveFiles, RemovesManyAndReportsEachResultInOrder) {
  for (std::size_t count : {std::size_t{3}, kParallelRemoveMin, 5 * kParallelRemoveMin + 1}) {
    SCOPED_TRACE(count);
    TempDir tmp;
    std::vector<std::string> names;
    for (std::size_t i = 0; i < count; ++i) {
      names.push_back((i % 5 == 2 ? "keep" : "gone") + std::to_string(i));
    }
    auto paths = make_files(tmp.path(), names);
    paths.push_back(tmp.path() / "never-existed");
    PickyFs fs;
    auto results = remove_files(fs, paths);
    ASSERT_EQ(results.size(), paths.size());
    EXPECT_EQ(fs.calls, static_cast<int>(paths.size()));
    for (std::size_t i = 0; i < count; ++i) {
      const bool keep = names[i].starts_with("keep");
      EXPECT_EQ(static_cast<bool>(results[i]), !keep) << names[i];
      EXPECT_EQ(std::filesystem::exists(paths[i]), keep) << names[i];
    }
    ASSERT_FALSE(results.back());
    EXPECT_EQ(results.back().error().code, base::MailError::kNotFound);
  }
}

// The helpers of a call are the store's sync threads, which stay for the
// next call, not threads made for it.
TEST(RemoveFiles, HelpersAreTheStoresSyncThreads) {
  TempDir tmp;
  std::vector<std::string> names;
  for (std::size_t i = 0; i < 4 * kParallelRemoveMin; ++i) {
    names.push_back("gone" + std::to_string(i));
  }
  auto paths = make_files(tmp.path(), names);
  PickyFs fs;
  for (const auto& result : remove_files(fs, paths)) {
    EXPECT_TRUE(result);
  }
  EXPECT_GT(sync_threads().thread_count(), 0u);
}

TEST(RemoveFiles, AnExceptionReachesTheCallerAfterTheWorkersStop) {
  TempDir tmp;
  std::vector<std::string> names;
  for (std::size_t i = 0; i < 4 * kParallelRemoveMin; ++i) {
    names.push_back((i == kParallelRemoveMin ? "boom" : "gone") + std::to_string(i));
  }
  auto paths = make_files(tmp.path(), names);
  PickyFs fs;
  EXPECT_THROW(remove_files(fs, paths), std::runtime_error);
  EXPECT_TRUE(std::filesystem::exists(paths[kParallelRemoveMin]));
}

TEST(WriteUnnamed, CreatesTheWholeFileDatedOrSaysItCannot) {
  TempDir tmp;
  MaildirFs& fs = real_maildir_fs();
  const std::filesystem::path to = tmp.path() / "msg";
  const std::string bytes = "Subject: x\r\n\r\n" + std::string(100000, 'y') + "\r\n";
  auto written = fs.write_unnamed(to, bytes, 1500000000);
  ASSERT_TRUE(written) << written.error().message;
  if (!*written) {
    // No unnamed files here: nothing may have been made.
    EXPECT_TRUE(std::filesystem::is_empty(tmp.path()));
    return;
  }
  EXPECT_EQ(testing::read_file(to), bytes);
  auto info = fs.stat(to);
  ASSERT_TRUE(info);
  EXPECT_EQ(info->mtime_ns, 1500000000LL * 1000000000LL);
  EXPECT_EQ(info->mode & 077, 0u);  // 0600 before the umask: never for others
  // An existing name is never replaced, and nothing else appears.
  auto again = fs.write_unnamed(to, "other", 1);
  ASSERT_FALSE(again);
  EXPECT_EQ(again.error().code, base::MailError::kExists);
  EXPECT_EQ(testing::read_file(to), bytes);
  std::size_t entries = 0;
  for ([[maybe_unused]] const auto& e : std::filesystem::directory_iterator(tmp.path())) {
    ++entries;
  }
  EXPECT_EQ(entries, 1u);
  // A directory that does not exist is an error, not a fallback.
  auto missing = fs.write_unnamed(tmp.path() / "none" / "msg", bytes, 1);
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.error().code, base::MailError::kNotFound);
}

}  // namespace
}  // namespace peregrine::store::maildir
