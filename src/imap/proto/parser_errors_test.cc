#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "imap/proto/parser.h"
#include "imap/proto/parser_test_util.h"

// Bad input -> the exact BAD text, for every command: each error names what
// was wrong and, once the command is known, which command.

namespace peregrine::imap {
namespace {

using testing::WireParse;

struct BadCase {
  std::string wire;
  std::string tag;
  std::string message;
};

TEST(ParserErrors, Table) {
  using namespace std::string_literals;
  const std::vector<BadCase> cases = {
      {"", "", "empty command line"},
      {"a1", "a1", "missing command name"},
      {"a1 ", "a1", "missing command name"},
      {"+1 NOOP", "", "invalid tag"},
      {"a(1 NOOP", "", "invalid tag"},
      {"a1 FOO", "a1", "unknown command FOO"},
      {"a1 (", "a1", "invalid command name ("},
      {"a1 UID", "a1", "UID: missing command name"},
      {"a1 UID NOOP", "a1", "UID NOOP is not a command"},
      {"a1 UID FOO 1", "a1", "unknown command UID FOO"},
      {"a1 NOOP extra", "a1", "NOOP: unexpected extra"},
      {"a1 CAPABILITY {1}\r\nx", "a1", "CAPABILITY: unexpected literal"},
      {"a1 LOGIN", "a1", "LOGIN: missing user name"},
      {"a1 LOGIN user", "a1", "LOGIN: missing password"},
      {"a1 LOGIN user pass extra", "a1", "LOGIN: unexpected extra"},
      {"a1 LOGIN \"user pass", "a1", "LOGIN: unterminated quoted user name"},
      {"a1 LOGIN \"u\\ser\" p", "a1", "LOGIN: invalid character in quoted user name"},
      {"a1 LOGIN (user) pass", "a1", "LOGIN: invalid user name"},
      {"a1 LOGIN {3}\r\na\0b pass"s, "a1", "LOGIN: NUL in user name"},
      {"a1 LOGIN ~{3}\r\nabc pass", "a1", "LOGIN: literal8 not allowed for user name"},
      {"a1 LOGIN user{4}\r\npass", "a1", "LOGIN: expected space before password"},
      {"a1 AUTHENTICATE", "a1", "AUTHENTICATE: missing authentication mechanism"},
      {"a1 AUTHENTICATE PLAIN ab$", "a1", "AUTHENTICATE: unexpected $"},
      {"a1 SELECT", "a1", "SELECT: missing mailbox name"},
      {"a1 SELECT  ", "a1", "SELECT: missing mailbox name"},
      {"a1 SELECT INBOX (", "a1", "SELECT: missing select parameter"},
      {"a1 SELECT INBOX (QRESYNC (1 (2 (3", "a1", "SELECT: missing \")\""},
      {"a1 EXAMINE a b", "a1", "EXAMINE: unexpected b"},
      {"a1 CREATE", "a1", "CREATE: missing mailbox name"},
      {"a1 DELETE", "a1", "DELETE: missing mailbox name"},
      {"a1 RENAME a", "a1", "RENAME: missing new mailbox name"},
      {"a1 SUBSCRIBE", "a1", "SUBSCRIBE: missing mailbox name"},
      {"a1 LIST", "a1", "LIST: missing reference name"},
      {"a1 LIST \"\"", "a1", "LIST: missing mailbox pattern"},
      {"a1 LIST \"\" (a b", "a1", "LIST: missing \")\" after mailbox patterns"},
      {"a1 LIST \"\" * RETURN", "a1", "LIST: missing return options"},
      {"a1 LSUB \"\" a b", "a1", "LSUB: unexpected b"},
      {"a1 STATUS INBOX", "a1", "STATUS: missing status items"},
      {"a1 STATUS INBOX ()", "a1", "STATUS: missing status item"},
      {"a1 STATUS INBOX (MESSAGES FOO)", "a1", "STATUS: unknown status item FOO"},
      {"a1 STATUS INBOX MESSAGES", "a1", "STATUS: invalid status items"},
      {"a1 APPEND INBOX", "a1", "APPEND: missing message literal"},
      {"a1 APPEND INBOX hello", "a1", "APPEND: unsupported APPEND data hello"},
      {"a1 APPEND INBOX \"hello\"", "a1", "APPEND: invalid date-time hello"},
      {"a1 APPEND INBOX (\\Seen", "a1", "APPEND: invalid flag list"},
      {"a1 APPEND INBOX (\\) {1}\r\nx", "a1", "APPEND: invalid flag \\)"},
      {"a1 APPEND INBOX \"31-Feb-2020 00:00:00 +0000\" {1}\r\nx", "a1",
       "APPEND: invalid date-time 31-Feb-2020 00:00:00 +0000"},
      {"a1 APPEND INBOX {1}\r\nx extra", "a1", "APPEND: unsupported APPEND data extra"},
      {"a1 ENABLE", "a1", "ENABLE: missing capability"},
      {"a1 ID", "a1", "ID: missing ID parameters"},
      {"a1 ID (\"a\")", "a1", "ID: missing ID field value"},
      {"a1 ID (a b)", "a1", "ID: invalid ID field name"},
      {"a1 EXPUNGE 1", "a1", "EXPUNGE: unexpected 1"},
      {"a1 UID EXPUNGE", "a1", "UID EXPUNGE: missing sequence set"},
      {"a1 UID EXPUNGE 0", "a1", "UID EXPUNGE: invalid sequence set 0"},
      {"a1 FETCH", "a1", "FETCH: missing sequence set"},
      {"a1 FETCH 1", "a1", "FETCH: missing fetch items"},
      {"a1 FETCH 1 FOO", "a1", "FETCH: unknown item FOO"},
      {"a1 FETCH 1 (FLAGS FOO)", "a1", "FETCH: unknown item FOO"},
      {"a1 FETCH 1 (X-GM-MSGID)", "a1", "FETCH: unknown item X-GM-MSGID"},
      {"a1 FETCH 1 (FLAGS ALL)", "a1", "FETCH: unknown item ALL"},
      {"a1 FETCH 1 (FLAGS", "a1", "FETCH: missing \")\" after fetch items"},
      {"a1 FETCH 1 ()", "a1", "FETCH: missing fetch item"},
      {"a1 FETCH 0 FLAGS", "a1", "FETCH: invalid sequence set 0"},
      {"a1 FETCH 1:2:3 FLAGS", "a1", "FETCH: invalid sequence set 1:2:3"},
      {"a1 FETCH 1,a FLAGS", "a1", "FETCH: invalid sequence set 1,a"},
      {"a1 FETCH 1 BODY.PEEK", "a1", "FETCH: missing section after BODY.PEEK"},
      {"a1 FETCH 1 BINARY", "a1", "FETCH: missing section after BINARY"},
      {"a1 FETCH 1 BODY[", "a1", "FETCH: missing \"]\" after section"},
      {"a1 FETCH 1 BODY[FOO]", "a1", "FETCH: invalid section FOO"},
      {"a1 FETCH 1 BODY[MIME]", "a1", "FETCH: invalid section MIME"},
      {"a1 FETCH 1 BODY[0]", "a1", "FETCH: invalid section part 0"},
      {"a1 FETCH 1 BODY[1.]", "a1", "FETCH: invalid section part"},
      {"a1 FETCH 1 BODY[1.2.X]", "a1", "FETCH: invalid section X"},
      {"a1 FETCH 1 BODY[4294967296]", "a1", "FETCH: invalid section part 4294967296"},
      {"a1 FETCH 1 BODY[HEADER.FIELDS]", "a1", "FETCH: missing header field list"},
      {"a1 FETCH 1 BODY[HEADER.FIELDS ()]", "a1", "FETCH: missing header field name"},
      {"a1 FETCH 1 BODY[HEADER.FIELDS (From]", "a1", "FETCH: missing \")\" after header fields"},
      {"a1 FETCH 1 BINARY[HEADER]", "a1", "FETCH: invalid binary section HEADER"},
      {"a1 FETCH 1 BODY[]<0>", "a1", "FETCH: invalid partial: missing length"},
      {"a1 FETCH 1 BODY[]<0.0>", "a1", "FETCH: invalid partial length 0"},
      {"a1 FETCH 1 BODY[]<a.1>", "a1", "FETCH: invalid partial offset"},
      {"a1 FETCH 1 BODY[]<0.1", "a1", "FETCH: invalid partial: missing \">\""},
      {"a1 FETCH 1 BINARY.SIZE[1]<0.1>", "a1", "FETCH: unexpected <0.1>"},
      {"a1 FETCH 1 FLAGS (FOO 1)", "a1", "FETCH: unknown modifier FOO"},
      {"a1 FETCH 1 FLAGS (CHANGEDSINCE)", "a1", "FETCH: missing mod-sequence"},
      {"a1 FETCH 1 FLAGS (CHANGEDSINCE x)", "a1", "FETCH: invalid mod-sequence"},
      {"a1 FETCH 1 FLAGS (CHANGEDSINCE 9223372036854775808)", "a1",
       "FETCH: invalid mod-sequence 9223372036854775808"},
      {"a1 FETCH 1 FLAGS (CHANGEDSINCE 1 VANISHED)", "a1",
       "FETCH: VANISHED needs UID FETCH and CHANGEDSINCE"},
      {"a1 STORE 1", "a1", "STORE: missing store item"},
      {"a1 STORE 1 FLAGS", "a1", "STORE: missing flags"},
      {"a1 STORE 1 +FLAGS", "a1", "STORE: missing flags"},
      {"a1 STORE 1 *FLAGS \\Seen", "a1", "STORE: invalid store item"},
      {"a1 STORE 1 LABELS x", "a1", "STORE: unknown store item LABELS"},
      {"a1 STORE 1 FLAGS.LOUD x", "a1", "STORE: unknown store item FLAGS.LOUD"},
      {"a1 STORE 1 FLAGS (\\Seen) x", "a1", "STORE: unexpected x"},
      {"a1 STORE 1 FLAGS \\Seen\\Draft", "a1", "STORE: unexpected \\Draft"},
      {"a1 STORE 1 FLAGS \"x\"", "a1", "STORE: invalid flag"},
      {"a1 STORE 1 (UNCHANGEDSINCE) FLAGS x", "a1", "STORE: missing mod-sequence"},
      {"a1 STORE 1 (CHANGEDSINCE 1) FLAGS x", "a1", "STORE: unknown modifier CHANGEDSINCE"},
      {"a1 COPY 1", "a1", "COPY: missing mailbox name"},
      {"a1 COPY INBOX", "a1", "COPY: invalid sequence set"},
      {"a1 MOVE 1:* ", "a1", "MOVE: missing mailbox name"},
      {"a1 SEARCH", "a1", "SEARCH: missing search key"},
      {"a1 SEARCH FOO", "a1", "SEARCH: unknown search key FOO"},
      {"a1 SEARCH FROM", "a1", "SEARCH: missing argument of FROM"},
      {"a1 SEARCH HEADER Subject", "a1", "SEARCH: missing search string"},
      {"a1 SEARCH SINCE", "a1", "SEARCH: missing argument of SINCE"},
      {"a1 SEARCH SINCE yesterday", "a1", "SEARCH: invalid date yesterday"},
      {"a1 SEARCH SINCE 30-Feb-2020", "a1", "SEARCH: invalid date 30-Feb-2020"},
      {"a1 SEARCH LARGER x", "a1", "SEARCH: invalid size"},
      {"a1 SEARCH LARGER -1", "a1", "SEARCH: invalid size"},
      {"a1 SEARCH OLDER 0", "a1", "SEARCH: invalid interval 0"},
      {"a1 SEARCH KEYWORD \\Seen", "a1", "SEARCH: invalid keyword"},
      {"a1 SEARCH UID x", "a1", "SEARCH: invalid sequence set"},
      {"a1 SEARCH NOT", "a1", "SEARCH: missing argument of NOT"},
      {"a1 SEARCH OR SEEN", "a1", "SEARCH: missing search key"},
      {"a1 SEARCH (SEEN", "a1", "SEARCH: missing \")\" after search keys"},
      {"a1 SEARCH ()", "a1", "SEARCH: missing search key"},
      {"a1 SEARCH SEEN)", "a1", "SEARCH: unexpected )"},
      {"a1 SEARCH SEEN )", "a1", "SEARCH: unexpected )"},
      {"a1 SEARCH 1:2:3", "a1", "SEARCH: invalid sequence set 1:2:3"},
      {"a1 SEARCH CHARSET", "a1", "SEARCH: missing charset"},
      {"a1 SEARCH CHARSET UTF-8", "a1", "SEARCH: missing search key"},
      {"a1 SEARCH RETURN (FOO) ALL", "a1", "SEARCH: unknown result option FOO"},
      {"a1 SEARCH RETURN ALL", "a1", "SEARCH: missing result options after RETURN"},
      {"a1 SEARCH MODSEQ \"/flags/x\" mine 1", "a1", "SEARCH: invalid entry type mine"},
      {"a1 SEARCH MODSEQ", "a1", "SEARCH: missing argument of MODSEQ"},
      {"a1 SORT", "a1", "SORT: missing sort criteria"},
      {"a1 SORT SUBJECT UTF-8 ALL", "a1", "SORT: invalid sort criteria"},
      {"a1 SORT (COLOR) UTF-8 ALL", "a1", "SORT: unknown sort criterion COLOR"},
      {"a1 SORT (REVERSE) UTF-8 ALL", "a1", "SORT: missing sort criterion"},
      {"a1 SORT () UTF-8 ALL", "a1", "SORT: missing sort criterion"},
      {"a1 SORT (DATE) UTF-8", "a1", "SORT: missing search key"},
      {"a1 SORT (DATE)", "a1", "SORT: missing charset"},
      {"a1 THREAD", "a1", "THREAD: missing threading algorithm"},
      {"a1 THREAD REFERENCES", "a1", "THREAD: missing charset"},
      {"a1 THREAD REFERENCES UTF-8", "a1", "THREAD: missing search key"},
  };
  for (const BadCase& c : cases) {
    SCOPED_TRACE(c.wire);
    WireParse p(c.wire);
    ASSERT_FALSE(p.result().ok());
    EXPECT_EQ(p.result().error().tag, c.tag);
    EXPECT_EQ(p.result().error().message, c.message);
  }
}

}  // namespace
}  // namespace peregrine::imap
