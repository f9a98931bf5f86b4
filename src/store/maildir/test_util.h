#pragma once

// Test helpers for the Maildir backend: messages,
// directory listings, and a check that the index and the files agree.

#include <gtest/gtest.h>
#include <sqlite3.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <memory>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "store/api/user_store.h"
#include "store/maildir/maildir_store.h"
#include "store/maildir/maildir_user_store.h"
#include "store/maildir/names.h"
#include "test_support/temp_dir.h"

namespace peregrine::store::maildir::testing {

using test_support::TempDir;

// A connection of the test's own to an index file (WAL lets it read beside
// the store's), with the word index's file beside it attached as `search`
// (Index::search_path), so that SQL names the tables of both as the store
// does.
inline sqlite3* open_index(const std::filesystem::path& db_path) {
  sqlite3* db = nullptr;
  EXPECT_EQ(sqlite3_open(db_path.c_str(), &db), SQLITE_OK);
  const std::filesystem::path search = db_path.parent_path() / "search.sqlite";
  if (db_path.filename() == "index.sqlite" && std::filesystem::exists(search)) {
    const std::string attach = "ATTACH '" + search.string() + "' AS search";
    EXPECT_EQ(sqlite3_exec(db, attach.c_str(), nullptr, nullptr, nullptr), SQLITE_OK);
  }
  return db;
}

// Runs SQL on an index file (open_index) and calls read(stmt) on the first
// row, if there is one.
template <class Read>
void first_row(const std::filesystem::path& db_path, const std::string& sql, Read&& read) {
  sqlite3* db = open_index(db_path);
  sqlite3_stmt* stmt = nullptr;
  if (sqlite3_prepare_v2(db, sql.c_str(), -1, &stmt, nullptr) == SQLITE_OK &&
      sqlite3_step(stmt) == SQLITE_ROW) {
    read(stmt);
  }
  sqlite3_finalize(stmt);
  sqlite3_close(db);
}

// The first column of the first row (-1 when there is none).
inline std::int64_t scalar(const std::filesystem::path& db_path, const std::string& sql) {
  std::int64_t value = -1;
  first_row(db_path, sql, [&](sqlite3_stmt* stmt) { value = sqlite3_column_int64(stmt, 0); });
  return value;
}

// The first column of the first row as bytes (empty when there is none).
inline std::string blob(const std::filesystem::path& db_path, const std::string& sql) {
  std::string value;
  first_row(db_path, sql, [&](sqlite3_stmt* stmt) {
    value.assign(static_cast<const char*>(sqlite3_column_blob(stmt, 0)),
                 static_cast<std::size_t>(sqlite3_column_bytes(stmt, 0)));
  });
  return value;
}

// `bytes` as an SQL blob literal (x'...').
inline std::string blob_literal(std::string_view bytes) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out = "x'";
  for (char c : bytes) {
    out += kHex[static_cast<unsigned char>(c) >> 4];
    out += kHex[static_cast<unsigned char>(c) & 15];
  }
  return out + "'";
}

// Runs SQL on an index file (open_index).
inline void exec(const std::filesystem::path& db_path, const std::string& sql) {
  sqlite3* db = open_index(db_path);
  char* error = nullptr;
  EXPECT_EQ(sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &error), SQLITE_OK)
      << (error ? error : "");
  sqlite3_free(error);
  sqlite3_close(db);
}

inline std::string message(const std::string& subject, const std::string& body = "Hello.\r\n") {
  return "From: Alice <alice@example.com>\r\nTo: bob@example.com\r\nSubject: " + subject +
         "\r\nMessage-ID: <" + subject + "@example.com>\r\n\r\n" + body;
}

inline AppendMessage append_of(std::string_view bytes, SystemFlags flags = 0,
                               std::vector<std::string> keywords = {}) {
  AppendMessage m;
  m.bytes = bytes;
  m.flags = flags;
  m.keywords = std::move(keywords);
  return m;
}

// Names of the entries of a directory, sorted; empty if it does not exist.
inline std::vector<std::string> list(const std::filesystem::path& dir) {
  std::vector<std::string> out;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(dir, ec)) {
    out.push_back(e.path().filename().string());
  }
  std::sort(out.begin(), out.end());
  return out;
}

inline void write_file(const std::filesystem::path& path, std::string_view bytes) {
  std::ofstream out(path, std::ios::binary);
  out << bytes;
}

inline std::string read_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// The Maildir directory of a mailbox.
inline std::filesystem::path dir_of(const std::filesystem::path& maildir, std::string_view name) {
  std::string d = folder_dir(name);
  return d.empty() ? maildir : maildir / d;
}

// Waits until the files of every expunge so far are removed: an expunge
// returns once it has committed, before its files are gone (RemovalQueue).
inline void settle(UserStore& store) {
  if (auto* maildir = dynamic_cast<MaildirUserStore*>(&store)) {
    maildir->wait_for_removals();
  }
}

