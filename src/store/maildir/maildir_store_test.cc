#include "store/maildir/maildir_store.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "mime/cache_record.h"
#include "store/maildir/test_util.h"

namespace peregrine::store::maildir {
namespace {

using base::MailError;
using testing::append_of;
using testing::list;
using testing::message;
using testing::Recorder;
using testing::TempDir;

using MaildirStoreTest = testing::StoreTest;

// ---- New users ----

TEST_F(MaildirStoreTest, NewUserGetsInboxAndSpecialUseMailboxes) {
  auto list_result = user_->list_mailboxes();
  ASSERT_TRUE(list_result);
  std::vector<MailboxEntry> expected = {
      {"Archive", true, false, true, SpecialUse::kArchive},
      {"Drafts", true, false, true, SpecialUse::kDrafts},
      {"INBOX", true, false, true, SpecialUse::kNone},
      {"Junk", true, false, true, SpecialUse::kJunk},
      {"Sent", true, false, true, SpecialUse::kSent},
      {"Trash", true, false, true, SpecialUse::kTrash},
  };
  EXPECT_EQ(*list_result, expected);
  EXPECT_EQ(list(maildir()),
            (std::vector<std::string>{".Archive", ".Drafts", ".Junk", ".Sent", ".Trash", "cur",
                                      "new", "peregrine-uidvalidity", "tmp"}));
  EXPECT_EQ(list(dir("Sent")), (std::vector<std::string>{"cur", "maildirfolder", "new", "tmp"}));
  struct stat st;
  ASSERT_EQ(::stat((tmp_.path() / "data" / "alice" / "index.sqlite").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  ASSERT_EQ(::stat((tmp_.path() / "data" / "alice").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0700u);
  MailboxInfo inbox = info("inbox");
  EXPECT_EQ(inbox.name, "INBOX");
  EXPECT_EQ(inbox.uidnext, 1u);
  EXPECT_GT(inbox.uidvalidity, 0u);
  EXPECT_EQ(inbox.messages, 0u);
}

TEST_F(MaildirStoreTest, InvalidUserNamesAreRefused) {
  for (std::string_view bad : {"", "..", "a/b"}) {
    auto r = store_->open_user(bad);
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error().code, MailError::kBadInput);
  }
}

TEST_F(MaildirStoreTest, HomeOverridesDataDir) {
  auto r = store_->open_user("bob", tmp_.path() / "homes" / "bob");
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_TRUE(std::filesystem::is_directory(tmp_.path() / "homes" / "bob" / "Maildir" / "cur"));
  EXPECT_FALSE(std::filesystem::exists(tmp_.path() / "data" / "bob"));
}

// ---- Append ----

TEST_F(MaildirStoreTest, AppendAssignsAscendingUidsAndStoresFiles) {
  const std::uint32_t uidvalidity = info("INBOX").uidvalidity;
  std::string m1 = message("one");
  auto r = user_->append("INBOX", append_of(m1, kFlagSeen, {"$Work"}));
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(r->uidvalidity, uidvalidity);
  EXPECT_EQ(r->uid, 1u);
  EXPECT_EQ(append("INBOX", message("two")), 2u);

  MailboxInfo mi = info("INBOX");
  EXPECT_EQ(mi.uidnext, 3u);
  EXPECT_EQ(mi.messages, 2u);
  EXPECT_EQ(mi.unseen, 1u);
  EXPECT_EQ(mi.recent, 2u);
  EXPECT_EQ(mi.size, m1.size() + message("two").size());

  auto ms = metas("INBOX");
  ASSERT_EQ(ms.size(), 2u);
  EXPECT_EQ(ms[0].uid, 1u);
  EXPECT_EQ(ms[0].flags, kFlagSeen);
  EXPECT_EQ(ms[0].keywords, (std::vector<std::string>{"$Work"}));
  EXPECT_EQ(ms[0].size, m1.size());
  EXPECT_LT(ms[0].modseq, ms[1].modseq);
  EXPECT_EQ(ms[1].modseq, mi.highest_modseq);

  auto files = list(dir("INBOX") / "cur");
  ASSERT_EQ(files.size(), 2u);
  int seen = 0;
  for (const auto& f : files) {
    EXPECT_NE(f.find(".test.host,S="), std::string::npos) << f;
    seen += f.ends_with(":2,S");
  }
  EXPECT_EQ(seen, 1);
  EXPECT_TRUE(list(dir("INBOX") / "tmp").empty());
  EXPECT_TRUE(list(dir("INBOX") / "new").empty());
}

TEST_F(MaildirStoreTest, AppendNormalizesLineEndsToCrlf) {
  std::string lf = "Subject: lf\n\nline one\nline two\n";
  Uid uid = append("INBOX", lf);
  std::string crlf = "Subject: lf\r\n\r\nline one\r\nline two\r\n";
  auto body = user_->open_body("INBOX", uid);
  ASSERT_TRUE(body);
  EXPECT_EQ((*body)->size(), crlf.size());
  EXPECT_EQ((*body)->read_all().value(), crlf);
  EXPECT_EQ(metas("INBOX")[0].size, crlf.size());
  auto files = list(dir("INBOX") / "cur");
  ASSERT_EQ(files.size(), 1u);
  EXPECT_NE(files[0].find(",S=" + std::to_string(crlf.size()) + ":2,"), std::string::npos);
}

TEST_F(MaildirStoreTest, AppendKeepsInternalDate) {
  std::string bytes = message("dated");
  AppendMessage m = append_of(bytes);
  m.internal_date = InternalDate{1600000000, -300};
  ASSERT_TRUE(user_->append("INBOX", m));
  auto ms = metas("INBOX");
  ASSERT_EQ(ms.size(), 1u);
  EXPECT_EQ(ms[0].internal_date, (InternalDate{1600000000, -300}));
  // The file carries the date too, for adoption after a crash.
  auto files = list(dir("INBOX") / "cur");
  struct stat st;
  ASSERT_EQ(::stat((dir("INBOX") / "cur" / files[0]).c_str(), &st), 0);
  EXPECT_EQ(st.st_mtime, 1600000000);
}

TEST_F(MaildirStoreTest, AppendStoresCacheRecordOfTheMessage) {
  std::string m = message("cached", "Body text.\r\n");
  Uid uid = append("INBOX", m);
  auto records = user_->cache_records("INBOX", UidSet{uid});
  ASSERT_TRUE(records);
  ASSERT_EQ(records->size(), 1u);
  EXPECT_EQ((*records)[0].uid, uid);
  auto record = mime::deserialize((*records)[0].record);
  ASSERT_TRUE(record);
  EXPECT_EQ(*record, mime::analyze_message(m).record);
  EXPECT_EQ(record->subject, "cached");
}

TEST_F(MaildirStoreTest, MultiAppendIsAllOrNothing) {
  std::string good = message("good");
  std::string huge(2 << 20, 'x');
  AppendMessage batch[] = {append_of(good), append_of(huge)};
  auto r = user_->append("INBOX", batch);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, MailError::kTooBig);
  EXPECT_EQ(info("INBOX").messages, 0u);
  EXPECT_EQ(info("INBOX").uidnext, 1u);
  EXPECT_TRUE(list(dir("INBOX") / "cur").empty());
  EXPECT_TRUE(list(dir("INBOX") / "tmp").empty());

  std::string other = message("other");
  AppendMessage ok[] = {append_of(good), append_of(other, kFlagDraft)};
  auto r2 = user_->append("Drafts", ok);
  ASSERT_TRUE(r2) << r2.error().message;
  EXPECT_EQ(r2->uids, (std::vector<Uid>{1, 2}));
  auto ms = metas("Drafts");
  ASSERT_EQ(ms.size(), 2u);
  EXPECT_EQ(ms[0].modseq, ms[1].modseq);  // one transaction, one MODSEQ
}

TEST_F(MaildirStoreTest, AppendRefusesBadInput) {
  auto r = user_->append("INBOX", append_of(""));
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, MailError::kBadInput);
  std::string m = message("kw");
  r = user_->append("INBOX", append_of(m, 0, {"bad keyword"}));
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, MailError::kBadInput);
  r = user_->append("Nowhere", append_of(m));
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, MailError::kNotFound);
}

