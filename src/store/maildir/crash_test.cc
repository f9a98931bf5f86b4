// Crash safety through the filesystem seam: a failed step leaves the index
// and the files as they were, and a crash (the process stopping at a step,
// simulated by an exception out of the seam) leaves a state that the next
// open and sync() turn into a consistent store in which every operation that
// returned success is there.

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <filesystem>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "store/maildir/test_util.h"

namespace peregrine::store::maildir {
namespace {

using base::MailError;
using testing::append_of;
using testing::list;
using testing::message;
using testing::read_file;

enum class Op {
  kCreate,
  kWrite,
  kFileSync,
  kClose,
  kRename,
  kRemove,
  kSyncDir,
  kLink,
  kSetMtime,
  kMakeDir,
  kRemoveDir,
  kWriteUnnamed
};

// The process stops here.
struct Crash {};

// Fails (or crashes at) the n-th matching call from the moment it is armed.
class FaultFs : public ForwardingMaildirFs {
 public:
  FaultFs() : ForwardingMaildirFs(real_maildir_fs()) {}

  // Adds a rule: the nth (0-based) later call of `op` (nullopt: any
  // operation) whose path contains `needle` fails, or crashes.
  void arm(std::optional<Op> op, int nth, std::string needle = "", bool crash = false) {
    std::lock_guard lock(mu_);
    rules_.push_back(Rule{op, nth, std::move(needle), crash});
  }
  void disarm() {
    std::lock_guard lock(mu_);
    rules_.clear();
  }
  int calls() const {
    std::lock_guard lock(mu_);
    return calls_;
  }
  void reset_calls() {
    std::lock_guard lock(mu_);
    calls_ = 0;
  }
  // While held, every remove() waits (on whichever thread calls it) until
  // release_removes().
  void hold_removes() {
    std::lock_guard lock(mu_);
    holding_ = true;
  }
  void release_removes() {
    {
      std::lock_guard lock(mu_);
      holding_ = false;
    }
    released_.notify_all();
  }
  // How many remove() calls are waiting.
  int held_removes() const {
    std::lock_guard lock(mu_);
    return held_;
  }

  // Returns an error to give back, or throws Crash. The store calls the seam
  // from sync threads too, so the rules are guarded.
  std::optional<base::Error> check(Op op, const std::filesystem::path& path) {
    std::lock_guard lock(mu_);
    ++calls_;
    for (auto it = rules_.begin(); it != rules_.end(); ++it) {
      if ((it->op && *it->op != op) || path.string().find(it->needle) == std::string::npos) {
        continue;
      }
      if (it->remaining-- > 0) {
        continue;
      }
      bool crash = it->crash;
      rules_.erase(it);
      if (crash) {
        throw Crash{};
      }
      return base::Error{MailError::kTemporary, "injected failure at " + path.string()};
    }
    return std::nullopt;
  }

  class File : public base::WritableFile {
   public:
    File(FaultFs& fs, std::unique_ptr<base::WritableFile> real) : fs_(fs), real_(std::move(real)) {}
    base::Result<void> append(std::string_view data) override {
      if (auto e = fs_.check(Op::kWrite, path())) {
        return std::unexpected(*e);
      }
      return real_->append(data);
    }
    base::Result<void> sync() override {
      if (auto e = fs_.check(Op::kFileSync, path())) {
        return std::unexpected(*e);
      }
      return real_->sync();
    }
    base::Result<void> close() override {
      if (auto e = fs_.check(Op::kClose, path())) {
        return std::unexpected(*e);
      }
      return real_->close();
    }
    const std::filesystem::path& path() const override { return real_->path(); }

   private:
    FaultFs& fs_;
    std::unique_ptr<base::WritableFile> real_;
  };

