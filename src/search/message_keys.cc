#include "search/message_keys.h"

#include "search/base_subject.h"

namespace peregrine::search {

MessageKeys message_keys(mime::CacheRecord record) {
  MessageKeys k;
  BaseSubject subject = extract_base_subject(record.subject);
  k.subject = ascii_casemap(subject.text);
  k.reply_or_forward = subject.reply_or_forward;
  k.from = ascii_casemap(record.from_mailbox);
  k.to = ascii_casemap(record.to_mailbox);
  k.cc = ascii_casemap(record.cc_mailbox);
  k.display_from = ascii_casemap(record.from_display);
  k.display_to = ascii_casemap(record.to_display);
  k.record = std::move(record);
  return k;
}

}  // namespace peregrine::search