// ---- Flags ----

TEST_F(MaildirStoreTest, UpdateFlagsChangesIndexAndFileNames) {
  Uid a = append("INBOX", message("a"));
  Uid b = append("INBOX", message("b"), kFlagSeen);
  const ModSeq before = info("INBOX").highest_modseq;

  FlagUpdate add{FlagOp::kAdd, kFlagSeen | kFlagFlagged, {"$Label1"}, std::nullopt};
  auto r = user_->update_flags("INBOX", UidSet{a, b, 99}, add);
  ASSERT_TRUE(r) << r.error().message;
  ASSERT_EQ(r->changed.size(), 2u);
  EXPECT_EQ(r->changed[0].uid, a);
  EXPECT_EQ(r->changed[0].flags, kFlagSeen | kFlagFlagged);
  EXPECT_EQ(r->changed[0].keywords, (std::vector<std::string>{"$Label1"}));
  EXPECT_EQ(r->changed[0].modseq, before + 1);
  EXPECT_EQ(r->changed[1].modseq, before + 1);
  EXPECT_EQ(info("INBOX").highest_modseq, before + 1);
  for (const auto& f : list(dir("INBOX") / "cur")) {
    EXPECT_TRUE(f.ends_with(":2,FS")) << f;
  }

  // No change: no new MODSEQ, nothing reported.
  r = user_->update_flags("INBOX", UidSet{a}, add);
  ASSERT_TRUE(r);
  EXPECT_TRUE(r->changed.empty());
  EXPECT_EQ(info("INBOX").highest_modseq, before + 1);

  FlagUpdate remove{FlagOp::kRemove, kFlagFlagged, {"$label1"}, std::nullopt};
  r = user_->update_flags("INBOX", UidSet{b}, remove);
  ASSERT_TRUE(r);
  ASSERT_EQ(r->changed.size(), 1u);
  EXPECT_EQ(r->changed[0].flags, kFlagSeen);
  EXPECT_TRUE(r->changed[0].keywords.empty());

  FlagUpdate replace{FlagOp::kReplace, kFlagDeleted | kFlagAnswered, {"x", "y"}, std::nullopt};
  r = user_->update_flags("INBOX", UidSet::all(), replace);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->changed.size(), 2u);
  auto ms = metas("INBOX");
  for (const auto& m : ms) {
    EXPECT_EQ(m.flags, kFlagDeleted | kFlagAnswered);
    EXPECT_EQ(m.keywords, (std::vector<std::string>{"x", "y"}));
  }
  for (const auto& f : list(dir("INBOX") / "cur")) {
    EXPECT_TRUE(f.ends_with(":2,RT")) << f;
  }
}

