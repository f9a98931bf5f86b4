#include "store/maildir/wal_vfs.h"

#include <fcntl.h>
#include <sqlite3.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <mutex>
#include <new>
#include <string>

namespace peregrine::store::maildir {
namespace {

constexpr char kVfsName[] = "peregrine-wal";
// The WAL format's frame header (sqlite.org/fileformat2.html#walformat):
// bytes 4-7 hold the database size after the commit, zero for other frames.
constexpr int kFrameHeaderBytes = 24;

// What SQLite allocates for each open file (szOsFile): this, then the
// wrapped VFS's own file object.
struct ShimFile {
  sqlite3_file base;   // base.pMethods: kPassMethods or kWalMethods
  sqlite3_file* real;  // the wrapped VFS's file, right after this struct
  // WAL files only: writes not yet made, starting at file offset `at`.
  std::string* pending;
  sqlite3_int64 at;
  bool commit_header;  // the last buffered write was a commit frame's header
  // WAL files only: a descriptor of our own for fallocate (-1: none, or the
  // filesystem cannot), and how far the file is allocated.
  int alloc_fd;
  sqlite3_int64 allocated;
};

sqlite3_vfs* root_vfs(sqlite3_vfs* vfs) { return static_cast<sqlite3_vfs*>(vfs->pAppData); }
ShimFile* shim(sqlite3_file* file) { return reinterpret_cast<ShimFile*>(file); }
sqlite3_file* real(sqlite3_file* file) { return shim(file)->real; }
const sqlite3_io_methods* real_methods(sqlite3_file* file) { return real(file)->pMethods; }

// Allocates the WAL file ahead of a write that ends at `end`, a chunk at a
// time (wal_vfs.h, kWalChunkBytes). Best effort: without it the write
// extends the file itself.
void allocate_ahead(ShimFile* f, sqlite3_int64 end) {
  if (f->alloc_fd < 0 || end <= f->allocated) {
    return;
  }
  const auto chunk = static_cast<sqlite3_int64>(kWalChunkBytes);
  const sqlite3_int64 to = (end + chunk - 1) / chunk * chunk;
  int rc;
  do {
    rc = ::fallocate(f->alloc_fd, 0, f->allocated, to - f->allocated);
  } while (rc != 0 && errno == EINTR);
  if (rc != 0) {
    ::close(f->alloc_fd);  // not supported here (or no room): writes extend the file
    f->alloc_fd = -1;
    return;
  }
  f->allocated = to;
}

// Writes out what a WAL file buffered.
int flush(sqlite3_file* file) {
  ShimFile* f = shim(file);
  if (f->pending == nullptr || f->pending->empty()) {
    return SQLITE_OK;
  }
  allocate_ahead(f, f->at + static_cast<sqlite3_int64>(f->pending->size()));
  int rc = real_methods(file)->xWrite(real(file), f->pending->data(),
                                      static_cast<int>(f->pending->size()), f->at);
  f->pending->clear();
  f->commit_header = false;
  return rc;
}

// ---- Every file: forwarded ----

int pass_close(sqlite3_file* file) {
  int rc = flush(file);
  delete shim(file)->pending;
  shim(file)->pending = nullptr;
  if (shim(file)->alloc_fd >= 0) {
    ::close(shim(file)->alloc_fd);
    shim(file)->alloc_fd = -1;
  }
  int closed = real_methods(file)->xClose(real(file));
  return rc != SQLITE_OK ? rc : closed;
}
// A method of the wrapped file, called with the same arguments (pass), or
// after what a WAL file buffered is written out (after_flush).
template <auto Method>
struct Forward;
template <typename R, typename... A, R (*sqlite3_io_methods::*Method)(sqlite3_file*, A...)>
struct Forward<Method> {
  static R pass(sqlite3_file* file, A... args) {
    return (real_methods(file)->*Method)(real(file), args...);
  }
  static R after_flush(sqlite3_file* file, A... args) {
    if (int rc = flush(file); rc != SQLITE_OK) {
      return rc;
    }
    return pass(file, args...);
  }
};
using Read = Forward<&sqlite3_io_methods::xRead>;
using Write = Forward<&sqlite3_io_methods::xWrite>;
using Truncate = Forward<&sqlite3_io_methods::xTruncate>;
using Sync = Forward<&sqlite3_io_methods::xSync>;
using FileSize = Forward<&sqlite3_io_methods::xFileSize>;
using Lock = Forward<&sqlite3_io_methods::xLock>;
using Unlock = Forward<&sqlite3_io_methods::xUnlock>;
using CheckReserved = Forward<&sqlite3_io_methods::xCheckReservedLock>;
using FileControl = Forward<&sqlite3_io_methods::xFileControl>;
using SectorSize = Forward<&sqlite3_io_methods::xSectorSize>;
using Device = Forward<&sqlite3_io_methods::xDeviceCharacteristics>;

int pass_shm_map(sqlite3_file* file, int region, int size, int extend, void volatile** out) {
  const sqlite3_io_methods* m = real_methods(file);
  return m->iVersion >= 2 ? m->xShmMap(real(file), region, size, extend, out) : SQLITE_IOERR;
}
int pass_shm_lock(sqlite3_file* file, int offset, int n, int flags) {
  const sqlite3_io_methods* m = real_methods(file);
  return m->iVersion >= 2 ? m->xShmLock(real(file), offset, n, flags) : SQLITE_IOERR;
}
void pass_shm_barrier(sqlite3_file* file) {
  const sqlite3_io_methods* m = real_methods(file);
  if (m->iVersion >= 2) {
    m->xShmBarrier(real(file));
  }
}
int pass_shm_unmap(sqlite3_file* file, int delete_flag) {
  const sqlite3_io_methods* m = real_methods(file);
  return m->iVersion >= 2 ? m->xShmUnmap(real(file), delete_flag) : SQLITE_OK;
}
int pass_fetch(sqlite3_file* file, sqlite3_int64 offset, int amount, void** out) {
  const sqlite3_io_methods* m = real_methods(file);
  if (m->iVersion < 3) {
    *out = nullptr;
    return SQLITE_OK;
  }
  return m->xFetch(real(file), offset, amount, out);
}
int pass_unfetch(sqlite3_file* file, sqlite3_int64 offset, void* p) {
  const sqlite3_io_methods* m = real_methods(file);
  return m->iVersion >= 3 ? m->xUnfetch(real(file), offset, p) : SQLITE_OK;
}

// ---- WAL files: writes buffered, everything else after a flush ----

int wal_write(sqlite3_file* file, const void* in, int amount, sqlite3_int64 offset) {
  ShimFile* f = shim(file);
  std::string& pending = *f->pending;
  if (!pending.empty() && offset != f->at + static_cast<sqlite3_int64>(pending.size())) {
    if (int rc = flush(file); rc != SQLITE_OK) {
      return rc;
    }
  }
  const auto size = static_cast<std::size_t>(amount);
  if (pending.size() + size > kMaxBufferedBytes) {
    if (int rc = flush(file); rc != SQLITE_OK) {
      return rc;
    }
    if (size > kMaxBufferedBytes) {
      allocate_ahead(f, offset + amount);
      return Write::pass(file, in, amount, offset);
    }
  }
  if (pending.empty()) {
    f->at = offset;
    pending.reserve(kMaxBufferedBytes);  // once: the buffer never moves or grows
  }
  const char* bytes = static_cast<const char*>(in);
  const bool was_commit_header = f->commit_header;
  f->commit_header =
      amount == kFrameHeaderBytes && (bytes[4] | bytes[5] | bytes[6] | bytes[7]) != 0;
  pending.append(bytes, size);
  // The page after a commit frame's header ends the transaction's frames:
  // they must be in the file before SQLite publishes the commit.
  if (was_commit_header && !f->commit_header) {
    return flush(file);
  }
  return SQLITE_OK;
}
// A truncated WAL (journal_size_limit, or SQLite's own reset) is allocated
// again from its new end.
int wal_truncate(sqlite3_file* file, sqlite3_int64 size) {
  int rc = Truncate::after_flush(file, size);
  if (rc == SQLITE_OK && shim(file)->allocated > size) {
    shim(file)->allocated = size;
  }
  return rc;
}
int wal_fetch(sqlite3_file* file, sqlite3_int64 offset, int amount, void** out) {
  if (int rc = flush(file); rc != SQLITE_OK) {
    return rc;
  }
  return pass_fetch(file, offset, amount, out);
}

constexpr sqlite3_io_methods kPassMethods = {.iVersion = 3,
                                             .xClose = pass_close,
                                             .xRead = Read::pass,
                                             .xWrite = Write::pass,
                                             .xTruncate = Truncate::pass,
                                             .xSync = Sync::pass,
                                             .xFileSize = FileSize::pass,
                                             .xLock = Lock::pass,
                                             .xUnlock = Unlock::pass,
                                             .xCheckReservedLock = CheckReserved::pass,
                                             .xFileControl = FileControl::pass,
                                             .xSectorSize = SectorSize::pass,
                                             .xDeviceCharacteristics = Device::pass,
                                             .xShmMap = pass_shm_map,
                                             .xShmLock = pass_shm_lock,
                                             .xShmBarrier = pass_shm_barrier,
                                             .xShmUnmap = pass_shm_unmap,
                                             .xFetch = pass_fetch,
                                             .xUnfetch = pass_unfetch};

// A WAL file's: writes buffered, the other operations on the file's bytes
// after the buffer is written out.
constexpr sqlite3_io_methods wal_methods() {
  sqlite3_io_methods m = kPassMethods;
  m.xRead = Read::after_flush;
  m.xWrite = wal_write;
  m.xTruncate = wal_truncate;
  m.xSync = Sync::after_flush;
  m.xFileSize = FileSize::after_flush;
  m.xFileControl = FileControl::after_flush;
  m.xFetch = wal_fetch;
  return m;
}
constexpr sqlite3_io_methods kWalMethods = wal_methods();

// ---- The VFS ----

int shim_open(sqlite3_vfs* vfs, sqlite3_filename name, sqlite3_file* file, int flags,
              int* out_flags) {
  ShimFile* f = shim(file);
  f->base.pMethods = nullptr;  // nothing to close if the real open fails
  f->real = reinterpret_cast<sqlite3_file*>(f + 1);
  f->pending = nullptr;
  f->at = 0;
  f->commit_header = false;
  f->alloc_fd = -1;
  f->allocated = 0;
  int rc = root_vfs(vfs)->xOpen(root_vfs(vfs), name, f->real, flags, out_flags);
  if (rc != SQLITE_OK) {
    return rc;
  }
  if ((flags & SQLITE_OPEN_WAL) != 0) {
    f->pending = new (std::nothrow) std::string();
    if (f->pending == nullptr) {
      f->real->pMethods->xClose(f->real);
      return SQLITE_NOMEM;
    }
    f->base.pMethods = &kWalMethods;
    if (name != nullptr) {
      f->alloc_fd = ::open(name, O_RDWR | O_CLOEXEC);
      struct stat st {};
      if (f->alloc_fd >= 0 && ::fstat(f->alloc_fd, &st) == 0) {
        f->allocated = st.st_size;
      } else if (f->alloc_fd >= 0) {
        ::close(f->alloc_fd);
        f->alloc_fd = -1;
      }
    }
  } else {
    f->base.pMethods = &kPassMethods;
  }
  return SQLITE_OK;
}

int shim_delete(sqlite3_vfs* vfs, const char* name, int sync_dir) {
  return root_vfs(vfs)->xDelete(root_vfs(vfs), name, sync_dir);
}
int shim_access(sqlite3_vfs* vfs, const char* name, int flags, int* out) {
  return root_vfs(vfs)->xAccess(root_vfs(vfs), name, flags, out);
}
int shim_full_pathname(sqlite3_vfs* vfs, const char* name, int n, char* out) {
  return root_vfs(vfs)->xFullPathname(root_vfs(vfs), name, n, out);
}
void* shim_dl_open(sqlite3_vfs* vfs, const char* name) {
  return root_vfs(vfs)->xDlOpen(root_vfs(vfs), name);
}
void shim_dl_error(sqlite3_vfs* vfs, int n, char* out) {
  root_vfs(vfs)->xDlError(root_vfs(vfs), n, out);
}
void (*shim_dl_sym(sqlite3_vfs* vfs, void* handle, const char* symbol))(void) {
  return root_vfs(vfs)->xDlSym(root_vfs(vfs), handle, symbol);
}
void shim_dl_close(sqlite3_vfs* vfs, void* handle) {
  root_vfs(vfs)->xDlClose(root_vfs(vfs), handle);
}
int shim_randomness(sqlite3_vfs* vfs, int n, char* out) {
  return root_vfs(vfs)->xRandomness(root_vfs(vfs), n, out);
}
int shim_sleep(sqlite3_vfs* vfs, int micros) {
  return root_vfs(vfs)->xSleep(root_vfs(vfs), micros);
}
int shim_current_time(sqlite3_vfs* vfs, double* out) {
  return root_vfs(vfs)->xCurrentTime(root_vfs(vfs), out);
}
int shim_last_error(sqlite3_vfs* vfs, int n, char* out) {
  return root_vfs(vfs)->xGetLastError(root_vfs(vfs), n, out);
}
int shim_current_time64(sqlite3_vfs* vfs, sqlite3_int64* out) {
  sqlite3_vfs* root = root_vfs(vfs);
  if (root->iVersion >= 2 && root->xCurrentTimeInt64 != nullptr) {
    return root->xCurrentTimeInt64(root, out);
  }
  double days = 0;
  int rc = root->xCurrentTime(root, &days);
  *out = static_cast<sqlite3_int64>(days * 86400000.0);
  return rc;
}

sqlite3_vfs make_vfs(sqlite3_vfs* root) {
  sqlite3_vfs vfs{};
  vfs.iVersion = 2;  // no xSetSystemCall: the system calls are the wrapped VFS's
  vfs.szOsFile = static_cast<int>(sizeof(ShimFile)) + root->szOsFile;
  vfs.mxPathname = root->mxPathname;
  vfs.zName = kVfsName;
  vfs.pAppData = root;
  vfs.xOpen = shim_open;
  vfs.xDelete = shim_delete;
  vfs.xAccess = shim_access;
  vfs.xFullPathname = shim_full_pathname;
  vfs.xDlOpen = shim_dl_open;
  vfs.xDlError = shim_dl_error;
  vfs.xDlSym = shim_dl_sym;
  vfs.xDlClose = shim_dl_close;
  vfs.xRandomness = shim_randomness;
  vfs.xSleep = shim_sleep;
  vfs.xCurrentTime = shim_current_time;
  vfs.xGetLastError = shim_last_error;
  vfs.xCurrentTimeInt64 = shim_current_time64;
  return vfs;
}

}  // namespace

const char* register_wal_vfs() {
  static const char* name = [] {
    static sqlite3_vfs vfs = make_vfs(sqlite3_vfs_find(nullptr));
    return sqlite3_vfs_register(&vfs, /*makeDflt=*/0) == SQLITE_OK ? kVfsName : nullptr;
  }();
  return name;
}

}  // namespace peregrine::store::maildir
