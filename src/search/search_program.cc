#include "search/search_program.h"

#include <algorithm>
#include <optional>
#include <unordered_map>

#include "base/ascii.h"
#include "mime/cache_record.h"
#include "mime/case_fold.h"
#include "mime/charset.h"
#include "mime/part.h"
#include "mime/search_text.h"
#include "search/text_match.h"

namespace peregrine::search {
namespace {

using imap::SearchKey;
using imap::SearchKeyKind;

// One flag per sequence number (index 0 unused): the messages in question.
using Bits = std::vector<char>;

// Texts and cache records are fetched from the store this many at a time.
constexpr std::size_t kBatch = 256;
constexpr std::int64_t kSecondsPerDay = 86400;

std::int64_t floor_div(std::int64_t a, std::int64_t b) {
  return a / b - ((a % b != 0) && ((a < 0) != (b < 0)) ? 1 : 0);
}

// The day of a time as written in its own zone ("disregarding time and
// timezone", RFC 3501 §6.4.4).
std::int64_t local_day(std::int64_t utc_seconds, std::int64_t tz_minutes) {
  return floor_div(utc_seconds + tz_minutes * 60, kSecondsPerDay);
}

std::optional<TextTarget> text_target(SearchKeyKind kind) {
  switch (kind) {
    case SearchKeyKind::kBcc:
      return TextTarget::kBcc;
    case SearchKeyKind::kBody:
      return TextTarget::kBody;
    case SearchKeyKind::kCc:
      return TextTarget::kCc;
    case SearchKeyKind::kFrom:
      return TextTarget::kFrom;
    case SearchKeyKind::kSubject:
      return TextTarget::kSubject;
    case SearchKeyKind::kText:
      return TextTarget::kText;
    case SearchKeyKind::kTo:
      return TextTarget::kTo;
    case SearchKeyKind::kHeader:
      return TextTarget::kHeader;
    default:
      return std::nullopt;
  }
}

bool is_utf8_charset(std::string_view charset) {
  return charset.empty() || base::iequals(charset, "UTF-8") || base::iequals(charset, "US-ASCII");
}

bool is_sent_key(SearchKeyKind k) {
  return k == SearchKeyKind::kSentBefore || k == SearchKeyKind::kSentOn ||
         k == SearchKeyKind::kSentSince;
}

// How costly a key is to evaluate: metadata 0, cache records 1, text 2.
int cost(const SearchKey& key) {
  if (text_target(key.kind)) {
    return 2;
  }
  if (is_sent_key(key.kind)) {
    return 1;
  }
  int c = 0;
  for (const SearchKey& child : key.children) {
    c = std::max(c, cost(child));
  }
  return c;
}

class Evaluator {
 public:
  Evaluator(const MessageView& view, store::UserStore& store, const SearchOptions& options)
      : view_(view), store_(store), options_(options), count_(view.count()) {
    uids_.resize(count_ + 1);
    present_.resize(count_ + 1);
    view.fill(uids_, present_);
    present_[0] = 0;
  }

  // The messages not expunged.
  const Bits& all() const { return present_; }

