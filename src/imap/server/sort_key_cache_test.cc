// SortKeyCache: keeps the keys and drops the FETCH parts, holds to its byte
// bound, forgets expunged messages.

#include "imap/server/sort_key_cache.h"

#include <gtest/gtest.h>

#include <string>

namespace peregrine::imap {
namespace {

search::MessageKeys record_with(const std::string& subject) {
  mime::CacheRecord r;
  r.envelope = std::string(500, 'e');
  r.bodystructure = std::string(500, 'b');
  r.subject = subject;
  r.from_mailbox = "someone-with-a-long-name@example.org";
  r.message_id = "<a-message-id-longer-than-small@example.org>";
  r.references = {"<parent-one@example.org>", "<parent-two@example.org>"};
  r.sent_date = mime::DateTime{};
  r.sent_date->utc_seconds = 1234;
  return search::message_keys(std::move(r));
}

TEST(SortKeyCacheTest, KeepsKeysDropsFetchParts) {
  SortKeyCache cache;
  EXPECT_EQ(cache.find(7), nullptr);
  const search::MessageKeys* kept = cache.put(7, record_with("Re: Hello"));
  ASSERT_NE(kept, nullptr);
  EXPECT_EQ(cache.find(7), kept);
  EXPECT_EQ(kept->record.subject, "Re: Hello");
  EXPECT_EQ(kept->subject, "HELLO");  // i;ascii-casemap, base subject
  EXPECT_TRUE(kept->reply_or_forward);
  EXPECT_EQ(kept->record.from_mailbox, "someone-with-a-long-name@example.org");
  EXPECT_EQ(kept->record.references.size(), 2u);
  ASSERT_TRUE(kept->record.sent_date.has_value());
  EXPECT_EQ(kept->record.sent_date->utc_seconds, 1234);
  EXPECT_TRUE(kept->record.envelope.empty());
  EXPECT_TRUE(kept->record.bodystructure.empty());
  EXPECT_EQ(cache.bytes(), key_record_bytes(*kept));
  // Neither the envelope nor the BODYSTRUCTURE is counted any more.
  EXPECT_LT(cache.bytes(), key_record_bytes(record_with("Re: Hello")));
}

TEST(SortKeyCacheTest, GivesTheSentDateFromItsOwnTable) {
  SortKeyCache cache;
  search::MessageKeys undated = record_with("no date");
  undated.record.sent_date.reset();
  ASSERT_NE(cache.put(3, record_with("dated")), nullptr);
  ASSERT_NE(cache.put(5, std::move(undated)), nullptr);
  size_t cursor = 0;
  std::optional<std::int64_t> sent = 1;
  EXPECT_EQ(cache.find(2, cursor, sent), nullptr);
  EXPECT_FALSE(sent.has_value());
  EXPECT_EQ(cache.find(3, cursor, sent), cache.find(3));
  EXPECT_EQ(sent, std::optional<std::int64_t>(1234));
  EXPECT_EQ(cache.find(5, cursor, sent), cache.find(5));
  EXPECT_FALSE(sent.has_value());  // no Date header: the caller falls back
}

TEST(SortKeyCacheTest, RefusesPastItsBound) {
  const size_t one = key_record_bytes(*SortKeyCache().put(1, record_with("x")));
  SortKeyCache cache(2 * one + one / 2);
  EXPECT_NE(cache.put(1, record_with("x")), nullptr);
  EXPECT_NE(cache.put(2, record_with("x")), nullptr);
  search::MessageKeys third = record_with("third");
  EXPECT_EQ(cache.put(3, std::move(third)), nullptr);
  EXPECT_EQ(third.subject, "THIRD");  // the caller still has the keys
  EXPECT_EQ(third.record.from_mailbox, "someone-with-a-long-name@example.org");
  EXPECT_EQ(cache.size(), 2u);
  EXPECT_LE(cache.bytes(), 2 * one + one / 2);
  // Expunging one makes room again.
  const store::Uid gone[] = {1, 99};
  cache.erase(gone);
  EXPECT_EQ(cache.find(1), nullptr);
  EXPECT_EQ(cache.size(), 1u);
  EXPECT_EQ(cache.bytes(), one);
  EXPECT_NE(cache.put(3, record_with("x")), nullptr);
}

TEST(SortKeyCacheTest, KeysReadForASubsetFirstMergeInOrder) {
  SortKeyCache cache;
  SortKeyCache::Fresh first;
  first.emplace_back(5, record_with("five"));
  first.emplace_back(10, record_with("ten"));
  cache.put(first);
  SortKeyCache::Fresh later;
  for (store::Uid uid : {3, 7, 12}) {
    later.emplace_back(uid, record_with("n" + std::to_string(uid)));
  }
  cache.put(later);
  ASSERT_EQ(cache.size(), 5u);
  size_t cursor = 0;
  const char* subjects[] = {"N3", "FIVE", "N7", "TEN", "N12"};
  const store::Uid uids[] = {3, 5, 7, 10, 12};
  for (size_t i = 0; i < 5; ++i) {
    const search::MessageKeys* k = cache.find(uids[i], cursor);
    ASSERT_NE(k, nullptr) << uids[i];
    EXPECT_EQ(k->subject, subjects[i]);
    EXPECT_EQ(cache.find(uids[i] + 1, cursor), nullptr);
  }
  // Any cursor is safe, a stale one included.
  size_t stale = 4;
  EXPECT_EQ(cache.find(5, stale)->subject, "FIVE");
  stale = 99;
  EXPECT_EQ(cache.find(12, stale)->subject, "N12");
}

}  // namespace
}  // namespace peregrine::imap
