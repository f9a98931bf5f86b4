#include "search/thread.h"

#include <algorithm>
#include <limits>
#include <numeric>
#include <string_view>
#include <unordered_map>
#include <utility>

#include "search/base_subject.h"

namespace peregrine::search {
namespace {

constexpr uint32_t kNone = std::numeric_limits<uint32_t>::max();

// Sent date, then sequence number (RFC 5256 §2.2: "the order in which the
// two messages appear in the mailbox" breaks a tie).
using DateKey = std::pair<int64_t, uint32_t>;

DateKey date_key(const ThreadMessage& m) { return {m.sent_date, m.seq}; }

// The REFERENCES algorithm's containers (RFC 5256 §3): a message or a dummy
// standing for a Message-ID no selected message has.
class Forest {
 public:
  explicit Forest(std::vector<ThreadMessage>& messages) : messages_(messages) {}

  std::vector<ThreadEntry> build();

 private:
  struct Container {
    uint32_t message = kNone;  // index into messages_, kNone for a dummy
    uint32_t parent = kNone;
    uint32_t first_child = kNone;
    uint32_t last_child = kNone;
    uint32_t prev = kNone;
    uint32_t next = kNone;
  };

  uint32_t add_container();
  uint32_t container_of(std::string_view id);
  bool is_dummy(uint32_t c) const { return containers_[c].message == kNone; }
  void link(uint32_t parent, uint32_t child);
  void unlink(uint32_t child);
  // Whether making `parent` the parent of `child` would close a loop:
  // `parent` is `child` or one of its descendants.
  bool would_loop(uint32_t parent, uint32_t child) const;

  void link_references();                // step 1
  std::vector<uint32_t> gather_roots();  // steps 2 and 3
  void prune(std::vector<uint32_t>& list, bool at_root);
  void sort_siblings(std::vector<uint32_t>& list);
  void merge_subjects(std::vector<uint32_t>& roots);  // step 5
  std::vector<uint32_t> preorder(const std::vector<uint32_t>& roots) const;
  const ThreadMessage& representative(uint32_t c) const;

