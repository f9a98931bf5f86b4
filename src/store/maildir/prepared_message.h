#pragma once

// The Maildir store's PreparedMessage (store/api/types.h): the cache record
// and the full-text term record of a message, made on a SyncThreads task
// before its append, so that the append's strand only stages and commits.
//
// The work depends on the bytes and on two options fixed while a store is
// open (the full-text index on or off, the size limit), so it reads nothing
// of the store and may start on any thread (the IMAP connection's, as soon
// as it has framed a pipelined APPEND).
//
// Thread safety: prepare_messages() may be called from any thread. A handle
// is used by one thread at a time (made on one, taken and destroyed on
// others is fine); its task runs on a sync thread and is waited for by
// take() and by the destructor.

#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "store/api/types.h"
#include "store/maildir/term_record.h"

namespace peregrine::store::maildir {

// What append() stores from a message's bytes alone.
struct AppendParts {
  std::string record;      // the serialized cache record
  TermRecord term_record;  // empty when the full-text index is off
};

// The parts of a message whose bytes already have CRLF line ends, from one
// parse.
AppendParts analyze_for_append(std::string_view bytes, bool full_text_index);

struct PrepareOptions {
  bool full_text_index = true;
  std::uint64_t max_message_size = 0;  // larger messages are not analysed (append refuses them)
};

class MaildirPreparedMessage final : public PreparedMessage {
 public:
  struct State;
  explicit MaildirPreparedMessage(std::shared_ptr<State> state);
  // Waits for the task (which skips this message if it has not started it).
  ~MaildirPreparedMessage() override;

  std::string_view source() const override;
  // Whether it was made from bytes equal to `bytes`.
  bool made_from(std::string_view bytes) const;
  // Waits for the work and hands its results over; nullopt when there are
  // none (the message was too big, the work failed, or they were taken).
  std::optional<AppendParts> take();

 private:
  std::shared_ptr<State> state_;
};

// Starts the analysis of each message, in order, on one SyncThreads task
// (one task, not one each: the first is wanted first). Each message's bytes
// must outlive its handle.
std::vector<std::unique_ptr<PreparedMessage>> prepare_messages(
    std::span<const std::string_view> messages, const PrepareOptions& options);

}  // namespace peregrine::store::maildir
