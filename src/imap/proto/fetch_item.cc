#include "imap/proto/fetch_item.h"

#include "imap/proto/wire_string.h"

namespace peregrine::imap {
namespace {

void append_section(std::string& out, const mime::SectionSpec& s) {
  out += '[';
  for (size_t i = 0; i < s.part.size(); ++i) {
    if (i > 0) {
      out += '.';
    }
    append_number(out, s.part[i]);
  }
  if (s.text != mime::SectionText::kNone && !s.part.empty()) {
    out += '.';
  }
  switch (s.text) {
    case mime::SectionText::kNone:
      break;
    case mime::SectionText::kHeader:
      out += "HEADER";
      break;
    case mime::SectionText::kText:
      out += "TEXT";
      break;
    case mime::SectionText::kMime:
      out += "MIME";
      break;
    case mime::SectionText::kHeaderFields:
    case mime::SectionText::kHeaderFieldsNot:
      out += s.text == mime::SectionText::kHeaderFields ? "HEADER.FIELDS (" : "HEADER.FIELDS.NOT (";
      for (size_t i = 0; i < s.fields.size(); ++i) {
        if (i > 0) {
          out += ' ';
        }
        append_astring(out, s.fields[i]);
      }
      out += ')';
      break;
  }
  out += ']';
}

const char* simple_name(FetchAttr attr) {
  switch (attr) {
    case FetchAttr::kEnvelope:
      return "ENVELOPE";
    case FetchAttr::kFlags:
      return "FLAGS";
    case FetchAttr::kInternalDate:
      return "INTERNALDATE";
    case FetchAttr::kRfc822:
      return "RFC822";
    case FetchAttr::kRfc822Header:
      return "RFC822.HEADER";
    case FetchAttr::kRfc822Size:
      return "RFC822.SIZE";
    case FetchAttr::kRfc822Text:
      return "RFC822.TEXT";
    case FetchAttr::kBody:
      return "BODY";
    case FetchAttr::kBodyStructure:
      return "BODYSTRUCTURE";
    case FetchAttr::kUid:
      return "UID";
    case FetchAttr::kModSeq:
      return "MODSEQ";
    case FetchAttr::kBodySection:
      return "BODY";
    case FetchAttr::kBinary:
      return "BINARY";
    case FetchAttr::kBinarySize:
      return "BINARY.SIZE";
  }
  return "";
}

bool has_section(FetchAttr attr) {
  return attr == FetchAttr::kBodySection || attr == FetchAttr::kBinary ||
         attr == FetchAttr::kBinarySize;
}

}  // namespace

bool FetchItem::operator==(const FetchItem& o) const {
  return attr == o.attr && peek == o.peek && section.part == o.section.part &&
         section.text == o.section.text && section.fields == o.section.fields &&
         partial == o.partial;
}

void append_fetch_item_name(std::string& out, const FetchItem& item) {
  out += simple_name(item.attr);
  if (!has_section(item.attr)) {
    return;
  }
  append_section(out, item.section);
  if (item.partial) {
    out += '<';
    append_number(out, item.partial->offset);
    out += '>';
  }
}

void append_fetch_item_request(std::string& out, const FetchItem& item) {
  out += simple_name(item.attr);
  if (!has_section(item.attr)) {
    return;
  }
  if (item.peek) {
    out += ".PEEK";
  }
  append_section(out, item.section);
  if (item.partial) {
    out += '<';
    append_number(out, item.partial->offset);
    out += '.';
    append_number(out, item.partial->length);
    out += '>';
  }
}

}  // namespace peregrine::imap