  base::Result<std::unique_ptr<base::WritableFile>> create_exclusive(
      const std::filesystem::path& path, mode_t mode) override {
    if (auto e = check(Op::kCreate, path)) {
      return std::unexpected(*e);
    }
    auto file = target_.create_exclusive(path, mode);
    if (!file) {
      return file;
    }
    return std::make_unique<File>(*this, std::move(*file));
  }
  base::Result<void> rename(const std::filesystem::path& from,
                            const std::filesystem::path& to) override {
    if (auto e = check(Op::kRename, to)) {
      return std::unexpected(*e);
    }
    return target_.rename(from, to);
  }
  base::Result<void> remove(const std::filesystem::path& path) override {
    {
      std::unique_lock lock(mu_);
      ++held_;
      released_.wait(lock, [this] { return !holding_; });
      --held_;
    }
    if (auto e = check(Op::kRemove, path)) {
      return std::unexpected(*e);
    }
    return target_.remove(path);
  }
  base::Result<void> sync_dir(const std::filesystem::path& dir) override {
    if (auto e = check(Op::kSyncDir, dir)) {
      return std::unexpected(*e);
    }
    return target_.sync_dir(dir);
  }
  base::Result<void> sync_file(const std::filesystem::path& path) override {
    if (auto e = check(Op::kFileSync, path)) {
      return std::unexpected(*e);
    }
    return target_.sync_file(path);
  }
  base::Result<void> link(const std::filesystem::path& from,
                          const std::filesystem::path& to) override {
    if (auto e = check(Op::kLink, to)) {
      return std::unexpected(*e);
    }
    return target_.link(from, to);
  }
  base::Result<void> set_mtime(const std::filesystem::path& path, std::int64_t seconds) override {
    if (auto e = check(Op::kSetMtime, path)) {
      return std::unexpected(*e);
    }
    return target_.set_mtime(path, seconds);
  }
  // With `unnamed` unset the store is told there are no unnamed files, and
  // writes through tmp/, step by step (most tests fail one of those steps).
  base::Result<bool> write_unnamed(const std::filesystem::path& to, std::string_view bytes,
                                   std::int64_t mtime_seconds) override {
    if (!unnamed) {
      return false;
    }
    if (auto e = check(Op::kWriteUnnamed, to)) {
      return std::unexpected(*e);
    }
    return target_.write_unnamed(to, bytes, mtime_seconds);
  }
  bool unnamed = false;
  base::Result<void> make_dir(const std::filesystem::path& path, mode_t mode) override {
    if (auto e = check(Op::kMakeDir, path)) {
      return std::unexpected(*e);
    }
    return target_.make_dir(path, mode);
  }
  base::Result<void> remove_dir(const std::filesystem::path& path) override {
    if (auto e = check(Op::kRemoveDir, path)) {
      return std::unexpected(*e);
    }
    return target_.remove_dir(path);
  }

 private:
  struct Rule {
    std::optional<Op> op;
    int remaining = 0;
    std::string needle;
    bool crash = false;
  };
  mutable std::mutex mu_;
  std::condition_variable released_;
  std::vector<Rule> rules_;  // mu_
  int calls_ = 0;            // mu_
  bool holding_ = false;     // mu_
  int held_ = 0;             // mu_
};

// The seam must exist before the store that uses it: a base class first.
struct FaultFsHolder {
  FaultFs fs;
};

class MaildirCrashTest : public FaultFsHolder, public testing::StoreTest {
 public:
  MaildirCrashTest() : StoreTest(&fs) {}
  explicit MaildirCrashTest(bool settle_files_later) : StoreTest(&fs, settle_files_later) {}

  // Runs `op`, which must crash; then "restarts": a new UserStore and a sync.
  template <typename F>
  void crash_and_restart(F&& op) {
    bool crashed = false;
    try {
      op();
    } catch (const Crash&) {
      crashed = true;
    }
    EXPECT_TRUE(crashed);
    fs.disarm();
    reopen();
    sync();
  }

  // A crash at each seam call of an append in turn, then a restart.
  void crash_at_every_step_of_append(int min_steps);

  void expect_unchanged_inbox(std::uint32_t messages, Uid uidnext) {
    EXPECT_EQ(info("INBOX").messages, messages);
    EXPECT_EQ(info("INBOX").uidnext, uidnext);
    EXPECT_EQ(list(maildir() / "cur").size(), messages);
    EXPECT_TRUE(list(maildir() / "tmp").empty());
    EXPECT_TRUE(list(maildir() / "new").empty());
  }
};

// ---- Failed steps change nothing ----

TEST_F(MaildirCrashTest, AppendWithFailedStepStoresNothing) {
  struct Case {
    Op op;
    int nth;
    std::string needle;
    // The step fails after the index commit (the directory fsync runs beside
    // it): the append undoes the commit, so its UIDs stay used.
    bool after_commit = false;
  };
  const Case cases[] = {
      {Op::kCreate, 0, "/tmp/"},
      {Op::kWrite, 0, ""},
      {Op::kFileSync, 0, ""},
      {Op::kClose, 0, ""},
      {Op::kSetMtime, 0, ""},
      {Op::kRename, 0, "/cur/"},
      {Op::kSyncDir, 0, "cur", true},
      // The second message of a MULTIAPPEND.
      {Op::kFileSync, 1, ""},
      {Op::kRename, 1, "/cur/"},
  };
  testing::Recorder recorder;
  auto watch = user_->watch("INBOX", recorder);
  ASSERT_TRUE(watch);
  Uid uidnext = 1;
  for (const Case& c : cases) {
    SCOPED_TRACE(static_cast<int>(c.op));
    fs.arm(c.op, c.nth, c.needle);
    std::string a = message("a");
    std::string b = message("b");
    AppendMessage batch[] = {append_of(a), append_of(b)};
    auto r = user_->append("INBOX", batch);
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error().code, MailError::kTemporary);
    EXPECT_NE(r.error().message.find("injected"), std::string::npos);
    if (c.after_commit) {
      uidnext += 2;
    }
    expect_unchanged_inbox(0, uidnext);
  }
  EXPECT_TRUE(recorder.appended.empty());  // no one heard of a failed append
  fs.disarm();
  EXPECT_EQ(append("INBOX", message("works")), uidnext);
}

TEST_F(MaildirCrashTest, FlagUpdateWithFailedStepChangesNothing) {
  Uid a = append("INBOX", message("a"));
  Uid b = append("INBOX", message("b"));
  const auto files = list(maildir() / "cur");
  const auto before = metas("INBOX");
  struct Case {
    Op op;
    int nth;
  };
  for (Case c : {Case{Op::kRename, 0}, Case{Op::kRename, 1}, Case{Op::kSyncDir, 0}}) {
    fs.arm(c.op, c.nth);
    auto r = user_->update_flags("INBOX", UidSet{a, b}, {FlagOp::kAdd, kFlagSeen, {"k"}, {}});
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error().code, MailError::kTemporary);
    EXPECT_EQ(metas("INBOX"), before);
    EXPECT_EQ(list(maildir() / "cur"), files);
  }
  fs.disarm();
  sync();
  EXPECT_EQ(metas("INBOX"), before);
}