TEST_F(MaildirStoreTest, UnchangedSinceReportsModifiedMessages) {
  Uid a = append("INBOX", message("a"));
  Uid b = append("INBOX", message("b"));
  const ModSeq base = info("INBOX").highest_modseq;
  ASSERT_TRUE(user_->update_flags("INBOX", UidSet{b}, {FlagOp::kAdd, kFlagSeen, {}, std::nullopt}));
  FlagUpdate conditional{FlagOp::kAdd, kFlagFlagged, {}, base};
  auto r = user_->update_flags("INBOX", UidSet{a, b}, conditional);
  ASSERT_TRUE(r);
  ASSERT_EQ(r->changed.size(), 1u);
  EXPECT_EQ(r->changed[0].uid, a);
  EXPECT_EQ(r->modified, (std::vector<Uid>{b}));
  EXPECT_EQ(metas("INBOX")[1].flags, kFlagSeen);
}

// ---- Expunge ----

TEST_F(MaildirStoreTest, ExpungeRemovesOnlyDeletedMessages) {
  Uid a = append("INBOX", message("a"), kFlagDeleted);
  Uid b = append("INBOX", message("b"));
  Uid c = append("INBOX", message("c"), kFlagDeleted);
  const ModSeq before = info("INBOX").highest_modseq;

  auto r = user_->expunge("INBOX", UidSet{c});
  ASSERT_TRUE(r);
  EXPECT_EQ(*r, (std::vector<Uid>{c}));
  r = user_->expunge("INBOX");
  ASSERT_TRUE(r);
  EXPECT_EQ(*r, (std::vector<Uid>{a}));
  auto ms = metas("INBOX");
  ASSERT_EQ(ms.size(), 1u);
  EXPECT_EQ(ms[0].uid, b);
  testing::settle(*user_);
  EXPECT_EQ(list(dir("INBOX") / "cur").size(), 1u);
  EXPECT_EQ(info("INBOX").uidnext, 4u);
  EXPECT_EQ(info("INBOX").highest_modseq, before + 2);

  auto changes = user_->changes_since("INBOX", before);
  ASSERT_TRUE(changes);
  EXPECT_TRUE(changes->changed.empty());
  EXPECT_EQ(changes->expunged, (std::vector<ExpungedUid>{{a, before + 2}, {c, before + 1}}));
  EXPECT_EQ(changes->highest_modseq, before + 2);

  // Nothing to expunge: no error, no MODSEQ.
  r = user_->expunge("INBOX");
  ASSERT_TRUE(r);
  EXPECT_TRUE(r->empty());
  EXPECT_EQ(info("INBOX").highest_modseq, before + 2);

  // UIDs are never reused, even after reopening.
  reopen();
  EXPECT_EQ(append("INBOX", message("d")), 4u);
}

