#include "bench/loadgen/mailbox_model.h"

#include <gtest/gtest.h>

#include <list>

#include "bench/loadgen/response.h"

namespace peregrine::bench {
namespace {

class ModelTest : public ::testing::Test {
 protected:
  FlagBits bits(std::vector<std::string_view> flags) { return model.flag_bits(flags); }

  Stats stats;
  MailboxModel model{stats};
};

TEST_F(ModelTest, FirstObservationIsLearnedThenHeld) {
  std::uint32_t wm_a = 0, wm_b = 0;
  model.observe(0, 7, bits({"\\Seen"}), wm_a, "t");
  model.observe(1, 7, bits({"\\seen", "\\Recent"}), wm_b, "t");  // case and \Recent ignored
  EXPECT_EQ(stats.violations(), 0u);
  model.observe(1, 7, bits({"\\Flagged"}), wm_b, "t");  // nobody stored that
  EXPECT_EQ(stats.violations(), 1u);
}

TEST_F(ModelTest, ConcurrentStoreAndLateUpdates) {
  std::uint32_t wm_a = 0, wm_b = 0;
  FlagBits old_flags = bits({"$Bench1"});
  FlagBits new_flags = bits({"$Bench1", "\\Seen"});
  model.observe(0, 3, old_flags, wm_a, "t");
  model.observe(1, 3, old_flags, wm_b, "t");
  ASSERT_TRUE(model.lockable(3));
  model.lock(3, 0, new_flags);
  EXPECT_FALSE(model.lockable(3));
  model.observe(1, 3, new_flags, wm_b, "t");  // B sees the STORE before A's OK
  model.observe(1, 3, old_flags, wm_b, "t");  // or still the old state
  EXPECT_EQ(stats.violations(), 0u);
  std::uint32_t version = model.unlock_with(3, new_flags);
  EXPECT_GT(version, wm_b);
  model.observe(1, 3, old_flags, wm_b, "t");  // late, but allowed: B was not yet told
  model.observe(1, 3, new_flags, wm_b, "t");
  EXPECT_EQ(stats.violations(), 0u);
  EXPECT_EQ(wm_b, version);
  model.observe(1, 3, old_flags, wm_b, "t");  // back in time after the new state
  EXPECT_EQ(stats.violations(), 1u);
}

TEST_F(ModelTest, InventedStateDuringStoreIsReported) {
  std::uint32_t wm = 0;
  model.observe(0, 3, 0, wm, "t");
  model.lock(3, 0, bits({"\\Seen"}));
  model.observe(1, 3, bits({"\\Draft"}), wm, "t");
  EXPECT_EQ(stats.violations(), 1u);
}

TEST_F(ModelTest, DeletedMessagesAreDoomedAndExpungedIgnored) {
  std::uint32_t wm = 0;
  model.observe(0, 4, bits({"\\Deleted"}), wm, "t");
  EXPECT_FALSE(model.lockable(4));
  model.expunged(4);
  model.observe(0, 4, bits({"\\Seen"}), wm, "t");  // a session not yet told
  EXPECT_EQ(stats.violations(), 0u);
  EXPECT_TRUE(model.is_expunged(4));
}

TEST_F(ModelTest, ExistsBound) {
  model.saw_count(5, "t");
  model.append_started();
  model.append_started();
  model.saw_count(7, "t");
  EXPECT_EQ(stats.violations(), 0u);
  model.saw_count(8, "t");
  EXPECT_EQ(stats.violations(), 1u);
}

class TrackerTest : public ::testing::Test {
 protected:
  TrackerTest() {
    tracker.attach(&model);
    tracker.begin(SessionTracker::Command::kSelect);
    feed("* 3 EXISTS\r\n");
    tracker.set_selected(true);
    tracker.end();
  }

  void feed(const std::string& wire) {
    wires.push_back(wire);  // views into it must outlive the call
    Response r;
    std::string error;
    ASSERT_TRUE(parse_response(wires.back(), r, error)) << error;
    tracker.on_untagged(r);
  }

  void fetch_all(const std::vector<std::string>& lines) {
    tracker.begin(SessionTracker::Command::kFetchAll);
    for (const std::string& line : lines) {
      feed(line);
    }
    tracker.end_fetch_all(true);
  }

  static std::string meta(int seq, int uid, const char* flags = "") {
    return "* " + std::to_string(seq) + " FETCH (UID " + std::to_string(uid) + " FLAGS (" + flags +
           ") INTERNALDATE \"1-Jan-2026 00:00:00 +0000\" ENVELOPE (NIL NIL NIL NIL NIL " +
           "NIL NIL NIL NIL NIL) BODYSTRUCTURE (\"TEXT\" \"PLAIN\" NIL NIL NIL \"7BIT\" 1 1))\r\n";
  }

  Stats stats;
  MailboxModel model{stats};
  SessionTracker tracker{0, stats};
  std::list<std::string> wires;
};

TEST_F(TrackerTest, CleanSession) {
  fetch_all({meta(1, 10), meta(2, 11), meta(3, 12)});
  feed("* 2 EXPUNGE\r\n");
  feed("* 3 EXISTS\r\n");
  fetch_all({meta(1, 10), meta(2, 12), meta(3, 13)});
  EXPECT_EQ(stats.violations(), 0u);
  EXPECT_TRUE(tracker.told_expunged(11));
}

TEST_F(TrackerTest, ExistsGoingDown) {
  feed("* 2 EXISTS\r\n");
  EXPECT_EQ(stats.violations(), 1u);
}

TEST_F(TrackerTest, FetchBeyondExists) {
  fetch_all({meta(1, 10), meta(2, 11), meta(3, 12), meta(4, 13)});
  EXPECT_EQ(stats.violations(), 1u);
}

TEST_F(TrackerTest, MissingMessageInFetchAll) {
  fetch_all({meta(1, 10), meta(2, 11), meta(3, 12)});
  fetch_all({meta(1, 10), meta(3, 12)});
  EXPECT_EQ(stats.violations(), 1u);
}

TEST_F(TrackerTest, ItemsSplitOverResponsesAreFine) {
  fetch_all({meta(1, 10), meta(2, 11), "* 3 FETCH (FLAGS ())\r\n", meta(3, 12)});
  EXPECT_EQ(stats.violations(), 0u);
  fetch_all({meta(1, 10), meta(2, 11), "* 3 FETCH (UID 12 FLAGS ())\r\n"});
  EXPECT_EQ(stats.violations(), 1u);
}

TEST_F(TrackerTest, ExpungeDuringFetch) {
  tracker.begin(SessionTracker::Command::kFetchAll);
  feed(meta(1, 10));
  feed("* 1 EXPUNGE\r\n");
  EXPECT_EQ(stats.violations(), 1u);
}

TEST_F(TrackerTest, UidChangesOrExpungedReturns) {
  fetch_all({meta(1, 10), meta(2, 11), meta(3, 12)});
  feed("* 1 FETCH (UID 99 FLAGS ())\r\n");
  EXPECT_EQ(stats.violations(), 1u);
  feed("* 1 EXPUNGE\r\n");  // expunges 99 (the view took the server's word)
  feed("* 1 FETCH (UID 99)\r\n");
  EXPECT_EQ(stats.violations(), 3u);  // 99 was expunged, and message 1 is UID 11
}

TEST_F(TrackerTest, SearchBeyondExists) {
  feed("* SEARCH 1 3\r\n");
  EXPECT_EQ(stats.violations(), 0u);
  feed("* SEARCH 4\r\n");
  EXPECT_EQ(stats.violations(), 1u);
}

}  // namespace
}  // namespace peregrine::bench
