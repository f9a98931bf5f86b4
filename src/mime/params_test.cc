#include "mime/params.h"

#include <gtest/gtest.h>

#include <string>
#include <tuple>
#include <vector>

namespace peregrine::mime {
namespace {

// name, value, extended
using Expected = std::vector<std::tuple<std::string, std::string, bool>>;

Expected flatten(const std::vector<Param>& params) {
  Expected out;
  for (const Param& p : params) {
    out.emplace_back(p.name, p.value, p.extended);
  }
  return out;
}

struct ParamsCase {
  std::string input;
  Expected expected;
};

TEST(ParseParams, Table) {
  const std::vector<ParamsCase> cases = {
      {"", {}},
      {"text/plain", {}},
      {"text/plain;", {}},
      {"; charset=us-ascii", {{"charset", "us-ascii", false}}},
      {"x/y; charset=\"us-ascii\"", {{"charset", "us-ascii", false}}},
      {"x/y;charset=utf-8;format=flowed",
       {{"charset", "utf-8", false}, {"format", "flowed", false}}},
      {"x/y; Charset = \"UTF-8\" ; DelSp=Yes",
       {{"Charset", "UTF-8", false}, {"DelSp", "Yes", false}}},
      // Quoting: escapes, ';' inside quotes, empty value, unterminated quote.
      {"; name=\"a\\\"b\\\\c\"", {{"name", "a\"b\\c", false}}},
      {"; name=\"a;b\"; x=1", {{"name", "a;b", false}, {"x", "1", false}}},
      {"; name=\"\"", {{"name", "", false}}},
      {"; name=", {{"name", "", false}}},
      {"; name=\"open", {{"name", "open", false}}},
      // Tolerance: missing value, stray semicolons, spaces in unquoted values,
      // duplicates (first wins), comments.
      {"; novalue; a=1", {{"a", "1", false}}},
      {";;; a=1;;", {{"a", "1", false}}},
      {"; name=my file.txt ; b=2", {{"name", "my file.txt", false}, {"b", "2", false}}},
      {"; a=1; A=2", {{"a", "1", false}}},
      {"; charset=us-ascii (Plain text)", {{"charset", "us-ascii", false}}},
      {"; (c) charset=(c)utf-8", {{"charset", "utf-8", false}}},
      {"; name=foo(1).txt", {{"name", "foo(1).txt", false}}},
      {"; boundary=----=_Part_1_2.3", {{"boundary", "----=_Part_1_2.3", false}}},
      {"; =x; a=1", {{"a", "1", false}}},
      {"; name=\"x\" junk; a=1", {{"name", "x", false}, {"a", "1", false}}},
      // Folded values.
      {";\r\n\tname=\"a\r\n b\"", {{"name", "a b", false}}},
      // RFC 2231 continuations, joined in numeric order.
      {"; name*0=\"a\"; name*1=\"b\"", {{"name", "ab", false}}},
      {"; name*1=\"b\"; name*0=\"a\"", {{"name", "ab", false}}},
      {"; n*0=a; n*1=b; n*2=c; n*3=d; n*4=e; n*5=f; n*6=g; n*7=h; n*8=i; n*9=j; n*10=k",
       {{"n", "abcdefghijk", false}}},
      {"; n*10=k; n*2=c; n*1=b; n*0=a", {{"n", "abck", false}}},
      {"; name*0=a; name*2=c", {{"name", "ac", false}}},
      {"; name*1=b", {{"name", "b", false}}},
      {"; name*0=a; name*0=z; name*1=b", {{"name", "ab", false}}},
      // RFC 2231 extended values.
      {"; name*=utf-8''%E2%82%AC", {{"name", "\xe2\x82\xac", true}}},
      {"; name*=UTF-8'en'%e2%82%ac%20x", {{"name", "\xe2\x82\xac x", true}}},
      {"; name*=iso-8859-1''caf%E9", {{"name", "caf\xc3\xa9", true}}},
      {"; name*=''plain", {{"name", "plain", true}}},
      {"; name*=%41%4", {{"name", "A%4", true}}},
      {"; name*=\"utf-8''%E2%82%AC\"", {{"name", "\xe2\x82\xac", true}}},
      {"; name*=x-no-such''%41", {{"name", "A", true}}},
      {"; name*0*=utf-8''%E2%82; name*1*=%AC; name*2=\".txt\"",
       {{"name", "\xe2\x82\xac.txt", true}}},
      {"; name*0*=utf-8''%E2%82%AC; name*1=\"%41\"", {{"name", "\xe2\x82\xac%41", true}}},
      {"; name*1*=%AC; name*0*=utf-8''%E2%82", {{"name", "\xe2\x82\xac", true}}},
      // A plain name= and an RFC 2231 one of the same name are both kept, in
      // the order written (rw-29, edge-32).
      {"; filename=\"fallback.txt\"; a=1; filename*=utf-8''%E2%82%AC.txt",
       {{"filename", "fallback.txt", false},
        {"a", "1", false},
        {"filename", "\xe2\x82\xac.txt", true}}},
      {"; name*=utf-8''%E2%82%AC; name=\"b\"",
       {{"name", "\xe2\x82\xac", true}, {"name", "b", false}}},
      {"; name=\"x\"; name*0*=utf-8''%E2%82%AC%20a; name*1=\" b\"; name*2*=%2Ec",
       {{"name", "x", false}, {"name", "\xe2\x82\xac a b.c", true}}},
      {"; name*0=\"a\"; name=\"x\"; name*1=\"b\"", {{"name", "ab", false}, {"name", "x", false}}},
      // Duplicates within one form: the first wins.
      {"; name=a; name*=''b; NAME=c; Name*=''d", {{"name", "a", false}, {"name", "b", true}}},
      // Not RFC 2231: continuation numbers out of range or suffix malformed.
      {"; name*1000=x; name*999=y", {{"name", "y", false}}},
      {"; a*b=1", {{"a*b", "1", false}}},
      {"; *0=1", {{"*0", "1", false}}},
      // RFC 2047 in a quoted value is left as written.
      {"; name=\"=?utf-8?B?4oKs?=\"", {{"name", "=?utf-8?B?4oKs?=", false}}},
  };
  for (const ParamsCase& c : cases) {
    SCOPED_TRACE(c.input);
    EXPECT_EQ(flatten(parse_params(c.input)), c.expected);
  }
}

TEST(ParseParams, Rfc2231LanguageIsKept) {
  struct Case {
    std::string input;
    std::string value;
    std::string language;
  };
  const std::vector<Case> cases = {
      {"; name*=UTF-8'en-us'%E6%97%A5.bin", "\xe6\x97\xa5.bin", "en-us"},
      {"; name*=iso-8859-1'de'Gr%FC%DFe.txt",
       "Gr\xc3\xbc\xc3\x9f"
       "e.txt",
       "de"},
      {"; name*=utf-8''%41", "A", ""},
      {"; name*=%41", "A", ""},
      {"; name*='zh-Hant-TW'x", "x", "zh-Hant-TW"},
      {"; name*=\"utf-8'es-419'x\"", "x", "es-419"},
      // Sections: the language comes from section 0 only.
      {"; name*0*=utf-8'fr'%C3%A9; name*1*=t%C3%A9", "\xc3\xa9t\xc3\xa9", "fr"},
      {"; name*1*=t; name*0*=utf-8'fr'a", "at", "fr"},
      {"; name*0=\"a'b'c\"; name*1*=x'y'z", "a'b'cx'y'z", ""},
      // Not a language tag: dropped, so it cannot break the value written back.
      {"; name*=utf-8'e n'x", "x", ""},
      {"; name*=\"utf-8'en%27'x\"", "x", ""},
      {"; name*=utf-8'en_US'x", "x", ""},
      {"; name*=utf-8'\xc3\xa9'x", "x", ""},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.input);
    std::vector<Param> params = parse_params(c.input);
    ASSERT_EQ(params.size(), 1u);
    EXPECT_TRUE(params[0].extended);
    EXPECT_EQ(params[0].value, c.value);
    EXPECT_EQ(params[0].language, c.language);
  }
  // Plain values never have a language.
  std::vector<Param> plain = parse_params("; name=\"utf-8'en'x\"");
  ASSERT_EQ(plain.size(), 1u);
  EXPECT_EQ(plain[0].value, "utf-8'en'x");
  EXPECT_EQ(plain[0].language, "");
}

TEST(ParseParams, Bounded) {
  std::string input = "x/y";
  for (int i = 0; i < 5000; ++i) {
    input += "; p" + std::to_string(i) + "=v";
  }
  EXPECT_EQ(parse_params(input).size(), 1000u);

  std::string continuations = "x/y";
  for (int i = 0; i < 3000; ++i) {
    continuations += "; n*" + std::to_string(i) + "=v";
  }
  std::vector<Param> params = parse_params(continuations);
  ASSERT_EQ(params.size(), 1u);
  EXPECT_EQ(params[0].value, std::string(1000, 'v'));
}

TEST(ParseParams, EveryPrefix) {
  const std::string input =
      "multipart/mixed; (c\\)) boundary=\"=_a;b\"; name*0*=utf-8'en'%E2%82; name*1*=%AC;"
      " x=\"q\\\"";
  for (size_t n = 0; n <= input.size(); ++n) {
    std::vector<Param> params = parse_params(input.substr(0, n));
    EXPECT_LE(params.size(), 3u);
    (void)parse_content_type(input.substr(0, n));
    (void)parse_disposition(input.substr(0, n));
  }
  // Comments cut right after a backslash.
  EXPECT_FALSE(parse_content_type("(a\\").has_value());
  EXPECT_FALSE(parse_disposition("(\\").has_value());
  EXPECT_FALSE(parse_content_type("text/(\\").has_value());
  std::optional<ContentType> ct = parse_content_type("text/plain; a=(\\");
  ASSERT_TRUE(ct.has_value());
  ASSERT_EQ(ct->params.size(), 1u);
  EXPECT_EQ(ct->params[0].value, "");
}

TEST(DecodedValue, EncodedWordsAndRawBytes) {
  EXPECT_EQ(decoded_value(Param{"name", "=?utf-8?B?4oKs?=.txt", false}), "\xe2\x82\xac.txt");
  EXPECT_EQ(decoded_value(Param{"name", "caf\xe9", false}), "caf\xc3\xa9");
  EXPECT_EQ(decoded_value(Param{"name", "plain", false}), "plain");
  // Extended values are already decoded: "=?" stays.
  EXPECT_EQ(decoded_value(Param{"name", "=?utf-8?B?4oKs?=", true}), "=?utf-8?B?4oKs?=");
  // Outlook splits an encoded word over RFC 2231 continuations.
  std::vector<Param> params = parse_params("; filename*0=\"=?utf-8?B?4oK\"; filename*1=\"s?=\"");
  ASSERT_EQ(params.size(), 1u);
  EXPECT_EQ(decoded_value(params[0]), "\xe2\x82\xac");
}

TEST(FindParam, CaseInsensitive) {
  std::vector<Param> params = parse_params("; Charset=x; NAME=y");
  ASSERT_NE(find_param(params, "charset"), nullptr);
  EXPECT_EQ(find_param(params, "charset")->value, "x");
  EXPECT_EQ(find_param(params, "name")->value, "y");
  EXPECT_EQ(find_param(params, "nam"), nullptr);
}

TEST(FindParam, PrefersTheRfc2231ValueOverItsPlainFallback) {
  // rw-29: an RFC 2047 fallback for old readers, then the RFC 2231 value.
  std::vector<Param> params = parse_params(
      "; filename=\"=?ISO-2022-JP?B?GyRCOCtAUT1xGyhCXzIwMjQtMDIxLnBkZg==?=\";"
      " filename*=UTF-8''%E8%A6%8B%E7%A9%8D%E6%9B%B8_2024-021.pdf");
  ASSERT_EQ(params.size(), 2u);
  const Param* name = find_param(params, "FileName");
  ASSERT_NE(name, nullptr);
  EXPECT_TRUE(name->extended);
  EXPECT_EQ(decoded_value(*name), "\xe8\xa6\x8b\xe7\xa9\x8d\xe6\x9b\xb8_2024-021.pdf");
  // Either order.
  params = parse_params("; name*=utf-8''%E2%82%AC; name=\"b\"");
  ASSERT_NE(find_param(params, "name"), nullptr);
  EXPECT_EQ(find_param(params, "name")->value, "\xe2\x82\xac");
  // Without an extended one, the first plain one (here the joined
  // continuations, which carry no charset).
  params = parse_params("; name*0=\"a\"; name*1=\"b\"; name=\"x\"");
  ASSERT_EQ(params.size(), 2u);
  EXPECT_EQ(find_param(params, "name")->value, "ab");
  params = parse_params("; name=\"x\"; name*0=\"a\"; name*1=\"b\"");
  EXPECT_EQ(find_param(params, "name")->value, "x");
}

struct ContentTypeCase {
  std::string input;
  bool ok;
  std::string type;
  std::string subtype;
  size_t params;
};

TEST(ParseContentType, Table) {
  const std::vector<ContentTypeCase> cases = {
      {"text/plain", true, "text", "plain", 0},
      {" Text/HTML; charset=utf-8", true, "Text", "HTML", 1},
      {"multipart/mixed;\r\n boundary=\"b\"", true, "multipart", "mixed", 1},
      {"text / plain ; a=1", true, "text", "plain", 1},
      {"(comment) text/plain (c); a=1", true, "text", "plain", 1},
      {"text/plain;a=1", true, "text", "plain", 1},
      {"application/vnd.ms-excel", true, "application", "vnd.ms-excel", 0},
      {"text/plain (c)", true, "text", "plain", 0},
      {"text/plain ;", true, "text", "plain", 0},
      {"text/plain;\r\n (c)", true, "text", "plain", 0},
      {"text/plain\r\n\t; a=1", true, "text", "plain", 1},
      {"text/plain; a=1 junk", true, "text", "plain", 1},
      // Only comments, white space and ";" parameters may follow the subtype
      // (RFC 2045 §5.1): anything else makes the field invalid (rw-34).
      {"text/html/plain; charset=utf-8", false, "", "", 0},
      {"text/plain/extra; a=1", false, "", "", 0},
      {"text/plain charset=utf-8", false, "", "", 0},
      {"text/html, text/plain; charset=utf-8", false, "", "", 0},
      {"text/html \"x\"; charset=utf-8", false, "", "", 0},
      {"text/plain (c) junk", false, "", "", 0},
      {"text/plain=", false, "", "", 0},
      {"", false, "", "", 0},
      {"text", false, "", "", 0},
      {"text/", false, "", "", 0},
      {"/plain", false, "", "", 0},
      {"; charset=utf-8", false, "", "", 0},
      {"text plain", false, "", "", 0},
  };
  for (const ContentTypeCase& c : cases) {
    SCOPED_TRACE(c.input);
    std::optional<ContentType> ct = parse_content_type(c.input);
    ASSERT_EQ(ct.has_value(), c.ok);
    if (ct) {
      EXPECT_EQ(ct->type, c.type);
      EXPECT_EQ(ct->subtype, c.subtype);
      EXPECT_EQ(ct->params.size(), c.params);
    }
  }
}

TEST(ParseContentType, Predicates) {
  EXPECT_TRUE(parse_content_type("Multipart/Alternative")->is_multipart());
  EXPECT_TRUE(parse_content_type("message/RFC822")->is_message_rfc822());
  EXPECT_TRUE(parse_content_type("message/global")->is_message_rfc822());
  EXPECT_FALSE(parse_content_type("message/partial")->is_message_rfc822());
  EXPECT_TRUE(parse_content_type("TEXT/x-whatever")->is_text());
  EXPECT_TRUE(parse_content_type("text/plain")->is("TEXT", "Plain"));
  EXPECT_FALSE(parse_content_type("text/plain")->is("text", "html"));
}

TEST(ParseDisposition, Table) {
  std::optional<Disposition> d =
      parse_disposition("attachment;\r\n filename*=utf-8''%E2%82%AC.pdf; size=12");
  ASSERT_TRUE(d.has_value());
  EXPECT_EQ(d->type, "attachment");
  ASSERT_EQ(d->params.size(), 2u);
  EXPECT_EQ(d->params[0].name, "filename");
  EXPECT_EQ(d->params[0].value, "\xe2\x82\xac.pdf");
  EXPECT_TRUE(d->params[0].extended);

  d = parse_disposition(" INLINE ");
  ASSERT_TRUE(d.has_value());
  EXPECT_EQ(d->type, "INLINE");
  EXPECT_TRUE(d->params.empty());

  EXPECT_FALSE(parse_disposition("").has_value());
  EXPECT_FALSE(parse_disposition("; filename=x").has_value());
}

}  // namespace
}  // namespace peregrine::mime
