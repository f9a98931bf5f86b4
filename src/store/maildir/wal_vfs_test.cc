#include "store/maildir/wal_vfs.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sqlite3.h>
#include <unistd.h>

#include <filesystem>
#include <string>

#include "store/maildir/sqlite.h"
#include "test_support/temp_dir.h"

namespace peregrine::store::maildir {
namespace {

// A second connection through the default VFS (as another process would
// read the index): it sees a commit only through the WAL file itself.
class Reader {
 public:
  explicit Reader(const std::filesystem::path& path) {
    EXPECT_EQ(sqlite3_open_v2(path.c_str(), &db_, SQLITE_OPEN_READONLY, nullptr), SQLITE_OK);
  }
  ~Reader() { sqlite3_close(db_); }

  // One integer from `sql`, or -1 on an error.
  std::int64_t query(const char* sql) {
    sqlite3_stmt* stmt = nullptr;
    if (sqlite3_prepare_v2(db_, sql, -1, &stmt, nullptr) != SQLITE_OK) {
      return -1;
    }
    std::int64_t value = sqlite3_step(stmt) == SQLITE_ROW ? sqlite3_column_int64(stmt, 0) : -1;
    sqlite3_finalize(stmt);
    return value;
  }
  std::string integrity() {
    sqlite3_stmt* stmt = nullptr;
    sqlite3_prepare_v2(db_, "PRAGMA integrity_check", -1, &stmt, nullptr);
    std::string out = sqlite3_step(stmt) == SQLITE_ROW
                          ? reinterpret_cast<const char*>(sqlite3_column_text(stmt, 0))
                          : "no answer";
    sqlite3_finalize(stmt);
    return out;
  }

 private:
  sqlite3* db_ = nullptr;
};

class WalVfsTest : public ::testing::TestWithParam<const char*> {
 protected:
  void SetUp() override {
    ASSERT_NE(register_wal_vfs(), nullptr);
    auto db = Database::open(dir_.path() / "index.sqlite");
    ASSERT_TRUE(db) << db.error().message;
    db_ = std::move(*db);
    ASSERT_TRUE(db_->exec(std::string("PRAGMA journal_mode = WAL; PRAGMA synchronous = ") +
                          GetParam() + "; CREATE TABLE t (id INTEGER PRIMARY KEY, body BLOB);"));
  }

  // Inserts `rows` rows of `bytes` random bytes each in one transaction.
  void insert(int rows, int bytes) {
    auto tx = db_->begin();
    ASSERT_TRUE(tx);
    for (int i = 0; i < rows; ++i) {
      auto stmt = db_->prepare("INSERT INTO t (body) VALUES (randomblob(?))");
      ASSERT_TRUE(stmt);
      auto done = stmt->bind(1, bytes).run();
      ASSERT_TRUE(done) << done.error().message;
    }
    ASSERT_TRUE(tx->commit());
  }

  std::filesystem::path path() const { return dir_.path() / "index.sqlite"; }

  test_support::TempDir dir_;
  std::unique_ptr<Database> db_;
};

// Every commit is whole in the WAL file as soon as commit() returns, synced
// or not: a reader of the file sees each one, with valid frames.
TEST_P(WalVfsTest, EveryCommitIsInTheFileWhenCommitReturns) {
  Reader reader(path());
  for (int round = 1; round <= 20; ++round) {
    insert(round, 700);  // several pages per commit, frames of varying count
    EXPECT_EQ(reader.query("SELECT count(*) FROM t"), round * (round + 1) / 2);
  }
  EXPECT_EQ(reader.integrity(), "ok");
}

// A transaction larger than the buffer, with a page cache so small that
// SQLite spills pages into the WAL mid-transaction and reads them back.
TEST_P(WalVfsTest, TransactionsLargerThanTheBufferAndSpills) {
  ASSERT_TRUE(db_->exec("PRAGMA cache_size = 10"));
  Reader reader(path());
  insert(3000, 1000);  // about 3 MB of frames: many times the buffer
  EXPECT_EQ(reader.query("SELECT count(*) FROM t"), 3000);
  EXPECT_EQ(reader.query("SELECT sum(length(body)) FROM t"), 3000 * 1000);
  auto update = db_->begin();
  ASSERT_TRUE(update);
  ASSERT_TRUE(db_->exec("UPDATE t SET body = randomblob(900) WHERE id % 3 = 0"));
  ASSERT_TRUE(update->commit());
  EXPECT_EQ(reader.query("SELECT sum(length(body)) FROM t"), 2000 * 1000 + 1000 * 900);
  EXPECT_EQ(reader.integrity(), "ok");
}

// Checkpoints restart the WAL: its header is rewritten at offset 0 and new
// frames overwrite old ones.
TEST_P(WalVfsTest, SurvivesCheckpointsAndRestartsOfTheWal) {
  ASSERT_TRUE(db_->exec("PRAGMA wal_autocheckpoint = 8"));
  for (int round = 0; round < 50; ++round) {
    insert(5, 900);
  }
  Reader reader(path());
  EXPECT_EQ(reader.query("SELECT count(*) FROM t"), 250);
  EXPECT_EQ(reader.integrity(), "ok");
}

// Reopening reads everything back through the VFS.
TEST_P(WalVfsTest, ReopenedDatabaseHasEveryCommit) {
  insert(100, 500);
  db_.reset();
  auto db = Database::open(path());
  ASSERT_TRUE(db);
  auto stmt = (*db)->prepare("SELECT count(*) FROM t");
  ASSERT_TRUE(stmt);
  ASSERT_TRUE(stmt->step().value_or(false));
  EXPECT_EQ(stmt->column_int(0), 100);
}

// The WAL is allocated ahead of its frames (where the filesystem can), and
// a copy of the files taken while the database is open, as a crash leaves
// them (the allocated tail reads as zeros), recovers every commit.
TEST_P(WalVfsTest, AllocatedWalRecoversEveryCommitAfterACrash) {
  for (int round = 0; round < 10; ++round) {
    insert(4, 900);
  }
  const std::filesystem::path wal = path().string() + "-wal";
  const std::uintmax_t wal_size = std::filesystem::file_size(wal);
  {
    const std::filesystem::path probe = dir_.path() / "probe";
    const int fd = ::open(probe.c_str(), O_CREAT | O_RDWR | O_CLOEXEC, 0600);
    ASSERT_GE(fd, 0);
    const bool can_allocate = ::fallocate(fd, 0, 0, 4096) == 0;
    ::close(fd);
    if (can_allocate) {
      EXPECT_EQ(wal_size % kWalChunkBytes, 0u) << wal_size;
      EXPECT_GE(wal_size, kWalChunkBytes);
    }
  }
  const std::filesystem::path copy = dir_.path() / "copy";
  std::filesystem::create_directory(copy);
  std::filesystem::copy_file(path(), copy / "index.sqlite");
  std::filesystem::copy_file(wal, copy / "index.sqlite-wal");
  Reader reader(copy / "index.sqlite");
  EXPECT_EQ(reader.query("SELECT count(*) FROM t"), 40);
  EXPECT_EQ(reader.integrity(), "ok");
}

INSTANTIATE_TEST_SUITE_P(Synchronous, WalVfsTest, ::testing::Values("FULL", "NORMAL"));

}  // namespace
}  // namespace peregrine::store::maildir