// The expunge commits first; a file that cannot be removed afterwards stays
// journaled: the scan does not take it back, and the next open removes it.
TEST_F(MaildirCrashTest, ExpungeWithFailedUnlinkRemovesTheFileAtTheNextOpen) {
  append("INBOX", message("a"), kFlagDeleted);
  Uid b = append("INBOX", message("b"));
  fs.arm(Op::kRemove, 0);
  auto r = user_->expunge("INBOX");
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(r->size(), 1u);
  testing::settle(*user_);
  EXPECT_EQ(list(maildir() / "cur").size(), 2u);  // the failed removal's file is still there
  fs.disarm();
  sync();
  auto ms = metas("INBOX");
  ASSERT_EQ(ms.size(), 1u);  // and it is not adopted again
  EXPECT_EQ(ms[0].uid, b);
  reopen();
  EXPECT_EQ(list(maildir() / "cur").size(), 1u);
  sync();
  EXPECT_EQ(metas("INBOX").size(), 1u);
  testing::expect_consistent(*user_, maildir());
}

TEST_F(MaildirCrashTest, CopyFallsBackToCopyingWhenLinkFails) {
  Uid a = append("INBOX", message("a"), kFlagSeen);
  fs.arm(Op::kLink, 0);
  auto r = user_->copy("INBOX", UidSet{a}, "Archive");
  ASSERT_TRUE(r) << r.error().message;
  auto body = user_->open_body("Archive", r->mapping[0].dest);
  ASSERT_TRUE(body);
  EXPECT_EQ((*body)->read_all().value(), message("a"));
  EXPECT_TRUE(list(dir("Archive") / "tmp").empty());
}

TEST_F(MaildirCrashTest, CopyWithFailedStepChangesNothing) {
  Uid a = append("INBOX", message("a"));
  Uid b = append("INBOX", message("b"));
  auto fail_second_link_and_its_fallback = [&] {
    fs.arm(Op::kLink, 1, "Archive");
    fs.arm(Op::kCreate, 0, "Archive");
  };
  auto fail_dir_sync = [&] { fs.arm(Op::kSyncDir, 0, "Archive"); };
  for (const auto& arm : {std::function<void()>(fail_second_link_and_its_fallback),
                          std::function<void()>(fail_dir_sync)}) {
    arm();
    auto r = user_->copy("INBOX", UidSet{a, b}, "Archive");
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error().code, MailError::kTemporary);
    EXPECT_EQ(info("Archive").messages, 0u);
    EXPECT_EQ(info("Archive").uidnext, 1u);
    EXPECT_TRUE(list(dir("Archive") / "cur").empty());
    EXPECT_TRUE(list(dir("Archive") / "tmp").empty());
    fs.disarm();
  }
  EXPECT_EQ(info("INBOX").messages, 2u);
}

TEST_F(MaildirCrashTest, MoveWhoseFileRenameFailsIsFinishedLater) {
  Uid a = append("INBOX", message("a"));
  fs.arm(Op::kRename, 0, "Archive");  // the journal's rename, after the commit
  auto r = user_->move("INBOX", UidSet{a}, "Archive");
  ASSERT_TRUE(r) << r.error().message;            // committed: the move has happened
  EXPECT_EQ(list(maildir() / "cur").size(), 1u);  // the file has not moved yet
  auto body = user_->open_body("Archive", r->mapping[0].dest);
  ASSERT_TRUE(body) << body.error().message;
  EXPECT_EQ((*body)->read_all().value(), message("a"));
  sync();
  EXPECT_TRUE(list(maildir() / "cur").empty());
  testing::expect_consistent(*user_, maildir());
}

TEST_F(MaildirCrashTest, CreateMailboxWithFailedMkdirCreatesNothing) {
  fs.arm(Op::kMakeDir, 1);
  auto r = user_->create_mailbox("New");
  ASSERT_FALSE(r);
  EXPECT_FALSE(entry("New"));
  fs.disarm();
  ASSERT_TRUE(user_->create_mailbox("New"));
  EXPECT_TRUE(entry("New"));
}

