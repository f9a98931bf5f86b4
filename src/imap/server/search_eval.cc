#include "imap/server/search_eval.h"

#include <unicode/unistr.h>

#include <algorithm>

#include "base/ascii.h"
#include "imap/proto/date_time.h"
#include "imap/server/commands/fetch_body.h"
#include "imap/server/mailbox_hub.h"
#include "mime/cache_record.h"
#include "mime/charset.h"
#include "mime/part.h"
#include "mime/search_text.h"

namespace peregrine::imap {

std::string fold_case(std::string_view utf8) {
  bool ascii = std::all_of(utf8.begin(), utf8.end(),
                           [](char c) { return static_cast<unsigned char>(c) < 0x80; });
  if (ascii) {
    return base::to_lower(utf8);
  }
  icu::UnicodeString s = icu::UnicodeString::fromUTF8(
      icu::StringPiece(utf8.data(), static_cast<int32_t>(utf8.size())));
  s.foldCase();
  std::string out;
  s.toUTF8String(out);
  return out;
}

// A key with its strings converted to folded UTF-8 and its set checked.
struct SearchEvaluator::Compiled {
  SearchKeyKind kind = SearchKeyKind::kAll;
  std::string field;   // kHeader: the field name
  std::string needle;  // folded
  std::int64_t day = 0;
  std::uint64_t number = 0;
  SequenceSet set;
  std::vector<Compiled> children;
};

// What is known of one message, loaded as keys need it.
struct SearchEvaluator::Message {
  std::uint32_t seq = 0;
  const store::MessageMeta* meta = nullptr;
  bool record_loaded = false;
  std::optional<mime::CacheRecord> record;
  bool text_loaded = false;
  std::optional<mime::SearchText> text;  // folded
};

namespace {

constexpr std::int64_t kSecondsPerDay = 86400;

std::int64_t floor_div(std::int64_t a, std::int64_t b) {
  return a / b - ((a % b != 0) && ((a < 0) != (b < 0)) ? 1 : 0);
}

// The day of a time as written in its own zone ("disregarding time and
// timezone", RFC 3501 §6.4.4).
std::int64_t local_day(std::int64_t utc_seconds, std::int64_t tz_minutes) {
  return floor_div(utc_seconds + tz_minutes * 60, kSecondsPerDay);
}

bool is_text_key(SearchKeyKind k) {
  switch (k) {
    case SearchKeyKind::kBcc:
    case SearchKeyKind::kBody:
    case SearchKeyKind::kCc:
    case SearchKeyKind::kFrom:
    case SearchKeyKind::kSubject:
    case SearchKeyKind::kText:
    case SearchKeyKind::kTo:
    case SearchKeyKind::kHeader:
      return true;
    default:
      return false;
  }
}

bool contains(std::string_view haystack, std::string_view needle) {
  return haystack.find(needle) != std::string_view::npos;
}

// HEADER field string: a line "Name: value" of the folded headers whose name
// is `field` and whose value holds `needle` (any value when it is empty).
bool header_matches(std::string_view headers, std::string_view field, std::string_view needle) {
  size_t pos = 0;
  while (pos < headers.size()) {
    size_t end = headers.find('\n', pos);
    std::string_view line = headers.substr(pos, end == std::string_view::npos ? end : end - pos);
    pos = end == std::string_view::npos ? headers.size() : end + 1;
    size_t colon = line.find(':');
    if (colon == std::string_view::npos || !base::iequals(line.substr(0, colon), field)) {
      continue;
    }
    if (contains(line.substr(colon + 1), needle)) {
      return true;
    }
  }
  return false;
}

}  // namespace

SearchEvaluator::SearchEvaluator(SelectedView& view, store::UserStore& store, const SearchKey& key,
                                 std::string_view charset, std::int64_t now)
    : view_(view), store_(store), now_(now) {
  bool utf8 =
      charset.empty() || base::iequals(charset, "UTF-8") || base::iequals(charset, "US-ASCII");
  if (!utf8 && !mime::is_known_charset(charset)) {
    error_ = base::Error{base::MailError::kNotFound, "unknown charset " + std::string(charset)};
    return;
  }
  // Iterative compile: the parser bounds the depth, but no recursion here
  // keeps the stack use flat anyway.
  root_ = std::make_unique<Compiled>();
  std::vector<std::pair<const SearchKey*, Compiled*>> todo = {{&key, root_.get()}};
  while (!todo.empty()) {
    auto [from, to] = todo.back();
    todo.pop_back();
    to->kind = from->kind;
    to->number = from->number;
    to->set = from->set;
    if (from->set.saved) {
      error_ = base::Error{base::MailError::kBadInput, "$ (SEARCHRES) is not supported"};
      return;
    }
    if (is_text_key(from->kind) || from->kind == SearchKeyKind::kKeyword ||
        from->kind == SearchKeyKind::kUnkeyword) {
      std::string text = from->text;
      if (!utf8) {
        text = mime::convert_to_utf8(text, charset).value_or(text);
      }
      to->needle = is_text_key(from->kind) ? fold_case(text) : text;
      to->field = from->field;
    }
    to->day = days_since_epoch(from->date);
    to->children.resize(from->children.size());
    for (size_t i = 0; i < from->children.size(); ++i) {
      todo.emplace_back(&from->children[i], &to->children[i]);
    }
  }
}

SearchEvaluator::~SearchEvaluator() = default;

bool SearchEvaluator::matches(std::uint32_t seq) {
  Message m;
  m.seq = seq;
  m.meta = view_.meta_at(seq);
  return m.meta != nullptr && root_ && eval(*root_, m);
}

bool SearchEvaluator::eval(const Compiled& key, Message& m) {
  const store::MessageMeta& meta = *m.meta;
  auto flag = [&](store::SystemFlags f) { return (meta.flags & f) != 0; };
  bool recent = view_.is_recent(meta.uid);
  auto record = [&]() -> const mime::CacheRecord* {
    if (!m.record_loaded) {
      m.record_loaded = true;
      auto entries = store_.cache_records(view_.hub().name(), store::UidSet{meta.uid});
      if (entries && !entries->empty()) {
        m.record = mime::deserialize(entries->front().record);
      }
    }
    return m.record ? &*m.record : nullptr;
  };
  auto text = [&]() -> const mime::SearchText* {
    if (!m.text_loaded) {
      m.text_loaded = true;
      LazyBody body(store_, view_.hub().name(), meta.uid);
      auto b = body.get();
      auto bytes = b ? (*b)->read_all() : base::Result<std::string>(std::unexpected(b.error()));
      if (bytes) {
        mime::Part root = mime::parse_message(*bytes);
        mime::SearchText t = mime::build_search_text(*bytes, root);
        for (std::string* s : {&t.from, &t.to, &t.cc, &t.bcc, &t.subject, &t.headers, &t.body}) {
          *s = fold_case(*s);
        }
        m.text = std::move(t);
      }
    }
    return m.text ? &*m.text : nullptr;
  };
  auto sent_day = [&]() {
    const mime::CacheRecord* r = record();
    if (r != nullptr && r->sent_date) {
      return local_day(r->sent_date->utc_seconds, r->sent_date->tz_offset_minutes);
    }
    return local_day(meta.internal_date.seconds, meta.internal_date.tz_minutes);
  };
  std::int64_t day = local_day(meta.internal_date.seconds, meta.internal_date.tz_minutes);
  auto has_keyword = [&] {
    return std::any_of(meta.keywords.begin(), meta.keywords.end(),
                       [&](const std::string& k) { return base::iequals(k, key.needle); });
  };
  const mime::SearchText* t = nullptr;
  if (is_text_key(key.kind) && (t = text()) == nullptr) {
    return false;
  }
  switch (key.kind) {
    case SearchKeyKind::kAll:
      return true;
    case SearchKeyKind::kAnswered:
      return flag(store::kFlagAnswered);
    case SearchKeyKind::kDeleted:
      return flag(store::kFlagDeleted);
    case SearchKeyKind::kDraft:
      return flag(store::kFlagDraft);
    case SearchKeyKind::kFlagged:
      return flag(store::kFlagFlagged);
    case SearchKeyKind::kNew:
      return recent && !flag(store::kFlagSeen);
    case SearchKeyKind::kOld:
      return !recent;
    case SearchKeyKind::kRecent:
      return recent;
    case SearchKeyKind::kSeen:
      return flag(store::kFlagSeen);
    case SearchKeyKind::kUnanswered:
      return !flag(store::kFlagAnswered);
    case SearchKeyKind::kUndeleted:
      return !flag(store::kFlagDeleted);
    case SearchKeyKind::kUndraft:
      return !flag(store::kFlagDraft);
    case SearchKeyKind::kUnflagged:
      return !flag(store::kFlagFlagged);
    case SearchKeyKind::kUnseen:
      return !flag(store::kFlagSeen);
    case SearchKeyKind::kKeyword:
      return has_keyword();
    case SearchKeyKind::kUnkeyword:
      return !has_keyword();
    case SearchKeyKind::kBcc:
      return contains(t->bcc, key.needle);
    case SearchKeyKind::kCc:
      return contains(t->cc, key.needle);
    case SearchKeyKind::kFrom:
      return contains(t->from, key.needle);
    case SearchKeyKind::kTo:
      return contains(t->to, key.needle);
    case SearchKeyKind::kSubject:
      return contains(t->subject, key.needle);
    case SearchKeyKind::kBody:
      return contains(t->body, key.needle);
    case SearchKeyKind::kText:
      return contains(t->headers, key.needle) || contains(t->body, key.needle);
    case SearchKeyKind::kHeader:
      return header_matches(t->headers, key.field, key.needle);
    case SearchKeyKind::kBefore:
      return day < key.day;
    case SearchKeyKind::kOn:
      return day == key.day;
    case SearchKeyKind::kSince:
      return day >= key.day;
    case SearchKeyKind::kSentBefore:
      return sent_day() < key.day;
    case SearchKeyKind::kSentOn:
      return sent_day() == key.day;
    case SearchKeyKind::kSentSince:
      return sent_day() >= key.day;
    case SearchKeyKind::kLarger:
      return meta.size > key.number;
    case SearchKeyKind::kSmaller:
      return meta.size < key.number;
    case SearchKeyKind::kOlder:
      return meta.internal_date.seconds <= now_ - static_cast<std::int64_t>(key.number);
    case SearchKeyKind::kYounger:
      return meta.internal_date.seconds > now_ - static_cast<std::int64_t>(key.number);
    case SearchKeyKind::kUid: {
      store::Uid largest = view_.count() == 0 ? 0 : view_.uid_at(view_.count());
      return key.set.contains(meta.uid, largest);
    }
    case SearchKeyKind::kSequenceSet:
      return key.set.contains(m.seq, view_.count());
    case SearchKeyKind::kModSeq:
      return meta.modseq >= key.number;
    case SearchKeyKind::kNot:
      return !eval(key.children[0], m);
    case SearchKeyKind::kOr:
      return eval(key.children[0], m) || eval(key.children[1], m);
    case SearchKeyKind::kAnd:
      return std::all_of(key.children.begin(), key.children.end(),
                         [&](const Compiled& c) { return eval(c, m); });
  }
  return false;
}

}  // namespace peregrine::imap
