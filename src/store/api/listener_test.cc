#include "store/api/listener.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

namespace peregrine::store {
namespace {

class Recorder : public MailboxListener {
 public:
  void on_appended(std::span<const MessageMeta> messages) override {
    for (const auto& m : messages) {
      log.push_back("append " + std::to_string(m.uid));
    }
  }
  void on_flags_changed(std::span<const MessageMeta> messages) override {
    for (const auto& m : messages) {
      log.push_back("flags " + std::to_string(m.uid));
    }
    if (drop_on_flags) {
      drop_on_flags->reset();
    }
  }
  void on_expunged(std::span<const Uid> uids, ModSeq modseq) override {
    for (Uid uid : uids) {
      log.push_back("expunge " + std::to_string(uid) + "@" + std::to_string(modseq));
    }
  }
  void on_mailbox_deleted() override { log.push_back("deleted"); }

  std::vector<std::string> log;
  Watch* drop_on_flags = nullptr;
};

std::vector<MessageMeta> metas(std::initializer_list<Uid> uids) {
  std::vector<MessageMeta> out;
  for (Uid uid : uids) {
    MessageMeta m;
    m.uid = uid;
    out.push_back(m);
  }
  return out;
}

TEST(ListenerTest, PublishesToListenersOfThatMailboxOnly) {
  ListenerRegistry registry;
  Recorder a, b;
  Watch wa = registry.add(1, a);
  Watch wb = registry.add(2, b);
  registry.publish_appended(1, metas({5, 6}));
  Uid gone[] = {3};
  registry.publish_expunged(2, gone, 9);
  EXPECT_EQ(a.log, (std::vector<std::string>{"append 5", "append 6"}));
  EXPECT_EQ(b.log, (std::vector<std::string>{"expunge 3@9"}));
  EXPECT_TRUE(registry.has_listeners(1));
  EXPECT_FALSE(registry.has_listeners(3));
}

TEST(ListenerTest, EmptyChangesAreNotPublished) {
  ListenerRegistry registry;
  Recorder a;
  Watch w = registry.add(1, a);
  registry.publish_appended(1, {});
  registry.publish_flags_changed(1, {});
  registry.publish_expunged(1, {}, 4);
  EXPECT_TRUE(a.log.empty());
}

TEST(ListenerTest, DestroyedWatchStopsCalls) {
  ListenerRegistry registry;
  Recorder a;
  {
    Watch w = registry.add(1, a);
    EXPECT_TRUE(w.active());
  }
  EXPECT_FALSE(registry.has_listeners(1));
  registry.publish_appended(1, metas({1}));
  EXPECT_TRUE(a.log.empty());
}

TEST(ListenerTest, MovedWatchKeepsSubscription) {
  ListenerRegistry registry;
  Recorder a;
  Watch moved;
  {
    Watch w = registry.add(1, a);
    moved = std::move(w);
    EXPECT_FALSE(w.active());
  }
  EXPECT_TRUE(moved.active());
  registry.publish_appended(1, metas({1}));
  EXPECT_EQ(a.log.size(), 1u);
}

TEST(ListenerTest, ListenerMayDropAnotherWatchDuringCallback) {
  ListenerRegistry registry;
  Recorder a, b;
  Watch wa = registry.add(1, a);
  Watch wb = registry.add(1, b);
  a.drop_on_flags = &wb;
  registry.publish_flags_changed(1, metas({7}));
  EXPECT_EQ(a.log, (std::vector<std::string>{"flags 7"}));
  EXPECT_TRUE(b.log.empty());
  EXPECT_FALSE(wb.active());
}

TEST(ListenerTest, MailboxDeletedEndsWatches) {
  ListenerRegistry registry;
  Recorder a;
  Watch w = registry.add(1, a);
  registry.publish_mailbox_deleted(1);
  EXPECT_EQ(a.log, (std::vector<std::string>{"deleted"}));
  EXPECT_FALSE(w.active());
  registry.publish_appended(1, metas({1}));
  EXPECT_EQ(a.log.size(), 1u);
}

TEST(ListenerTest, WatchOutlivesRegistry) {
  Recorder a;
  Watch w;
  {
    auto registry = std::make_unique<ListenerRegistry>();
    w = registry->add(1, a);
  }
  EXPECT_FALSE(w.active());
  w.reset();  // must not touch freed memory
}

}  // namespace
}  // namespace peregrine::store