// ---- Crashes: restart and sync give a consistent store ----

TEST_F(MaildirCrashTest, AppendThroughUnnamedFilesWithFailedStepStoresNothing) {
  fs.unnamed = true;
  Uid uidnext = 1;
  for (int nth : {0, 1}) {  // the first or the second message of a MULTIAPPEND
    fs.arm(Op::kWriteUnnamed, nth);
    std::string a = message("a");
    std::string b = message("b");
    AppendMessage batch[] = {append_of(a), append_of(b)};
    auto r = user_->append("INBOX", batch);
    ASSERT_FALSE(r);
    EXPECT_NE(r.error().message.find("injected"), std::string::npos);
    expect_unchanged_inbox(0, uidnext);
  }
  fs.disarm();
  EXPECT_EQ(append("INBOX", message("works")), uidnext);
  EXPECT_TRUE(list(maildir() / "tmp").empty());
}

TEST_F(MaildirCrashTest, CrashAtEveryStepOfAppend) {
  for (bool unnamed : {false, true}) {
    SCOPED_TRACE(unnamed ? "unnamed files" : "through tmp/");
    fs.unnamed = unnamed;
    crash_at_every_step_of_append(unnamed ? 2 : 6);
  }
}

void MaildirCrashTest::crash_at_every_step_of_append(int min_steps) {
  // Count the seam calls of one append.
  fs.reset_calls();
  append("INBOX", message("counted"));
  const int steps = fs.calls();
  ASSERT_GE(steps, min_steps);

  for (int k = 0; k < steps; ++k) {
    SCOPED_TRACE("crash at step " + std::to_string(k));
    const std::uint32_t before = info("INBOX").messages;
    const Uid uidnext = info("INBOX").uidnext;
    std::string bytes = message("crash" + std::to_string(k));
    AppendMessage m = append_of(bytes, kFlagFlagged);
    m.internal_date = InternalDate{1500000000 + k, 0};
    fs.arm(std::nullopt, k, "", true);
    crash_and_restart([&] { (void)user_->append("INBOX", m); });

    testing::expect_consistent(*user_, maildir());
    auto ms = metas("INBOX");
    // Either the message is not there, or it is there once, whole, with its
    // flags and date, under a new UID.
    ASSERT_TRUE(ms.size() == before || ms.size() == before + 1u);
    if (ms.size() == before + 1u) {
      EXPECT_GE(ms.back().uid, uidnext);
      EXPECT_EQ(ms.back().flags, kFlagFlagged);
      EXPECT_EQ(ms.back().internal_date.seconds, 1500000000 + k);
      auto body = user_->open_body("INBOX", ms.back().uid);
      ASSERT_TRUE(body);
      EXPECT_EQ((*body)->read_all().value(), bytes);
    }
    // Only once the file is in cur/ can it survive; before that, never.
    const bool renamed = k >= steps - 1;
    EXPECT_EQ(ms.size() == before + 1u, renamed);
  }
  // Everything acknowledged is still there, and appends go on.
  EXPECT_EQ(metas("INBOX")[0].uid, 1u);
  EXPECT_GT(append("INBOX", message("after")), 1u);
}

// A crash after the expunge committed, at each step of the removals that
// follow it (before any file is removed, after one of two, before the fsync
// of cur/): after a restart the messages stay expunged and their files are
// gone, and nothing else changed.
TEST_F(MaildirCrashTest, CrashAfterExpungeCommitIsFinishedAtRestart) {
  struct Case {
    Op op;
    int nth;
  };
  for (Case c : {Case{Op::kRemove, 0}, Case{Op::kRemove, 1}, Case{Op::kSyncDir, 0}}) {
    SCOPED_TRACE(static_cast<int>(c.op) * 10 + c.nth);
    Uid a = append("INBOX", message("a"), kFlagDeleted);
    Uid b = append("INBOX", message("b"), kFlagDeleted);
    Uid keep = append("INBOX", message("keep"));
    const ModSeq before = info("INBOX").highest_modseq;
    // The process stops in the removals, on the sync thread: the crash ends
    // that thread's work, and nothing after it happens.
    fs.arm(c.op, c.nth, "", true);
    auto r = user_->expunge("INBOX");
    ASSERT_TRUE(r) << r.error().message;  // committed: the reply was sent
    EXPECT_EQ(*r, (std::vector<Uid>{a, b}));
    testing::settle(*user_);
    if (c.op == Op::kRemove && c.nth == 0) {
      EXPECT_EQ(list(maildir() / "cur").size(), 3u);  // rows gone, files still there
    }
    fs.disarm();
    reopen();
    EXPECT_EQ(list(maildir() / "cur").size(), 1u);
    sync();
    auto ms = metas("INBOX");
    ASSERT_EQ(ms.size(), 1u);
    EXPECT_EQ(ms[0].uid, keep);
    auto changes = user_->changes_since("INBOX", before);
    ASSERT_TRUE(changes);
    EXPECT_EQ(changes->expunged, (std::vector<ExpungedUid>{{a, before + 1}, {b, before + 1}}));
    testing::expect_consistent(*user_, maildir());
    ASSERT_TRUE(user_->remove_messages("INBOX", UidSet{keep}));
  }
}

