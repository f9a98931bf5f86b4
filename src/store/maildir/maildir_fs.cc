#include "store/maildir/maildir_fs.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <exception>
#include <future>
#include <mutex>
#include <system_error>
#include <utility>

#include "store/maildir/sync_threads.h"

namespace peregrine::store::maildir {
namespace {

std::unexpected<base::Error> fail_errno(std::string_view what, const std::filesystem::path& path,
                                        int err) {
  return std::unexpected(base::errno_error(what, path, err));
}

// A message file open for reading. pread() needs no shared offset, so one
// Body may be read by any thread (one at a time, as body.h promises).
class FileBody final : public Body {
 public:
  FileBody(int fd, std::uint64_t size, std::filesystem::path path)
      : fd_(fd), size_(size), path_(std::move(path)) {}
  ~FileBody() override { ::close(fd_); }
  FileBody(const FileBody&) = delete;
  FileBody& operator=(const FileBody&) = delete;

  std::uint64_t size() const override { return size_; }

  base::Result<std::size_t> read_into(std::uint64_t offset, std::span<char> out) const override {
    if (offset >= size_ || out.empty()) {
      return 0;
    }
    for (;;) {
      ssize_t n = ::pread(fd_, out.data(), out.size(), static_cast<off_t>(offset));
      if (n >= 0) {
        return static_cast<std::size_t>(n);
      }
      if (errno != EINTR) {
        return fail_errno("read", path_, errno);
      }
    }
  }

 private:
  int fd_;
  std::uint64_t size_;
  std::filesystem::path path_;
};

// Thread-safe: every call works on its own descriptors; the one member is atomic.
class PosixMaildirFs final : public MaildirFs {
 public:
  base::Result<std::unique_ptr<base::WritableFile>> create_exclusive(
      const std::filesystem::path& path, mode_t mode) override {
    return base_.create_exclusive(path, mode);
  }
  base::Result<std::string> read_file(const std::filesystem::path& path,
                                      std::size_t max_bytes) override {
    return base_.read_file(path, max_bytes);
  }
  base::Result<void> rename(const std::filesystem::path& from,
                            const std::filesystem::path& to) override {
    return base_.rename(from, to);
  }
  base::Result<void> remove(const std::filesystem::path& path) override {
    return base_.remove(path);
  }
  base::Result<void> set_mode(const std::filesystem::path& path, mode_t mode) override {
    return base_.set_mode(path, mode);
  }
  base::Result<void> sync_dir(const std::filesystem::path& dir) override {
    return base_.sync_dir(dir);
  }
  base::Result<base::FileInfo> stat(const std::filesystem::path& path) override {
    return base_.stat(path);
  }

  base::Result<void> make_dir(const std::filesystem::path& path, mode_t mode) override {
    if (::mkdir(path.c_str(), mode) != 0) {
      return fail_errno("mkdir", path, errno);
    }
    return {};
  }

  base::Result<void> remove_dir(const std::filesystem::path& path) override {
    if (::rmdir(path.c_str()) != 0) {
      return fail_errno("rmdir", path, errno);
    }
    return {};
  }

  base::Result<std::vector<DirEntry>> list_dir(const std::filesystem::path& path) override {
    DIR* dir = ::opendir(path.c_str());
    if (dir == nullptr) {
      return fail_errno("opendir", path, errno);
    }
    std::vector<DirEntry> out;
    for (;;) {
      errno = 0;
      dirent* entry = ::readdir(dir);
      if (entry == nullptr) {
        int err = errno;
        ::closedir(dir);
        if (err != 0) {
          return fail_errno("readdir", path, err);
        }
        return out;
      }
      std::string_view name = entry->d_name;
      if (name == "." || name == "..") {
        continue;
      }
      DirEntry e;
      e.name = std::string(name);
      switch (entry->d_type) {
        case DT_REG:
          e.type = DirEntry::Type::kFile;
          break;
        case DT_DIR:
          e.type = DirEntry::Type::kDirectory;
          break;
        case DT_UNKNOWN:
          e.type = DirEntry::Type::kUnknown;
          break;
        default:
          e.type = DirEntry::Type::kOther;
          break;
      }
      out.push_back(std::move(e));
    }
  }

  base::Result<void> link(const std::filesystem::path& from,
                          const std::filesystem::path& to) override {
    if (::link(from.c_str(), to.c_str()) != 0) {
      int err = errno;
      base::Error error = base::errno_error("link", from, err);
      error.message += " to " + to.string();
      return std::unexpected(std::move(error));
    }
    return {};
  }

  base::Result<std::unique_ptr<Body>> open_body(const std::filesystem::path& path) override {
    struct stat st;
    base::Result<int> fd = base::open_and_stat(path, O_RDONLY | O_CLOEXEC, st);
    if (!fd) {
      return std::unexpected(std::move(fd.error()));
    }
    return std::make_unique<FileBody>(*fd, static_cast<std::uint64_t>(st.st_size), path);
  }

  base::Result<void> set_mtime(const std::filesystem::path& path, std::int64_t seconds) override {
    timespec times[2];
    times[0].tv_sec = static_cast<time_t>(seconds);
    times[0].tv_nsec = 0;
    times[1] = times[0];
    if (::utimensat(AT_FDCWD, path.c_str(), times, 0) != 0) {
      return fail_errno("utimensat", path, errno);
    }
    return {};
  }