// Enough messages that their files are removed by several threads, with
// kept messages between the deleted ones, so the index deletes several runs
// of UIDs.
TEST_F(MaildirStoreTest, RemoveMessagesTakesTheNamedOnesWhateverTheirFlags) {
  Uid a = append("INBOX", message("a"));
  Uid b = append("INBOX", message("b"), kFlagDeleted);
  Uid c = append("INBOX", message("c"), kFlagSeen);
  const ModSeq before = info("INBOX").highest_modseq;

  const std::vector<Uid> named{a, c};
  auto r = user_->remove_messages("INBOX", UidSet::of(named));
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(*r, (std::vector<Uid>{a, c}));
  auto ms = metas("INBOX");
  ASSERT_EQ(ms.size(), 1u);
  EXPECT_EQ(ms[0].uid, b);  // \Deleted, but not named
  testing::settle(*user_);
  EXPECT_EQ(list(dir("INBOX") / "cur").size(), 1u);
  auto changes = user_->changes_since("INBOX", before);
  ASSERT_TRUE(changes);
  EXPECT_TRUE(changes->changed.empty());  // no flag was set on the way out
  EXPECT_EQ(changes->expunged, (std::vector<ExpungedUid>{{a, before + 1}, {c, before + 1}}));
  testing::expect_consistent(*user_, maildir());
}

TEST_F(MaildirStoreTest, ExpungeOfManyRemovesExactlyTheDeletedOnes) {
  constexpr int kCount = 3 * static_cast<int>(kParallelRemoveMin) + 5;
  std::vector<Uid> kept;
  std::vector<Uid> deleted;
  for (int i = 0; i < kCount; ++i) {
    const bool keep = i % 7 == 3 || i == kCount - 1;
    Uid uid = append("INBOX", message("m" + std::to_string(i)), keep ? 0 : kFlagDeleted);
    (keep ? kept : deleted).push_back(uid);
  }
  const ModSeq before = info("INBOX").highest_modseq;

  auto r = user_->expunge("INBOX");
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(*r, deleted);
  std::vector<Uid> left;
  for (const MessageMeta& m : metas("INBOX")) {
    left.push_back(m.uid);
  }
  EXPECT_EQ(left, kept);
  testing::settle(*user_);
  EXPECT_EQ(list(dir("INBOX") / "cur").size(), kept.size());
  auto changes = user_->changes_since("INBOX", before);
  ASSERT_TRUE(changes);
  ASSERT_EQ(changes->expunged.size(), deleted.size());
  for (const ExpungedUid& e : changes->expunged) {
    EXPECT_EQ(e.modseq, before + 1);
    EXPECT_TRUE(std::find(deleted.begin(), deleted.end(), e.uid) != deleted.end()) << e.uid;
  }
  testing::expect_consistent(*user_, maildir());
  reopen();
  sync();
  EXPECT_EQ(metas("INBOX").size(), kept.size());
}

TEST_F(MaildirStoreTest, ChangesSinceListsChangedMessages) {
  Uid a = append("INBOX", message("a"));
  Uid b = append("INBOX", message("b"));
  const ModSeq mark = info("INBOX").highest_modseq;
  ASSERT_TRUE(user_->update_flags("INBOX", UidSet{a}, {FlagOp::kAdd, kFlagSeen, {}, std::nullopt}));
  Uid c = append("INBOX", message("c"));
  auto changes = user_->changes_since("INBOX", mark);
  ASSERT_TRUE(changes);
  ASSERT_EQ(changes->changed.size(), 2u);
  EXPECT_EQ(changes->changed[0].uid, a);
  EXPECT_EQ(changes->changed[1].uid, c);
  EXPECT_TRUE(changes->expunged.empty());
  auto all = user_->changes_since("INBOX", 0);
  ASSERT_TRUE(all);
  EXPECT_EQ(all->changed.size(), 3u);
  EXPECT_TRUE(all->expunged_complete);
  (void)b;
}

// Once a mailbox has forgotten old expunges (Index::kKeptExpunges), the
// feed from below its floor says it is incomplete.
TEST_F(MaildirStoreTest, ChangesSinceBelowTheExpungedFloorAreIncomplete) {
  Uid a = append("INBOX", message("a"));
  append("INBOX", message("b"));
  ASSERT_TRUE(user_->remove_messages("INBOX", UidSet{a}));
  const ModSeq floor = info("INBOX").highest_modseq;
  user_.reset();
  testing::exec(tmp_.path() / "data" / "alice" / "index.sqlite",
                "DELETE FROM expunged; UPDATE mailboxes SET expunged_floor = " +
                    std::to_string(floor) + " WHERE name = 'INBOX'");
  reopen();
  auto below = user_->changes_since("INBOX", floor - 1);
  ASSERT_TRUE(below);
  EXPECT_FALSE(below->expunged_complete);
  EXPECT_TRUE(below->expunged.empty());
  auto at = user_->changes_since("INBOX", floor);
  ASSERT_TRUE(at);
  EXPECT_TRUE(at->expunged_complete);
}

// ---- Copy and move ----