// Every selectable mailbox's index rows and cur/ files agree one to one, and
// new/ is empty: what a consistent store looks like after sync() and once
// the removals are done (settle()).
inline void expect_consistent(UserStore& store, const std::filesystem::path& maildir) {
  settle(store);
  auto mailboxes = store.list_mailboxes();
  ASSERT_TRUE(mailboxes) << mailboxes.error().message;
  for (const MailboxEntry& e : *mailboxes) {
    if (!e.selectable) {
      continue;
    }
    auto snapshot = store.open_mailbox(e.name);
    ASSERT_TRUE(snapshot) << snapshot.error().message;
    std::vector<std::string> files = list(dir_of(maildir, e.name) / "cur");
    EXPECT_EQ(files.size(), snapshot->messages.size()) << e.name;
    EXPECT_TRUE(list(dir_of(maildir, e.name) / "new").empty()) << e.name;
    for (const MessageMeta& m : snapshot->messages) {
      auto body = store.open_body(e.name, m.uid);
      ASSERT_TRUE(body) << e.name << " uid " << m.uid << ": " << body.error().message;
      EXPECT_EQ((*body)->size(), m.size);
    }
  }
}

class Recorder : public MailboxListener {
 public:
  void on_appended(std::span<const MessageMeta> messages) override {
    for (const auto& m : messages) {
      appended.push_back(m.uid);
    }
  }
  void on_flags_changed(std::span<const MessageMeta> messages) override {
    for (const auto& m : messages) {
      flags_changed.push_back(m.uid);
    }
  }
  void on_expunged(std::span<const Uid> uids, ModSeq modseq) override {
    expunged.insert(expunged.end(), uids.begin(), uids.end());
    last_expunge_modseq = modseq;
  }
  void on_mailbox_deleted() override { deleted = true; }

  std::vector<Uid> appended, flags_changed, expunged;
  ModSeq last_expunge_modseq = 0;
  bool deleted = false;
};

class StoreTest : public ::testing::Test {
 public:
  StoreTest() : StoreTest(nullptr) {}
  // `fs`, when given, is the seam the store uses (it must outlive the test).
  explicit StoreTest(MaildirFs* fs, bool settle_files_later = false) {
    MaildirOptions options;
    options.data_dir = tmp_.path() / "data";
    options.max_message_size = 1 << 20;
    options.host_name = "test.host";
    options.fs = fs;
    options.settle_files_later = settle_files_later;
    store_ = std::make_unique<MaildirStore>(options);
    reopen();
  }

  void reopen() {
    user_.reset();
    auto opened = store_->open_user("alice");
    ASSERT_TRUE(opened) << opened.error().message;
    user_ = std::move(*opened);
  }
  void sync() {
    auto r = user_->sync();
    ASSERT_TRUE(r) << r.error().message;
  }

  std::filesystem::path maildir() const { return tmp_.path() / "data" / "alice" / "Maildir"; }
  std::filesystem::path dir(std::string_view mailbox) const {
    return testing::dir_of(maildir(), mailbox);
  }

  Uid append(std::string_view mailbox, const std::string& bytes, SystemFlags flags = 0,
             std::vector<std::string> keywords = {}) {
    auto r = user_->append(mailbox, append_of(bytes, flags, std::move(keywords)));
    EXPECT_TRUE(r) << r.error().message;
    return r ? r->uid : 0;
  }

  MailboxInfo info(std::string_view mailbox) {
    auto r = user_->status(mailbox);
    EXPECT_TRUE(r) << r.error().message;
    return r ? *r : MailboxInfo{};
  }

  std::vector<MessageMeta> metas(std::string_view mailbox) {
    auto r = user_->open_mailbox(mailbox);
    EXPECT_TRUE(r) << r.error().message;
    return r ? r->messages : std::vector<MessageMeta>{};
  }

  std::vector<std::string> names() {
    std::vector<std::string> out;
    auto r = user_->list_mailboxes();
    EXPECT_TRUE(r);
    for (const auto& e : *r) {
      out.push_back(e.name);
    }
    return out;
  }

  std::optional<MailboxEntry> entry(std::string_view name) {
    auto r = user_->list_mailboxes();
    for (const auto& e : *r) {
      if (e.name == name) {
        return e;
      }
    }
    return std::nullopt;
  }

  TempDir tmp_;
  std::unique_ptr<MaildirStore> store_;
  std::unique_ptr<UserStore> user_;
};

// An Index of its own in a temporary directory, for tests of the index
// alone (no store around it).
class IndexTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto index = Index::open(tmp_.path() / "index.sqlite", 1000);
    ASSERT_TRUE(index) << index.error().message;
    index_ = std::move(*index);
  }

  // Adds a mailbox named `name` and returns its id.
  std::int64_t mailbox(const std::string& name) {
    MailboxRow box;
    box.name = name;
    box.uidvalidity = 1;
    auto id = index_->insert_mailbox(box);
    EXPECT_TRUE(id);
    return id ? *id : 0;
  }

  TempDir tmp_{"index"};
  std::unique_ptr<Index> index_;
};

}  // namespace peregrine::store::maildir::testing
