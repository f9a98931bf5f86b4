#include "delivery/delivery.h"

#include <gtest/gtest.h>
#include <sysexits.h>

#include "store/maildir/test_util.h"

namespace peregrine::delivery {
namespace {

using store::maildir::testing::read_file;
using store::maildir::testing::StoreTest;
using store::maildir::testing::write_file;

class DeliveryTest : public StoreTest {
 protected:
  DeliveryTest() {
    write_file(tmp_.path() / "passwd",
               "bob:{PLAIN}x::::::\n"
               "carol:{PLAIN}x::::::\n"
               "carol@example.org:{PLAIN}x::::/homes/carol-org:\n");
    auth_ = std::make_unique<auth::Authenticator>(tmp_.path() / "passwd");
  }

  std::string stored(std::string_view mailbox, store::Uid uid) {
    auto body = user_->open_body(mailbox, uid);
    EXPECT_TRUE(body) << body.error().message;
    std::string out;
    if (body) {
      auto bytes = (*body)->read_all();
      EXPECT_TRUE(bytes);
      out = bytes ? *bytes : "";
    }
    return out;
  }

  std::unique_ptr<auth::Authenticator> auth_;
};

TEST_F(DeliveryTest, AnyDomainReachesTheLocalPart) {
  auto bob = resolve_recipient(*auth_, "bob", "any.example");
  ASSERT_TRUE(bob) << bob.error().message;
  EXPECT_EQ(bob->user, "bob");
  EXPECT_EQ(bob->address, "bob@any.example");
  auto plain = resolve_recipient(*auth_, "bob", "");
  ASSERT_TRUE(plain);
  EXPECT_EQ(plain->user, "bob");
  EXPECT_EQ(plain->address, "bob");
  auto unknown = resolve_address(*auth_, "nobody@example.org");
  ASSERT_FALSE(unknown);
  EXPECT_EQ(unknown.error().code, base::MailError::kNotFound);
}

TEST_F(DeliveryTest, AFullAddressEntryWins) {
  auto org = resolve_address(*auth_, "carol@example.org");
  ASSERT_TRUE(org);
  EXPECT_EQ(org->user, "carol@example.org");
  EXPECT_EQ(org->home, "/homes/carol-org");
  auto other = resolve_address(*auth_, "carol@example.net");
  ASSERT_TRUE(other);
  EXPECT_EQ(other->user, "carol");
}

TEST_F(DeliveryTest, TraceHeaders) {
  EXPECT_EQ(trace_headers(std::string("a@b"), "c@d"),
            "Return-Path: <a@b>\r\nDelivered-To: c@d\r\n");
  EXPECT_EQ(trace_headers(std::string(), "c"), "Return-Path: <>\r\nDelivered-To: c\r\n");
  EXPECT_EQ(trace_headers(std::nullopt, "c"), "Delivered-To: c\r\n");
}

TEST_F(DeliveryTest, DeliversWithHeadersAndFallsBackToInbox) {
  Request request;
  request.return_path = "sender@example.net";
  request.delivered_to = "alice@example.org";
  const std::string message = "Subject: hi\n\nbody\n";
  request.message = message;
  auto delivered = deliver(*user_, request);
  ASSERT_TRUE(delivered) << delivered.error().message;
  EXPECT_EQ(delivered->mailbox, "INBOX");
  EXPECT_EQ(stored("INBOX", delivered->uid.uid),
            "Return-Path: <sender@example.net>\r\nDelivered-To: alice@example.org\r\n"
            "Subject: hi\r\n\r\nbody\r\n");

  request.mailbox = "No/Such";
  delivered = deliver(*user_, request);
  ASSERT_TRUE(delivered);
  EXPECT_EQ(delivered->mailbox, "INBOX");
  ASSERT_TRUE(user_->create_mailbox("Lists"));
  request.mailbox = "Lists";
  delivered = deliver(*user_, request);
  ASSERT_TRUE(delivered);
  EXPECT_EQ(delivered->mailbox, "Lists");
  EXPECT_EQ(info("Lists").messages, 1u);

  request.message = "";
  auto empty = deliver(*user_, request);
  ASSERT_FALSE(empty);
  EXPECT_EQ(classify(empty.error(), 0, 0), Outcome::kBadMessage);
}

TEST_F(DeliveryTest, Quota) {
  const std::string message(600, 'x');
  Request request;
  request.message = message;
  request.quota_bytes = 1000;
  ASSERT_TRUE(check_quota(*user_, 1000, 0));
  ASSERT_TRUE(deliver(*user_, request));
  // 600 + headers used: a second one does not fit, but might later.
  auto second = deliver(*user_, request);
  ASSERT_FALSE(second);
  EXPECT_EQ(second.error().code, base::MailError::kOverQuota);
  EXPECT_EQ(classify(second.error(), message.size(), 1000), Outcome::kMailboxFull);
  EXPECT_TRUE(check_quota(*user_, 1000, 0));  // not full yet
  // One larger than the whole quota never will.
  EXPECT_EQ(classify(second.error(), 2000, 1000), Outcome::kOverQuota);
  EXPECT_EQ(info("INBOX").messages, 1u);
  // Without a quota, anything goes.
  request.quota_bytes = 0;
  EXPECT_TRUE(deliver(*user_, request));
  EXPECT_FALSE(check_quota(*user_, 1000, 0));
}

TEST(DeliveryOutcome, RepliesAndExitCodes) {
  EXPECT_EQ(format_reply(lmtp_reply(Outcome::kNoSuchUser, "x@y")),
            "550 5.1.1 <x@y> User unknown\r\n");
  EXPECT_EQ(lmtp_reply(Outcome::kMailboxFull, "x").code, 452);
  EXPECT_EQ(lmtp_reply(Outcome::kMailboxFull, "x").enhanced, "4.2.2");
  EXPECT_EQ(lmtp_reply(Outcome::kOverQuota, "x").enhanced, "5.2.2");
  EXPECT_EQ(lmtp_reply(Outcome::kTooBig, "x").enhanced, "5.3.4");
  EXPECT_EQ(lmtp_reply(Outcome::kTemporary, "x").code, 451);
  EXPECT_EQ(exit_code(Outcome::kNoSuchUser), EX_NOUSER);
  EXPECT_EQ(exit_code(Outcome::kTemporary), EX_TEMPFAIL);
  EXPECT_EQ(exit_code(Outcome::kTooBig), EX_DATAERR);
  EXPECT_EQ(classify(base::Error{base::MailError::kTemporary, ""}, 0, 0), Outcome::kTemporary);
  EXPECT_EQ(classify(base::Error{base::MailError::kNotFound, ""}, 0, 0), Outcome::kNoSuchUser);
}

}  // namespace
}  // namespace peregrine::delivery
