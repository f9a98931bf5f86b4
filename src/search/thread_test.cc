// THREAD=ORDEREDSUBJECT and THREAD=REFERENCES: RFC 5256's own example
// responses from one set of messages built to reproduce them, and the edge
// cases (missing parents, loops, duplicate Message-IDs, subject merging).

#include "search/thread.h"

#include <gtest/gtest.h>

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace peregrine::search {
namespace {

// Renders threads the way RFC 5256 writes them: "(3 6 (4 23)(44 7 96))".
void render_chain(const std::vector<ThreadEntry>& e, size_t& i, std::string& out) {
  bool space = false;
  for (;;) {
    const ThreadEntry& n = e.at(i++);
    if (n.seq != 0) {
      out += (space ? " " : "") + std::to_string(n.seq);
      space = true;
    }
    if (n.children == 1) {
      continue;
    }
    if (n.children > 1) {
      out += space ? " " : "";
      for (uint32_t k = 0; k < n.children; ++k) {
        out += '(';
        render_chain(e, i, out);
        out += ')';
      }
    }
    return;
  }
}

std::string render(const std::vector<ThreadEntry>& entries) {
  std::string out;
  size_t i = 0;
  while (i < entries.size()) {
    out += '(';
    render_chain(entries, i, out);
    out += ')';
  }
  return out;
}

struct Msg {
  uint32_t seq;
  int64_t date;
  std::string subject;
  std::string id;
  std::vector<std::string> refs;
};

std::vector<ThreadMessage> build(const std::vector<Msg>& msgs) {
  std::vector<ThreadMessage> out;
  for (const Msg& m : msgs) {
    mime::CacheRecord r;
    r.sent_date = mime::DateTime{m.date, 0};
    r.subject = m.subject;
    r.message_id = m.id;
    r.references = m.refs;
    out.push_back(thread_message(MessageFacts{m.seq, 0, 0, std::nullopt}, &r));
  }
  return out;
}

std::string references(const std::vector<Msg>& msgs) {
  return render(thread_references(build(msgs)));
}
std::string ordered_subject(const std::vector<Msg>& msgs) {
  return render(thread_ordered_subject(build(msgs)));
}

// Messages 166-208 of RFC 5256 §4's examples. The sent dates follow
// kDateOrder; subjects and references give both example answers.
std::vector<Msg> rfc_messages() {
  const uint32_t kDateOrder[] = {166, 167, 168, 169, 172, 170, 171, 173, 174, 175, 176,
                                 178, 181, 180, 179, 177, 183, 182, 188, 184, 185, 186,
                                 187, 189, 190, 191, 192, 193, 194, 195, 196, 197, 198,
                                 199, 200, 202, 201, 203, 204, 205, 206, 207, 208};
  std::map<uint32_t, int64_t> date;
  for (size_t i = 0; i < std::size(kDateOrder); ++i) {
    date[kDateOrder[i]] = 1000 + static_cast<int64_t>(i) * 60;
  }
  std::map<uint32_t, Msg> m;
  for (uint32_t seq = 166; seq <= 208; ++seq) {
    m[seq] = Msg{seq,
                 date[seq],
                 "Topic " + std::to_string(seq),
                 "<" + std::to_string(seq) + "@example.org>",
                 {}};
  }
  auto id = [](uint32_t seq) { return "<" + std::to_string(seq) + "@example.org>"; };
  // 170 and 179: replies to a message that is not there.
  m[170].refs = {"<gone-170@example.org>"};
  m[179].refs = {"<gone-170@example.org>"};
  // 174-181: one subject, no references, none a reply.
  for (uint32_t s : {174, 175, 176, 178, 180, 181}) {
    m[s].subject = "Meeting";
  }
  // 177-189: one subject (in several spellings), replies to a missing
  // message and to each other.
  for (uint32_t s : {177, 182, 183, 184, 185, 186, 187, 188, 189}) {
    m[s].subject = "Re: Budget";
  }
  m[183].subject = "[team] Fwd: budget";
  m[187].subject = "BUDGET (fwd)";
  for (uint32_t s : {177, 182, 183, 185, 187, 188}) {
    m[s].refs = {"<gone-177@example.org>"};
  }
  m[184].refs = m[189].refs = {"<gone-177@example.org>", id(188)};
  m[186].refs = {"<gone-177@example.org>", id(185)};
  // 194/195 (one subject) reply to a missing message; 196-198 (another
  // subject): 196 replies to 195, 198 to 197.
  m[194].subject = m[195].subject = "Lunch";
  m[194].refs = m[195].refs = {"<gone-194@example.org>"};
  m[196].subject = m[197].subject = "Re: Dinner";
  m[198].subject = "Dinner";
  m[196].refs = {"<gone-194@example.org>", id(195)};
  m[198].refs = {id(197)};
  // 202 answers 200 by its subject alone.
  m[200].subject = "Party";
  m[202].subject = "Re: party";
  // 205 <- 206 <- 207, where 206 and 207 share a subject 205 does not.
  m[206].subject = "Trip";
  m[207].subject = "Re: Trip";
  m[206].refs = {id(205)};
  m[207].refs = {id(205), id(206)};
  std::vector<Msg> out;
  for (auto& [seq, msg] : m) {
    out.push_back(msg);
  }
  return out;
}

TEST(Thread, Rfc5256OrderedSubjectExample) {
  EXPECT_EQ(ordered_subject(rfc_messages()),
            "(166)(167)(168)(169)(172)(170)(171)(173)(174 (175)(176)(178)(181)(180))(179)(177 "
            "(183)(182)(188)(184)(185)(186)(187)(189))(190)(191)(192)(193)(194 195)(196 "
            "(197)(198))(199)(200 202)(201)(203)(204)(205)(206 207)(208)");
}

TEST(Thread, Rfc5256ReferencesExample) {
  EXPECT_EQ(references(rfc_messages()),
            "(166)(167)(168)(169)(172)((170)(179))(171)(173)((174)(175)(176)(178)(181)(180))"
            "((177)(183)(182)(188 (184)(189))(185 186)(187))(190)(191)(192)(193)((194)(195 196))"
            "(197 198)(199)(200 202)(201)(203)(204)(205 206 207)(208)");
}

TEST(Thread, Empty) {
  EXPECT_EQ(references({}), "");
  EXPECT_EQ(ordered_subject({}), "");
}

TEST(Thread, OrderedSubjectTiesAndEmptySubjects) {
  // Equal dates: sequence order. Empty subjects form one thread too.
  EXPECT_EQ(ordered_subject({{1, 50, "b", "", {}},
                             {2, 10, "", "", {}},
                             {3, 50, "Re: B", "", {}},
                             {4, 5, "", "", {}},
                             {5, 50, "a", "", {}}}),
            "(4 2)(1 3)(5)");
}

TEST(Thread, MissingParentsCollapse) {
  // A chain of missing messages above one message leaves just the message;
  // two messages under a missing one keep a dummy at the top.
  EXPECT_EQ(references({{1, 10, "x", "<1>", {"<a>", "<b>", "<c>"}},
                        {2, 20, "y", "<2>", {"<p>"}},
                        {3, 30, "z", "<3>", {"<p>"}}}),
            "(1)((2)(3))");
  // A missing message between two present ones: the child moves up.
  EXPECT_EQ(references({{1, 10, "x", "<1>", {}}, {2, 20, "y", "<2>", {"<1>", "<gone>"}}}), "(1 2)");
}

TEST(Thread, LoopsInReferences) {
  // 1 says 2 is its parent, 2 says 1 is: the first link stands.
  EXPECT_EQ(references({{1, 10, "x", "<1>", {"<2>"}}, {2, 20, "y", "<2>", {"<1>"}}}), "(2 1)");
  // A message that lists itself, and a References line that loops.
  EXPECT_EQ(
      references({{1, 10, "x", "<1>", {"<1>"}}, {2, 20, "y", "<2>", {"<a>", "<b>", "<a>", "<2>"}}}),
      "(1)(2)");
  // Loops never hang or drop messages: every message is in the answer once.
  std::vector<Msg> msgs;
  for (uint32_t i = 1; i <= 50; ++i) {
    Msg m{i, static_cast<int64_t>(i), "s" + std::to_string(i), "<" + std::to_string(i) + ">", {}};
    for (uint32_t k = 0; k < 4; ++k) {
      m.refs.push_back("<" + std::to_string((i * 7 + k * 13) % 50 + 1) + ">");
    }
    msgs.push_back(m);
  }
  std::vector<ThreadEntry> out = thread_references(build(msgs));
  std::vector<int> seen(51, 0);
  for (const ThreadEntry& e : out) {
    if (e.seq != 0) {
      ++seen.at(e.seq);
    }
  }
  for (uint32_t i = 1; i <= 50; ++i) {
    EXPECT_EQ(seen[i], 1) << i;
  }
}

TEST(Thread, DuplicateMessageIds) {
  // The first message keeps the id; the second is threaded on its own
  // references; replies go to the first.
  EXPECT_EQ(references({{1, 10, "a", "<x>", {}},
                        {2, 20, "b", "<x>", {"<p>"}},
                        {3, 30, "c", "<p>", {}},
                        {4, 40, "d", "<y>", {"<x>"}}}),
            "(1 4)(3 2)");
}

TEST(Thread, LaterReferencesFixTruncatedOnes) {
  // 3's References (a, 2) make 2 a child of a; 2's own References then
  // re-parent it under 1 (step 1.B). A message with no references has no
  // parent.
  EXPECT_EQ(references({{1, 10, "p", "<1>", {}},
                        {3, 30, "r", "<3>", {"<a>", "<2>"}},
                        {2, 20, "q", "<2>", {"<1>"}}}),
            "(1 2 3)");
  EXPECT_EQ(references({{1, 10, "p", "<1>", {"<a>", "<2>"}}, {2, 20, "q", "<2>", {}}}), "(2 1)");
}

TEST(Thread, SubjectMerging) {
  // A reply joins the thread of the original; two originals with one
  // subject go under a dummy; a dummy thread takes in messages.
  EXPECT_EQ(references({{1, 10, "Re: hi", "<1>", {}}, {2, 20, "hi", "<2>", {}}}), "(2 1)");
  EXPECT_EQ(references({{1, 10, "hi", "<1>", {}}, {2, 20, "Re: hi", "<2>", {}}}), "(1 2)");
  EXPECT_EQ(references({{1, 10, "hi", "<1>", {}}, {2, 20, "HI", "<2>", {}}}), "((1)(2))");
  EXPECT_EQ(references({{1, 10, "Re: hi", "<1>", {}}, {2, 20, "Fwd: hi", "<2>", {}}}), "((1)(2))");
  EXPECT_EQ(references({{1, 10, "hi", "<1>", {"<p>"}},
                        {2, 20, "hi", "<2>", {"<p>"}},
                        {3, 5, "Re: hi", "<3>", {}}}),
            "((3)(1)(2))");
  // Two dummies with one subject become one.
  EXPECT_EQ(references({{1, 10, "hi", "<1>", {"<p>"}},
                        {2, 20, "hi", "<2>", {"<p>"}},
                        {3, 30, "hi", "<3>", {"<q>"}},
                        {4, 40, "hi", "<4>", {"<q>"}}}),
            "((1)(2)(3)(4))");
  // Empty subjects are never merged.
  EXPECT_EQ(references({{1, 10, "", "<1>", {}}, {2, 20, "Re:", "<2>", {}}}), "(1)(2)");
}

TEST(Thread, SiblingsSortBySentDate) {
  EXPECT_EQ(references({{1, 50, "a", "<1>", {}},
                        {2, 40, "b", "<2>", {"<1>"}},
                        {3, 30, "c", "<3>", {"<1>"}},
                        {4, 30, "d", "<4>", {"<1>"}},
                        {5, 5, "e", "<5>", {}}}),
            "(5)(1 (3)(4)(2))");
}

TEST(Thread, DeepChainHasNoRecursion) {
  // 100,000 replies, each to the one before.
  std::vector<ThreadMessage> msgs;
  const uint32_t n = 100000;
  for (uint32_t i = 1; i <= n; ++i) {
    ThreadMessage m;
    m.seq = i;
    m.sent_date = i;
    m.subject = "S";
    m.message_id = "<" + std::to_string(i) + ">";
    if (i > 1) {
      m.references = {"<" + std::to_string(i - 1) + ">"};
    }
    msgs.push_back(std::move(m));
  }
  std::vector<ThreadEntry> out = thread_references(msgs);
  ASSERT_EQ(out.size(), n);
  for (uint32_t i = 0; i < n; ++i) {
    EXPECT_EQ(out[i], (ThreadEntry{i + 1, i + 1 < n ? 1u : 0u}));
  }
  out = thread_ordered_subject(std::move(msgs));
  ASSERT_EQ(out.size(), n);
  EXPECT_EQ(out[0], (ThreadEntry{1, n - 1}));
}

}  // namespace
}  // namespace peregrine::search
