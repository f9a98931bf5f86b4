// search::evaluate over a real Maildir store: the same answers with the
// full-text index on and off, and against a plain per-message check.

#include "search/search_program.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
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

  // The answers of `criteria` with the index on or off.
  std::vector<std::vector<std::uint32_t>> answers(const std::vector<std::string>& criteria,
                                                  bool fts) {
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
      auto r = evaluate(view, **user, parse_key(c), SearchOptions{});
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

TEST(Charset, Utf8AsciiAndConvertible) {
  EXPECT_TRUE(charset_supported(""));
  EXPECT_TRUE(charset_supported("utf-8"));
  EXPECT_TRUE(charset_supported("US-ASCII"));
  EXPECT_TRUE(charset_supported("ISO-8859-1"));
  EXPECT_FALSE(charset_supported("X-BOGUS"));
}

}  // namespace
}  // namespace peregrine::search
