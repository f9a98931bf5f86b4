#include "mime/envelope.h"

#include <algorithm>

#include "base/ascii.h"

namespace peregrine::mime {
namespace {

using base::iequals;

// The ENVELOPE's fields, found in one pass over the header.
struct EnvelopeFields {
  const HeaderField* date = nullptr;
  const HeaderField* subject = nullptr;
  const HeaderField* from = nullptr;
  const HeaderField* sender = nullptr;
  const HeaderField* reply_to = nullptr;
  const HeaderField* to = nullptr;
  const HeaderField* cc = nullptr;
  const HeaderField* bcc = nullptr;
  const HeaderField* in_reply_to = nullptr;
  const HeaderField* message_id = nullptr;
};

// The slot for a field name, or nullptr when the ENVELOPE does not use it.
const HeaderField** slot_for(EnvelopeFields& f, std::string_view name) {
  switch (name.size()) {
    case 2:
      if (iequals(name, "To")) {
        return &f.to;
      }
      if (iequals(name, "Cc")) {
        return &f.cc;
      }
      return nullptr;
    case 3:
      return iequals(name, "Bcc") ? &f.bcc : nullptr;
    case 4:
      if (iequals(name, "Date")) {
        return &f.date;
      }
      return iequals(name, "From") ? &f.from : nullptr;
    case 6:
      return iequals(name, "Sender") ? &f.sender : nullptr;
    case 7:
      return iequals(name, "Subject") ? &f.subject : nullptr;
    case 8:
      return iequals(name, "Reply-To") ? &f.reply_to : nullptr;
    case 10:
      return iequals(name, "Message-ID") ? &f.message_id : nullptr;
    case 11:
      return iequals(name, "In-Reply-To") ? &f.in_reply_to : nullptr;
    default:
      return nullptr;
  }
}

std::optional<std::string> text_of(const HeaderField* field) {
  if (field == nullptr) {
    return std::nullopt;
  }
  return unfold(field->value);
}

std::vector<Address> addresses_of(const HeaderField* field) {
  if (field == nullptr) {
    return {};
  }
  return parse_address_list(field->value);
}

constexpr bool is_space(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; }

// Skips a comment starting at s[i] == '('; an unclosed one runs to the end.
size_t skip_comment(std::string_view s, size_t i) {
  size_t depth = 0;
  while (i < s.size()) {
    char c = s[i++];
    if (c == '\\') {
      ++i;
    } else if (c == '(') {
      ++depth;
    } else if (c == ')' && --depth == 0) {
      break;
    }
  }
  return std::min(i, s.size());
}

}  // namespace

Envelope build_envelope(const Header& header) {
  EnvelopeFields f;
  for (const HeaderField& field : header.fields()) {
    if (const HeaderField** slot = slot_for(f, field.name); slot != nullptr && *slot == nullptr) {
      *slot = &field;
    }
  }
  Envelope e;
  e.date = text_of(f.date);
  e.subject = text_of(f.subject);
  e.from = addresses_of(f.from);
  e.sender = addresses_of(f.sender);
  if (e.sender.empty()) {
    e.sender = e.from;
  }
  e.reply_to = addresses_of(f.reply_to);
  if (e.reply_to.empty()) {
    e.reply_to = e.from;
  }
  e.to = addresses_of(f.to);
  e.cc = addresses_of(f.cc);
  e.bcc = addresses_of(f.bcc);
  e.in_reply_to = text_of(f.in_reply_to);
  e.message_id = text_of(f.message_id);
  return e;
}

std::vector<std::string> parse_message_ids(std::string_view value) {
  std::vector<std::string> ids;
  std::vector<std::string> bare;
  size_t i = 0;
  while (i < value.size() && ids.size() < kMaxMessageIds) {
    char c = value[i];
    if (is_space(c) || c == ',') {
      ++i;
    } else if (c == '(') {
      i = skip_comment(value, i);
    } else if (c == '"') {
      // A quoted phrase ("Your message of ..."), not an id.
      for (++i; i < value.size() && value[i] != '"'; ++i) {
        if (value[i] == '\\') {
          ++i;
        }
      }
      i = std::min(i + 1, value.size());
    } else if (c == '<') {
      std::string id = "<";
      bool closed = false;
      for (++i; i < value.size();) {
        char d = value[i];
        if (d == '>') {
          closed = true;
          ++i;
          break;
        }
        if (d == '<') {
          break;
        }
        if (d == '(') {
          i = skip_comment(value, i);
        } else {
          if (!is_space(d)) {
            id += d;
          }
          ++i;
        }
      }
      // An unclosed id still counts when it looks like one.
      if (closed ? id.size() > 1 : id.find('@') != std::string::npos) {
        id += '>';
        ids.push_back(std::move(id));
      }
    } else {
      size_t start = i;
      while (i < value.size() && !is_space(value[i]) && value[i] != '<' && value[i] != '(' &&
             value[i] != ',' && value[i] != '"') {
        ++i;
      }
      std::string_view word = value.substr(start, i - start);
      if (word.find('@') != std::string_view::npos && bare.size() < kMaxMessageIds) {
        std::string id = "<";  // not "<" + std::string: a false -Wrestrict of GCC 12
        id += word;
        id += '>';
        bare.push_back(std::move(id));
      }
    }
  }
  // Words with '@' outside brackets are ids only when there is no bracketed
  // one: "In-Reply-To: message from joe@example.com of Monday <id@x>" names
  // one id, not two.
  return ids.empty() ? bare : ids;
}

}  // namespace peregrine::mime
