#include "store/maildir/sqlite.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <memory>

#include "store/maildir/sql_util.h"
#include "test_support/temp_dir.h"

namespace peregrine::store::maildir {
namespace {

class ReadScopeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    path_ = tmp_.path() / "db.sqlite";
    reader_ = open();
    writer_ = open();
    ASSERT_TRUE(reader_ && writer_);
    ASSERT_TRUE(writer_->exec("CREATE TABLE t (x INTEGER); INSERT INTO t VALUES (1)"));
  }

  // A connection in WAL mode; null (and the test failed) when it cannot open.
  std::unique_ptr<Database> open() {
    auto db = Database::open(path_);
    if (!db || !(*db)->exec("PRAGMA journal_mode = WAL; PRAGMA busy_timeout = 1000")) {
      ADD_FAILURE() << "cannot open " << path_;
      return nullptr;
    }
    return std::move(*db);
  }

  std::int64_t rows(Database& db) { return query_int(db, "SELECT count(*) FROM t").value_or(-1); }

  test_support::TempDir tmp_;
  std::filesystem::path path_;
  std::unique_ptr<Database> reader_;
  std::unique_ptr<Database> writer_;
};

// The reads inside a scope see one snapshot; after it, the newest commit.
TEST_F(ReadScopeTest, ReadsInsideSeeOneSnapshot) {
  {
    ReadScope scope(*reader_);
    EXPECT_TRUE(reader_->transaction_open());
    EXPECT_EQ(rows(*reader_), 1);
    ASSERT_TRUE(writer_->exec("INSERT INTO t VALUES (2)"));
    EXPECT_EQ(rows(*reader_), 1);
  }
  EXPECT_FALSE(reader_->transaction_open());
  EXPECT_EQ(rows(*reader_), 2);
  // Without a scope each statement reads the newest commit.
  ASSERT_TRUE(writer_->exec("INSERT INTO t VALUES (3)"));
  EXPECT_EQ(rows(*reader_), 3);
}

// Inside a transaction a scope does nothing: it neither commits the writes
// before it nor ends the transaction.
TEST_F(ReadScopeTest, InsideATransactionItLeavesTheTransactionAlone) {
  auto tx = writer_->begin();
  ASSERT_TRUE(tx.has_value());
  ASSERT_TRUE(writer_->exec("INSERT INTO t VALUES (2)"));
  {
    ReadScope scope(*writer_);
    EXPECT_EQ(rows(*writer_), 2);
  }
  EXPECT_TRUE(writer_->transaction_open());
  EXPECT_EQ(rows(*reader_), 1);  // not committed by the scope
  ASSERT_TRUE(tx->commit());
  EXPECT_EQ(rows(*reader_), 2);
}

// A scope holds no lock a writer waits for: the writer commits while it
// lives (WAL), and the scope's end lets the reader see it.
TEST_F(ReadScopeTest, AWriterCommitsWhileAScopeReads) {
  ReadScope scope(*reader_);
  EXPECT_EQ(rows(*reader_), 1);
  auto tx = writer_->begin();
  ASSERT_TRUE(tx.has_value());
  ASSERT_TRUE(writer_->exec("INSERT INTO t VALUES (2)"));
  EXPECT_TRUE(tx->commit());
  EXPECT_EQ(rows(*reader_), 1);
}

}  // namespace
}  // namespace peregrine::store::maildir
