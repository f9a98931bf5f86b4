#pragma once

// The filesystem seam of the Maildir backend: base::FileSystem (create, read,
// rename, remove, fsync of a directory, stat) plus the directory and link
// operations a Maildir needs. Every file operation of the backend goes
// through it, so tests can fail any one step (a failed fsync, a full disk, a
// rename that never happens) and check that the store stays consistent.

#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "base/files.h"
#include "base/result.h"
#include "store/api/body.h"

namespace peregrine::store::maildir {

struct DirEntry {
  enum class Type : std::uint8_t { kFile, kDirectory, kOther, kUnknown };
  std::string name;
  Type type = Type::kUnknown;  // kUnknown when the filesystem does not say (stat it)
};

// Error codes follow base/files.h (ENOENT -> kNotFound, EEXIST -> kExists, ...).
// Implementations must be safe to call from several threads at once.
class MaildirFs : public base::FileSystem {
 public:
  // mkdir(2); kExists if something of that name exists.
  virtual base::Result<void> make_dir(const std::filesystem::path& path, mode_t mode) = 0;
  // rmdir(2) of an empty directory.
  virtual base::Result<void> remove_dir(const std::filesystem::path& path) = 0;
  // The entries of a directory, without "." and "..", in no particular order.
  virtual base::Result<std::vector<DirEntry>> list_dir(const std::filesystem::path& path) = 0;
  // link(2): a second name for a file; kExists if `to` exists.
  virtual base::Result<void> link(const std::filesystem::path& from,
                                  const std::filesystem::path& to) = 0;
  // Opens a file for reading by range.
  virtual base::Result<std::unique_ptr<Body>> open_body(const std::filesystem::path& path) = 0;
  // Sets a file's modification (and access) time, in seconds since the epoch.
  virtual base::Result<void> set_mtime(const std::filesystem::path& path, std::int64_t seconds) = 0;
  // fsync(2) of an existing file, by its path.
  virtual base::Result<void> sync_file(const std::filesystem::path& path) = 0;
  // Creates the file `to` holding `bytes`, dated `mtime_seconds`, durable
  // before it has a name: an unnamed file in `to`'s directory (O_TMPFILE) is
  // written, dated and fsynced, then linked as `to`. No reader ever sees it
  // partly written, and its fsync has no new directory entry to write too
  // (a file created in tmp/ has, on ext4 without a journal). The name is
  // not durable until the directory is fsynced. Returns false, having done
  // nothing, when the filesystem offers no unnamed files or no way to link
  // one (the caller then writes through tmp/); kExists if `to` exists. On
  // an error nothing is left behind: an unlinked unnamed file goes with its
  // descriptor.
  virtual base::Result<bool> write_unnamed(const std::filesystem::path& to, std::string_view bytes,
                                           std::int64_t mtime_seconds) = 0;
};

// The POSIX implementation. Thread-safe.
MaildirFs& real_maildir_fs();

// Removes every file of `paths` through fs.remove(), several at once when
// there are at least kParallelRemoveMin: one unlink may wait milliseconds
// for the device (ext4 mounted with `discard` frees a file's blocks with a
// discard the call waits for), and such waits overlap. Returns one result
// per path, in order; one failure does not stop the others. An exception
// fs.remove() throws is rethrown here, after every worker has stopped.
inline constexpr std::size_t kParallelRemoveMin = 16;
std::vector<base::Result<void>> remove_files(MaildirFs& fs,
                                             std::span<const std::filesystem::path> paths);
// The same with fs.sync_file(): each fsync waits for the device too.
std::vector<base::Result<void>> sync_files(MaildirFs& fs,
                                           std::span<const std::filesystem::path> paths);
// op() for every path, as remove_files() runs fs.remove().
std::vector<base::Result<void>> for_each_file(
    std::span<const std::filesystem::path> paths,
    const std::function<base::Result<void>(const std::filesystem::path&)>& op);

// Forwards every call to `target`; tests derive from it and override the
// step they want to fail.
class ForwardingMaildirFs : public MaildirFs {
 public:
  explicit ForwardingMaildirFs(MaildirFs& target) : target_(target) {}

  base::Result<std::unique_ptr<base::WritableFile>> create_exclusive(
      const std::filesystem::path& path, mode_t mode) override {
    return target_.create_exclusive(path, mode);
  }
  base::Result<std::string> read_file(const std::filesystem::path& path,
                                      std::size_t max_bytes) override {
    return target_.read_file(path, max_bytes);
  }
  base::Result<void> rename(const std::filesystem::path& from,
                            const std::filesystem::path& to) override {
    return target_.rename(from, to);
  }
  base::Result<void> remove(const std::filesystem::path& path) override {
    return target_.remove(path);
  }
  base::Result<void> set_mode(const std::filesystem::path& path, mode_t mode) override {
    return target_.set_mode(path, mode);
  }
  base::Result<void> sync_dir(const std::filesystem::path& dir) override {
    return target_.sync_dir(dir);
  }
  base::Result<base::FileInfo> stat(const std::filesystem::path& path) override {
    return target_.stat(path);
  }
  base::Result<void> make_dir(const std::filesystem::path& path, mode_t mode) override {
    return target_.make_dir(path, mode);
  }
  base::Result<void> remove_dir(const std::filesystem::path& path) override {
    return target_.remove_dir(path);
  }
  base::Result<std::vector<DirEntry>> list_dir(const std::filesystem::path& path) override {
    return target_.list_dir(path);
  }
  base::Result<void> link(const std::filesystem::path& from,
                          const std::filesystem::path& to) override {
    return target_.link(from, to);
  }
  base::Result<std::unique_ptr<Body>> open_body(const std::filesystem::path& path) override {
    return target_.open_body(path);
  }
  base::Result<void> set_mtime(const std::filesystem::path& path, std::int64_t seconds) override {
    return target_.set_mtime(path, seconds);
  }
  base::Result<void> sync_file(const std::filesystem::path& path) override {
    return target_.sync_file(path);
  }
  base::Result<bool> write_unnamed(const std::filesystem::path& to, std::string_view bytes,
                                   std::int64_t mtime_seconds) override {
    return target_.write_unnamed(to, bytes, mtime_seconds);
  }

 protected:
  MaildirFs& target_;
};

}  // namespace peregrine::store::maildir