  std::vector<ThreadMessage>& messages_;
  std::vector<Container> containers_;
  std::unordered_map<std::string_view, uint32_t> by_id_;
  // After step 1: each container's children, as lists.
  std::vector<std::vector<uint32_t>> children_;
  std::vector<DateKey> keys_;  // filled by sort_siblings
};

uint32_t Forest::add_container() {
  containers_.emplace_back();
  return static_cast<uint32_t>(containers_.size() - 1);
}

uint32_t Forest::container_of(std::string_view id) {
  auto [it, inserted] = by_id_.try_emplace(id, kNone);
  if (inserted) {
    it->second = add_container();
  }
  return it->second;
}

void Forest::link(uint32_t parent, uint32_t child) {
  Container& p = containers_[parent];
  Container& c = containers_[child];
  c.parent = parent;
  c.prev = p.last_child;
  c.next = kNone;
  if (p.last_child != kNone) {
    containers_[p.last_child].next = child;
  } else {
    p.first_child = child;
  }
  p.last_child = child;
}

void Forest::unlink(uint32_t child) {
  Container& c = containers_[child];
  Container& p = containers_[c.parent];
  if (c.prev != kNone) {
    containers_[c.prev].next = c.next;
  } else {
    p.first_child = c.next;
  }
  if (c.next != kNone) {
    containers_[c.next].prev = c.prev;
  } else {
    p.last_child = c.prev;
  }
  c.parent = c.prev = c.next = kNone;
}

bool Forest::would_loop(uint32_t parent, uint32_t child) const {
  if (parent == child) {
    return true;
  }
  if (containers_[child].first_child == kNone) {
    return false;  // nothing below `child`
  }
  for (uint32_t p = containers_[parent].parent; p != kNone; p = containers_[p].parent) {
    if (p == child) {
      return true;
    }
  }
  return false;
}

void Forest::link_references() {
  containers_.reserve(messages_.size() * 2);
  by_id_.reserve(messages_.size() * 2);
  for (uint32_t i = 0; i < messages_.size(); ++i) {
    const ThreadMessage& m = messages_[i];
    // A message without a Message-ID, or the second with one already
    // taken, gets a container of its own that no reference can name.
    uint32_t self = kNone;
    if (!m.message_id.empty()) {
      self = container_of(m.message_id);
      if (!is_dummy(self)) {
        self = kNone;
      }
    }
    if (self == kNone) {
      self = add_container();
    }
    containers_[self].message = i;

    // (1)(A) Each reference the parent of the next, unless the next has a
    // parent already or the link would close a loop.
    uint32_t previous = kNone;
    for (const std::string& ref : m.references) {
      uint32_t c = container_of(ref);
      if (previous != kNone && containers_[c].parent == kNone && !would_loop(previous, c)) {
        link(previous, c);
      }
      previous = c;
    }
    // (1)(B) The last reference is this message's parent, replacing the
    // parent an earlier (perhaps truncated) References gave it; with no
    // references the message has no parent.
    if (containers_[self].parent != kNone) {
      unlink(self);
    }
    if (previous != kNone && !would_loop(previous, self)) {
      link(previous, self);
    }
  }
  children_.resize(containers_.size());
  for (uint32_t c = 0; c < containers_.size(); ++c) {
    for (uint32_t k = containers_[c].first_child; k != kNone; k = containers_[k].next) {
      children_[c].push_back(k);
    }
  }
}

std::vector<uint32_t> Forest::preorder(const std::vector<uint32_t>& roots) const {
  std::vector<uint32_t> order;
  std::vector<uint32_t> stack(roots.rbegin(), roots.rend());
  while (!stack.empty()) {
    uint32_t c = stack.back();
    stack.pop_back();
    if (c == kNone) {
      continue;
    }
    order.push_back(c);
    stack.insert(stack.end(), children_[c].rbegin(), children_[c].rend());
  }
  return order;
}

void Forest::prune(std::vector<uint32_t>& list, bool at_root) {
  std::vector<uint32_t> kept;
  kept.reserve(list.size());
  for (uint32_t c : list) {
    if (!is_dummy(c)) {
      kept.push_back(c);
      continue;
    }
    std::vector<uint32_t>& kids = children_[c];
    if (kids.empty()) {
      continue;  // a dummy with no children goes
    }
    // Its children take its place, except that several children of a
    // dummy at the top stay together under it.
    if (!at_root || kids.size() == 1) {
      kept.insert(kept.end(), kids.begin(), kids.end());
      kids.clear();
    } else {
      kept.push_back(c);
    }
  }
  list = std::move(kept);
}

std::vector<uint32_t> Forest::gather_roots() {
  std::vector<uint32_t> roots;  // (2)
  for (uint32_t c = 0; c < containers_.size(); ++c) {
    if (containers_[c].parent == kNone) {
      roots.push_back(c);
    }
  }
  // (3) Bottom-up, so a chain of dummies collapses in one pass.
  std::vector<uint32_t> order = preorder(roots);
  for (auto it = order.rbegin(); it != order.rend(); ++it) {
    prune(children_[*it], /*at_root=*/false);
  }
  prune(roots, /*at_root=*/true);
  return roots;
}

// Sorts `list` by sent date; a dummy sorts as its first child (whose
// children are sorted already).
void Forest::sort_siblings(std::vector<uint32_t>& list) {
  keys_.resize(containers_.size());
  for (uint32_t c : list) {
    if (!is_dummy(c)) {
      keys_[c] = date_key(messages_[containers_[c].message]);
    } else if (!children_[c].empty()) {
      keys_[c] = keys_[children_[c].front()];
    }
  }
  std::sort(list.begin(), list.end(), [&](uint32_t a, uint32_t b) { return keys_[a] < keys_[b]; });
}

const ThreadMessage& Forest::representative(uint32_t c) const {
  // Dummies are only at the top and hold messages only (step 3).
  uint32_t m = is_dummy(c) ? children_[c].front() : c;
  return messages_[containers_[m].message];
}

void Forest::merge_subjects(std::vector<uint32_t>& roots) {
  // (5)(A), (B): one thread per subject, preferring a dummy, then a
  // message that is not a reply or forward.
  std::unordered_map<std::string_view, uint32_t> table;
  table.reserve(roots.size());
  for (uint32_t c : roots) {
    const ThreadMessage& m = representative(c);
    if (m.subject.empty()) {
      continue;
    }
    auto [it, inserted] = table.try_emplace(m.subject, c);
    if (inserted) {
      continue;
    }
    uint32_t old = it->second;
    if (!is_dummy(old) &&
        (is_dummy(c) || (representative(old).reply_or_forward && !m.reply_or_forward))) {
      it->second = c;
    }
  }
  // (C) Merge the other threads of each subject into the table's one.
  std::vector<uint32_t> slot(containers_.size(), kNone);
  for (uint32_t i = 0; i < roots.size(); ++i) {
    slot[roots[i]] = i;
  }
  for (uint32_t i = 0; i < roots.size(); ++i) {
    uint32_t c = roots[i];
    if (c == kNone) {
      continue;
    }
    const ThreadMessage& m = representative(c);
    if (m.subject.empty()) {
      continue;
    }
    auto it = table.find(m.subject);
    uint32_t t = it->second;
    if (t == c) {
      continue;
    }
    if (is_dummy(c) && is_dummy(t)) {
      std::vector<uint32_t>& kids = children_[c];
      children_[t].insert(children_[t].end(), kids.begin(), kids.end());
      kids.clear();
    } else if (is_dummy(t) ||
               (!is_dummy(c) && m.reply_or_forward && !representative(t).reply_or_forward)) {
      children_[t].push_back(c);
    } else {
      uint32_t dummy = add_container();
      children_.push_back({t, c});
      slot.push_back(slot[t]);
      roots[slot[t]] = dummy;
      it->second = dummy;
    }
    roots[i] = kNone;
  }
  std::erase(roots, kNone);
}

std::vector<ThreadEntry> Forest::build() {
  link_references();
  std::vector<uint32_t> roots = gather_roots();
  // (4) The top level in date order, a dummy's children first.
  for (uint32_t c : roots) {
    if (is_dummy(c)) {
      sort_siblings(children_[c]);
    }
  }
  sort_siblings(roots);
  merge_subjects(roots);
  // (6) Every set of siblings, the deepest first.
  std::vector<uint32_t> order = preorder(roots);
  for (auto it = order.rbegin(); it != order.rend(); ++it) {
    sort_siblings(children_[*it]);
  }
  sort_siblings(roots);

  std::vector<ThreadEntry> out;
  out.reserve(messages_.size() + roots.size());
  for (uint32_t c : preorder(roots)) {
    uint32_t seq = is_dummy(c) ? 0 : messages_[containers_[c].message].seq;
    out.push_back(ThreadEntry{seq, static_cast<uint32_t>(children_[c].size())});
  }
  return out;
}

}  // namespace

ThreadMessage thread_message(const MessageFacts& message, const mime::CacheRecord* record) {
  if (record == nullptr) {
    return thread_message(message, static_cast<const MessageKeys*>(nullptr));
  }
  const MessageKeys keys = message_keys(*record);
  return thread_message(message, &keys);
}

ThreadMessage thread_message(const MessageFacts& message, const MessageKeys* keys) {
  ThreadMessage t;
  t.seq = message.seq;
  t.sent_date = sent_date(message, keys != nullptr ? &keys->record : nullptr);
  if (keys != nullptr) {
    t.subject = keys->subject;
    t.reply_or_forward = keys->reply_or_forward;
    t.message_id = keys->record.message_id;
    t.references = keys->record.references;
  }
  return t;
}

std::vector<ThreadEntry> thread_ordered_subject(std::vector<ThreadMessage> messages) {
  // Sorted by base subject, then sent date; each run of one subject is a
  // thread whose first message is the parent of all the others.
  std::vector<uint32_t> order(messages.size());
  std::iota(order.begin(), order.end(), 0u);
  std::sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) {
    int cmp = messages[a].subject.compare(messages[b].subject);
    if (cmp != 0) {
      return cmp < 0;
    }
    return date_key(messages[a]) < date_key(messages[b]);
  });
  struct Run {
    size_t begin;
    size_t end;
  };
  std::vector<Run> runs;
  for (size_t i = 0; i < order.size(); ++i) {
    if (runs.empty() || messages[order[i]].subject != messages[order[runs.back().begin]].subject) {
      runs.push_back(Run{i, i + 1});
    } else {
      runs.back().end = i + 1;
    }
  }
  // Threads in the order of their first messages' sent dates.
  std::sort(runs.begin(), runs.end(), [&](const Run& a, const Run& b) {
    return date_key(messages[order[a.begin]]) < date_key(messages[order[b.begin]]);
  });
  std::vector<ThreadEntry> out;
  out.reserve(messages.size());
  for (const Run& r : runs) {
    out.push_back(
        ThreadEntry{messages[order[r.begin]].seq, static_cast<uint32_t>(r.end - r.begin - 1)});
    for (size_t i = r.begin + 1; i < r.end; ++i) {
      out.push_back(ThreadEntry{messages[order[i]].seq, 0});
    }
  }
  return out;
}

std::vector<ThreadEntry> thread_references(std::vector<ThreadMessage> messages) {
  return Forest(messages).build();
}

}  // namespace peregrine::search
