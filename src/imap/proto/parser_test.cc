#include "imap/proto/parser.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "imap/proto/parser_test_util.h"

namespace peregrine::imap {
namespace {

using testing::WireParse;
using K = SearchKeyKind;

Command cmd(CommandId id, CommandArgs args, bool uid = false, std::string tag = "a1") {
  Command c;
  c.tag = std::move(tag);
  c.id = id;
  c.uid = uid;
  c.args = std::move(args);
  return c;
}

SequenceSet set(std::string_view text) { return *parse_sequence_set(text); }

SearchKey key(K kind) {
  SearchKey k;
  k.kind = kind;
  return k;
}
SearchKey str(K kind, std::string text) {
  SearchKey k = key(kind);
  k.text = std::move(text);
  return k;
}
SearchKey header(std::string field, std::string text) {
  SearchKey k = key(K::kHeader);
  k.field = std::move(field);
  k.text = std::move(text);
  return k;
}
SearchKey date(K kind, int y, int m, int d) {
  SearchKey k = key(kind);
  k.date = Date{y, m, d};
  return k;
}
SearchKey num(K kind, uint64_t n) {
  SearchKey k = key(kind);
  k.number = n;
  return k;
}
SearchKey seq(K kind, std::string_view s) {
  SearchKey k = key(kind);
  k.set = set(s);
  return k;
}
SearchKey node(K kind, std::vector<SearchKey> children) {
  SearchKey k = key(kind);
  k.children = std::move(children);
  return k;
}

FetchItem fi(FetchAttr attr) {
  FetchItem i;
  i.attr = attr;
  return i;
}
FetchItem section(FetchAttr attr, std::vector<uint32_t> part,
                  mime::SectionText text = mime::SectionText::kNone, bool peek = false,
                  std::optional<FetchPartial> partial = std::nullopt,
                  std::vector<std::string> fields = {}) {
  FetchItem i = fi(attr);
  i.section.part = std::move(part);
  i.section.text = text;
  i.section.fields = std::move(fields);
  i.peek = peek;
  i.partial = partial;
  return i;
}

ExtValue ev(std::string text) {
  ExtValue v;
  v.text = std::move(text);
  return v;
}
ExtValue evl(std::vector<ExtValue> items) {
  ExtValue v;
  v.is_list = true;
  v.items = std::move(items);
  return v;
}
ExtParam param(std::string name, std::optional<ExtValue> value = std::nullopt) {
  return ExtParam{std::move(name), std::move(value)};
}

Fetch fetch(std::string_view s, std::vector<FetchItem> items) {
  Fetch f;
  f.set = set(s);
  f.items = std::move(items);
  return f;
}

Store store(std::string_view s, StoreMode mode, bool silent, std::vector<std::string> flags,
            std::optional<uint64_t> unchanged = std::nullopt) {
  Store st;
  st.set = set(s);
  st.mode = mode;
  st.silent = silent;
  st.flags = std::move(flags);
  st.unchanged_since = unchanged;
  return st;
}

List list(std::string ref, std::vector<std::string> patterns, bool extended = false,
          std::vector<ExtParam> selection = {}, std::vector<ExtParam> ret = {}) {
  List l;
  l.reference = std::move(ref);
  l.patterns = std::move(patterns);
  l.extended = extended;
  l.selection = std::move(selection);
  l.return_options = std::move(ret);
  return l;
}

Search search(SearchKey k, std::optional<std::string> charset = std::nullopt,
              std::optional<SearchReturn> ret = std::nullopt) {
  Search s;
  s.key = std::move(k);
  s.charset = std::move(charset);
  s.result_options = ret;
  return s;
}

struct Case {
  std::string wire;
  Command expected;
};

// Wire -> typed command, for every command. Tags, keywords and names are
// case-insensitive; strings keep their bytes.
std::vector<Case> good_cases() {
  using namespace std::string_literals;
  using ST = mime::SectionText;
  using FA = FetchAttr;
  const SearchReturn all_only{false, false, true, false, false};
  return {
      // Any state.
      {"a1 CAPABILITY", cmd(CommandId::kCapability, NoArgs{})},
      {"a1 capability", cmd(CommandId::kCapability, NoArgs{})},
      {"a1 NOOP", cmd(CommandId::kNoop, NoArgs{})},
      {"a1 NOOP  ", cmd(CommandId::kNoop, NoArgs{})},
      {"a1 LOGOUT", cmd(CommandId::kLogout, NoArgs{})},
      {"]tag] NOOP", cmd(CommandId::kNoop, NoArgs{}, false, "]tag]")},
      // Not authenticated.
      {"a1 STARTTLS", cmd(CommandId::kStartTls, NoArgs{})},
      {"a1 AUTHENTICATE PLAIN", cmd(CommandId::kAuthenticate, Authenticate{"PLAIN", {}})},
      {"a1 authenticate plain AGRlbW8AZGVtbw==",
       cmd(CommandId::kAuthenticate, Authenticate{"PLAIN", "AGRlbW8AZGVtbw=="})},
      {"a1 AUTHENTICATE PLAIN =", cmd(CommandId::kAuthenticate, Authenticate{"PLAIN", "="})},
      {"a1 AUTHENTICATE SCRAM-SHA-256",
       cmd(CommandId::kAuthenticate, Authenticate{"SCRAM-SHA-256", {}})},
      {"a1 LOGIN demo secret", cmd(CommandId::kLogin, Login{"demo", "secret"})},
      {"a1 LOGIN \"demo user\" \"p\\\"w\\\\d\"",
       cmd(CommandId::kLogin, Login{"demo user", "p\"w\\d"})},
      {"a1 LOGIN {4}\r\ndemo {6+}\r\nse cr\n", cmd(CommandId::kLogin, Login{"demo", "se cr\n"})},
      {"a1 LOGIN \"\" \"\"", cmd(CommandId::kLogin, Login{"", ""})},
      {"a1 LOGIN d]mo p]ss", cmd(CommandId::kLogin, Login{"d]mo", "p]ss"})},
      {"a1 LOGIN \"\xc3\xa4\" x", cmd(CommandId::kLogin, Login{"\xc3\xa4", "x"})},
      // Authenticated.
      {"a1 SELECT INBOX", cmd(CommandId::kSelect, Select{"INBOX", {}})},
      {"a1 SELECT inbox", cmd(CommandId::kSelect, Select{"INBOX", {}})},
      {"a1 select \"Sent Items\"", cmd(CommandId::kSelect, Select{"Sent Items", {}})},
      {"a1 SELECT inbox/sub", cmd(CommandId::kSelect, Select{"inbox/sub", {}})},
      {"a1 SELECT INBOX (CONDSTORE)",
       cmd(CommandId::kSelect, Select{"INBOX", {param("CONDSTORE")}})},
      {"a1 SELECT INBOX (QRESYNC (67890007 20050715194045000 41,43:211,214:541))",
       cmd(CommandId::kSelect,
           Select{"INBOX",
                  {param("QRESYNC", evl({ev("67890007"), ev("20050715194045000"),
                                         ev("41,43:211,214:541")}))}})},
      {"a1 EXAMINE Archive (condstore x-foo 5)",
       cmd(CommandId::kExamine, Select{"Archive", {param("CONDSTORE"), param("X-FOO", ev("5"))}})},
      {"a1 CREATE Projects/2024", cmd(CommandId::kCreate, Create{"Projects/2024", {}})},
      {"a1 CREATE Drafts2 (USE (\\Drafts))",
       cmd(CommandId::kCreate, Create{"Drafts2", {param("USE", evl({ev("\\Drafts")}))}})},
      {"a1 DELETE old", cmd(CommandId::kDelete, MailboxArg{"old"})},
      {"a1 RENAME old new", cmd(CommandId::kRename, Rename{"old", "new"})},
      {"a1 RENAME Inbox \"Old Inbox\"", cmd(CommandId::kRename, Rename{"INBOX", "Old Inbox"})},
      {"a1 SUBSCRIBE news", cmd(CommandId::kSubscribe, MailboxArg{"news"})},
      {"a1 UNSUBSCRIBE news", cmd(CommandId::kUnsubscribe, MailboxArg{"news"})},
      {"a1 SUBSCRIBE &AOQ-", cmd(CommandId::kSubscribe, MailboxArg{"&AOQ-"})},
      {"a1 LIST \"\" *", cmd(CommandId::kList, list("", {"*"}))},
      {"a1 LIST \"\" %", cmd(CommandId::kList, list("", {"%"}))},
      {"a1 LIST ~/Mail/ %/foo*", cmd(CommandId::kList, list("~/Mail/", {"%/foo*"}))},
      {"a1 LIST inbox \"a b\"", cmd(CommandId::kList, list("inbox", {"a b"}))},
      {"a1 LIST \"\" \"\"", cmd(CommandId::kList, list("", {""}))},
      {"a1 LIST (SUBSCRIBED RECURSIVEMATCH) \"\" *",
       cmd(CommandId::kList,
           list("", {"*"}, true, {param("SUBSCRIBED"), param("RECURSIVEMATCH")}))},
      {"a1 LIST () \"\" *", cmd(CommandId::kList, list("", {"*"}, true))},
      {"a1 LIST \"\" (INBOX Drafts \"Sent*\")",
       cmd(CommandId::kList, list("", {"INBOX", "Drafts", "Sent*"}, true))},
      {"a1 LIST \"\" * RETURN (CHILDREN SUBSCRIBED STATUS (MESSAGES UNSEEN) SPECIAL-USE)",
       cmd(CommandId::kList,
           list("", {"*"}, true, {},
                {param("CHILDREN"), param("SUBSCRIBED"),
                 param("STATUS", evl({ev("MESSAGES"), ev("UNSEEN")})), param("SPECIAL-USE")}))},
      {"a1 LIST \"\" * RETURN ()", cmd(CommandId::kList, list("", {"*"}, true))},
      {"a1 LSUB \"\" news.*", cmd(CommandId::kLsub, list("", {"news.*"}))},
      {"a1 STATUS INBOX (MESSAGES UIDNEXT)",
       cmd(CommandId::kStatus, Status{"INBOX", {StatusItem::kMessages, StatusItem::kUidNext}})},
      {"a1 STATUS Sent (messages recent uidnext uidvalidity unseen deleted size highestmodseq)",
       cmd(CommandId::kStatus,
           Status{"Sent",
                  {StatusItem::kMessages, StatusItem::kRecent, StatusItem::kUidNext,
                   StatusItem::kUidValidity, StatusItem::kUnseen, StatusItem::kDeleted,
                   StatusItem::kSize, StatusItem::kHighestModSeq}})},
      {"a1 APPEND INBOX {5}\r\nhello",
       cmd(CommandId::kAppend, Append{"INBOX", {AppendMessage{{}, {}, "hello", false}}})},
      {"a1 APPEND Drafts (\\Seen \\draft $Label) {5+}\r\nhello",
       cmd(CommandId::kAppend,
           Append{"Drafts", {AppendMessage{{"\\Seen", "\\Draft", "$Label"}, {}, "hello", false}}})},
      {"a1 APPEND INBOX () \"17-Jul-1996 02:44:25 -0700\" {2}\r\nhi",
       cmd(CommandId::kAppend,
           Append{"INBOX", {AppendMessage{{}, mime::DateTime{837596665, -420}, "hi", false}}})},
      {"a1 APPEND INBOX \" 7-Jul-1996 02:44:25 +0000\" ~{3}\r\na\0b"s,
       cmd(CommandId::kAppend,
           Append{"INBOX",
                  {AppendMessage{
                      {}, mime::DateTime{836707465, 0}, std::string_view("a\0b", 3), true}}})},
      {"a1 APPEND INBOX {1+}\r\nx (\\Flagged) {1+}\r\ny {0+}\r\n",
       cmd(CommandId::kAppend,
           Append{"INBOX",
                  {AppendMessage{{}, {}, "x", false}, AppendMessage{{"\\Flagged"}, {}, "y", false},
                   AppendMessage{{}, {}, "", false}}})},
      {"a1 ENABLE CONDSTORE utf8=accept",
       cmd(CommandId::kEnable, Enable{{"CONDSTORE", "UTF8=ACCEPT"}})},
      {"a1 ID NIL", cmd(CommandId::kId, Id{})},
      {"a1 ID ()", cmd(CommandId::kId, Id{std::vector<IdField>{}})},
      {"a1 ID (\"name\" \"Thunderbird\" \"version\" NIL)",
       cmd(CommandId::kId, Id{std::vector<IdField>{{"name", "Thunderbird"}, {"version", {}}}})},
      {"a1 NAMESPACE", cmd(CommandId::kNamespace, NoArgs{})},
      {"a1 IDLE", cmd(CommandId::kIdle, NoArgs{})},
      // Selected.
      {"a1 CHECK", cmd(CommandId::kCheck, NoArgs{})},
      {"a1 CLOSE", cmd(CommandId::kClose, NoArgs{})},
      {"a1 UNSELECT", cmd(CommandId::kUnselect, NoArgs{})},
      {"a1 EXPUNGE", cmd(CommandId::kExpunge, Expunge{})},
      {"a1 UID EXPUNGE 3000:3002,3004",
       cmd(CommandId::kExpunge, Expunge{set("3000:3002,3004")}, true)},
      {"a1 FETCH 1 FLAGS", cmd(CommandId::kFetch, fetch("1", {fi(FA::kFlags)}))},
      {"a1 FETCH 1:* ALL",
       cmd(CommandId::kFetch, fetch("1:*", {fi(FA::kFlags), fi(FA::kInternalDate),
                                            fi(FA::kRfc822Size), fi(FA::kEnvelope)}))},
      {"a1 FETCH 2 fast", cmd(CommandId::kFetch, fetch("2", {fi(FA::kFlags), fi(FA::kInternalDate),
                                                             fi(FA::kRfc822Size)}))},
      {"a1 FETCH 2 FULL",
       cmd(CommandId::kFetch, fetch("2", {fi(FA::kFlags), fi(FA::kInternalDate),
                                          fi(FA::kRfc822Size), fi(FA::kEnvelope), fi(FA::kBody)}))},
      {"a1 FETCH 1,3 (UID RFC822.SIZE FLAGS INTERNALDATE ENVELOPE BODY BODYSTRUCTURE MODSEQ)",
       cmd(CommandId::kFetch, fetch("1,3", {fi(FA::kUid), fi(FA::kRfc822Size), fi(FA::kFlags),
                                            fi(FA::kInternalDate), fi(FA::kEnvelope), fi(FA::kBody),
                                            fi(FA::kBodyStructure), fi(FA::kModSeq)}))},
      {"a1 FETCH 1 (RFC822 RFC822.HEADER RFC822.TEXT)",
       cmd(CommandId::kFetch,
           fetch("1", {fi(FA::kRfc822), fi(FA::kRfc822Header), fi(FA::kRfc822Text)}))},
      {"a1 FETCH 1 BODY[]", cmd(CommandId::kFetch, fetch("1", {section(FA::kBodySection, {})}))},
      {"a1 FETCH 1 (BODY.PEEK[HEADER] BODY[TEXT] BODY[1.2.MIME] body[3.header] BODY[2])",
       cmd(CommandId::kFetch, fetch("1", {section(FA::kBodySection, {}, ST::kHeader, true),
                                          section(FA::kBodySection, {}, ST::kText),
                                          section(FA::kBodySection, {1, 2}, ST::kMime),
                                          section(FA::kBodySection, {3}, ST::kHeader),
                                          section(FA::kBodySection, {2})}))},
      {"a1 FETCH 1 BODY.PEEK[HEADER.FIELDS (From To \"Subject\")]",
       cmd(CommandId::kFetch, fetch("1", {section(FA::kBodySection, {}, ST::kHeaderFields, true,
                                                  std::nullopt, {"From", "To", "Subject"})}))},
      {"a1 FETCH 1 BODY[1.HEADER.FIELDS.NOT (X-Spam)]<0.2048>",
       cmd(CommandId::kFetch, fetch("1", {section(FA::kBodySection, {1}, ST::kHeaderFieldsNot,
                                                  false, FetchPartial{0, 2048}, {"X-Spam"})}))},
      {"a1 FETCH 1 BODY[]<100.50>",
       cmd(CommandId::kFetch,
           fetch("1", {section(FA::kBodySection, {}, ST::kNone, false, FetchPartial{100, 50})}))},
      {"a1 FETCH 1 (BINARY[1] BINARY.PEEK[1.2]<0.10> BINARY.SIZE[2] BINARY[])",
       cmd(CommandId::kFetch,
           fetch("1", {section(FA::kBinary, {1}),
                       section(FA::kBinary, {1, 2}, ST::kNone, true, FetchPartial{0, 10}),
                       section(FA::kBinarySize, {2}), section(FA::kBinary, {})}))},
      {"a1 FETCH $ (FLAGS)", cmd(CommandId::kFetch, fetch("$", {fi(FA::kFlags)}))},
      [] {
        Fetch f = fetch("1:*", {fi(FA::kFlags)});
        f.changed_since = 12345;
        return Case{"a1 FETCH 1:* (FLAGS) (CHANGEDSINCE 12345)", cmd(CommandId::kFetch, f)};
      }(),
      [] {
        Fetch f = fetch("300:500", {fi(FA::kFlags)});
        f.changed_since = 0;
        f.vanished = true;
        return Case{"a1 UID FETCH 300:500 FLAGS (CHANGEDSINCE 0 VANISHED)",
                    cmd(CommandId::kFetch, f, true)};
      }(),
      {"a1 UID FETCH 4827313:4828442 FLAGS",
       cmd(CommandId::kFetch, fetch("4827313:4828442", {fi(FA::kFlags)}), true)},
      {"a1 STORE 2:4 +FLAGS (\\Deleted)",
       cmd(CommandId::kStore, store("2:4", StoreMode::kAdd, false, {"\\Deleted"}))},
      {"a1 STORE 1 -FLAGS.SILENT \\Seen $Junk",
       cmd(CommandId::kStore, store("1", StoreMode::kRemove, true, {"\\Seen", "$Junk"}))},
      {"a1 STORE 1 FLAGS ()", cmd(CommandId::kStore, store("1", StoreMode::kReplace, false, {}))},
      {"a1 STORE 1 flags.silent (\\SEEN \\flagged NonJunk)",
       cmd(CommandId::kStore,
           store("1", StoreMode::kReplace, true, {"\\Seen", "\\Flagged", "NonJunk"}))},
      {"a1 STORE 7 (UNCHANGEDSINCE 320162338) +FLAGS.SILENT (\\Deleted)",
       cmd(CommandId::kStore,
           store("7", StoreMode::kAdd, true, {"\\Deleted"}, uint64_t{320162338}))},
      {"a1 UID STORE 1:* +FLAGS \\Answered",
       cmd(CommandId::kStore, store("1:*", StoreMode::kAdd, false, {"\\Answered"}), true)},
      {"a1 COPY 2:4 MEETING", cmd(CommandId::kCopy, Copy{set("2:4"), "MEETING"})},
      {"a1 UID COPY 42 inbox", cmd(CommandId::kCopy, Copy{set("42"), "INBOX"}, true)},
      {"a1 MOVE 1,2 \"Trash\"", cmd(CommandId::kMove, Copy{set("1,2"), "Trash"})},
      {"a1 UID MOVE 42:69 foo", cmd(CommandId::kMove, Copy{set("42:69"), "foo"}, true)},
      // SEARCH.
      {"a1 SEARCH ALL", cmd(CommandId::kSearch, search(key(K::kAll)))},
      {"a1 SEARCH FLAGGED SINCE 1-Feb-1994 NOT FROM \"Smith\"",
       cmd(CommandId::kSearch, search(node(K::kAnd, {key(K::kFlagged), date(K::kSince, 1994, 2, 1),
                                                     node(K::kNot, {str(K::kFrom, "Smith")})})))},
      {"a1 SEARCH CHARSET UTF-8 TEXT {4}\r\n\xe2\x82\xac!",
       cmd(CommandId::kSearch, search(str(K::kText, "\xe2\x82\xac!"), "UTF-8"))},
      {"a1 SEARCH charset us-ascii SUBJECT hello",
       cmd(CommandId::kSearch, search(str(K::kSubject, "hello"), "US-ASCII"))},
      {"a1 UID SEARCH 1:100 UID 443:557",
       cmd(CommandId::kSearch,
           search(node(K::kAnd, {seq(K::kSequenceSet, "1:100"), seq(K::kUid, "443:557")})), true)},
      {"a1 SEARCH OR (FROM a TO b) (NOT SEEN)",
       cmd(CommandId::kSearch,
           search(node(K::kOr, {node(K::kAnd, {str(K::kFrom, "a"), str(K::kTo, "b")}),
                                node(K::kNot, {key(K::kSeen)})})))},
      {"a1 SEARCH OR OR SEEN DRAFT DELETED",
       cmd(CommandId::kSearch, search(node(K::kOr, {node(K::kOr, {key(K::kSeen), key(K::kDraft)}),
                                                    key(K::kDeleted)})))},
      {"a1 SEARCH ((SEEN))", cmd(CommandId::kSearch, search(key(K::kSeen)))},
      {"a1 SEARCH ( SEEN  DRAFT )",
       cmd(CommandId::kSearch, search(node(K::kAnd, {key(K::kSeen), key(K::kDraft)})))},
      {"a1 SEARCH HEADER Message-ID \"<x@y>\" HEADER X-Empty \"\"",
       cmd(CommandId::kSearch,
           search(node(K::kAnd, {header("Message-ID", "<x@y>"), header("X-Empty", "")})))},
      {"a1 SEARCH KEYWORD $Junk UNKEYWORD NonJunk",
       cmd(CommandId::kSearch,
           search(node(K::kAnd, {str(K::kKeyword, "$Junk"), str(K::kUnkeyword, "NonJunk")})))},
      {"a1 SEARCH LARGER 10000 SMALLER 9223372036854775807",
       cmd(CommandId::kSearch, search(node(K::kAnd, {num(K::kLarger, 10000),
                                                     num(K::kSmaller, 9223372036854775807ull)})))},
      {"a1 SEARCH BEFORE \"1-Jan-2000\" ON 31-dec-1999 SENTBEFORE 2-Jan-2000 SENTON 3-Jan-2000 "
       "SENTSINCE 4-Jan-2000",
       cmd(CommandId::kSearch,
           search(node(K::kAnd, {date(K::kBefore, 2000, 1, 1), date(K::kOn, 1999, 12, 31),
                                 date(K::kSentBefore, 2000, 1, 2), date(K::kSentOn, 2000, 1, 3),
                                 date(K::kSentSince, 2000, 1, 4)})))},
      {"a1 SEARCH ANSWERED DELETED DRAFT FLAGGED NEW OLD RECENT SEEN UNANSWERED UNDELETED "
       "UNDRAFT UNFLAGGED UNSEEN",
       cmd(CommandId::kSearch,
           search(node(K::kAnd, {key(K::kAnswered), key(K::kDeleted), key(K::kDraft),
                                 key(K::kFlagged), key(K::kNew), key(K::kOld), key(K::kRecent),
                                 key(K::kSeen), key(K::kUnanswered), key(K::kUndeleted),
                                 key(K::kUndraft), key(K::kUnflagged), key(K::kUnseen)})))},
      {"a1 SEARCH BCC a BODY b CC c FROM d SUBJECT e TEXT f TO g",
       cmd(CommandId::kSearch,
           search(node(K::kAnd,
                       {str(K::kBcc, "a"), str(K::kBody, "b"), str(K::kCc, "c"), str(K::kFrom, "d"),
                        str(K::kSubject, "e"), str(K::kText, "f"), str(K::kTo, "g")})))},
      {"a1 SEARCH OLDER 3600 YOUNGER 60",
       cmd(CommandId::kSearch,
           search(node(K::kAnd, {num(K::kOlder, 3600), num(K::kYounger, 60)})))},
      {"a1 SEARCH MODSEQ 620162338", cmd(CommandId::kSearch, search(num(K::kModSeq, 620162338)))},
      [] {
        SearchKey k = num(K::kModSeq, 20010715194045007);
        k.field = "/flags/\\draft";
        k.text = "all";
        return Case{"a1 SEARCH MODSEQ \"/flags/\\\\draft\" all 20010715194045007",
                    cmd(CommandId::kSearch, search(k))};
      }(),
      {"a1 SEARCH $", cmd(CommandId::kSearch, search(seq(K::kSequenceSet, "$")))},
      {"a1 UID SEARCH UID $ SEEN",
       cmd(CommandId::kSearch, search(node(K::kAnd, {seq(K::kUid, "$"), key(K::kSeen)})), true)},
      {"a1 SEARCH RETURN (MIN COUNT) UNSEEN",
       cmd(CommandId::kSearch,
           search(key(K::kUnseen), std::nullopt, SearchReturn{true, false, false, true, false}))},
      {"a1 SEARCH RETURN () SEEN",
       cmd(CommandId::kSearch, search(key(K::kSeen), std::nullopt, all_only))},
      {"a1 SEARCH RETURN (SAVE MAX ALL) CHARSET UTF-8 SEEN",
       cmd(CommandId::kSearch,
           search(key(K::kSeen), "UTF-8", SearchReturn{false, true, true, false, true}))},
      // SORT and THREAD.
      [] {
        Sort s;
        s.criteria = {{SortKey::kSubject, false}, {SortKey::kDate, true}};
        s.charset = "UTF-8";
        s.key = key(K::kAll);
        return Case{"a1 SORT (SUBJECT REVERSE DATE) UTF-8 ALL", cmd(CommandId::kSort, s)};
      }(),
      [] {
        Sort s;
        s.criteria = {{SortKey::kArrival, false},  {SortKey::kCc, false},
                      {SortKey::kFrom, false},     {SortKey::kSize, true},
                      {SortKey::kTo, false},       {SortKey::kDisplayFrom, false},
                      {SortKey::kDisplayTo, false}};
        s.charset = "US-ASCII";
        s.key = node(K::kAnd, {key(K::kUndeleted), str(K::kSubject, "x")});
        s.result_options = SearchReturn{true, false, false, false, false};
        return Case{
            "a1 UID SORT RETURN (MIN) (ARRIVAL CC FROM REVERSE SIZE TO DISPLAYFROM DISPLAYTO) "
            "us-ascii UNDELETED SUBJECT x",
            cmd(CommandId::kSort, s, true)};
      }(),
      [] {
        Thread t;
        t.algorithm = "REFERENCES";
        t.charset = "UTF-8";
        t.key = node(K::kAnd, {key(K::kSince), str(K::kSubject, "x")});
        t.key.children[0].date = Date{2024, 5, 1};
        return Case{"a1 UID THREAD references utf-8 SINCE 1-May-2024 SUBJECT x",
                    cmd(CommandId::kThread, t, true)};
      }(),
      [] {
        Thread t;
        t.algorithm = "ORDEREDSUBJECT";
        t.charset = "UTF-8";
        t.key = key(K::kAll);
        return Case{"a1 THREAD ORDEREDSUBJECT \"UTF-8\" ALL", cmd(CommandId::kThread, t)};
      }(),
  };
}

TEST(Parser, GoodTable) {
  for (const Case& c : good_cases()) {
    SCOPED_TRACE(c.wire);
    WireParse p(c.wire);
    ASSERT_TRUE(p.result().ok()) << p.result().error().message;
    EXPECT_EQ(*p.result(), c.expected);
  }
}

// Each quoted string of `wire` in turn (and then all of them) replaced by a
// synchronizing or non-synchronizing literal must parse the same.
std::vector<std::string> literal_variants(const std::string& wire) {
  struct Quoted {
    size_t begin;
    size_t end;  // past the closing quote
    std::string value;
  };
  std::vector<Quoted> quoted;
  for (size_t i = 0; i < wire.size(); ++i) {
    if (wire[i] != '"') {
      continue;
    }
    Quoted q{i, 0, {}};
    for (++i; i < wire.size() && wire[i] != '"'; ++i) {
      if (wire[i] == '\\') {
        ++i;
      }
      q.value.push_back(wire[i]);
    }
    q.end = i + 1;
    quoted.push_back(q);
  }
  auto replace = [&](const std::vector<size_t>& which, bool sync) {
    std::string out;
    size_t pos = 0;
    for (size_t idx : which) {
      const Quoted& q = quoted[idx];
      out += wire.substr(pos, q.begin - pos);
      out += "{" + std::to_string(q.value.size()) + (sync ? "}" : "+}") + "\r\n" + q.value;
      pos = q.end;
    }
    return out + wire.substr(pos);
  };
  std::vector<std::string> variants;
  std::vector<size_t> all;
  for (size_t i = 0; i < quoted.size(); ++i) {
    variants.push_back(replace({i}, true));
    variants.push_back(replace({i}, false));
    all.push_back(i);
  }
  if (quoted.size() > 1) {
    variants.push_back(replace(all, true));
  }
  return variants;
}

TEST(Parser, LiteralsInEveryStringPosition) {
  // Every astring / string / nstring position of the grammar, written quoted.
  const std::vector<std::string> wires = {
      "a1 LOGIN \"user\" \"pass word\"",
      "a1 SELECT \"INBOX\"",
      "a1 EXAMINE \"Sent\" (QRESYNC (\"x\"))",
      "a1 CREATE \"a b\"",
      "a1 CREATE \"x\" (USE (\"y\"))",
      "a1 DELETE \"a b\"",
      "a1 RENAME \"a\" \"b\"",
      "a1 SUBSCRIBE \"a\"",
      "a1 UNSUBSCRIBE \"a\"",
      "a1 LIST \"ref\" \"pat*\"",
      "a1 LIST (SUBSCRIBED) \"\" (\"a\" \"b%\") RETURN (STATUS (\"MESSAGES\"))",
      "a1 LSUB \"\" \"*\"",
      "a1 STATUS \"INBOX\" (MESSAGES)",
      "a1 APPEND \"INBOX\" {2}\r\nhi",
      "a1 COPY 1 \"Trash\"",
      "a1 MOVE 1 \"Trash\"",
      "a1 UID COPY 1 \"Trash\"",
      "a1 ID (\"name\" \"x\" \"os\" NIL)",
      "a1 FETCH 1 BODY[HEADER.FIELDS (\"From\" \"To\")]",
      "a1 FETCH 1 (BODY.PEEK[1.HEADER.FIELDS.NOT (\"X\")] FLAGS)",
      "a1 SEARCH CHARSET \"UTF-8\" BCC \"a\" BODY \"b\" CC \"c\" FROM \"d\" SUBJECT \"e\" "
      "TEXT \"f\" TO \"g\" HEADER \"h\" \"i\"",
      "a1 SEARCH OR (FROM \"x\") NOT SUBJECT \"y\"",
      "a1 SEARCH MODSEQ \"/flags/\\\\Seen\" priv 5",
      "a1 SORT (DATE) \"UTF-8\" SUBJECT \"x\"",
      "a1 THREAD REFERENCES \"UTF-8\" TO \"x\"",
  };
  for (const std::string& wire : wires) {
    SCOPED_TRACE(wire);
    WireParse original(wire);
    ASSERT_TRUE(original.result().ok()) << original.result().error().message;
    for (const std::string& variant : literal_variants(wire)) {
      SCOPED_TRACE(variant);
      WireParse p(variant);
      ASSERT_TRUE(p.result().ok()) << p.result().error().message;
      EXPECT_EQ(*p.result(), *original.result());
    }
  }
}

TEST(Parser, SearchNestingIsBounded) {
  std::string deep = "a1 SEARCH ";
  for (int i = 0; i < 10000; ++i) {
    deep += "NOT ";
  }
  deep += "SEEN";
  WireParse p(deep);
  ASSERT_FALSE(p.result().ok());
  EXPECT_EQ(p.result().error().message, "SEARCH: search keys nested too deeply");
  std::string parens = "a1 SEARCH " + std::string(5000, '(') + "SEEN" + std::string(5000, ')');
  WireParse q(parens);
  ASSERT_FALSE(q.result().ok());
  EXPECT_EQ(q.result().error().message, "SEARCH: search keys nested too deeply");
  std::string params = "a1 SELECT x (P " + std::string(5000, '(') + std::string(5000, ')') + ")";
  WireParse r(params);
  ASSERT_FALSE(r.result().ok());
  EXPECT_EQ(r.result().error().message, "SELECT: parameters nested too deeply");
}

TEST(Parser, ManyTopLevelSearchKeys) {
  std::string wire = "a1 SEARCH";
  for (int i = 0; i < 2000; ++i) {
    wire += " SEEN";
  }
  WireParse p(wire);
  ASSERT_TRUE(p.result().ok());
  EXPECT_EQ(std::get<Search>(p.result()->args).key.children.size(), 2000u);
}

TEST(Parser, HandMadeFramedCommandsNeverCrash) {
  FramedCommand empty;
  EXPECT_FALSE(parse_command(empty).ok());
  FramedCommand broken;
  broken.lines = {"a1 LOGIN ", " x"};  // a literal is missing
  EXPECT_FALSE(parse_command(broken).ok());
}

TEST(IdleDone, Lines) {
  auto line = [](std::string_view s) {
    FramedCommand c;
    c.lines.push_back(s);
    return c;
  };
  EXPECT_TRUE(is_idle_done(line("DONE")));
  EXPECT_TRUE(is_idle_done(line("done")));
  EXPECT_TRUE(is_idle_done(line("DONE ")));
  EXPECT_FALSE(is_idle_done(line("DONE x")));
  EXPECT_FALSE(is_idle_done(line("a1 DONE")));
  EXPECT_FALSE(is_idle_done(line("")));
  FramedCommand lit;
  lit.lines = {"DONE", ""};
  lit.literals = {Literal{"x"}};
  EXPECT_FALSE(is_idle_done(lit));
}

TEST(AuthResponse, Lines) {
  auto parse = [](std::string_view s) {
    FramedCommand c;
    c.lines.push_back(s);
    return parse_auth_response(c);
  };
  EXPECT_EQ(*parse("AGRlbW8AZGVtbw=="), (AuthResponse{false, "AGRlbW8AZGVtbw=="}));
  EXPECT_EQ(*parse(""), (AuthResponse{false, ""}));
  EXPECT_EQ(*parse("*"), (AuthResponse{true, ""}));
  EXPECT_FALSE(parse("abc def").ok());
  EXPECT_FALSE(parse("a1 LOGIN").ok());
}

TEST(SearchKeyText, RoundTripsThroughTheParser) {
  const std::vector<std::string> programs = {
      "(FLAGGED SINCE 1-Feb-1994 NOT FROM Smith)",
      "OR (FROM a TO b) NOT SEEN",
      "HEADER Message-ID <x@y>",
      "HEADER Subject \"\"",
      "(UID 1:5,7 2,4:* MODSEQ \"/flags/\\\\Seen\" priv 5 LARGER 10)",
      "SUBJECT \"two words\"",
      "SUBJECT \"NIL\"",
      "(KEYWORD $Junk UNKEYWORD NonJunk OLDER 5 YOUNGER 6 SENTON 9-Sep-2009)",
  };
  for (const std::string& program : programs) {
    SCOPED_TRACE(program);
    WireParse p("a1 SEARCH " + program);
    ASSERT_TRUE(p.result().ok()) << p.result().error().message;
    EXPECT_EQ(to_string(std::get<Search>(p.result()->args).key), program);
  }
}

TEST(FetchItemText, NamesAndRequests) {
  WireParse p(
      "a1 FETCH 1 (BODY.PEEK[1.2.HEADER.FIELDS (From \"X Y\")]<5.10> BINARY.PEEK[3]<0.1> "
      "BINARY.SIZE[4] RFC822.SIZE BODY[] BODY[2.MIME])");
  ASSERT_TRUE(p.result().ok()) << p.result().error().message;
  std::string names;
  std::string requests;
  for (const FetchItem& item : std::get<Fetch>(p.result()->args).items) {
    append_fetch_item_name(names, item);
    append_fetch_item_request(requests, item);
    names += ' ';
    requests += ' ';
  }
  EXPECT_EQ(names,
            "BODY[1.2.HEADER.FIELDS (From \"X Y\")]<5> BINARY[3]<0> BINARY.SIZE[4] RFC822.SIZE "
            "BODY[] BODY[2.MIME] ");
  EXPECT_EQ(requests,
            "BODY.PEEK[1.2.HEADER.FIELDS (From \"X Y\")]<5.10> BINARY.PEEK[3]<0.1> BINARY.SIZE[4] "
            "RFC822.SIZE BODY[] BODY[2.MIME] ");
}

}  // namespace
}  // namespace peregrine::imap
