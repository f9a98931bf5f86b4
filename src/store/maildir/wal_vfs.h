#pragma once

// A SQLite VFS that writes a transaction's WAL frames in one system call per
// 128 KiB instead of two per frame.
//
// SQLite appends a WAL frame as two writes (its 24-byte header, then the
// page), so a delivery that changes 25 pages costs 50 pwrite calls. This
// VFS wraps the default one; for WAL files only, it keeps writes that
// continue one another in memory and writes them out together:
//
// - before every other operation on the WAL file (a read, a sync, a size or
//   truncate, a file control, close), so SQLite reads back what it wrote
//   and a sync makes all of it durable, exactly as without the buffer;
// - after the page of a commit frame (a frame header whose "database size
//   after commit" field is not zero, docs: sqlite.org/fileformat2.html#walformat),
//   so the frames are in the file before SQLite publishes the commit in the
//   WAL index, also when the commit is not synced (synchronous = NORMAL);
// - when a write does not continue the buffered range, or would take the
//   buffer past kMaxBufferedBytes.
//
// A WAL file is also allocated ahead of its writes, kWalChunkBytes at a
// time (fallocate): a commit that extends the file makes its fdatasync
// write the inode and the block bitmap as well, two more waits for the disk
// before the flush (docs/benchmarks.md, "LMTP delivery": a 64 KiB commit's
// fdatasync 442 us appending against 370 us into allocated space on this
// disk). Readers stop at the first frame that does not check out, so the
// allocated tail, which reads as zeros, is never taken for frames; the WAL
// is removed when the last connection closes, as before. Where fallocate
// fails (a filesystem without it), writes extend the file as SQLite's own.
//
// Other readers only read frames a published commit covers, and the writer
// holds the WAL write lock while frames are buffered, so no one can read a
// frame before it is in the file. The database file, the shared-memory
// index and journals pass through unchanged.
//
// Thread safety: register_wal_vfs() may be called from any thread, at any
// time; the VFS keeps its buffer per open file (a file is used by one
// connection, as SQLite uses it).

#include <cstddef>

namespace peregrine::store::maildir {

// Registers the VFS (once; later calls just return its name) and returns
// the name to pass to sqlite3_open_v2.
const char* register_wal_vfs();

// The most a WAL file buffers (reserved at its first write, kept while it
// is open): the most SQLite's unix VFS writes in one call (it masks a
// write's length with 0x1ffff, so a longer one would fail as "disk full").
// A delivery's frames, about 140 KB with the full-text index, take two.
inline constexpr std::size_t kMaxBufferedBytes = 0x1ffff;

// How much of a WAL file is allocated at a time, ahead of its writes.
inline constexpr std::size_t kWalChunkBytes = 1 << 20;

}  // namespace peregrine::store::maildir