// While the files of an expunge are still being removed: listeners have
// heard of it already, a scan adopts none of them, and the files go once
// the removals run.
TEST_F(MaildirCrashTest, ScanDuringPendingRemovalsAdoptsNothing) {
  std::vector<Uid> uids;
  for (int i = 0; i < 3; ++i) {
    uids.push_back(append("INBOX", message("m" + std::to_string(i))));
  }
  Uid kept = append("INBOX", message("kept"));
  testing::Recorder recorder;
  auto watch = user_->watch("INBOX", recorder);
  ASSERT_TRUE(watch);
  fs.hold_removes();
  auto r = user_->remove_messages("INBOX", UidSet::of(uids));
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(recorder.expunged, uids);  // heard at once, the files still there
  while (fs.held_removes() == 0) {
    std::this_thread::yield();  // the removal is under way, and waits
  }
  EXPECT_EQ(list(maildir() / "cur").size(), 4u);
  sync();
  auto ms = metas("INBOX");
  ASSERT_EQ(ms.size(), 1u);
  EXPECT_EQ(ms[0].uid, kept);
  EXPECT_TRUE(recorder.appended.empty());
  fs.release_removes();
  testing::settle(*user_);
  EXPECT_EQ(list(maildir() / "cur").size(), 1u);
  sync();
  EXPECT_EQ(metas("INBOX").size(), 1u);
  testing::expect_consistent(*user_, maildir());
}

// A folder renamed right after an expunge in it: the removals finish
// first, so no file comes back under the folder's new name.
TEST_F(MaildirCrashTest, RenameAfterExpungeLeavesNoRemovedFileBehind) {
  ASSERT_TRUE(user_->create_mailbox("Old"));
  Uid a = append("Old", message("a"));
  append("Old", message("b"));
  fs.arm(Op::kRemove, 0);  // the expunge's own removal fails: the rename retries it
  ASSERT_TRUE(user_->remove_messages("Old", UidSet{a}));
  testing::settle(*user_);
  ASSERT_TRUE(user_->rename_mailbox("Old", "New"));
  EXPECT_EQ(list(dir("New") / "cur").size(), 1u);
  sync();
  EXPECT_EQ(metas("New").size(), 1u);
  reopen();
  sync();
  EXPECT_EQ(metas("New").size(), 1u);
  testing::expect_consistent(*user_, maildir());
}

TEST_F(MaildirCrashTest, CrashAfterFlagRenameKeepsTheNewFlags) {
  Uid a = append("INBOX", message("a"), 0, {"kw"});
  fs.arm(Op::kSyncDir, 0, "cur", true);
  crash_and_restart([&] {
    (void)user_->update_flags("INBOX", UidSet{a}, {FlagOp::kAdd, kFlagSeen, {}, {}});
  });
  auto ms = metas("INBOX");
  ASSERT_EQ(ms.size(), 1u);
  EXPECT_EQ(ms[0].flags, kFlagSeen);
  EXPECT_EQ(ms[0].keywords, (std::vector<std::string>{"kw"}));
  testing::expect_consistent(*user_, maildir());
}

TEST_F(MaildirCrashTest, CrashAfterMoveCommitIsFinishedAtRestart) {
  Uid a = append("INBOX", message("a"), kFlagSeen, {"keep-me"});
  append("INBOX", message("b"));
  // The first rename after the commit is the journal's.
  fs.arm(Op::kRename, 0, "", true);
  crash_and_restart([&] { (void)user_->move("INBOX", UidSet{a}, "Archive"); });
  EXPECT_EQ(info("INBOX").messages, 1u);
  auto ms = metas("Archive");
  ASSERT_EQ(ms.size(), 1u);
  EXPECT_EQ(ms[0].keywords, (std::vector<std::string>{"keep-me"}));
  EXPECT_EQ(list(dir("Archive") / "cur").size(), 1u);
  EXPECT_EQ(list(maildir() / "cur").size(), 1u);
  testing::expect_consistent(*user_, maildir());
}

