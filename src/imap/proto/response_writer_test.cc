#include "imap/proto/response_writer.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace peregrine::imap {
namespace {

TEST(ResponseWriter, StatusResponses) {
  std::string out;
  write_tagged(out, "a1", ResponseStatus::kOk, Code::kReadWrite, "SELECT completed");
  write_tagged(out, "a2", ResponseStatus::kNo, Code::kTryCreate, "Mailbox doesn't exist");
  write_tagged(out, "a3", ResponseStatus::kBad, "FETCH: unknown item FOO");
  write_untagged(out, ResponseStatus::kOk, ResponseCode::uid_next(4392), "Predicted next UID");
  write_untagged(out, ResponseStatus::kBye, "Logging out");
  write_untagged(out, ResponseStatus::kPreauth, "Logged in as demo");
  write_untagged(out, ResponseStatus::kNo, Code::kAlert, "Disk almost full");
  write_tagged(out, "a4", ResponseStatus::kOk, "");
  EXPECT_EQ(out,
            "a1 OK [READ-WRITE] SELECT completed\r\n"
            "a2 NO [TRYCREATE] Mailbox doesn't exist\r\n"
            "a3 BAD FETCH: unknown item FOO\r\n"
            "* OK [UIDNEXT 4392] Predicted next UID\r\n"
            "* BYE Logging out\r\n"
            "* PREAUTH Logged in as demo\r\n"
            "* NO [ALERT] Disk almost full\r\n"
            "a4 OK\r\n");
}

TEST(ResponseWriter, TextCannotBreakTheLine) {
  std::string out;
  write_tagged(out, "a1", ResponseStatus::kBad, std::string_view("x\r\na2 OK\0y", 10));
  EXPECT_EQ(out, "a1 BAD x  a2 OK y\r\n");
  out.clear();
  write_continuation(out, "go\r\nahead");
  EXPECT_EQ(out, "+ go  ahead\r\n");
}

TEST(ResponseWriter, Continuation) {
  std::string out;
  write_continuation(out, "Ready for literal data");
  write_continuation(out, "");
  write_continuation(out, "dGVzdA==");
  EXPECT_EQ(out, "+ Ready for literal data\r\n+ \r\n+ dGVzdA==\r\n");
}

TEST(ResponseCodes, ExactText) {
  const std::vector<std::string> flags = {"\\Answered", "\\Seen", "$Junk"};
  const std::vector<std::string> none;
  const std::vector<std::string> charsets = {"UTF-8", "US-ASCII"};
  const std::vector<std::string> caps = {"IMAP4rev1", "IDLE", "AUTH=PLAIN"};
  struct Case {
    ResponseCode code;
    std::string text;
  };
  const std::vector<Case> cases = {
      {ResponseCode::uid_next(4392), "UIDNEXT 4392"},
      {ResponseCode::uid_validity(3857529045u), "UIDVALIDITY 3857529045"},
      {ResponseCode::unseen(12), "UNSEEN 12"},
      {ResponseCode::highest_modseq(715194045007ull), "HIGHESTMODSEQ 715194045007"},
      {ResponseCode::permanent_flags(flags, true), "PERMANENTFLAGS (\\Answered \\Seen $Junk \\*)"},
      {ResponseCode::permanent_flags(flags, false), "PERMANENTFLAGS (\\Answered \\Seen $Junk)"},
      {ResponseCode::permanent_flags(none, false), "PERMANENTFLAGS ()"},
      {ResponseCode::permanent_flags(none, true), "PERMANENTFLAGS (\\*)"},
      {ResponseCode::append_uid(38505, *parse_sequence_set("3955")), "APPENDUID 38505 3955"},
      {ResponseCode::append_uid(38505, *parse_sequence_set("3955:3957")),
       "APPENDUID 38505 3955:3957"},
      {ResponseCode::copy_uid(38505, *parse_sequence_set("304,319:320"),
                              *parse_sequence_set("3956:3958")),
       "COPYUID 38505 304,319:320 3956:3958"},
      {ResponseCode::bad_charset(charsets), "BADCHARSET (UTF-8 US-ASCII)"},
      {ResponseCode::bad_charset(none), "BADCHARSET"},
      {ResponseCode::capability(caps), "CAPABILITY IMAP4rev1 IDLE AUTH=PLAIN"},
      {ResponseCode::modified(*parse_sequence_set("7,9")), "MODIFIED 7,9"},
      {Code::kAlert, "ALERT"},
      {Code::kAlreadyExists, "ALREADYEXISTS"},
      {Code::kAuthenticationFailed, "AUTHENTICATIONFAILED"},
      {Code::kAuthorizationFailed, "AUTHORIZATIONFAILED"},
      {Code::kCannot, "CANNOT"},
      {Code::kClientBug, "CLIENTBUG"},
      {Code::kClosed, "CLOSED"},
      {Code::kContactAdmin, "CONTACTADMIN"},
      {Code::kCorruption, "CORRUPTION"},
      {Code::kExpired, "EXPIRED"},
      {Code::kExpungeIssued, "EXPUNGEISSUED"},
      {Code::kHasChildren, "HASCHILDREN"},
      {Code::kInUse, "INUSE"},
      {Code::kLimit, "LIMIT"},
      {Code::kNoModSeq, "NOMODSEQ"},
      {Code::kNonExistent, "NONEXISTENT"},
      {Code::kNoPerm, "NOPERM"},
      {Code::kNotSaved, "NOTSAVED"},
      {Code::kOverQuota, "OVERQUOTA"},
      {Code::kParse, "PARSE"},
      {Code::kPrivacyRequired, "PRIVACYREQUIRED"},
      {Code::kReadOnly, "READ-ONLY"},
      {Code::kReadWrite, "READ-WRITE"},
      {Code::kServerBug, "SERVERBUG"},
      {Code::kTooBig, "TOOBIG"},
      {Code::kTryCreate, "TRYCREATE"},
      {Code::kUidNotSticky, "UIDNOTSTICKY"},
      {Code::kUnavailable, "UNAVAILABLE"},
      {Code::kUnknownCte, "UNKNOWN-CTE"},
  };
  for (const Case& c : cases) {
    EXPECT_EQ(c.code.text(), c.text);
  }
}

TEST(ResponseWriter, MailboxData) {
  std::string out;
  write_exists(out, 23);
  write_recent(out, 0);
  write_expunge(out, 44);
  write_vanished(out, *parse_sequence_set("41,43:116"), true);
  write_vanished(out, *parse_sequence_set("405"), false);
  const std::vector<std::string> flags = {"\\Answered", "\\Flagged", "\\Deleted", "\\Seen",
                                          "\\Draft"};
  write_flags(out, flags);
  const std::vector<std::string> caps = {"IMAP4rev1", "STARTTLS", "LOGINDISABLED"};
  write_capability(out, caps);
  const std::vector<std::string> enabled = {"CONDSTORE"};
  write_enabled(out, enabled);
  write_enabled(out, {});
  EXPECT_EQ(out,
            "* 23 EXISTS\r\n"
            "* 0 RECENT\r\n"
            "* 44 EXPUNGE\r\n"
            "* VANISHED (EARLIER) 41,43:116\r\n"
            "* VANISHED 405\r\n"
            "* FLAGS (\\Answered \\Flagged \\Deleted \\Seen \\Draft)\r\n"
            "* CAPABILITY IMAP4rev1 STARTTLS LOGINDISABLED\r\n"
            "* ENABLED CONDSTORE\r\n"
            "* ENABLED\r\n");
}

TEST(ResponseWriter, List) {
  std::string out;
  write_list(out, ListEntry{{"\\HasNoChildren"}, '/', "INBOX", {}, {}});
  write_list(out, ListEntry{{"\\Noselect", "\\HasChildren"}, '.', "Sent Items", {}, {}});
  write_list(out, ListEntry{{}, std::nullopt, "foo", {}, {}});
  write_list(out, ListEntry{{"\\Sent"}, '\\', "NIL", {}, {}});
  write_list(out, ListEntry{{}, '"', "", {}, {}});
  write_list(out, ListEntry{{"\\NonExistent"}, '/', "Foo", {"SUBSCRIBED"}, {}});
  write_list(out, ListEntry{{}, '/', "New", {}, std::string("Old")});
  write_list(out, ListEntry{{}, '/', "&AOQ-", {"SUBSCRIBED"}, std::string("a b")});
  write_lsub(out, ListEntry{{}, '/', "news/comp", {}, {}});
  write_list(out, ListEntry{{}, '/', "\xc3\xa4", {}, {}});
  EXPECT_EQ(out,
            "* LIST (\\HasNoChildren) \"/\" INBOX\r\n"
            "* LIST (\\Noselect \\HasChildren) \".\" \"Sent Items\"\r\n"
            "* LIST () NIL foo\r\n"
            "* LIST (\\Sent) \"\\\\\" \"NIL\"\r\n"
            "* LIST () \"\\\"\" \"\"\r\n"
            "* LIST (\\NonExistent) \"/\" Foo (\"CHILDINFO\" (\"SUBSCRIBED\"))\r\n"
            "* LIST () \"/\" New (\"OLDNAME\" (Old))\r\n"
            "* LIST () \"/\" &AOQ- (\"CHILDINFO\" (\"SUBSCRIBED\") \"OLDNAME\" (\"a b\"))\r\n"
            "* LSUB () \"/\" news/comp\r\n"
            "* LIST () \"/\" {2}\r\n\xc3\xa4\r\n");
}

TEST(ResponseWriter, Status) {
  std::string out;
  const std::vector<StatusValue> values = {{StatusItem::kMessages, 231},
                                           {StatusItem::kUidNext, 44292},
                                           {StatusItem::kHighestModSeq, 7011231777ull},
                                           {StatusItem::kSize, 0}};
  write_status(out, "blurdybloop", values);
  write_status(out, "a b", {});
  EXPECT_EQ(out,
            "* STATUS blurdybloop (MESSAGES 231 UIDNEXT 44292 HIGHESTMODSEQ 7011231777 SIZE 0)\r\n"
            "* STATUS \"a b\" ()\r\n");
}

TEST(ResponseWriter, SearchAndSort) {
  std::string out;
  const std::vector<uint32_t> hits = {2, 3, 6};
  write_search(out, hits);
  write_search(out, {});
  write_search(out, hits, 917162500);
  write_sort(out, hits);
  EXPECT_EQ(out,
            "* SEARCH 2 3 6\r\n"
            "* SEARCH\r\n"
            "* SEARCH 2 3 6 (MODSEQ 917162500)\r\n"
            "* SORT 2 3 6\r\n");
  // Every width of a number, up to the largest (written in place).
  out.clear();
  write_search(out,
               std::vector<uint32_t>{1, 10, 99, 100, 65535, 999999999, 1000000000, 4294967295u});
  EXPECT_EQ(out, "* SEARCH 1 10 99 100 65535 999999999 1000000000 4294967295\r\n");
  std::vector<uint32_t> many(100000);
  std::string expected = "* SEARCH";
  for (uint32_t i = 0; i < many.size(); ++i) {
    many[i] = 4294967295u - i * 40000u;
    expected += " " + std::to_string(many[i]);
  }
  out = "x";
  write_search(out, many);
  EXPECT_EQ(out, "x" + expected + "\r\n");
}

TEST(ResponseWriter, ESearch) {
  std::string out;
  ESearchResponse r;
  r.tag = "a1";
  r.uid = true;
  r.min = 2;
  r.max = 9;
  r.count = 3;
  r.all = *parse_sequence_set("2,5,9");
  r.modseq = 12;
  write_esearch(out, r);
  ESearchResponse empty;
  empty.tag = "a2";
  empty.count = 0;
  empty.all = SequenceSet{};
  write_esearch(out, empty);
  write_esearch(out, ESearchResponse{});
  EXPECT_EQ(out,
            "* ESEARCH (TAG \"a1\") UID MIN 2 MAX 9 COUNT 3 ALL 2,5,9 MODSEQ 12\r\n"
            "* ESEARCH (TAG \"a2\") COUNT 0\r\n"
            "* ESEARCH\r\n");
}

ThreadNode leaf(uint32_t id) { return ThreadNode{id, {}}; }
ThreadNode node(uint32_t id, std::vector<ThreadNode> children) {
  return ThreadNode{id, std::move(children)};
}

TEST(ResponseWriter, Thread) {
  // RFC 5256 §4's example: (2)(3 6 (4 23)(44 7 96)).
  std::vector<ThreadNode> threads = {
      leaf(2),
      node(3, {node(6, {node(4, {leaf(23)}), node(44, {node(7, {leaf(96)})})})}),
  };
  std::string out;
  write_thread(out, threads);
  EXPECT_EQ(out, "* THREAD (2)(3 6 (4 23)(44 7 96))\r\n");
  // A missing parent with two children, and a branch right under the root.
  std::vector<ThreadNode> more = {node(0, {leaf(3), leaf(5)}),
                                  node(1, {leaf(2), node(3, {leaf(4), leaf(5)})})};
  out.clear();
  write_thread(out, more);
  EXPECT_EQ(out, "* THREAD ((3)(5))(1 (2)(3 (4)(5)))\r\n");
  out.clear();
  write_thread(out, std::span<const ThreadNode>{});
  EXPECT_EQ(out, "* THREAD\r\n");
}

TEST(ResponseWriter, ThreadFlat) {
  // The pre-order form of the same example, a dummy at the top, and counts
  // that promise more nodes than follow (cut short, never read past).
  const std::vector<ThreadListNode> rfc = {{2, 0},  {3, 1},  {6, 2}, {4, 1},
                                           {23, 0}, {44, 1}, {7, 1}, {96, 0}};
  std::string out;
  write_thread(out, rfc);
  EXPECT_EQ(out, "* THREAD (2)(3 6 (4 23)(44 7 96))\r\n");
  out.clear();
  write_thread(out, std::vector<ThreadListNode>{{0, 2}, {3, 0}, {5, 0}, {1, 0}});
  EXPECT_EQ(out, "* THREAD ((3)(5))(1)\r\n");
  out.clear();
  write_thread(out, std::vector<ThreadListNode>{{1, 3}, {2, 0}, {3, 1}});
  EXPECT_EQ(out, "* THREAD (1 (2)(3))\r\n");
  out.clear();
  write_thread(out, std::vector<ThreadListNode>{{1, 1}});
  EXPECT_EQ(out, "* THREAD (1)\r\n");
}

TEST(ResponseWriter, DeepThreadDoesNotRecurse) {
  // 100,000 nested branches: a recursive writer would overflow the stack.
  ThreadNode root = leaf(1);
  ThreadNode* cur = &root;
  for (uint32_t i = 2; i < 100000; ++i) {
    cur->children = {leaf(i), leaf(i + 1000000)};
    cur = &cur->children[0];
  }
  std::string out;
  write_thread(out, std::span<const ThreadNode>(&root, 1));
  EXPECT_EQ(out.substr(0, 24), "* THREAD (1 (2 (3 (4 (5 ");
  EXPECT_EQ(out.substr(out.size() - 12), "(1000002))\r\n");
  EXPECT_NE(out.find("(99999)(1099999))"), std::string::npos);
  // The destructor of `root` is recursive too; unwind it iteratively.
  std::vector<ThreadNode> pending;
  pending.push_back(std::move(root));
  while (!pending.empty()) {
    ThreadNode n = std::move(pending.back());
    pending.pop_back();
    for (ThreadNode& c : n.children) {
      pending.push_back(std::move(c));
    }
    n.children.clear();
  }
}

TEST(ResponseWriter, NamespaceAndId) {
  std::string out;
  const std::vector<Namespace> personal = {{"", '/'}};
  const std::vector<Namespace> shared = {{"#shared/", '/'}, {"#public.", '.'}};
  write_namespace(out, personal, {}, {});
  write_namespace(out, personal, {}, shared);
  write_id(out, std::nullopt);
  write_id(out, std::vector<IdField>{{"name", "Peregrine"}, {"version", std::nullopt}});
  EXPECT_EQ(out,
            "* NAMESPACE ((\"\" \"/\")) NIL NIL\r\n"
            "* NAMESPACE ((\"\" \"/\")) NIL ((\"#shared/\" \"/\")(\"#public.\" \".\"))\r\n"
            "* ID NIL\r\n"
            "* ID (\"name\" \"Peregrine\" \"version\" NIL)\r\n");
}

}  // namespace
}  // namespace peregrine::imap
