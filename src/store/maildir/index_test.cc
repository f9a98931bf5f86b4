// The Maildir backend's SQLite index outside the full-text index: the
// expunged UIDs it keeps for the change feed, bounded per mailbox.

#include "store/maildir/index.h"

#include <gtest/gtest.h>

#include <numeric>
#include <string>
#include <vector>

#include "store/maildir/test_util.h"

namespace peregrine::store::maildir {
namespace {

class ExpungedTest : public testing::IndexTest {
 protected:
  void SetUp() override {
    testing::IndexTest::SetUp();
    inbox_ = mailbox("INBOX");
    other_ = mailbox("Other");
  }

  // Records UIDs first..last of `box` as expunged at `modseq` (no message
  // needs to be there).
  void expunge(std::int64_t box, Uid first, Uid last, ModSeq modseq) {
    std::vector<Uid> uids(last - first + 1);
    std::iota(uids.begin(), uids.end(), first);
    ASSERT_TRUE(index_->expunge_messages(box, uids, modseq));
  }

  std::size_t since(std::int64_t box, ModSeq modseq) {
    auto r = index_->expunged_since(box, modseq);
    EXPECT_TRUE(r);
    return r ? r->size() : 0;
  }
  ModSeq floor(std::int64_t box) {
    auto r = index_->expunged_floor(box);
    EXPECT_TRUE(r);
    return r ? *r : 0;
  }

  std::int64_t inbox_ = 0;
  std::int64_t other_ = 0;
};

// A mailbox keeps every expunge up to twice Index::kKeptExpunges; past that
// it keeps the newest kKeptExpunges (by MODSEQ, then UID, so one expunge's
// UIDs may be split) and its floor tells which MODSEQs it no longer lists
// in full. Other mailboxes keep theirs.
TEST_F(ExpungedTest, OldExpungesAreForgottenAndTheFloorSaysSo) {
  constexpr Uid kKept = Index::kKeptExpunges;
  expunge(other_, 1, 10, 2);
  expunge(inbox_, 1, kKept + kKept / 2, 2);
  EXPECT_EQ(since(inbox_, 0), kKept + kKept / 2);
  EXPECT_EQ(floor(inbox_), 0u);
  // Past twice the bound: the newest kKept stay, half of them from the
  // expunge at MODSEQ 3, which loses its oldest UIDs.
  expunge(inbox_, kKept + kKept / 2 + 1, 2 * kKept + kKept / 2 + 1, 3);
  EXPECT_EQ(since(inbox_, 0), kKept);
  EXPECT_EQ(floor(inbox_), 3u);
  auto kept = index_->expunged_since(inbox_, 0);
  ASSERT_TRUE(kept);
  EXPECT_EQ(kept->front().uid, kKept + kKept / 2 + 2);
  EXPECT_EQ(kept->back().uid, 2 * kKept + kKept / 2 + 1);
  // Later expunges are listed in full, and under the bound nothing more
  // goes.
  expunge(inbox_, 3 * kKept, 3 * kKept + 4, 4);
  EXPECT_EQ(since(inbox_, 3), 5u);
  EXPECT_EQ(since(inbox_, 0), kKept + 5);
  EXPECT_EQ(floor(inbox_), 3u);
  EXPECT_EQ(since(other_, 0), 10u);
  EXPECT_EQ(floor(other_), 0u);
}

// Single expunges (a loop of them, as a sync or a MOVE records) are
// bounded too, though checked only now and then; every expunge after the
// floor is still listed.
TEST_F(ExpungedTest, SingleExpungesAreBoundedToo) {
  constexpr Uid kKept = Index::kKeptExpunges;
  constexpr Uid kLast = 2 * kKept + kKept / 4;
  auto modseq_of = [](Uid uid) { return ModSeq{2 + uid / 1000}; };
  {
    auto tx = index_->begin();
    ASSERT_TRUE(tx);
    for (Uid uid = 1; uid <= kLast; ++uid) {
      ASSERT_TRUE(index_->expunge_message(inbox_, uid, modseq_of(uid)));
    }
    ASSERT_TRUE(tx->commit());
  }
  EXPECT_GE(since(inbox_, 0), kKept);
  EXPECT_LE(since(inbox_, 0), 2 * kKept);
  const ModSeq forgotten = floor(inbox_);
  EXPECT_GT(forgotten, 2u);
  std::size_t after = 0;
  for (Uid uid = 1; uid <= kLast; ++uid) {
    after += modseq_of(uid) > forgotten ? 1 : 0;
  }
  EXPECT_EQ(since(inbox_, forgotten), after);
}

// An index that recorded more before the bound (an older build's) is cut
// down at a mailbox's first expunge after the open.
TEST_F(ExpungedTest, AnOverfullMailboxIsCutAtItsFirstExpunge) {
  constexpr Uid kKept = Index::kKeptExpunges;
  index_.reset();
  testing::exec(
      tmp_.path() / "index.sqlite",
      "WITH RECURSIVE run(uid) AS (SELECT 1 UNION ALL SELECT uid + 1 FROM run WHERE uid < " +
          std::to_string(3 * kKept) + ") INSERT INTO expunged (mailbox_id, uid, modseq) SELECT " +
          std::to_string(other_) + ", uid, 50 FROM run");
  auto index = Index::open(tmp_.path() / "index.sqlite", 1000);
  ASSERT_TRUE(index) << index.error().message;
  index_ = std::move(*index);
  EXPECT_EQ(since(other_, 0), 3 * kKept);
  ASSERT_TRUE(index_->expunge_message(other_, 4 * kKept, 51));
  EXPECT_EQ(since(other_, 0), kKept);
  EXPECT_EQ(floor(other_), 50u);
  EXPECT_EQ(since(other_, 50), 1u);
  EXPECT_EQ(floor(inbox_), 0u);
}

}  // namespace
}  // namespace peregrine::store::maildir