  base::Result<void> sync_file(const std::filesystem::path& path) override {
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
      return fail_errno("open", path, errno);
    }
    const int synced = ::fsync(fd);
    const int err = errno;
    ::close(fd);
    if (synced != 0) {
      return fail_errno("fsync", path, err);
    }
    return {};
  }

  base::Result<bool> write_unnamed(const std::filesystem::path& to, std::string_view bytes,
                                   std::int64_t mtime_seconds) override {
    if (!unnamed_.load(std::memory_order_relaxed)) {
      return false;
    }
    const std::filesystem::path dir = to.parent_path();
    const int fd = ::open(dir.c_str(), O_TMPFILE | O_WRONLY | O_CLOEXEC, 0600);
    if (fd < 0) {
      const int err = errno;
      if (err == EOPNOTSUPP || err == EISDIR || err == EINVAL) {
        unnamed_ = false;  // this filesystem (or kernel) has no O_TMPFILE
        return false;
      }
      return fail_errno("open", dir, err);
    }
    struct Closer {
      int fd;
      ~Closer() { ::close(fd); }
    } closer{fd};
    for (std::string_view rest = bytes; !rest.empty();) {
      const ssize_t n = ::write(fd, rest.data(), rest.size());
      if (n < 0) {
        if (errno == EINTR) {
          continue;
        }
        return fail_errno("write", to, errno);
      }
      rest.remove_prefix(static_cast<std::size_t>(n));
    }
    timespec times[2];
    times[0].tv_sec = static_cast<time_t>(mtime_seconds);
    times[0].tv_nsec = 0;
    times[1] = times[0];
    if (::futimens(fd, times) != 0) {
      return fail_errno("futimens", to, errno);
    }
    if (::fsync(fd) != 0) {
      return fail_errno("fsync", to, errno);
    }
    // AT_EMPTY_PATH links the descriptor itself, but needs
    // CAP_DAC_READ_SEARCH before Linux 6.10; /proc/self/fd needs /proc.
    if (::linkat(fd, "", AT_FDCWD, to.c_str(), AT_EMPTY_PATH) == 0) {
      return true;
    }
    int err = errno;
    if (err == EPERM || err == ENOENT || err == EINVAL) {
      const std::string self = "/proc/self/fd/" + std::to_string(fd);
      if (::linkat(AT_FDCWD, self.c_str(), AT_FDCWD, to.c_str(), AT_SYMLINK_FOLLOW) == 0) {
        return true;
      }
      err = errno;
      if (err == ENOENT && ::access("/proc/self/fd", F_OK) != 0) {
        unnamed_ = false;  // no /proc: the file goes with its descriptor
        return false;
      }
    }
    base::Error error = base::errno_error("link", dir / "(unnamed)", err);
    error.message += " to " + to.string();
    return std::unexpected(std::move(error));
  }

 private:
  base::FileSystem& base_ = base::real_file_system();
  // Cleared, for the rest of the process, when unnamed files are not to be had.
  std::atomic<bool> unnamed_{true};
};

}  // namespace

MaildirFs& real_maildir_fs() {
  static PosixMaildirFs fs;
  return fs;
}

std::vector<base::Result<void>> remove_files(MaildirFs& fs,
                                             std::span<const std::filesystem::path> paths) {
  return for_each_file(paths, [&fs](const std::filesystem::path& path) { return fs.remove(path); });
}

std::vector<base::Result<void>> sync_files(MaildirFs& fs,
                                           std::span<const std::filesystem::path> paths) {
  return for_each_file(paths,
                       [&fs](const std::filesystem::path& path) { return fs.sync_file(path); });
}

std::vector<base::Result<void>> for_each_file(
    std::span<const std::filesystem::path> paths,
    const std::function<base::Result<void>(const std::filesystem::path&)>& op) {
  std::vector<base::Result<void>> results(paths.size());
  if (paths.size() < kParallelRemoveMin) {
    for (std::size_t i = 0; i < paths.size(); ++i) {
      results[i] = op(paths[i]);
    }
    return results;
  }
  // Measured on the benchmark machine (docs/benchmarks.md, POP3): 3.3 ms an
  // unlink one at a time, 0.8 ms with 4 threads, 0.3 ms with 16.
  constexpr std::size_t kMaxThreads = 16;
  const std::size_t threads = std::min(kMaxThreads, paths.size() / 4);
  std::atomic<std::size_t> next{0};
  std::mutex error_mu;
  std::exception_ptr error;  // guarded by error_mu
  auto work = [&] {
    for (std::size_t i = next++; i < paths.size(); i = next++) {
      try {
        results[i] = op(paths[i]);
      } catch (...) {
        std::lock_guard lock(error_mu);
        if (!error) {
          error = std::current_exception();
        }
        next = paths.size();  // the others stop after their current file
      }
    }
  };
  // The helpers run on the store's sync threads, which stay for the next
  // call: threads made and joined for each call (every settle of 32 files
  // made seven) cost more than the calls they served.
  std::vector<std::future<void>> helpers;
  helpers.reserve(threads - 1);
  for (std::size_t t = 1; t < threads; ++t) {
    try {
      helpers.push_back(sync_threads().run(work));
    } catch (const std::system_error&) {
      break;  // no more threads now: the ones there are do the rest
    }
  }
  work();
  for (std::future<void>& helper : helpers) {
    helper.wait();
  }
  if (error) {
    std::rethrow_exception(error);
  }
  return results;
}

}  // namespace peregrine::store::maildir