TEST_F(MaildirCrashTest, CrashDuringRenameOfHierarchyIsFinishedAtRestart) {
  ASSERT_TRUE(user_->create_mailbox("P"));
  ASSERT_TRUE(user_->create_mailbox("P/C1"));
  ASSERT_TRUE(user_->create_mailbox("P/C2"));
  append("P/C2", message("deep"), 0, {"kw"});
  fs.arm(Op::kRename, 1, "", true);  // after the first directory is renamed
  crash_and_restart([&] { (void)user_->rename_mailbox("P", "Q"); });
  for (const char* name : {"Q", "Q/C1", "Q/C2"}) {
    EXPECT_TRUE(entry(name)) << name;
  }
  EXPECT_FALSE(entry("P"));
  EXPECT_EQ(metas("Q/C2")[0].keywords, (std::vector<std::string>{"kw"}));
  EXPECT_FALSE(std::filesystem::exists(maildir() / ".P.C1"));
  testing::expect_consistent(*user_, maildir());
}

TEST_F(MaildirCrashTest, CrashDuringRenameOfInboxIsFinishedAtRestart) {
  append("INBOX", message("a"));
  append("INBOX", message("b"));
  append("INBOX", message("c"));
  fs.arm(Op::kRename, 1, "", true);  // one file moved, two to go
  crash_and_restart([&] { (void)user_->rename_mailbox("INBOX", "Saved"); });
  EXPECT_EQ(info("INBOX").messages, 0u);
  EXPECT_EQ(info("Saved").messages, 3u);
  EXPECT_TRUE(list(maildir() / "cur").empty());
  testing::expect_consistent(*user_, maildir());
}

TEST_F(MaildirCrashTest, CrashDuringDeleteLeavesNoHalfMailbox) {
  for (int nth : {0, 1}) {
    SCOPED_TRACE(nth);
    ASSERT_TRUE(user_->create_mailbox("Doomed"));
    append("Doomed", message("x"));
    append("Doomed", message("y"));
    // 0: after the folder left the Maildir, before the commit;
    // 1: after the commit, while its files are removed.
    if (nth == 0) {
      fs.arm(Op::kSyncDir, 0, "", true);
    } else {
      fs.arm(Op::kRemove, 0, "", true);
    }
    crash_and_restart([&] { (void)user_->delete_mailbox("Doomed"); });
    EXPECT_FALSE(entry("Doomed"));
    for (const auto& name : list(maildir())) {
      EXPECT_FALSE(name.starts_with("..")) << name;
      EXPECT_NE(name, ".Doomed");
    }
    testing::expect_consistent(*user_, maildir());
  }
}

// The directory fsync and the index commit of an append run at the same
// time (docs/formats/maildir-store.md, "Writes"), so a crash may keep either
// one without the other. The two tests below build each outcome by hand.

// The commit survived, the rename did not: cur/ is back as the last scan saw
// it, mtime included, and the row names a file that is not there. The next
// sync must expunge the row, and its UID must never name another message.
TEST_F(MaildirCrashTest, CommittedAppendWhoseRenameWasLostIsExpunged) {
  Uid a = append("INBOX", message("a"));
  // A scan long after the last change, which records cur/'s mtime.
  const auto old = std::filesystem::file_time_type::clock::now() - std::chrono::hours(1);
  std::filesystem::last_write_time(maildir() / "cur", old);
  std::filesystem::last_write_time(maildir() / "new", old);
  sync();
  const auto before = list(maildir() / "cur");
  Uid b = append("INBOX", message("b"));
  ASSERT_GT(b, a);
  // The crash: the rename's directory entry, and cur/'s mtime with it, lost.
  for (const auto& name : list(maildir() / "cur")) {
    if (std::find(before.begin(), before.end(), name) == before.end()) {
      std::filesystem::remove(maildir() / "cur" / name);
    }
  }
  std::filesystem::last_write_time(maildir() / "cur", old);
  reopen();
  sync();
  auto ms = metas("INBOX");
  ASSERT_EQ(ms.size(), 1u);
  EXPECT_EQ(ms[0].uid, a);
  EXPECT_EQ(info("INBOX").uidnext, b + 1);
  auto changes = user_->changes_since("INBOX", 0);
  ASSERT_TRUE(changes);
  ASSERT_EQ(changes->expunged.size(), 1u);
  EXPECT_EQ(changes->expunged[0].uid, b);
  EXPECT_GT(append("INBOX", message("c")), b);
  testing::expect_consistent(*user_, maildir());
}