TEST_F(MaildirStoreTest, CopyMapsUidsAndKeepsFlagsAndCache) {
  std::string ma = message("a");
  Uid a = append("INBOX", ma, kFlagSeen, {"$Important"});
  append("INBOX", message("b"));
  Uid c = append("INBOX", message("c"), kFlagFlagged);
  append("Archive", message("existing"));

  auto r = user_->copy("INBOX", UidSet{a, c, 77}, "Archive");
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(r->uidvalidity, info("Archive").uidvalidity);
  EXPECT_EQ(r->mapping, (std::vector<UidMapping>{{a, 2}, {c, 3}}));
  auto ms = metas("Archive");
  ASSERT_EQ(ms.size(), 3u);
  EXPECT_EQ(ms[1].flags, kFlagSeen);
  EXPECT_EQ(ms[1].keywords, (std::vector<std::string>{"$Important"}));
  EXPECT_EQ(ms[2].flags, kFlagFlagged);
  EXPECT_EQ(info("INBOX").messages, 3u);
  auto body = user_->open_body("Archive", 2);
  ASSERT_TRUE(body);
  EXPECT_EQ((*body)->read_all().value(), ma);
  auto records = user_->cache_records("Archive", UidSet{2});
  ASSERT_TRUE(records);
  ASSERT_EQ(records->size(), 1u);
  EXPECT_EQ(mime::deserialize((*records)[0].record)->subject, "a");
  EXPECT_EQ(list(dir("Archive") / "cur").size(), 3u);

  // Flag changes to the copy leave the original alone (own directory entry).
  ASSERT_TRUE(user_->update_flags("Archive", UidSet{2}, {FlagOp::kReplace, 0, {}, std::nullopt}));
  EXPECT_EQ(metas("INBOX")[0].flags, kFlagSeen);

  auto missing = user_->copy("INBOX", UidSet{a}, "Nowhere");
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.error().code, MailError::kNotFound);

  auto none = user_->copy("INBOX", UidSet{500}, "Archive");
  ASSERT_TRUE(none);
  EXPECT_TRUE(none->mapping.empty());
}

TEST_F(MaildirStoreTest, MoveMapsUidsAndExpungesSource) {
  Uid a = append("INBOX", message("a"), kFlagAnswered, {"k"});
  Uid b = append("INBOX", message("b"));
  Recorder inbox, trash;
  auto wi = user_->watch("INBOX", inbox);
  auto wt = user_->watch("Trash", trash);
  ASSERT_TRUE(wi && wt);
  const ModSeq before = info("INBOX").highest_modseq;

  auto r = user_->move("INBOX", UidSet{a}, "Trash");
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(r->mapping, (std::vector<UidMapping>{{a, 1}}));
  EXPECT_EQ(inbox.expunged, (std::vector<Uid>{a}));
  EXPECT_EQ(inbox.last_expunge_modseq, before + 1);
  EXPECT_EQ(trash.appended, (std::vector<Uid>{1}));
  auto ms = metas("Trash");
  ASSERT_EQ(ms.size(), 1u);
  EXPECT_EQ(ms[0].flags, kFlagAnswered);
  EXPECT_EQ(ms[0].keywords, (std::vector<std::string>{"k"}));
  EXPECT_EQ(metas("INBOX").size(), 1u);
  EXPECT_EQ(metas("INBOX")[0].uid, b);
  EXPECT_EQ(list(dir("INBOX") / "cur").size(), 1u);
  EXPECT_EQ(list(dir("Trash") / "cur").size(), 1u);
  auto changes = user_->changes_since("INBOX", before);
  ASSERT_TRUE(changes);
  EXPECT_EQ(changes->expunged, (std::vector<ExpungedUid>{{a, before + 1}}));
  auto records = user_->cache_records("Trash", UidSet{1});
  ASSERT_TRUE(records);
  EXPECT_EQ(records->size(), 1u);

  auto same = user_->move("INBOX", UidSet{b}, "inbox");
  ASSERT_FALSE(same);
  EXPECT_EQ(same.error().code, MailError::kBadInput);
  testing::expect_consistent(*user_, maildir());
}

// ---- Bodies ----

TEST_F(MaildirStoreTest, BodiesReadRangesAndOutliveExpunge) {
  std::string m = message("ranges", "0123456789\r\n");
  Uid uid = append("INBOX", m, kFlagDeleted);
  auto body = user_->open_body("INBOX", uid);
  ASSERT_TRUE(body);
  EXPECT_EQ((*body)->size(), m.size());
  EXPECT_EQ((*body)->read(0, 5).value(), m.substr(0, 5));
  EXPECT_EQ((*body)->read(m.size() - 4, 100).value(), m.substr(m.size() - 4));
  EXPECT_EQ((*body)->read(m.size() + 10, 5).value(), "");

  ASSERT_TRUE(user_->expunge("INBOX"));
  EXPECT_EQ((*body)->read_all().value(), m);  // the open file stays readable
  auto gone = user_->open_body("INBOX", uid);
  ASSERT_FALSE(gone);
  EXPECT_EQ(gone.error().code, MailError::kExpunged);
  auto never = user_->open_body("INBOX", 1000);
  ASSERT_FALSE(never);
  EXPECT_EQ(never.error().code, MailError::kNotFound);
}

