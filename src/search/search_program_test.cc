// search::evaluate over a real Maildir store: the same answers with the
// full-text index on and off, and against a plain per-message check.

#include "search/search_program.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "imap/proto/parser_test_util.h"
#include "store/maildir/maildir_store.h"
#include "test_support/temp_dir.h"

namespace peregrine::search {
namespace {

// Every message of a mailbox, numbered 1..n, none recent.
class SnapshotView final : public MessageView {
 public:
  SnapshotView(std::string mailbox, std::vector<store::MessageMeta> messages)
      : mailbox_(std::move(mailbox)), messages_(std::move(messages)) {}
  std::string_view mailbox() const override { return mailbox_; }
  std::uint32_t count() const override { return static_cast<std::uint32_t>(messages_.size()); }
  store::Uid uid_at(std::uint32_t seq) const override { return messages_[seq - 1].uid; }
  const store::MessageMeta* meta_at(std::uint32_t seq) const override {
    return &messages_[seq - 1];
  }
  bool is_recent(store::Uid) const override { return false; }

 private:
  std::string mailbox_;
  std::vector<store::MessageMeta> messages_;
};

// A UserStore that counts the message files opened, per UID, and passes
// every call on to the real one.
class CountingStore final : public store::UserStore {
 public:
  explicit CountingStore(store::UserStore& inner) : inner_(inner) {}
  std::map<store::Uid, int> opened;

  const std::string& user() const override { return inner_.user(); }
  base::Result<std::vector<store::MailboxEntry>> list_mailboxes() override {
    return inner_.list_mailboxes();
  }
  base::Result<std::vector<std::string>> list_subscriptions() override {
    return inner_.list_subscriptions();
  }
  base::Result<void> create_mailbox(std::string_view name, store::SpecialUse use) override {
    return inner_.create_mailbox(name, use);
  }
  base::Result<void> delete_mailbox(std::string_view name) override {
    return inner_.delete_mailbox(name);
  }
  base::Result<void> rename_mailbox(std::string_view from, std::string_view to) override {
    return inner_.rename_mailbox(from, to);
  }
  base::Result<void> subscribe(std::string_view name) override { return inner_.subscribe(name); }
  base::Result<void> unsubscribe(std::string_view name) override {
    return inner_.unsubscribe(name);
  }
  base::Result<store::MailboxInfo> status(std::string_view mailbox) override {
    return inner_.status(mailbox);
  }
  base::Result<store::MailboxSnapshot> open_mailbox(std::string_view mailbox) override {
    return inner_.open_mailbox(mailbox);
  }
  base::Result<std::vector<store::Uid>> claim_recent(std::string_view mailbox) override {
    return inner_.claim_recent(mailbox);
  }
  base::Result<store::Watch> watch(std::string_view mailbox,
                                   store::MailboxListener& listener) override {
    return inner_.watch(mailbox, listener);
  }
  base::Result<store::AppendResult> append(
      std::string_view mailbox, std::span<const store::AppendMessage> messages) override {
    return inner_.append(mailbox, messages);
  }
  base::Result<store::FlagUpdateResult> update_flags(std::string_view mailbox,
                                                     const store::UidSet& uids,
                                                     const store::FlagUpdate& update) override {
    return inner_.update_flags(mailbox, uids, update);
  }
  base::Result<std::vector<store::Uid>> expunge(std::string_view mailbox,
                                                const store::UidSet& uids) override {
    return inner_.expunge(mailbox, uids);
  }
  base::Result<std::vector<store::Uid>> remove_messages(std::string_view mailbox,
                                                        const store::UidSet& uids) override {
    return inner_.remove_messages(mailbox, uids);
  }
  base::Result<store::CopyResult> copy(std::string_view source, const store::UidSet& uids,
                                       std::string_view dest) override {
    return inner_.copy(source, uids, dest);
  }
  base::Result<store::CopyResult> move(std::string_view source, const store::UidSet& uids,
                                       std::string_view dest) override {
    return inner_.move(source, uids, dest);
  }
  base::Result<std::unique_ptr<store::Body>> open_body(std::string_view mailbox,
                                                       store::Uid uid) override {
    ++opened[uid];
    return inner_.open_body(mailbox, uid);
  }
  base::Result<std::vector<store::CacheEntry>> cache_records(std::string_view mailbox,
                                                             const store::UidSet& uids) override {
    return inner_.cache_records(mailbox, uids);
  }
  base::Result<store::ChangeSet> changes_since(std::string_view mailbox,
                                               store::ModSeq since) override {
    return inner_.changes_since(mailbox, since);
  }
  base::Result<std::optional<store::TextCandidates>> text_candidates(
      std::string_view mailbox, const store::TextQuery& query) override {
    return inner_.text_candidates(mailbox, query);
  }
  base::Result<store::SearchIndexStats> search_index_stats() override {
    return inner_.search_index_stats();
  }
  base::Result<store::SearchIndexStats> rebuild_search_index() override {
    return inner_.rebuild_search_index();
  }
  base::Result<void> sync() override { return inner_.sync(); }
  base::Result<void> sync_mailbox(std::string_view mailbox) override {
    return inner_.sync_mailbox(mailbox);
  }