  base::Result<Bits> eval(const SearchKey& key, const Bits& domain) {
    if (text_target(key.kind)) {
      return eval_texts({text_key(key)}, domain);
    }
    if (is_sent_key(key.kind)) {
      return eval_sent(key, domain);
    }
    switch (key.kind) {
      case SearchKeyKind::kAnd: {
        std::vector<const SearchKey*> order;
        for (const SearchKey& child : key.children) {
          order.push_back(&child);
        }
        std::stable_sort(order.begin(), order.end(), [](const SearchKey* a, const SearchKey* b) {
          return cost(*a) < cost(*b);
        });
        // The text keys of this AND go last and together, so a message
        // whose file must be read to confirm them is read once for all.
        Bits in = domain;
        std::vector<TextKey> texts;
        for (const SearchKey* child : order) {
          if (text_target(child->kind)) {
            texts.push_back(text_key(*child));
            continue;
          }
          auto r = eval(*child, in);
          if (!r) {
            return r;
          }
          in = std::move(*r);
        }
        return texts.empty() ? in : eval_texts(texts, in);
      }
      case SearchKeyKind::kOr: {
        auto left = eval(key.children[0], domain);
        if (!left) {
          return left;
        }
        Bits rest = domain;
        for (std::uint32_t seq = 1; seq <= count_; ++seq) {
          rest[seq] = rest[seq] && !(*left)[seq];
        }
        auto right = eval(key.children[1], rest);
        if (!right) {
          return right;
        }
        for (std::uint32_t seq = 1; seq <= count_; ++seq) {
          (*left)[seq] = (*left)[seq] || (*right)[seq];
        }
        return left;
      }
      case SearchKeyKind::kNot: {
        auto inner = eval(key.children[0], domain);
        if (!inner) {
          return inner;
        }
        Bits out = domain;
        for (std::uint32_t seq = 1; seq <= count_; ++seq) {
          out[seq] = out[seq] && !(*inner)[seq];
        }
        return out;
      }
      default: {
        // One answer per message in the domain, from the least the key
        // needs: a UID set over 100,000 messages would otherwise walk all
        // their metadata (about 88 bytes a message) to read each UID, which
        // uids_ holds; the flags the view keeps apart, a few bytes each.
        Bits out(count_ + 1, 0);
        auto each = [&](auto&& answer) {
          for (std::uint32_t seq = 1; seq <= count_; ++seq) {
            if (domain[seq]) {
              out[seq] = answer(seq);
            }
          }
        };
        if (answered_by_numbers(key.kind)) {
          each([&](std::uint32_t seq) { return by_numbers(key, seq); });
        } else if (answered_by_flags(key.kind)) {
          each([&](std::uint32_t seq) {
            const std::optional<store::SystemFlags> flags = view_.flags_at(seq);
            return flags && by_flags(key, uids_[seq], *flags);
          });
        } else {
          each([&](std::uint32_t seq) { return leaf(key, *view_.meta_at(seq)); });
        }
        return out;
      }
    }
  }

 private:
  // A text key (text_target(key.kind) is set) with its needle folded.
  TextKey text_key(const SearchKey& key) const {
    TextKey text;
    text.target = *text_target(key.kind);
    text.field = key.field;
    text.needle = mime::fold_case(utf8(key.text));
    return text;
  }

  // A key's string in UTF-8, from the SEARCH CHARSET.
  std::string utf8(const std::string& text) const {
    if (is_utf8_charset(options_.charset)) {
      return text;
    }
    return mime::convert_to_utf8(text, options_.charset).value_or(text);
  }

  bool in_saved(store::Uid uid) const {
    return options_.saved != nullptr &&
           std::binary_search(options_.saved->begin(), options_.saved->end(), uid);
  }

  // Keys answered from a message's sequence number and UID alone.
  static bool answered_by_numbers(SearchKeyKind kind) {
    return kind == SearchKeyKind::kAll || kind == SearchKeyKind::kUid ||
           kind == SearchKeyKind::kSequenceSet;
  }
  bool by_numbers(const SearchKey& key, std::uint32_t seq) const {
    switch (key.kind) {
      case SearchKeyKind::kUid:
        return key.set.saved ? in_saved(uids_[seq])
                             : key.set.contains(uids_[seq], count_ == 0 ? 0 : uids_[count_]);
      case SearchKeyKind::kSequenceSet:
        return key.set.saved ? in_saved(uids_[seq]) : key.set.contains(seq, count_);
      default:  // kAll
        return true;
    }
  }

  // Keys answered from a message's system flags (and \Recent, by UID) alone.
  static bool answered_by_flags(SearchKeyKind kind) {
    switch (kind) {
      case SearchKeyKind::kAnswered:
      case SearchKeyKind::kDeleted:
      case SearchKeyKind::kDraft:
      case SearchKeyKind::kFlagged:
      case SearchKeyKind::kNew:
      case SearchKeyKind::kOld:
      case SearchKeyKind::kRecent:
      case SearchKeyKind::kSeen:
      case SearchKeyKind::kUnanswered:
      case SearchKeyKind::kUndeleted:
      case SearchKeyKind::kUndraft:
      case SearchKeyKind::kUnflagged:
      case SearchKeyKind::kUnseen:
        return true;
      default:
        return false;
    }
  }
  bool by_flags(const SearchKey& key, store::Uid uid, store::SystemFlags flags) const {
    auto flag = [&](store::SystemFlags f) { return (flags & f) != 0; };
    switch (key.kind) {
      case SearchKeyKind::kAnswered:
        return flag(store::kFlagAnswered);
      case SearchKeyKind::kDeleted:
        return flag(store::kFlagDeleted);
      case SearchKeyKind::kDraft:
        return flag(store::kFlagDraft);
      case SearchKeyKind::kFlagged:
        return flag(store::kFlagFlagged);
      case SearchKeyKind::kNew:
        return view_.is_recent(uid) && !flag(store::kFlagSeen);
      case SearchKeyKind::kOld:
        return !view_.is_recent(uid);
      case SearchKeyKind::kRecent:
        return view_.is_recent(uid);
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
      default:
        return false;
    }
  }