// ---- Mailboxes ----

TEST_F(MaildirStoreTest, CreateAndListHierarchy) {
  ASSERT_TRUE(user_->create_mailbox("Work/Projects/Peregrine"));
  ASSERT_TRUE(user_->create_mailbox("Work/"));
  ASSERT_TRUE(user_->create_mailbox("v1.2", SpecialUse::kFlagged));
  EXPECT_TRUE(std::filesystem::is_directory(maildir() / ".Work.Projects.Peregrine" / "cur"));
  EXPECT_TRUE(std::filesystem::is_directory(maildir() / ".v1%2E2" / "new"));
  EXPECT_TRUE(std::filesystem::exists(maildir() / ".Work" / "maildirfolder"));

  auto work = entry("Work");
  ASSERT_TRUE(work);
  EXPECT_TRUE(work->selectable);
  EXPECT_TRUE(work->has_children);
  EXPECT_FALSE(work->subscribed);
  auto projects = entry("Work/Projects");
  ASSERT_TRUE(projects);
  EXPECT_FALSE(projects->selectable);  // implied by its child
  EXPECT_TRUE(projects->has_children);
  auto leaf = entry("Work/Projects/Peregrine");
  ASSERT_TRUE(leaf);
  EXPECT_FALSE(leaf->has_children);
  EXPECT_EQ(entry("v1.2")->special_use, SpecialUse::kFlagged);

  auto again = user_->create_mailbox("Work");
  ASSERT_FALSE(again);
  EXPECT_EQ(again.error().code, MailError::kExists);
  auto inbox = user_->create_mailbox("inbox");
  ASSERT_FALSE(inbox);
  EXPECT_EQ(inbox.error().code, MailError::kExists);
  auto bad = user_->create_mailbox("a//b");
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().code, MailError::kBadInput);
  auto noselect = user_->status("Work/Projects");
  ASSERT_FALSE(noselect);
  EXPECT_EQ(noselect.error().code, MailError::kNotFound);
}

TEST_F(MaildirStoreTest, DeleteMailbox) {
  ASSERT_TRUE(user_->create_mailbox("Old"));
  ASSERT_TRUE(user_->create_mailbox("Old/Child"));
  append("Old", message("x"));
  const std::uint32_t old_validity = info("Old").uidvalidity;
  Recorder r;
  auto w = user_->watch("Old", r);
  ASSERT_TRUE(w);

  ASSERT_TRUE(user_->delete_mailbox("Old"));
  EXPECT_TRUE(r.deleted);
  EXPECT_FALSE(w->active());
  auto old = entry("Old");
  ASSERT_TRUE(old);
  EXPECT_FALSE(old->selectable);  // \Noselect while Old/Child exists
  EXPECT_TRUE(old->has_children);
  EXPECT_FALSE(std::filesystem::exists(maildir() / ".Old"));
  EXPECT_TRUE(std::filesystem::exists(maildir() / ".Old.Child"));
  for (const auto& name : list(maildir())) {
    EXPECT_FALSE(name.starts_with("..")) << name;
  }

  // Recreated: a new UIDVALIDITY, UIDs start again.
  ASSERT_TRUE(user_->create_mailbox("Old"));
  EXPECT_GT(info("Old").uidvalidity, old_validity);
  EXPECT_EQ(info("Old").messages, 0u);
  EXPECT_EQ(append("Old", message("y")), 1u);

  auto inbox = user_->delete_mailbox("INBOX");
  ASSERT_FALSE(inbox);
  EXPECT_EQ(inbox.error().code, MailError::kNoPermission);
  auto missing = user_->delete_mailbox("Nope");
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.error().code, MailError::kNotFound);
  ASSERT_TRUE(user_->delete_mailbox("Old/Child"));
  ASSERT_TRUE(user_->delete_mailbox("Old"));
  EXPECT_FALSE(entry("Old"));
}