// The rename survived, the commit did not: the index is as it was before
// the append, and cur/ has a file it does not know. The next sync adopts it
// whole, with its flags and date (the sender was never told, and resends).
TEST_F(MaildirCrashTest, RenamedAppendWhoseCommitWasLostIsAdopted) {
  Uid a = append("INBOX", message("a"));
  const std::filesystem::path index = maildir().parent_path() / "index.sqlite";
  const std::filesystem::path saved = tmp_.path() / "index.saved";
  user_.reset();  // closed: the index is whole in its main file
  ASSERT_FALSE(std::filesystem::exists(index.string() + "-wal"));
  std::filesystem::copy_file(index, saved);
  reopen();
  std::string bytes = message("b");
  AppendMessage m = append_of(bytes, kFlagSeen);
  m.internal_date = InternalDate{1600000000, 0};
  auto r = user_->append("INBOX", m);
  ASSERT_TRUE(r) << r.error().message;
  // The crash: the commit lost, the index as before the append.
  user_.reset();
  for (const char* suffix : {"-wal", "-shm"}) {
    std::filesystem::remove(index.string() + suffix);
  }
  std::filesystem::copy_file(saved, index, std::filesystem::copy_options::overwrite_existing);
  reopen();
  ASSERT_EQ(info("INBOX").messages, 1u);  // the index knows only the first
  sync();
  auto ms = metas("INBOX");
  ASSERT_EQ(ms.size(), 2u);
  EXPECT_EQ(ms[0].uid, a);
  EXPECT_GT(ms[1].uid, a);
  EXPECT_EQ(ms[1].flags, kFlagSeen);
  EXPECT_EQ(ms[1].internal_date.seconds, 1600000000);
  auto body = user_->open_body("INBOX", ms[1].uid);
  ASSERT_TRUE(body);
  EXPECT_EQ((*body)->read_all().value(), bytes);
  testing::expect_consistent(*user_, maildir());
}

// ---- Files settled after the commit (MaildirOptions::settle_files_later) ----

class SettleLaterTest : public MaildirCrashTest {
 public:
  SettleLaterTest() : MaildirCrashTest(/*settle_files_later=*/true) {}

  std::filesystem::path index_path() const {
    return tmp_.path() / "data" / "alice" / "index.sqlite";
  }
  MaildirUserStore& store() { return dynamic_cast<MaildirUserStore&>(*user_); }

  // Rows of unsettled_files, read through a connection of the test's own.
  std::int64_t unsettled_rows() const { return unsettled_rows_in(index_path()); }
  static std::int64_t unsettled_rows_in(const std::filesystem::path& db_path) {
    return testing::scalar(db_path, "SELECT count(*) FROM unsettled_files");
  }

  std::filesystem::path only_file(std::string_view mailbox) {
    auto files = list(dir(mailbox) / "cur");
    EXPECT_EQ(files.size(), 1u);
    return files.empty() ? std::filesystem::path() : dir(mailbox) / "cur" / files.front();
  }
};

TEST_F(SettleLaterTest, FileIsNamedAtOnceAndSettledLater) {
  const std::string bytes = message("later");
  fs.reset_calls();
  Uid uid = append("INBOX", bytes);
  ASSERT_EQ(uid, 1u);
  // The bytes are in the index and in cur/, none in tmp/; no fsync yet.
  EXPECT_EQ(store().unsettled_files(), 1u);
  EXPECT_EQ(unsettled_rows(), 1);
  EXPECT_EQ(read_file(only_file("INBOX")), bytes);
  EXPECT_TRUE(list(maildir() / "tmp").empty());
  fs.arm(Op::kFileSync, 0, "", /*crash=*/false);
  fs.arm(Op::kSyncDir, 0, "", /*crash=*/false);
  // A failed settle keeps the bytes; the next one settles.
  EXPECT_FALSE(store().settle_files());
  EXPECT_EQ(unsettled_rows(), 1);
  EXPECT_EQ(store().unsettled_files(), 1u);
  EXPECT_FALSE(store().settle_files());  // the directory's fsync fails now
  EXPECT_EQ(unsettled_rows(), 1);
  ASSERT_TRUE(store().settle_files());
  EXPECT_EQ(store().unsettled_files(), 0u);
  EXPECT_EQ(unsettled_rows(), 0);
  EXPECT_EQ(read_file(only_file("INBOX")), bytes);
  testing::expect_consistent(*user_, maildir());
}