 private:
  store::UserStore& inner_;
};

imap::SearchKey parse_key(const std::string& criteria) {
  imap::testing::WireParse parse("x SEARCH " + criteria);
  EXPECT_TRUE(parse.result()) << criteria;
  return parse.result() ? std::get<imap::Search>(parse.result()->args).key : imap::SearchKey{};
}

// A string as a non-synchronizing literal (8-bit text is not an atom).
std::string lit(std::string_view s) {
  return "{" + std::to_string(s.size()) + "+}\r\n" + std::string(s);
}

// Words that make trigram-sharing but different texts.
const char* const kWords[] = {"performance", "perform", "formation", "information",
                              "école",       "ÉCOLIER", "straße",    "strasse",
                              "quarterly",   "quartz",  "lunch",     "launch"};

std::string make_message(int i) {
  std::string subject = std::string(kWords[i % 12]) + " " + kWords[(i * 5 + 3) % 12];
  std::string body = std::string("Text about ") + kWords[(i * 7 + 1) % 12] + " and " +
                     kWords[(i * 3 + 2) % 12] + ".";
  std::string m = "From: Sender " + std::to_string(i % 4) + " <s" + std::to_string(i % 4) +
                  "@example.com>\r\nTo: rcpt@example.org\r\nSubject: =?utf-8?q?" +
                  (i % 2 ? std::string("Re=3A_") : std::string()) + "?= " + subject +
                  "\r\nDate: " + std::to_string(1 + i % 28) +
                  " Mar 2021 10:00:00 +0000\r\nX-Tag: t" + std::to_string(i % 3) +
                  "\r\nMIME-Version: 1.0\r\nContent-Type: text/plain; charset=utf-8\r\n";
  if (i % 3 == 0) {
    // Quoted-printable with a soft break inside the second word.
    std::string second = kWords[(i * 3 + 2) % 12];
    std::string split = "Text about " + std::string(kWords[(i * 7 + 1) % 12]) + " and " +
                        second.substr(0, 3) + "=\r\n" + second.substr(3) + ".";
    m += "Content-Transfer-Encoding: quoted-printable\r\n\r\n" + split + "\r\n";
  } else {
    m += "\r\n" + body + "\r\n";
  }
  return m;
}

class EvaluateTest : public ::testing::Test {
 protected:
  EvaluateTest() {
    for (int i = 0; i < 40; ++i) {
      messages_.push_back(make_message(i));
    }
  }

  // The answers of `criteria` with the index on or off; `opened`, when
  // given, gets how often each message file was opened, per criteria.
  std::vector<std::vector<std::uint32_t>> answers(
      const std::vector<std::string>& criteria, bool fts,
      std::vector<std::map<store::Uid, int>>* opened = nullptr) {
    store::maildir::MaildirOptions options;
    options.data_dir = dir_ / (fts ? "on" : "off");
    options.host_name = "test.host";
    options.full_text_index = fts;
    store::maildir::MaildirStore store(options);
    auto user = store.open_user("u");
    EXPECT_TRUE(user);
    for (std::size_t i = 0; i < messages_.size(); ++i) {
      store::AppendMessage a;
      a.bytes = messages_[i];
      a.flags = i % 4 == 0 ? store::kFlagSeen : 0;
      a.internal_date = store::InternalDate{1600000000 + static_cast<std::int64_t>(i) * 86400, 0};
      EXPECT_TRUE((*user)->append("INBOX", a));
    }
    auto snapshot = (*user)->open_mailbox("INBOX");
    EXPECT_TRUE(snapshot);
    SnapshotView view("INBOX", snapshot->messages);
    std::vector<std::vector<std::uint32_t>> out;
    for (const std::string& c : criteria) {
      CountingStore counting(**user);
      auto r = evaluate(view, counting, parse_key(c), SearchOptions{});
      if (opened != nullptr) {
        opened->push_back(counting.opened);
      }
      EXPECT_TRUE(r) << c << ": " << r.error().message;
      out.push_back(r ? *r : std::vector<std::uint32_t>{});
    }
    return out;
  }