  // A key answered from the metadata in memory (not those of
  // answered_by_numbers or answered_by_flags).
  bool leaf(const SearchKey& key, const store::MessageMeta& meta) const {
    auto has_keyword = [&] {
      return std::any_of(meta.keywords.begin(), meta.keywords.end(),
                         [&](const std::string& k) { return base::iequals(k, key.text); });
    };
    const std::int64_t day = local_day(meta.internal_date.seconds, meta.internal_date.tz_minutes);
    switch (key.kind) {
      case SearchKeyKind::kKeyword:
        return has_keyword();
      case SearchKeyKind::kUnkeyword:
        return !has_keyword();
      case SearchKeyKind::kBefore:
        return day < imap::days_since_epoch(key.date);
      case SearchKeyKind::kOn:
        return day == imap::days_since_epoch(key.date);
      case SearchKeyKind::kSince:
        return day >= imap::days_since_epoch(key.date);
      case SearchKeyKind::kLarger:
        return meta.size > key.number;
      case SearchKeyKind::kSmaller:
        return meta.size < key.number;
      case SearchKeyKind::kOlder:
        return meta.internal_date.seconds <= options_.now - static_cast<std::int64_t>(key.number);
      case SearchKeyKind::kYounger:
        return meta.internal_date.seconds > options_.now - static_cast<std::int64_t>(key.number);
      case SearchKeyKind::kModSeq:
        return meta.modseq >= key.number;
      default:
        return false;
    }
  }

  // The sequence numbers in `domain`, ascending.
  std::vector<std::uint32_t> members(const Bits& domain) const {
    std::vector<std::uint32_t> out;
    for (std::uint32_t seq = 1; seq <= count_; ++seq) {
      if (domain[seq]) {
        out.push_back(seq);
      }
    }
    return out;
  }

  store::UidSet uid_set(std::span<const std::uint32_t> seqs) const {
    store::UidSet set;
    for (std::uint32_t seq : seqs) {
      set.add(uids_[seq]);
    }
    return set;
  }

  // SENTBEFORE/SENTON/SENTSINCE: the Date header's day from the cache
  // record; the internal date when the message has no valid Date.
  base::Result<Bits> eval_sent(const SearchKey& key, const Bits& domain) {
    std::vector<std::uint32_t> seqs = members(domain);
    Bits out(count_ + 1, 0);
    const std::int64_t want = imap::days_since_epoch(key.date);
    for (std::size_t i = 0; i < seqs.size(); i += kBatch) {
      std::span<const std::uint32_t> chunk(seqs.data() + i, std::min(kBatch, seqs.size() - i));
      std::vector<std::uint32_t> need;
      for (std::uint32_t seq : chunk) {
        if (!sent_days_.contains(uids_[seq])) {
          need.push_back(seq);
        }
      }
      if (!need.empty()) {
        auto records = store_.cache_records(view_.mailbox(), uid_set(need));
        if (!records) {
          return std::unexpected(records.error());
        }
        for (const store::CacheEntry& e : *records) {
          auto record = mime::deserialize(e.record);
          if (record && record->sent_date) {
            sent_days_[e.uid] =
                local_day(record->sent_date->utc_seconds, record->sent_date->tz_offset_minutes);
          }
        }
      }
      for (std::uint32_t seq : chunk) {
        const store::MessageMeta& meta = *view_.meta_at(seq);
        auto it = sent_days_.find(uids_[seq]);
        std::int64_t day = it != sent_days_.end() ? it->second
                                                  : local_day(meta.internal_date.seconds,
                                                              meta.internal_date.tz_minutes);
        if (it == sent_days_.end()) {
          sent_days_[uids_[seq]] = day;
        }
        switch (key.kind) {
          case SearchKeyKind::kSentBefore:
            out[seq] = day < want;
            break;
          case SearchKeyKind::kSentOn:
            out[seq] = day == want;
            break;
          default:
            out[seq] = day >= want;
            break;
        }
      }
    }
    return out;
  }