// A crash took the file's bytes (written, never fsynced), or its name: the
// open writes it back from the index, under its name, with its date.
// One the crash left whole is fsynced where it is.
TEST_F(SettleLaterTest, FileLostInACrashIsWrittenBack) {
  enum class Lost { kNothing, kBytes, kName };
  for (Lost lost : {Lost::kNothing, Lost::kBytes, Lost::kName}) {
    const std::string what = lost == Lost::kNothing ? "nothing"
                             : lost == Lost::kBytes ? "bytes"
                                                    : "name";
    SCOPED_TRACE(what + " lost");
    const std::string bytes = message(what);
    AppendMessage m = append_of(bytes, kFlagFlagged);
    m.internal_date = InternalDate{1600000000, 0};
    auto r = user_->append("Archive", m);
    ASSERT_TRUE(r);
    // The state a crash leaves: the index as committed, and the file as the
    // disk kept it. The store is copied while open (the WAL with it).
    const std::filesystem::path crashed = tmp_.path() / ("crash-" + what);
    std::filesystem::copy(tmp_.path() / "data", crashed, std::filesystem::copy_options::recursive);
    const std::filesystem::path archive = crashed / "alice" / "Maildir" / ".Archive" / "cur";
    ASSERT_EQ(list(archive).size(), 1u);
    const std::filesystem::path file = archive / list(archive).front();
    // A copy is dated now; the crash would have kept the file's date.
    std::filesystem::last_write_time(
        file, std::filesystem::last_write_time(dir("Archive") / "cur" / file.filename()));
    if (lost == Lost::kName) {
      std::filesystem::remove(file);
    } else if (lost == Lost::kBytes) {
      std::filesystem::resize_file(file, 0);
    }
    const std::uint64_t inode = lost == Lost::kName ? 0 : real_maildir_fs().stat(file)->inode;
    MaildirOptions options;
    options.data_dir = crashed;
    options.host_name = "test.host";
    MaildirStore restarted(options);
    auto opened = restarted.open_user("alice");
    ASSERT_TRUE(opened) << opened.error().message;
    EXPECT_EQ(unsettled_rows_in(crashed / "alice" / "index.sqlite"), 0);
    ASSERT_EQ(list(archive).size(), 1u);
    EXPECT_EQ(list(archive).front(), file.filename().string());
    EXPECT_EQ(read_file(file), bytes);
    auto stat = real_maildir_fs().stat(file);
    ASSERT_TRUE(stat);
    EXPECT_EQ(stat->mtime_ns, 1600000000LL * 1'000'000'000);
    EXPECT_EQ(stat->inode == inode, lost == Lost::kNothing);
    EXPECT_TRUE(list(crashed / "alice" / "Maildir" / ".Archive" / "tmp").empty());
    ASSERT_TRUE((*opened)->sync());
    auto snapshot = (*opened)->open_mailbox("Archive");
    ASSERT_TRUE(snapshot);
    ASSERT_EQ(snapshot->messages.size(), 1u);
    EXPECT_EQ(snapshot->messages[0].uid, r->uid);
    EXPECT_EQ(snapshot->messages[0].flags, kFlagFlagged);
    testing::expect_consistent(**opened, crashed / "alice" / "Maildir");
    ASSERT_TRUE(store().settle_files());
    ASSERT_TRUE(user_->remove_messages("Archive", UidSet{r->uid}));
    // The file's unlink runs on the removal queue: done before the next
    // round copies the store, or the copy may hold this file too.
    store().wait_for_removals();
  }
}

// The commit holds the message before its file has a name: a crash at any
// step before the commit leaves nothing, and one after it (the rename into
// cur/) leaves the message, written back from the index at the open.
TEST_F(SettleLaterTest, CrashAtEveryStepOfAppend) { crash_at_every_step_of_append(5); }

TEST_F(SettleLaterTest, CommittedBytesGoWithTheirMessage) {
  Uid a = append("INBOX", message("a"));
  Uid b = append("INBOX", message("b"));
  EXPECT_EQ(unsettled_rows(), 2);
  // A removal without flags (POP3's) takes the bytes with the row.
  ASSERT_TRUE(user_->remove_messages("INBOX", UidSet{a}));
  EXPECT_EQ(unsettled_rows(), 1);
  reopen();
  sync();
  auto ms = metas("INBOX");
  ASSERT_EQ(ms.size(), 1u);
  EXPECT_EQ(ms[0].uid, b);
  EXPECT_EQ(unsettled_rows(), 0);  // settled at the close
  testing::expect_consistent(*user_, maildir());
}

// Whatever renames or links a message file settles the waiting ones first.
TEST_F(SettleLaterTest, FlagsCopyAndMoveSettleFirst) {
  Uid a = append("INBOX", message("a"));
  FlagUpdate seen;
  seen.flags = kFlagSeen;
  ASSERT_TRUE(user_->update_flags("INBOX", UidSet{a}, seen));
  EXPECT_EQ(unsettled_rows(), 0);
  Uid b = append("INBOX", message("b"));
  ASSERT_TRUE(user_->copy("INBOX", UidSet{b}, "Archive"));
  EXPECT_EQ(unsettled_rows(), 0);
  Uid c = append("INBOX", message("c"));
  ASSERT_TRUE(user_->move("INBOX", UidSet{c}, "Trash"));
  EXPECT_EQ(unsettled_rows(), 0);
  append("INBOX", message("d"));
  ASSERT_TRUE(user_->rename_mailbox("Archive", "Old"));
  EXPECT_EQ(unsettled_rows(), 0);
  testing::expect_consistent(*user_, maildir());
}

TEST_F(SettleLaterTest, UpkeepSettlesFromThirtyTwoFiles) {
  for (std::size_t i = 0; i + 1 < kSettleAt; ++i) {
    append("INBOX", message("m" + std::to_string(i)));
  }
  EXPECT_FALSE(user_->upkeep_due());
  user_->upkeep();
  EXPECT_EQ(store().unsettled_files(), kSettleAt - 1);
  append("INBOX", message("last"));
  EXPECT_TRUE(user_->upkeep_due());
  user_->upkeep();
  EXPECT_FALSE(user_->upkeep_due());
  EXPECT_EQ(store().unsettled_files(), 0u);
  EXPECT_EQ(unsettled_rows(), 0);
}

}  // namespace
}  // namespace peregrine::store::maildir