  test_support::TempDir tmp_{"peregrine-search"};
  std::filesystem::path dir_ = tmp_.path();
  std::vector<std::string> messages_;
};

TEST_F(EvaluateTest, IndexOnAndOffAgree) {
  std::vector<std::string> criteria = {"TEXT performanc",
                                       "BODY orman",
                                       "SUBJECT " + lit("ÉCOLE"),
                                       "SUBJECT " + lit("écoli"),
                                       "BODY " + lit("straße"),
                                       "BODY STRASSE",
                                       "FROM s1@",
                                       "TO rcpt",
                                       "HEADER X-Tag t2",
                                       "HEADER X-Tag \"\"",
                                       "HEADER X-Missing \"\"",
                                       "SUBJECT re:",
                                       "BODY formation",
                                       "NOT BODY lunch",
                                       "OR SUBJECT lunch SUBJECT launch",
                                       "SEEN BODY quart",
                                       "UNSEEN TEXT \"and quartz\"",
                                       "TEXT ou",
                                       "BODY a",
                                       "SENTSINCE 20-Mar-2021 SUBJECT e",
                                       "SINCE 1-Oct-2020 BODY inform",
                                       "TEXT \"ation.\"",
                                       "BODY \"\"",
                                       "SUBJECT zzzqqq"};
  auto on = answers(criteria, true);
  auto off = answers(criteria, false);
  for (std::size_t i = 0; i < criteria.size(); ++i) {
    EXPECT_EQ(on[i], off[i]) << criteria[i];
  }
  // And the answers are not trivially empty or full.
  EXPECT_FALSE(on[0].empty());
  EXPECT_LT(on[0].size(), messages_.size());
  EXPECT_EQ(on[23], std::vector<std::uint32_t>{});
  EXPECT_EQ(on[22].size(), messages_.size());
}

TEST_F(EvaluateTest, AgreesWithAPlainCheckOfEachMessage) {
  // BODY <word>: message i's body holds two words of kWords; count by hand.
  auto on = answers({"BODY information", "SUBJECT " + lit("straße")}, true);
  std::vector<std::uint32_t> body, subject;
  for (int i = 0; i < 40; ++i) {
    std::string a = kWords[(i * 7 + 1) % 12], b = kWords[(i * 3 + 2) % 12];
    if (a == "information" || b == "information") {
      body.push_back(static_cast<std::uint32_t>(i + 1));
    }
    std::string s1 = kWords[i % 12], s2 = kWords[(i * 5 + 3) % 12];
    if (s1 == "straße" || s2 == "straße") {
      // ß has no titlecase mapping (RFC 5051): "strasse" is another word.
      subject.push_back(static_cast<std::uint32_t>(i + 1));
    }
  }
  EXPECT_EQ(on[0], body);
  EXPECT_EQ(on[1], subject);
}

// Text keys of one AND that the index cannot answer exactly are confirmed
// together: each message file is read once, whatever the number of keys.
TEST_F(EvaluateTest, KeysOfOneAndReadEachFileOnce) {
  const std::vector<std::string> criteria = {
      "BODY \"and formation\" TEXT \"about qua\"",
      "BODY \"and formation\" TEXT \"about qua\" SUBJECT \"y s\"",
      "SEEN TEXT \"about qua\" HEADER X-Tag t2 BODY \"and formation\""};
  std::vector<std::map<store::Uid, int>> opened;
  auto on = answers(criteria, true, &opened);
  auto off = answers(criteria, false);
  for (std::size_t i = 0; i < criteria.size(); ++i) {
    EXPECT_EQ(on[i], off[i]) << criteria[i];
    EXPECT_FALSE(on[i].empty()) << criteria[i];
    EXPECT_FALSE(opened[i].empty()) << criteria[i];  // confirmed from the files
    for (const auto& [uid, times] : opened[i]) {
      EXPECT_EQ(times, 1) << criteria[i] << ": UID " << uid;
    }
  }
}

TEST(Charset, Utf8AsciiAndConvertible) {
  EXPECT_TRUE(charset_supported(""));
  EXPECT_TRUE(charset_supported("utf-8"));
  EXPECT_TRUE(charset_supported("US-ASCII"));
  EXPECT_TRUE(charset_supported("ISO-8859-1"));
  EXPECT_FALSE(charset_supported("X-BOGUS"));
}

}  // namespace
}  // namespace peregrine::search
