#include "base/files.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <optional>
#include <utility>

namespace peregrine::base {
namespace {

std::string errno_text(int err) {
  char buf[256];
  // GNU strerror_r: returns a pointer to the text, which may or may not be buf.
  return strerror_r(err, buf, sizeof(buf));
}

MailError errno_code(int err) {
  switch (err) {
    case ENOENT:
    case ENOTDIR:
      return MailError::kNotFound;
    case EACCES:
    case EPERM:
    case EROFS:
      return MailError::kNoPermission;
    case EEXIST:
      return MailError::kExists;
    case EDQUOT:
      return MailError::kOverQuota;
    case EFBIG:
      return MailError::kTooBig;
    default:
      return MailError::kTemporary;
  }
}

std::unexpected<Error> fail_errno(std::string_view what, const std::filesystem::path& path,
                                  int err) {
  return std::unexpected<Error>(errno_error(what, path, err));
}

// open(2), retried on EINTR: the descriptor, or -1 with errno set.
int open_retrying(const std::filesystem::path& path, int flags, mode_t mode = 0) {
  int fd;
  do {
    fd = ::open(path.c_str(), flags, mode);
  } while (fd < 0 && errno == EINTR);
  return fd;
}

// Closes `fd` on scope exit unless released.
class FdCloser {
 public:
  explicit FdCloser(int fd) : fd_(fd) {}
  ~FdCloser() {
    if (fd_ >= 0) {
      ::close(fd_);
    }
  }
  FdCloser(const FdCloser&) = delete;
  FdCloser& operator=(const FdCloser&) = delete;

 private:
  int fd_;
};

class PosixWritableFile final : public WritableFile {
 public:
  PosixWritableFile(int fd, std::filesystem::path path) : fd_(fd), path_(std::move(path)) {}
  ~PosixWritableFile() override {
    if (fd_ >= 0) {
      ::close(fd_);
    }
  }

  Result<void> append(std::string_view data) override {
    if (fd_ < 0) {
      return fail(MailError::kInternal, "write " + path_.string() + ": file is closed");
    }
    while (!data.empty()) {
      ssize_t n = ::write(fd_, data.data(), data.size());
      if (n < 0) {
        if (errno == EINTR) {
          continue;
        }
        return fail_errno("write", path_, errno);
      }
      data.remove_prefix(static_cast<std::size_t>(n));
    }
    return {};
  }

  Result<void> sync() override {
    if (fd_ < 0) {
      return fail(MailError::kInternal, "fsync " + path_.string() + ": file is closed");
    }
    if (::fsync(fd_) != 0) {
      return fail_errno("fsync", path_, errno);
    }
    return {};
  }

  Result<void> close() override {
    if (fd_ < 0) {
      return {};
    }
    int fd = std::exchange(fd_, -1);
    // Linux releases the descriptor even when close fails; never retry it.
    if (::close(fd) != 0 && errno != EINTR) {
      return fail_errno("close", path_, errno);
    }
    return {};
  }

  const std::filesystem::path& path() const override { return path_; }

 private:
  int fd_;
  std::filesystem::path path_;
};

class PosixFileSystem final : public FileSystem {
 public:
  Result<std::unique_ptr<WritableFile>> create_exclusive(const std::filesystem::path& path,
                                                         mode_t mode) override {
    const int fd = open_retrying(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode);
    if (fd < 0) {
      return fail_errno("create", path, errno);
    }
    return std::make_unique<PosixWritableFile>(fd, path);
  }

  Result<std::string> read_file(const std::filesystem::path& path, std::size_t max_bytes) override {
    struct stat st;
    Result<int> opened = open_and_stat(path, O_RDONLY | O_CLOEXEC, st);
    if (!opened) {
      return std::unexpected(std::move(opened.error()));
    }
    const int fd = *opened;
    FdCloser closer(fd);
    if (S_ISDIR(st.st_mode)) {
      return fail_errno("read", path, EISDIR);
    }
    std::string out;
    if (S_ISREG(st.st_mode)) {
      if (static_cast<std::uint64_t>(st.st_size) > max_bytes) {
        return fail(MailError::kTooBig, "read " + path.string() + ": larger than " +
                                            std::to_string(max_bytes) + " bytes");
      }
      out.reserve(static_cast<std::size_t>(st.st_size));
    }
    // Read until EOF rather than trusting st_size: the file may be growing,
    // or be a pipe or /proc file that reports size 0.
    char buf[16384];
    for (;;) {
      ssize_t n = ::read(fd, buf, sizeof(buf));
      if (n < 0) {
        if (errno == EINTR) {
          continue;
        }
        return fail_errno("read", path, errno);
      }
      if (n == 0) {
        break;
      }
      if (out.size() + static_cast<std::size_t>(n) > max_bytes) {
        return fail(MailError::kTooBig, "read " + path.string() + ": larger than " +
                                            std::to_string(max_bytes) + " bytes");
      }
      out.append(buf, static_cast<std::size_t>(n));
    }
    return out;
  }

  Result<void> rename(const std::filesystem::path& from, const std::filesystem::path& to) override {
    if (::rename(from.c_str(), to.c_str()) != 0) {
      int err = errno;
      return std::unexpected<Error>(
          Error{errno_code(err),
                "rename " + from.string() + " to " + to.string() + ": " + errno_text(err)});
    }
    return {};
  }

  Result<void> remove(const std::filesystem::path& path) override {
    if (::unlink(path.c_str()) != 0) {
      return fail_errno("remove", path, errno);
    }
    return {};
  }

  Result<void> set_mode(const std::filesystem::path& path, mode_t mode) override {
    if (::chmod(path.c_str(), mode) != 0) {
      return fail_errno("chmod", path, errno);
    }
    return {};
  }

