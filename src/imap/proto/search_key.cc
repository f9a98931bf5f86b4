#include "imap/proto/search_key.h"

#include "imap/proto/wire_string.h"

namespace peregrine::imap {
namespace {

struct KeyInfo {
  SearchKeyKind kind;
  const char* name;
};

constexpr KeyInfo kNames[] = {
    {SearchKeyKind::kAll, "ALL"},
    {SearchKeyKind::kAnswered, "ANSWERED"},
    {SearchKeyKind::kDeleted, "DELETED"},
    {SearchKeyKind::kDraft, "DRAFT"},
    {SearchKeyKind::kFlagged, "FLAGGED"},
    {SearchKeyKind::kNew, "NEW"},
    {SearchKeyKind::kOld, "OLD"},
    {SearchKeyKind::kRecent, "RECENT"},
    {SearchKeyKind::kSeen, "SEEN"},
    {SearchKeyKind::kUnanswered, "UNANSWERED"},
    {SearchKeyKind::kUndeleted, "UNDELETED"},
    {SearchKeyKind::kUndraft, "UNDRAFT"},
    {SearchKeyKind::kUnflagged, "UNFLAGGED"},
    {SearchKeyKind::kUnseen, "UNSEEN"},
    {SearchKeyKind::kKeyword, "KEYWORD"},
    {SearchKeyKind::kUnkeyword, "UNKEYWORD"},
    {SearchKeyKind::kBcc, "BCC"},
    {SearchKeyKind::kBody, "BODY"},
    {SearchKeyKind::kCc, "CC"},
    {SearchKeyKind::kFrom, "FROM"},
    {SearchKeyKind::kSubject, "SUBJECT"},
    {SearchKeyKind::kText, "TEXT"},
    {SearchKeyKind::kTo, "TO"},
    {SearchKeyKind::kHeader, "HEADER"},
    {SearchKeyKind::kBefore, "BEFORE"},
    {SearchKeyKind::kOn, "ON"},
    {SearchKeyKind::kSince, "SINCE"},
    {SearchKeyKind::kSentBefore, "SENTBEFORE"},
    {SearchKeyKind::kSentOn, "SENTON"},
    {SearchKeyKind::kSentSince, "SENTSINCE"},
    {SearchKeyKind::kLarger, "LARGER"},
    {SearchKeyKind::kSmaller, "SMALLER"},
    {SearchKeyKind::kOlder, "OLDER"},
    {SearchKeyKind::kYounger, "YOUNGER"},
    {SearchKeyKind::kUid, "UID"},
    {SearchKeyKind::kSequenceSet, ""},
    {SearchKeyKind::kModSeq, "MODSEQ"},
    {SearchKeyKind::kNot, "NOT"},
    {SearchKeyKind::kOr, "OR"},
    {SearchKeyKind::kAnd, ""},
};

const char* name_of(SearchKeyKind kind) {
  for (const KeyInfo& k : kNames) {
    if (k.kind == kind) {
      return k.name;
    }
  }
  return "";
}

}  // namespace

bool SearchKey::operator==(const SearchKey& o) const {
  return kind == o.kind && field == o.field && text == o.text && date == o.date &&
         number == o.number && set == o.set && children == o.children;
}

void append_search_key(std::string& out, const SearchKey& key) {
  using K = SearchKeyKind;
  switch (key.kind) {
    case K::kKeyword:
    case K::kUnkeyword:
      out += name_of(key.kind);
      out += ' ';
      out += key.text;
      return;
    case K::kBcc:
    case K::kBody:
    case K::kCc:
    case K::kFrom:
    case K::kSubject:
    case K::kText:
    case K::kTo:
      out += name_of(key.kind);
      out += ' ';
      append_astring(out, key.text);
      return;
    case K::kHeader:
      out += "HEADER ";
      append_astring(out, key.field);
      out += ' ';
      append_astring(out, key.text);
      return;
    case K::kBefore:
    case K::kOn:
    case K::kSince:
    case K::kSentBefore:
    case K::kSentOn:
    case K::kSentSince:
      out += name_of(key.kind);
      out += ' ';
      append_date(out, key.date);
      return;
    case K::kLarger:
    case K::kSmaller:
    case K::kOlder:
    case K::kYounger:
      out += name_of(key.kind);
      out += ' ';
      append_number(out, key.number);
      return;
    case K::kUid:
      out += "UID ";
      append_sequence_set(out, key.set);
      return;
    case K::kSequenceSet:
      append_sequence_set(out, key.set);
      return;
    case K::kModSeq:
      out += "MODSEQ ";
      if (!key.field.empty()) {
        append_string(out, key.field);
        out += ' ';
        out += key.text;
        out += ' ';
      }
      append_number(out, key.number);
      return;
    case K::kNot:
    case K::kOr:
      out += name_of(key.kind);
      for (const SearchKey& child : key.children) {
        out += ' ';
        append_search_key(out, child);
      }
      return;
    case K::kAnd:
      out += '(';
      for (size_t i = 0; i < key.children.size(); ++i) {
        if (i > 0) {
          out += ' ';
        }
        append_search_key(out, key.children[i]);
      }
      out += ')';
      return;
    default:
      out += name_of(key.kind);
      return;
  }
}

std::string to_string(const SearchKey& key) {
  std::string out;
  append_search_key(out, key);
  return out;
}

}  // namespace peregrine::imap
