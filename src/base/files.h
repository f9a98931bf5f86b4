#pragma once

// Files: whole-file reads and crash-safe whole-file replacement, through a small
// seam (FileSystem) so that storage tests can inject a failed fsync, a full
// disk or a crash between two steps.
//
// Every error names the path and the OS's errno text ("write
// /var/.users.tmp.123.0: No space left on device"). errno maps to MailError as:
// ENOENT/ENOTDIR -> kNotFound, EACCES/EPERM/EROFS -> kNoPermission,
// EEXIST -> kExists, EDQUOT -> kOverQuota, EFBIG -> kTooBig, anything else
// (EIO, ENOSPC, ...) -> kTemporary.

#include <sys/stat.h>
#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <string_view>

#include "base/result.h"

namespace peregrine::base {

// What stat() reports. `mtime_ns` is nanoseconds since the epoch; together with
// size, inode and device it tells whether a file was replaced or changed.
struct FileInfo {
  std::uint64_t size = 0;
  std::int64_t mtime_ns = 0;
  std::uint64_t inode = 0;
  std::uint64_t device = 0;
  mode_t mode = 0;  // st_mode: type and permission bits
  bool is_regular() const;
  bool operator==(const FileInfo&) const = default;
};

// A file open for writing. The destructor closes it if close() was not called
// (ignoring errors: call close() to learn of them). Not thread-safe.
class WritableFile {
 public:
  virtual ~WritableFile() = default;
  // Writes all of `data` (retrying short writes and EINTR).
  virtual Result<void> append(std::string_view data) = 0;
  // fsync: the data is on stable storage when this returns success.
  virtual Result<void> sync() = 0;
  // Closes the descriptor; a second call is a no-op.
  virtual Result<void> close() = 0;
  virtual const std::filesystem::path& path() const = 0;
};

// The filesystem operations that durable writes need. The real one is
// real_file_system(); tests subclass it (or wrap it) to fail a chosen step.
// Implementations must be safe to call from several threads at once.
class FileSystem {
 public:
  virtual ~FileSystem() = default;
  // Creates `path` for writing, failing with kExists if it already exists
  // (O_CREAT|O_EXCL). `mode` is the permission bits, before the umask.
  virtual Result<std::unique_ptr<WritableFile>> create_exclusive(const std::filesystem::path& path,
                                                                 mode_t mode) = 0;
  // The whole file; kTooBig if it is larger than `max_bytes`.
  virtual Result<std::string> read_file(const std::filesystem::path& path,
                                        std::size_t max_bytes) = 0;
  // rename(2): atomically replaces `to` if it exists.
  virtual Result<void> rename(const std::filesystem::path& from,
                              const std::filesystem::path& to) = 0;
  // unlink(2) a file.
  virtual Result<void> remove(const std::filesystem::path& path) = 0;
  // chmod(2): sets the permission bits.
  virtual Result<void> set_mode(const std::filesystem::path& path, mode_t mode) = 0;
  // fsync of a directory, so that a rename or create in it is durable.
  virtual Result<void> sync_dir(const std::filesystem::path& dir) = 0;
  // stat(2), following symlinks; kNotFound if it does not exist.
  virtual Result<FileInfo> stat(const std::filesystem::path& path) = 0;
};

// The process-wide POSIX implementation. Stateless, so thread-safe.
FileSystem& real_file_system();

// Bound on read_file() when the caller gives none.
inline constexpr std::size_t kDefaultMaxReadBytes = 64 * 1024 * 1024;

// Reads a whole file through `fs`.
Result<std::string> read_file(FileSystem& fs, const std::filesystem::path& path,
                              std::size_t max_bytes = kDefaultMaxReadBytes);
Result<std::string> read_file(const std::filesystem::path& path,
                              std::size_t max_bytes = kDefaultMaxReadBytes);

struct AtomicWriteOptions {
  // Permission bits of a newly created file (before the umask). When the
  // target already exists, its permission bits are kept instead, so that
  // rewriting a 0600 file never makes it readable to others.
  mode_t new_file_mode = 0644;
};

// Replaces `path` with `contents` so that a crash at any moment leaves either
// the old or the new file, never a mix: write a temporary file in the same
// directory, fsync it, rename it over `path`, fsync the directory. On failure
// the temporary file is removed and `path` is unchanged (except when the
// directory fsync fails after the rename: the new contents are in place but
// may not survive a crash; the error says so). Concurrent writers to the same
// path do not corrupt it; the last rename wins.
Result<void> atomic_write(FileSystem& fs, const std::filesystem::path& path,
                          std::string_view contents, const AtomicWriteOptions& options = {});
Result<void> atomic_write(const std::filesystem::path& path, std::string_view contents,
                          const AtomicWriteOptions& options = {});

// Succeeds if `path` is a regular file this process can open for reading
// (checked by opening it, so effective uid/gid and ACLs count).
Result<void> check_readable_file(const std::filesystem::path& path);

// open(2) of `path` with `flags` (retried on EINTR), then fstat(2) of it into
// `st`. Returns the descriptor, which the caller must close; on failure
// nothing is left open and the error is "open <path>: ..." or "stat <path>: ...".
Result<int> open_and_stat(const std::filesystem::path& path, int flags, struct stat& st);

// An Error for a failed system call: "<what> <path>: <strerror(err)>", with
// the code errno maps to (see the top of this file).
Error errno_error(std::string_view what, const std::filesystem::path& path, int err);

}  // namespace peregrine::base