  Result<void> sync_dir(const std::filesystem::path& dir) override {
    const int fd = open_retrying(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0) {
      return fail_errno("open directory", dir, errno);
    }
    FdCloser closer(fd);
    if (::fsync(fd) != 0) {
      return fail_errno("fsync directory", dir, errno);
    }
    return {};
  }

  Result<FileInfo> stat(const std::filesystem::path& path) override {
    struct stat st;
    if (::stat(path.c_str(), &st) != 0) {
      return fail_errno("stat", path, errno);
    }
    FileInfo info;
    info.size = static_cast<std::uint64_t>(st.st_size);
    info.mtime_ns =
        static_cast<std::int64_t>(st.st_mtim.tv_sec) * 1'000'000'000 + st.st_mtim.tv_nsec;
    info.inode = static_cast<std::uint64_t>(st.st_ino);
    info.device = static_cast<std::uint64_t>(st.st_dev);
    info.mode = st.st_mode;
    return info;
  }
};

// A name in the target's directory that no other writer picks: the pid tells
// processes apart, the counter threads and successive calls. A leading dot
// keeps it out of globs and Maildir scans.
std::filesystem::path temp_path_for(const std::filesystem::path& path) {
  static std::atomic<std::uint64_t> counter{0};
  // Appended piece by piece: "." + std::string draws a false -Wrestrict
  // from GCC 12 at -O2.
  std::string name = ".";
  name += path.filename().string();
  name += ".tmp." + std::to_string(::getpid()) + ".";
  name += std::to_string(counter.fetch_add(1, std::memory_order_relaxed));
  return path.parent_path() / name;
}

}  // namespace

bool FileInfo::is_regular() const { return S_ISREG(mode); }

Error errno_error(std::string_view what, const std::filesystem::path& path, int err) {
  std::string message(what);
  message += ' ';
  message += path.string();
  message += ": ";
  message += errno_text(err);
  return Error{errno_code(err), std::move(message)};
}

FileSystem& real_file_system() {
  static PosixFileSystem fs;
  return fs;
}

Result<std::string> read_file(FileSystem& fs, const std::filesystem::path& path,
                              std::size_t max_bytes) {
  return fs.read_file(path, max_bytes);
}

Result<std::string> read_file(const std::filesystem::path& path, std::size_t max_bytes) {
  return real_file_system().read_file(path, max_bytes);
}

Result<void> atomic_write(FileSystem& fs, const std::filesystem::path& path,
                          std::string_view contents, const AtomicWriteOptions& options) {
  if (path.filename().empty()) {
    return fail(MailError::kBadInput, "atomic write " + path.string() + ": not a file name");
  }
  // Keep the permission bits of the file being replaced.
  std::optional<mode_t> keep_mode;
  if (auto info = fs.stat(path)) {
    if (!info->is_regular()) {
      return fail(MailError::kBadInput,
                  "atomic write " + path.string() + ": exists and is not a regular file");
    }
    keep_mode = info->mode & 07777;
  } else if (info.error().code != MailError::kNotFound) {
    return std::unexpected(info.error());
  }

  // A stale temp file of a crashed process with a recycled pid is possible,
  // so try a few names.
  std::filesystem::path temp;
  std::unique_ptr<WritableFile> file;
  for (int attempt = 0;; ++attempt) {
    temp = temp_path_for(path);
    auto created = fs.create_exclusive(temp, keep_mode.value_or(options.new_file_mode));
    if (created) {
      file = std::move(*created);
      break;
    }
    if (created.error().code != MailError::kExists || attempt >= 4) {
      return std::unexpected(created.error());
    }
  }

  auto write_and_rename = [&]() -> Result<void> {
    if (auto r = file->append(contents); !r) {
      return r;
    }
    if (auto r = file->sync(); !r) {
      return r;
    }
    if (auto r = file->close(); !r) {
      return r;
    }
    // The umask may have narrowed the bits of a file we are replacing; put
    // them back exactly.
    if (keep_mode) {
      if (auto r = fs.set_mode(temp, *keep_mode); !r) {
        return r;
      }
    }
    return fs.rename(temp, path);
  };
  if (auto r = write_and_rename(); !r) {
    file.reset();
    (void)fs.remove(temp);  // best effort; the first error is the one to report
    return r;
  }

  std::filesystem::path dir = path.parent_path();
  if (dir.empty()) {
    dir = ".";
  }
  if (auto r = fs.sync_dir(dir); !r) {
    Error error = r.error();
    error.message += " (" + path.string() + " was replaced but may not survive a crash)";
    return std::unexpected(std::move(error));
  }
  return {};
}

Result<void> atomic_write(const std::filesystem::path& path, std::string_view contents,
                          const AtomicWriteOptions& options) {
  return atomic_write(real_file_system(), path, contents, options);
}

Result<int> open_and_stat(const std::filesystem::path& path, int flags, struct stat& st) {
  const int fd = open_retrying(path, flags);
  if (fd < 0) {
    return fail_errno("open", path, errno);
  }
  if (::fstat(fd, &st) != 0) {
    const int err = errno;
    ::close(fd);
    return fail_errno("stat", path, err);
  }
  return fd;
}

Result<void> check_readable_file(const std::filesystem::path& path) {
  struct stat st;
  Result<int> opened = open_and_stat(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK, st);
  if (!opened) {
    return std::unexpected(std::move(opened.error()));
  }
  FdCloser closer(*opened);
  if (!S_ISREG(st.st_mode)) {
    return fail(MailError::kBadInput, "open " + path.string() + ": not a regular file");
  }
  return {};
}

}  // namespace peregrine::base
