#include "mime/search_text.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "mime/charset.h"

namespace peregrine::mime {
namespace {

struct HtmlCase {
  std::string html;
  std::string text;
};

TEST(HtmlToText, Table) {
  const std::vector<HtmlCase> cases = {
      {"", ""},
      {"plain", "plain"},
      {"<b>bold</b> and <i>it</i>alic", "bold and italic"},
      {"<p>one</p><p>two</p>", "one\ntwo"},
      {"line<br>break<br/>again<BR />", "line\nbreak\nagain"},
      {"<div>a</div>\n\n<div>b</div>", "a\nb"},
      {"a   b\t\r\nc", "a b c"},
      {"<table><tr><td>x</td><td>y</td></tr></table>", "x y"},
      // Entities: named, numeric, hex, Windows-1252 range, invalid, unknown.
      {"&lt;tag&gt; &amp; &quot;q&quot; &apos;a&apos;", "<tag> & \"q\" 'a'"},
      {"caf&eacute; &Eacute;T&Eacute; na&iuml;ve &copy; &euro;5",
       "caf\xc3\xa9 \xc3\x89T\xc3\x89 na\xc3\xafve \xc2\xa9 \xe2\x82\xac"
       "5"},
      {"a&nbsp;b", "a b"},
      {"&#65;&#x42;&#X43;&#0067", "ABCC"},
      {"&#128;&#150;", "\xe2\x82\xac\xe2\x80\x93"},
      {"&#0;&#xD800;&#1114112;&#99999999999;", "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd"},
      {"&#65abc", "Aabc"},
      {"&unknown; &; & x &#; &#x;", "&unknown; &; & x &#; &#x;"},
      {"AT&amp T &lt 3", "AT& T < 3"},
      {"R&D", "R&D"},
      // Dropped: script, style, head, comments, declarations.
      {"a<script>var x = '<b>';</script>b", "ab"},
      {"a<SCRIPT type=x>alert(1)</ScRiPt >b", "ab"},
      {"a<style>p { color: red }</style>b", "ab"},
      {"<html><head><title>T</title><meta x></head><body>text</body></html>", "text"},
      {"<head><title>T</title><body>text", "text"},
      {"<head>no end anywhere", "no end anywhere"},
      {"a<!-- hidden <b>x</b> -->b", "ab"},
      {"<!DOCTYPE html><?xml version=\"1.0\"?>x", "x"},
      {"a<!-- never closed", "a"},
      {"a<script>never closed", "a"},
      // Broken HTML.
      {"a < b and c > d", "a < b and c > d"},
      {"<3 you", "<3 you"},
      {"<a href=\"x>y\">link</a>", "link"},
      {"<a title='it\"s'>q</a>", "q"},
      {"<img src=x alt=y>z", "z"},
      {"<b", ""},
      {"<", "<"},
      {"x</", "x</"},
      {"trailing &", "trailing &"},
      // UTF-8 passes through.
      {"<p>\xe6\x97\xa5\xe6\x9c\xac</p>", "\xe6\x97\xa5\xe6\x9c\xac"},
  };
  for (const HtmlCase& c : cases) {
    EXPECT_EQ(html_to_text(c.html), c.text) << c.html;
  }
}

TEST(HtmlToText, EveryPrefixOfBrokenHtml) {
  const std::string html =
      "<html><head><style>x{}</style></head><body><p class='a>b'>caf&eacute;&#x20AC;&#128;"
      "<!-- c --><script>s</script><br/>&nbsp;&unknown;<td>x</td></body></html>";
  for (size_t n = 0; n <= html.size(); ++n) {
    std::string text = html_to_text(html.substr(0, n));
    EXPECT_TRUE(is_valid_utf8(text)) << n;
    EXPECT_LE(text.size(), n * 3);
  }
}

// Inputs that would take quadratic time to a converter that searches ahead
// from every tag; 300 KB each, so a quadratic pass would not finish.
TEST(HtmlToText, HostileInputStaysLinear) {
  std::string quotes;
  std::string heads = "<body>";
  std::string scripts;
  std::string comments;
  for (int i = 0; i < 20000; ++i) {
    quotes += "<a x='>t ";
    heads += "<head>x<body>y ";
    scripts += "<p>a</p>";
    comments += "<!- <? ";
  }
  heads += "</head>";
  EXPECT_EQ(html_to_text(quotes).substr(0, 6), "t t t ");
  EXPECT_EQ(html_to_text(heads).substr(0, 6), "y y y ");  // head text dropped
  EXPECT_EQ(html_to_text(scripts).substr(0, 6), "a\na\na\n");
  EXPECT_EQ(html_to_text(comments), "");
  EXPECT_EQ(html_to_text(std::string(300000, '<')), std::string(300000, '<'));
  EXPECT_EQ(html_to_text(std::string(300000, '&')), std::string(300000, '&'));
}

const std::string kMessage =
    "From: =?utf-8?Q?Andr=C3=A9?= <andre@example.org>\r\n"
    "To: bob@example.net, \"Carol C\" <carol@example.net>\r\n"
    "Cc: Team: dave@example.net;\r\n"
    "Subject: =?iso-8859-1?Q?caf=E9?= menu\r\n"
    "X-Folded: one\r\n two\r\n"
    "Content-Type: multipart/mixed; boundary=b\r\n"
    "\r\n"
    "--b\r\n"
    "Content-Type: multipart/alternative; boundary=a\r\n"
    "\r\n"
    "--a\r\n"
    "Content-Type: text/plain; charset=iso-8859-1\r\n"
    "Content-Transfer-Encoding: quoted-printable\r\n"
    "\r\n"
    "Le caf=E9 est=\r\n"
    " chaud.\r\n"
    "--a\r\n"
    "Content-Type: text/html; charset=utf-8\r\n"
    "Content-Transfer-Encoding: base64\r\n"
    "\r\n"
    "PHA+TGUgY2Fmw6kgZXN0IDxiPmNoYXVkPC9iPi48L3A+\r\n"
    "--a--\r\n"
    "--b\r\n"
    "Content-Type: application/pdf; name=\"=?utf-8?Q?r=C3=A9sum=C3=A9.pdf?=\"\r\n"
    "Content-Transfer-Encoding: base64\r\n"
    "\r\n"
    "U0VDUkVUIFBERiBDT05URU5U\r\n"
    "--b\r\n"
    "Content-Type: application/octet-stream\r\n"
    "Content-Disposition: attachment; filename*=utf-8''%E2%82%AC-report.bin\r\n"
    "\r\n"
    "binary stuff\r\n"
    "--b\r\n"
    "Content-Type: message/rfc822\r\n"
    "\r\n"
    "From: Eve <eve@example.com>\r\n"
    "To: frank@example.com\r\n"
    "Subject: =?utf-8?B?Zm9yd2FyZGVk?=\r\n"
    "X-Not-Indexed: hidden header\r\n"
    "\r\n"
    "Inner text.\r\n"
    "--b\r\n"
    "Content-Type: text/plain; charset=x-no-such-charset\r\n"
    "\r\n"
    "na\xefve\r\n"
    "--b--\r\n";

TEST(SearchTextBuild, DecodesHeadersAndBody) {
  Part root = parse_message(kMessage);
  SearchText t = build_search_text(kMessage, root);
  EXPECT_EQ(t.from, "Andr\xc3\xa9 <andre@example.org>");
  EXPECT_EQ(t.to, "bob@example.net, Carol C <carol@example.net>");
  EXPECT_EQ(t.cc, "Team, dave@example.net");
  EXPECT_EQ(t.bcc, "");
  EXPECT_EQ(t.subject, "caf\xc3\xa9 menu");
  EXPECT_NE(t.headers.find("Subject: caf\xc3\xa9 menu\n"), std::string::npos) << t.headers;
  EXPECT_NE(t.headers.find("X-Folded: one two\n"), std::string::npos) << t.headers;
  EXPECT_EQ(t.headers.substr(0, 6), "From: ");
  // The body of the message: each part's MIME header (RFC 2046 §5.1.1),
  // decoded, then its file name and text; an attached message's whole header.
  EXPECT_EQ(t.body,
            "Content-Type: multipart/alternative; boundary=a\n"
            "Content-Type: text/plain; charset=iso-8859-1\n"
            "Content-Transfer-Encoding: quoted-printable\n"
            "Le caf\xc3\xa9 est chaud.\n"
            "Content-Type: text/html; charset=utf-8\n"
            "Content-Transfer-Encoding: base64\n"
            "Le caf\xc3\xa9 est chaud.\n"
            "Content-Type: application/pdf; name=\"r\xc3\xa9sum\xc3\xa9.pdf\"\n"
            "Content-Transfer-Encoding: base64\n"
            "r\xc3\xa9sum\xc3\xa9.pdf\n"
            "Content-Type: application/octet-stream\n"
            "Content-Disposition: attachment; filename*=utf-8''%E2%82%AC-report.bin\n"
            "\xe2\x82\xac-report.bin\n"
            "Content-Type: message/rfc822\n"
            "From: Eve <eve@example.com>\n"
            "To: frank@example.com\n"
            "Subject: forwarded\n"
            "X-Not-Indexed: hidden header\n"
            "Inner text.\n"
            "Content-Type: text/plain; charset=x-no-such-charset\n"
            "na\xc3\xafve");
  EXPECT_EQ(t.body.find("SECRET"), std::string::npos);
  EXPECT_EQ(t.body.find("binary stuff"), std::string::npos);
  // The parts' headers are not in the top-level header, which HEADER searches.
  EXPECT_EQ(t.headers.find("quoted-printable"), std::string::npos);
  EXPECT_EQ(t.headers.find("Eve"), std::string::npos);
  EXPECT_TRUE(is_valid_utf8(t.body));
  EXPECT_TRUE(is_valid_utf8(t.headers));
}

TEST(SearchTextBuild, SinglePartAndDefaults) {
  const std::string msg = "Subject: plain\r\nFrom: broken <<<\r\n\r\nhello\xe9 world\r\n";
  SearchText t = build_search_text(msg, parse_message(msg));
  EXPECT_EQ(t.subject, "plain");
  EXPECT_FALSE(t.from.empty());
  // Undeclared 8-bit text is read as Windows-1252.
  EXPECT_EQ(t.body, "hello\xc3\xa9 world\r\n");
  EXPECT_EQ(t.headers, "Subject: plain\nFrom: broken <<<\n");
}

TEST(SearchTextBuild, BodyLimitKeepsUtf8Whole) {
  const std::string msg = "Content-Type: text/plain; charset=utf-8\r\n\r\n" + std::string(10, 'a') +
                          "\xc3\xa9\xc3\xa9\xc3\xa9";
  Part root = parse_message(msg);
  for (size_t limit = 0; limit < 20; ++limit) {
    SearchTextLimits limits;
    limits.max_body_bytes = limit;
    SearchText t = build_search_text(msg, root, limits);
    EXPECT_LE(t.body.size(), limit);
    EXPECT_TRUE(is_valid_utf8(t.body)) << limit;
  }
  SearchTextLimits limits;
  limits.max_body_bytes = 13;
  EXPECT_EQ(build_search_text(msg, root, limits).body, std::string(10, 'a') + "\xc3\xa9");
}

TEST(SearchTextBuild, LimitStopsAfterFirstParts) {
  std::string msg = "Content-Type: multipart/mixed; boundary=b\r\n\r\n";
  for (int i = 0; i < 100; ++i) {
    msg += "--b\r\n\r\n" + std::string(100, 'x') + "\r\n";
  }
  msg += "--b--\r\n";
  SearchTextLimits limits;
  limits.max_body_bytes = 1000;
  SearchText t = build_search_text(msg, parse_message(msg), limits);
  EXPECT_EQ(t.body.size(), 1000u);
}

TEST(SearchTextBuild, TruncatedAtEveryByte) {
  for (size_t n = 0; n <= kMessage.size(); n += 3) {
    std::string cut = kMessage.substr(0, n);
    Part root = parse_message(cut);
    SearchTextLimits limits;
    limits.max_body_bytes = 200;
    SearchText t = build_search_text(cut, root, limits);
    EXPECT_LE(t.body.size(), 200u);
    EXPECT_TRUE(is_valid_utf8(t.body)) << n;
    EXPECT_TRUE(is_valid_utf8(t.headers)) << n;
  }
}

}  // namespace
}  // namespace peregrine::mime
