// sync(): what other programs do to the Maildir is folded in.

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>
#include <string>

#include "mime/cache_record.h"
#include "store/maildir/test_util.h"

namespace peregrine::store::maildir {
namespace {

using testing::list;
using testing::message;
using testing::read_file;
using testing::Recorder;
using testing::write_file;

using MaildirSyncTest = testing::StoreTest;

// Sets a directory's mtime an hour back, as if it had not changed lately.
void age(const std::filesystem::path& dir) {
  auto t = std::filesystem::last_write_time(dir);
  std::filesystem::last_write_time(dir, t - std::chrono::hours(1));
}

TEST_F(MaildirSyncTest, FileCopiedIntoNewGetsANewUid) {
  append("INBOX", message("ours"));
  Recorder r;
  auto w = user_->watch("INBOX", r);
  ASSERT_TRUE(w);

  // As a user would: cp some-message ~/Maildir/new/ (bare LF line ends).
  std::string lf = "From: carol@example.com\nSubject: dropped\n\nHand-copied.\n";
  std::string crlf = "From: carol@example.com\r\nSubject: dropped\r\n\r\nHand-copied.\r\n";
  write_file(maildir() / "new" / "1700000000.12345_1.otherhost", lf);
  sync();

  auto ms = metas("INBOX");
  ASSERT_EQ(ms.size(), 2u);
  EXPECT_EQ(ms[1].uid, 2u);
  EXPECT_EQ(ms[1].flags, 0);
  EXPECT_EQ(ms[1].size, crlf.size());
  EXPECT_GT(ms[1].modseq, ms[0].modseq);
  EXPECT_EQ(r.appended, (std::vector<Uid>{2}));
  EXPECT_EQ(info("INBOX").uidnext, 3u);
  EXPECT_EQ(info("INBOX").recent, 2u);

  // Moved to cur/ with an info part, rewritten with CRLF line ends.
  EXPECT_TRUE(list(maildir() / "new").empty());
  EXPECT_EQ(read_file(maildir() / "cur" / "1700000000.12345_1.otherhost:2,"), crlf);
  auto body = user_->open_body("INBOX", 2);
  ASSERT_TRUE(body);
  EXPECT_EQ((*body)->read_all().value(), crlf);
  auto records = user_->cache_records("INBOX", UidSet{2});
  ASSERT_TRUE(records);
  ASSERT_EQ(records->size(), 1u);
  EXPECT_EQ(mime::deserialize((*records)[0].record)->subject, "dropped");

  // A second sync changes nothing.
  const MailboxInfo before = info("INBOX");
  sync();
  EXPECT_EQ(info("INBOX"), before);
  EXPECT_EQ(r.appended.size(), 1u);

  // Survives a reopen with the same UID.
  reopen();
  sync();
  EXPECT_EQ(metas("INBOX"), ms);
}

TEST_F(MaildirSyncTest, DeliveriesGetUidsInArrivalOrder) {
  write_file(maildir() / "new" / "1700000300.c.host", message("third"));
  write_file(maildir() / "new" / "1700000100.a.host", message("first"));
  write_file(maildir() / "new" / "990000000.z.host", message("oldest"));
  write_file(maildir() / "new" / "1700000200.b.host", message("second"));
  write_file(maildir() / "new" / ".hidden", message("ignored"));
  sync();
  auto records = user_->cache_records("INBOX", UidSet::all());
  ASSERT_TRUE(records);
  std::vector<std::string> subjects;
  for (const auto& r : *records) {
    subjects.push_back(mime::deserialize(r.record)->subject);
  }
  EXPECT_EQ(subjects, (std::vector<std::string>{"oldest", "first", "second", "third"}));
}

TEST_F(MaildirSyncTest, FileInCurKeepsItsFlagsAndDate) {
  std::filesystem::path file = dir("Archive") / "cur" / "1600000000.x.host,S=999:2,FPS";
  write_file(file, message("flagged"));
  std::filesystem::last_write_time(file,
                                   std::filesystem::file_time_type::clock::from_sys(
                                       std::chrono::sys_seconds(std::chrono::seconds(1600000000))));
  sync();
  auto ms = metas("Archive");
  ASSERT_EQ(ms.size(), 1u);
  EXPECT_EQ(ms[0].flags, kFlagFlagged | kFlagSeen);
  EXPECT_EQ(ms[0].internal_date.seconds, 1600000000);
  // The wrong S= size is corrected (Maildir readers trust it); P is kept.
  const std::string size = std::to_string(message("flagged").size());
  EXPECT_EQ(list(dir("Archive") / "cur"),
            (std::vector<std::string>{"1600000000.x.host,S=" + size + ":2,FPS"}));
  // Our own flag change keeps the other program's letter.
  ASSERT_TRUE(user_->update_flags("Archive", UidSet{1}, {FlagOp::kAdd, kFlagAnswered, {}, {}}));
  EXPECT_EQ(list(dir("Archive") / "cur"),
            (std::vector<std::string>{"1600000000.x.host,S=" + size + ":2,FPRS"}));
}

TEST_F(MaildirSyncTest, ExternalFlagRenameUpdatesFlags) {
  Uid uid = append("INBOX", message("m"), 0, {"kw"});
  Recorder r;
  auto w = user_->watch("INBOX", r);
  auto files = list(maildir() / "cur");
  ASSERT_EQ(files.size(), 1u);
  ASSERT_TRUE(files[0].ends_with(":2,"));
  const ModSeq before = info("INBOX").highest_modseq;

  // mutt marks it read and replied.
  std::filesystem::rename(maildir() / "cur" / files[0], maildir() / "cur" / (files[0] + "RS"));
  sync();
  auto ms = metas("INBOX");
  ASSERT_EQ(ms.size(), 1u);
  EXPECT_EQ(ms[0].flags, kFlagSeen | kFlagAnswered);
  EXPECT_EQ(ms[0].keywords, (std::vector<std::string>{"kw"}));  // the index keeps keywords
  EXPECT_EQ(ms[0].modseq, before + 1);
  EXPECT_EQ(r.flags_changed, (std::vector<Uid>{uid}));
  auto changes = user_->changes_since("INBOX", before);
  ASSERT_TRUE(changes);
  ASSERT_EQ(changes->changed.size(), 1u);

  // And a flag change of ours after it renames from the new name.
  ASSERT_TRUE(user_->update_flags("INBOX", UidSet{uid}, {FlagOp::kRemove, kFlagSeen, {}, {}}));
  EXPECT_EQ(list(maildir() / "cur"), (std::vector<std::string>{files[0] + "R"}));
}

TEST_F(MaildirSyncTest, FlagRenameUnseenBySyncIsFoundOnUpdate) {
  Uid uid = append("INBOX", message("m"));
  auto files = list(maildir() / "cur");
  std::filesystem::rename(maildir() / "cur" / files[0], maildir() / "cur" / (files[0] + "F"));
  // No sync: the update finds the file missing, resyncs and retries.
  auto r = user_->update_flags("INBOX", UidSet{uid}, {FlagOp::kAdd, kFlagSeen, {}, {}});
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(metas("INBOX")[0].flags, kFlagFlagged | kFlagSeen);
  EXPECT_EQ(list(maildir() / "cur"), (std::vector<std::string>{files[0] + "FS"}));
}

TEST_F(MaildirSyncTest, ExternalDeleteBecomesExpunge) {
  Uid a = append("INBOX", message("a"));
  Uid b = append("INBOX", message("b"));
  Recorder r;
  auto w = user_->watch("INBOX", r);
  auto files = list(maildir() / "cur");
  ASSERT_EQ(files.size(), 2u);
  // Which file is a's? The one the index names; open_body tells by content.
  std::filesystem::path victim;
  for (const auto& f : files) {
    if (read_file(maildir() / "cur" / f) == message("a")) {
      victim = maildir() / "cur" / f;
    }
  }
  std::filesystem::remove(victim);
  const ModSeq before = info("INBOX").highest_modseq;
  sync();
  auto ms = metas("INBOX");
  ASSERT_EQ(ms.size(), 1u);
  EXPECT_EQ(ms[0].uid, b);
  EXPECT_EQ(r.expunged, (std::vector<Uid>{a}));
  auto changes = user_->changes_since("INBOX", before);
  ASSERT_TRUE(changes);
  EXPECT_EQ(changes->expunged, (std::vector<ExpungedUid>{{a, before + 1}}));
}

TEST_F(MaildirSyncTest, FileSwappedForAnotherOutsideIsSeen) {
  // As many files in cur/ as the index has messages, one of them another's:
  // a scan that compared counts alone would miss both changes.
  Uid a = append("INBOX", message("a"));
  Uid b = append("INBOX", message("b"));
  sync();
  Recorder r;
  auto w = user_->watch("INBOX", r);
  std::filesystem::path victim;
  for (const auto& f : list(maildir() / "cur")) {
    if (read_file(maildir() / "cur" / f) == message("a")) {
      victim = maildir() / "cur" / f;
    }
  }
  ASSERT_FALSE(victim.empty());
  std::filesystem::remove(victim);
  write_file(maildir() / "cur" / "1700000000.other.host:2,S", message("other"));
  ASSERT_EQ(list(maildir() / "cur").size(), 2u);
  sync();
  auto ms = metas("INBOX");
  ASSERT_EQ(ms.size(), 2u);
  EXPECT_EQ(ms[0].uid, b);
  EXPECT_GT(ms[1].uid, b);
  EXPECT_EQ(ms[1].flags, kFlagSeen);
  EXPECT_EQ(r.expunged, (std::vector<Uid>{a}));
}

TEST_F(MaildirSyncTest, BodyOfAMessageRemovedOutsideIsExpunged) {
  Uid a = append("INBOX", message("a"));
  for (const auto& f : list(maildir() / "cur")) {
    std::filesystem::remove(maildir() / "cur" / f);
  }
  auto body = user_->open_body("INBOX", a);
  ASSERT_FALSE(body);
  EXPECT_EQ(body.error().code, base::MailError::kExpunged);
}

TEST_F(MaildirSyncTest, FolderCreatedOutsideIsAdopted) {
  std::filesystem::create_directories(maildir() / ".Lists.Debian" / "cur");
  write_file(maildir() / ".Lists.Debian" / "cur" / "1700000000.a.host:2,S", message("list"));
  std::filesystem::create_directories(maildir() / ".NotAFolder");  // no cur/
  std::filesystem::create_directories(maildir() / ".bad%zz" / "cur");
  sync();
  auto e = entry("Lists/Debian");
  ASSERT_TRUE(e);
  EXPECT_TRUE(e->selectable);
  EXPECT_FALSE(entry("Lists")->selectable);
  EXPECT_FALSE(entry("NotAFolder"));
  auto ms = metas("Lists/Debian");
  ASSERT_EQ(ms.size(), 1u);
  EXPECT_EQ(ms[0].flags, kFlagSeen);
  // The missing parts of the folder are made.
  EXPECT_TRUE(std::filesystem::is_directory(maildir() / ".Lists.Debian" / "new"));
  EXPECT_TRUE(std::filesystem::is_directory(maildir() / ".Lists.Debian" / "tmp"));
}

TEST_F(MaildirSyncTest, FolderRemovedOutsideIsForgotten) {
  ASSERT_TRUE(user_->create_mailbox("Gone"));
  append("Gone", message("x"));
  Recorder r;
  auto w = user_->watch("Gone", r);
  std::filesystem::remove_all(maildir() / ".Gone");
  sync();
  EXPECT_FALSE(entry("Gone"));
  EXPECT_TRUE(r.deleted);
  auto status = user_->status("Gone");
  ASSERT_FALSE(status);
  EXPECT_EQ(status.error().code, base::MailError::kNotFound);
}

TEST_F(MaildirSyncTest, InboxLosingItsDirectoriesIsRepaired) {
  append("INBOX", message("x"));
  std::filesystem::remove_all(maildir() / "cur");
  sync();
  EXPECT_TRUE(std::filesystem::is_directory(maildir() / "cur"));
  EXPECT_EQ(info("INBOX").messages, 0u);
}

TEST_F(MaildirSyncTest, OversizedAndEmptyFilesAreLeftAlone) {
  write_file(maildir() / "new" / "1.big.host", std::string((1 << 20) + 1, 'x'));
  write_file(maildir() / "new" / "2.empty.host", "");
  sync();
  EXPECT_EQ(info("INBOX").messages, 0u);
  EXPECT_EQ(list(maildir() / "cur").size(), 2u);  // moved to cur/, not indexed
}

TEST_F(MaildirSyncTest, DuplicateInNewOfAFileInCurIsRemoved) {
  append("INBOX", message("a"));
  auto files = list(maildir() / "cur");
  std::string base = std::string(split_file_name(files[0]).base);
  std::filesystem::copy_file(maildir() / "cur" / files[0], maildir() / "new" / base);
  sync();
  EXPECT_TRUE(list(maildir() / "new").empty());
  EXPECT_EQ(list(maildir() / "cur"), files);
  EXPECT_EQ(info("INBOX").messages, 1u);
}

TEST_F(MaildirSyncTest, UnchangedDirectoriesAreNotRead) {
  append("INBOX", message("a"));
  sync();
  for (const auto& name : names()) {
    if (entry(name)->selectable) {
      age(dir(name) / "cur");
      age(dir(name) / "new");
    }
  }
  sync();  // records the aged mtimes
  // Drop a file without changing the directory's mtime: a sync that trusts
  // the mtime does not see it (that is the point of the check).
  auto t = std::filesystem::last_write_time(maildir() / "new");
  write_file(maildir() / "new" / "1700000000.sneaky.host", message("sneaky"));
  std::filesystem::last_write_time(maildir() / "new", t);
  sync();
  EXPECT_EQ(info("INBOX").messages, 1u);
  // Any change of the mtime makes the next sync look.
  std::filesystem::last_write_time(maildir() / "new", t + std::chrono::seconds(1));
  sync();
  EXPECT_EQ(info("INBOX").messages, 2u);
}

TEST_F(MaildirSyncTest, LostIndexIsRebuiltFromTheMaildir) {
  ASSERT_TRUE(user_->create_mailbox("Work"));
  append("Work", message("w"), kFlagFlagged);
  append("INBOX", message("i"), kFlagSeen);
  const std::uint32_t old_validity = info("Work").uidvalidity;
  user_.reset();
  for (const char* f : {"index.sqlite", "index.sqlite-wal", "index.sqlite-shm"}) {
    std::filesystem::remove(tmp_.path() / "data" / "alice" / f);
  }
  reopen();
  sync();
  EXPECT_NE(info("Work").uidvalidity, old_validity);
  ASSERT_EQ(metas("Work").size(), 1u);
  EXPECT_EQ(metas("Work")[0].flags, kFlagFlagged);
  EXPECT_EQ(metas("INBOX")[0].flags, kFlagSeen);
  EXPECT_EQ(entry("Sent")->special_use, SpecialUse::kSent);
  testing::expect_consistent(*user_, maildir());
}

TEST_F(MaildirSyncTest, TwoStoresInSequenceSeeEachOthersWork) {
  append("INBOX", message("first store"));
  user_.reset();
  auto second = store_->open_user("alice");
  ASSERT_TRUE(second);
  ASSERT_TRUE((*second)->sync());
  std::string bytes = message("second store");
  ASSERT_TRUE((*second)->append("INBOX", testing::append_of(bytes)));
  second->reset();
  reopen();
  sync();
  auto ms = metas("INBOX");
  ASSERT_EQ(ms.size(), 2u);
  EXPECT_EQ(ms[1].uid, 2u);
  testing::expect_consistent(*user_, maildir());
}

}  // namespace
}  // namespace peregrine::store::maildir