  // The folded search text of a message, from its file (the extraction
  // APPEND indexes).
  std::optional<mime::SearchText> text_from_message(store::Uid uid) {
    auto body = store_.open_body(view_.mailbox(), uid);
    if (!body) {
      return std::nullopt;
    }
    auto bytes = (*body)->read_all();
    if (!bytes) {
      return std::nullopt;
    }
    mime::Part root = mime::parse_message(*bytes);
    mime::SearchText text = mime::build_search_text(*bytes, root);
    mime::fold_search_text(text);
    return text;
  }

  // The messages of `domain` holding every one of `keys`: each key's
  // candidates from the index narrow the set in turn; then each message
  // left is read once and checked against the keys the index could not
  // answer exactly.
  base::Result<Bits> eval_texts(const std::vector<TextKey>& keys, const Bits& domain) {
    Bits in = domain;
    std::vector<const TextKey*> to_confirm;
    for (const TextKey& key : keys) {
      if (key.needle.empty() && key.target != TextTarget::kHeader) {
        continue;  // every string contains ""
      }
      auto candidates = store_.text_candidates(view_.mailbox(), index_query(key));
      if (!candidates) {
        return std::unexpected(candidates.error());
      }
      if (!*candidates) {
        to_confirm.push_back(&key);  // the index cannot narrow it
        continue;
      }
      // Both ascending: one pass over the two.
      Bits kept(count_ + 1, 0);
      auto it = uids_.begin() + 1;
      for (store::Uid uid : (*candidates)->uids) {
        while (it != uids_.end() && *it < uid) {
          ++it;
        }
        if (it == uids_.end()) {
          break;
        }
        if (*it == uid) {
          const auto seq = static_cast<std::size_t>(it - uids_.begin());
          kept[seq] = in[seq];
        }
      }
      in = std::move(kept);
      if (!(*candidates)->exact || key.target == TextTarget::kHeader) {
        to_confirm.push_back(&key);
      }
    }
    if (to_confirm.empty()) {
      return in;  // the index's answer is the answer
    }
    // The index keeps no text: the candidates are confirmed from their
    // files, one message in memory at a time.
    for (std::uint32_t seq = 1; seq <= count_; ++seq) {
      if (!in[seq]) {
        continue;
      }
      std::optional<mime::SearchText> text = text_from_message(uids_[seq]);
      in[seq] = text && std::all_of(to_confirm.begin(), to_confirm.end(),
                                    [&](const TextKey* key) { return text_matches(*text, *key); });
    }
    return in;
  }

  const MessageView& view_;
  store::UserStore& store_;
  const SearchOptions& options_;
  const std::uint32_t count_;
  std::vector<store::Uid> uids_;  // by sequence number; [0] unused
  Bits present_;                  // meta_at(seq) != nullptr
  std::unordered_map<store::Uid, std::int64_t> sent_days_;
};

}  // namespace

void MessageView::fill(std::vector<store::Uid>& uids, std::vector<char>& present) const {
  for (std::uint32_t seq = 1; seq <= count(); ++seq) {
    uids[seq] = uid_at(seq);
    present[seq] = meta_at(seq) != nullptr;
  }
}

std::optional<store::SystemFlags> MessageView::flags_at(std::uint32_t seq) const {
  const store::MessageMeta* meta = meta_at(seq);
  return meta != nullptr ? std::optional(meta->flags) : std::nullopt;
}

bool charset_supported(std::string_view charset) {
  return is_utf8_charset(charset) || mime::is_known_charset(charset);
}

base::Result<std::vector<std::uint32_t>> evaluate(const MessageView& view, store::UserStore& store,
                                                  const imap::SearchKey& key,
                                                  const SearchOptions& options) {
  if (!charset_supported(options.charset)) {
    return base::fail(base::MailError::kBadInput,
                      "unsupported charset " + std::string(options.charset));
  }
  Evaluator evaluator(view, store, options);
  auto found = evaluator.eval(key, evaluator.all());
  if (!found) {
    return std::unexpected(found.error());
  }
  std::vector<std::uint32_t> out;
  for (std::uint32_t seq = 1; seq < found->size(); ++seq) {
    if ((*found)[seq]) {
      out.push_back(seq);
    }
  }
  return out;
}

}  // namespace peregrine::search
