#include "delivery/batch.h"

#include <gtest/gtest.h>

#include <map>
#include <thread>

#include "store/maildir/test_util.h"

namespace peregrine::delivery {
namespace {

using store::maildir::testing::StoreTest;

std::shared_ptr<Pending> pending(std::string message, std::string delivered_to) {
  auto p = std::make_shared<Pending>();
  p->message = std::make_shared<const std::string>(std::move(message));
  p->request.return_path = "sender@example.net";
  p->request.delivered_to = std::move(delivered_to);
  p->request.message = *p->message;
  return p;
}

class BatchTest : public StoreTest {
 protected:
  std::string stored(store::Uid uid) {
    auto body = user_->open_body("INBOX", uid);
    EXPECT_TRUE(body) << body.error().message;
    if (!body) {
      return "";
    }
    auto bytes = (*body)->read_all();
    return bytes ? *bytes : "";
  }
};

TEST_F(BatchTest, OneTransactionForTheBatchAndOneResultEach) {
  std::vector<std::shared_ptr<Pending>> batch = {pending("Subject: a\r\n\r\na\r\n", "a@x"),
                                                 pending("Subject: b\r\n\r\nb\r\n", "b@x"),
                                                 pending("Subject: c\r\n\r\nc\r\n", "c@x")};
  deliver_batch(*user_, batch);
  std::vector<store::Uid> uids;
  for (const auto& p : batch) {
    ASSERT_TRUE(p->result.has_value());
    ASSERT_TRUE(*p->result) << p->result->error().message;
    EXPECT_EQ((*p->result)->mailbox, "INBOX");
    uids.push_back((*p->result)->uid.uid);
  }
  EXPECT_EQ(uids, (std::vector<store::Uid>{1, 2, 3}));
  EXPECT_EQ(stored(2),
            "Return-Path: <sender@example.net>\r\nDelivered-To: b@x\r\nSubject: b\r\n\r\nb\r\n");
  // One append: the three messages share the MODSEQ of one commit.
  auto snapshot = user_->open_mailbox("INBOX");
  ASSERT_TRUE(snapshot);
  ASSERT_EQ(snapshot->messages.size(), 3u);
  EXPECT_EQ(snapshot->messages[0].modseq, snapshot->messages[2].modseq);
}

TEST_F(BatchTest, OneBadMessageFailsAlone) {
  // Over the test store's 1 MiB limit: the shared append fails, and each
  // message is then stored (or refused) on its own.
  std::vector<std::shared_ptr<Pending>> batch = {
      pending("Subject: a\r\n\r\na\r\n", "a@x"),
      pending("Subject: big\r\n\r\n" + std::string(2 << 20, 'x') + "\r\n", "b@x"),
      pending("", "c@x"), pending("Subject: d\r\n\r\nd\r\n", "d@x")};
  deliver_batch(*user_, batch);
  ASSERT_TRUE(*batch[0]->result);
  ASSERT_FALSE(*batch[1]->result);
  EXPECT_EQ(batch[1]->result->error().code, base::MailError::kTooBig);
  ASSERT_FALSE(*batch[2]->result);
  EXPECT_EQ(batch[2]->result->error().code, base::MailError::kBadInput);
  ASSERT_TRUE(*batch[3]->result);
  EXPECT_EQ(info("INBOX").messages, 2u);
  EXPECT_EQ(stored((*batch[3]->result)->uid.uid),
            "Return-Path: <sender@example.net>\r\nDelivered-To: d@x\r\nSubject: d\r\n\r\nd\r\n");
}

TEST_F(BatchTest, QuotaCountsTheBatch) {
  std::vector<std::shared_ptr<Pending>> batch;
  for (int i = 0; i < 3; ++i) {
    batch.push_back(pending(std::string(400, 'x'), "a@x"));
    batch.back()->request.quota_bytes = 1000;  // two of ~450 bytes fit, not three
  }
  deliver_batch(*user_, batch);
  EXPECT_TRUE(*batch[0]->result);
  EXPECT_TRUE(*batch[1]->result);
  ASSERT_FALSE(*batch[2]->result);
  EXPECT_EQ(batch[2]->result->error().code, base::MailError::kOverQuota);
  EXPECT_EQ(info("INBOX").messages, 2u);
}

TEST_F(BatchTest, MailboxesAppendApartAndAMissingOneMeansInbox) {
  ASSERT_TRUE(user_->create_mailbox("Lists"));
  std::vector<std::shared_ptr<Pending>> batch = {pending("Subject: a\r\n\r\na\r\n", "a@x"),
                                                 pending("Subject: b\r\n\r\nb\r\n", "b@x"),
                                                 pending("Subject: c\r\n\r\nc\r\n", "c@x")};
  batch[0]->request.mailbox = "Lists";
  batch[1]->request.mailbox = "No/Such";
  deliver_batch(*user_, batch);
  ASSERT_TRUE(*batch[0]->result);
  EXPECT_EQ((*batch[0]->result)->mailbox, "Lists");
  ASSERT_TRUE(*batch[1]->result);
  EXPECT_EQ((*batch[1]->result)->mailbox, "INBOX");
  ASSERT_TRUE(*batch[2]->result);
  EXPECT_EQ((*batch[2]->result)->mailbox, "INBOX");
  EXPECT_EQ(info("Lists").messages, 1u);
  EXPECT_EQ(info("INBOX").messages, 2u);
}

TEST_F(BatchTest, ARefusedAdmitStoresNothingForThatDeliveryOnly) {
  std::vector<std::shared_ptr<Pending>> batch = {pending("Subject: a\r\n\r\na\r\n", "a@x"),
                                                 pending("Subject: b\r\n\r\nb\r\n", "b@x"),
                                                 pending("Subject: c\r\n\r\nc\r\n", "c@x")};
  int checks = 0;
  batch[0]->admit = [&checks]() -> base::Result<void> {
    ++checks;
    return {};
  };
  batch[1]->admit = [&checks]() -> base::Result<void> {
    ++checks;
    return base::fail(base::MailError::kNotFound, "gone");
  };
  deliver_batch(*user_, batch);
  EXPECT_EQ(checks, 2);
  ASSERT_TRUE(*batch[0]->result);
  EXPECT_FALSE(batch[0]->refused);
  ASSERT_FALSE(*batch[1]->result);
  EXPECT_TRUE(batch[1]->refused);
  EXPECT_EQ(batch[1]->result->error().code, base::MailError::kNotFound);
  ASSERT_TRUE(*batch[2]->result);
  EXPECT_FALSE(batch[2]->refused);
  EXPECT_EQ(info("INBOX").messages, 2u);
  EXPECT_EQ(stored((*batch[2]->result)->uid.uid),
            "Return-Path: <sender@example.net>\r\nDelivered-To: c@x\r\nSubject: c\r\n\r\nc\r\n");
  // Every delivery refused: nothing to append, and every result set.
  std::vector<std::shared_ptr<Pending>> none = {pending("Subject: d\r\n\r\nd\r\n", "d@x")};
  none[0]->admit = [] { return base::Result<void>(base::fail(base::MailError::kTemporary, "x")); };
  deliver_batch(*user_, none);
  ASSERT_TRUE(none[0]->result.has_value());
  EXPECT_EQ(none[0]->result->error().code, base::MailError::kTemporary);
  EXPECT_EQ(info("INBOX").messages, 2u);
}

TEST(DeliveryQueueTest, TakesWhatIsQueuedPerUserInOrder) {
  DeliveryQueue queue;
  EXPECT_TRUE(queue.take("alice").empty());
  constexpr int kThreads = 4;
  constexpr int kEach = 50;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&queue, t] {
      for (int i = 0; i < kEach; ++i) {
        queue.push(t % 2 ? "bob" : "alice", pending(std::to_string(t * 1000 + i), "x"));
      }
    });
  }
  for (auto& thread : threads) {
    thread.join();
  }
  auto alice = queue.take("alice");
  auto bob = queue.take("bob");
  EXPECT_EQ(alice.size(), 2u * kEach);
  EXPECT_EQ(bob.size(), 2u * kEach);
  // Each thread's deliveries keep their order.
  std::map<int, int> last;
  for (const auto& p : alice) {
    int n = std::stoi(*p->message);
    auto [it, fresh] = last.try_emplace(n / 1000, n);
    if (!fresh) {
      EXPECT_LT(it->second, n);
      it->second = n;
    }
  }
  EXPECT_TRUE(queue.take("alice").empty());
}

}  // namespace
}  // namespace peregrine::delivery