TEST_F(MaildirStoreTest, RenameMovesHierarchy) {
  ASSERT_TRUE(user_->create_mailbox("A"));
  ASSERT_TRUE(user_->create_mailbox("A/B"));
  ASSERT_TRUE(user_->create_mailbox("A/B/C"));
  ASSERT_TRUE(user_->create_mailbox("AB"));
  ASSERT_TRUE(user_->subscribe("A/B"));
  append("A/B", message("in b"), kFlagSeen, {"kw"});
  const MailboxInfo before = info("A/B");
  Recorder r;
  auto w = user_->watch("A/B", r);

  ASSERT_TRUE(user_->rename_mailbox("A", "X/Y"));
  auto all = names();
  EXPECT_EQ(all, (std::vector<std::string>{"AB", "Archive", "Drafts", "INBOX", "Junk", "Sent",
                                           "Trash", "X", "X/Y", "X/Y/B", "X/Y/B/C"}));
  EXPECT_FALSE(entry("X")->selectable);
  MailboxInfo after = info("X/Y/B");
  EXPECT_EQ(after.uidvalidity, before.uidvalidity);
  EXPECT_EQ(after.uidnext, before.uidnext);
  EXPECT_TRUE(after.subscribed);
  auto ms = metas("X/Y/B");
  ASSERT_EQ(ms.size(), 1u);
  EXPECT_EQ(ms[0].keywords, (std::vector<std::string>{"kw"}));
  EXPECT_TRUE(std::filesystem::is_directory(maildir() / ".X.Y.B.C"));
  EXPECT_FALSE(std::filesystem::exists(maildir() / ".A"));
  EXPECT_FALSE(std::filesystem::exists(maildir() / ".A.B"));
  EXPECT_TRUE(std::filesystem::exists(maildir() / ".AB"));

  // The watch follows the mailbox.
  append("X/Y/B", message("after rename"));
  EXPECT_EQ(r.appended.size(), 1u);

  auto exists = user_->rename_mailbox("AB", "X/Y");
  ASSERT_FALSE(exists);
  EXPECT_EQ(exists.error().code, MailError::kExists);
  auto below = user_->rename_mailbox("X/Y", "X/Y/B/Z");
  ASSERT_FALSE(below);
  EXPECT_EQ(below.error().code, MailError::kBadInput);
  auto missing = user_->rename_mailbox("Nope", "Z");
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.error().code, MailError::kNotFound);
  auto to_inbox = user_->rename_mailbox("AB", "INBOX");
  ASSERT_FALSE(to_inbox);
  EXPECT_EQ(to_inbox.error().code, MailError::kExists);
  testing::expect_consistent(*user_, maildir());
}

TEST_F(MaildirStoreTest, RenameInboxMovesMessagesAndLeavesInboxEmpty) {
  ASSERT_TRUE(user_->create_mailbox("INBOX/Child"));
  Uid a = append("INBOX", message("a"), kFlagSeen, {"kw"});
  Uid b = append("INBOX", message("b"));
  const MailboxInfo inbox_before = info("INBOX");
  Recorder r;
  auto w = user_->watch("INBOX", r);

  ASSERT_TRUE(user_->rename_mailbox("INBOX", "Old Inbox"));
  EXPECT_EQ(r.expunged, (std::vector<Uid>{a, b}));
  MailboxInfo inbox = info("INBOX");
  EXPECT_EQ(inbox.messages, 0u);
  EXPECT_EQ(inbox.uidvalidity, inbox_before.uidvalidity);
  EXPECT_EQ(inbox.uidnext, inbox_before.uidnext);  // UIDs are not reused
  EXPECT_GT(inbox.highest_modseq, inbox_before.highest_modseq);
  MailboxInfo moved = info("Old Inbox");
  EXPECT_EQ(moved.messages, 2u);
  EXPECT_NE(moved.uidvalidity, inbox_before.uidvalidity);
  auto ms = metas("Old Inbox");
  ASSERT_EQ(ms.size(), 2u);
  EXPECT_EQ(ms[0].flags, kFlagSeen);
  EXPECT_EQ(ms[0].keywords, (std::vector<std::string>{"kw"}));
  EXPECT_TRUE(list(maildir() / "cur").empty());
  EXPECT_EQ(list(maildir() / ".Old Inbox" / "cur").size(), 2u);
  EXPECT_TRUE(entry("INBOX/Child"));  // children of INBOX stay
  auto records = user_->cache_records("Old Inbox", UidSet::all());
  ASSERT_TRUE(records);
  EXPECT_EQ(records->size(), 2u);
  EXPECT_EQ(append("INBOX", message("new")), inbox_before.uidnext);
  testing::expect_consistent(*user_, maildir());
}

TEST_F(MaildirStoreTest, Subscriptions) {
  ASSERT_TRUE(user_->create_mailbox("Lists"));
  ASSERT_TRUE(user_->subscribe("Lists"));
  ASSERT_TRUE(user_->subscribe("Lists"));      // twice is fine
  ASSERT_TRUE(user_->subscribe("Not/There"));  // need not exist
  EXPECT_TRUE(info("Lists").subscribed);
  EXPECT_TRUE(entry("Lists")->subscribed);
  auto subs = user_->list_subscriptions();
  ASSERT_TRUE(subs);
  EXPECT_EQ(*subs, (std::vector<std::string>{"Archive", "Drafts", "INBOX", "Junk", "Lists",
                                             "Not/There", "Sent", "Trash"}));
  ASSERT_TRUE(user_->delete_mailbox("Lists"));
  subs = user_->list_subscriptions();
  EXPECT_NE(std::find(subs->begin(), subs->end(), "Lists"), subs->end());  // kept (RFC 3501)
  ASSERT_TRUE(user_->unsubscribe("Lists"));
  auto again = user_->unsubscribe("Lists");
  ASSERT_FALSE(again);
  EXPECT_EQ(again.error().code, MailError::kNotFound);
}

TEST_F(MaildirStoreTest, ClaimRecentGivesEachMessageToOneClaimer) {
  append("INBOX", message("a"));
  append("INBOX", message("b"));
  EXPECT_EQ(info("INBOX").recent, 2u);
  auto first = user_->claim_recent("INBOX");
  ASSERT_TRUE(first);
  EXPECT_EQ(*first, (std::vector<Uid>{1, 2}));
  EXPECT_EQ(info("INBOX").recent, 0u);
  auto second = user_->claim_recent("INBOX");
  ASSERT_TRUE(second);
  EXPECT_TRUE(second->empty());
  append("INBOX", message("c"));
  EXPECT_EQ(info("INBOX").recent, 1u);
  reopen();
  auto third = user_->claim_recent("INBOX");
  ASSERT_TRUE(third);
  EXPECT_EQ(*third, (std::vector<Uid>{3}));
}

TEST_F(MaildirStoreTest, ListenersHearEveryCommittedChange) {
  Recorder r;
  auto w = user_->watch("INBOX", r);
  ASSERT_TRUE(w);
  Uid a = append("INBOX", message("a"));
  Uid b = append("INBOX", message("b"));
  ASSERT_TRUE(user_->update_flags("INBOX", UidSet{a, b}, {FlagOp::kAdd, kFlagDeleted, {}, {}}));
  ASSERT_TRUE(user_->copy("INBOX", UidSet{a}, "INBOX"));
  ASSERT_TRUE(user_->expunge("INBOX", UidSet{a}));
  EXPECT_EQ(r.appended, (std::vector<Uid>{a, b, 3}));
  EXPECT_EQ(r.flags_changed, (std::vector<Uid>{a, b}));
  EXPECT_EQ(r.expunged, (std::vector<Uid>{a}));
  w->reset();
  append("INBOX", message("c"));
  EXPECT_EQ(r.appended.size(), 3u);
  auto none = user_->watch("Nope", r);
  ASSERT_FALSE(none);
}

TEST_F(MaildirStoreTest, ModSeqIsMonotonic) {
  ModSeq last = info("INBOX").highest_modseq;
  auto step = [&] {
    ModSeq now = info("INBOX").highest_modseq;
    EXPECT_GT(now, last);
    last = now;
  };
  Uid a = append("INBOX", message("a"));
  step();
  ASSERT_TRUE(user_->update_flags("INBOX", UidSet{a}, {FlagOp::kAdd, kFlagDeleted, {}, {}}));
  step();
  ASSERT_TRUE(user_->copy("Sent", UidSet{}, "INBOX"));
  ASSERT_TRUE(user_->copy("INBOX", UidSet{a}, "INBOX"));
  step();
  ASSERT_TRUE(user_->expunge("INBOX"));
  step();
  reopen();
  append("INBOX", message("b"));
  step();
}

TEST_F(MaildirStoreTest, ReopenSeesEverything) {
  ASSERT_TRUE(user_->create_mailbox("Keep/Me", SpecialUse::kAll));
  Uid a = append("Keep/Me", message("a"), kFlagFlagged, {"$x"});
  const MailboxInfo before = info("Keep/Me");
  const auto before_metas = metas("Keep/Me");
  user_.reset();

  // A second UserStore on the same user, after the first is closed.
  auto again = store_->open_user("alice");
  ASSERT_TRUE(again) << again.error().message;
  user_ = std::move(*again);
  EXPECT_EQ(info("Keep/Me"), before);
  EXPECT_EQ(metas("Keep/Me"), before_metas);
  EXPECT_EQ(entry("Keep/Me")->special_use, SpecialUse::kAll);
  auto body = user_->open_body("Keep/Me", a);
  ASSERT_TRUE(body);
  EXPECT_EQ((*body)->read_all().value(), message("a"));
  // Defaults are not created again.
  EXPECT_EQ(names().size(), 8u);
}

}  // namespace
}  // namespace peregrine::store::maildir
