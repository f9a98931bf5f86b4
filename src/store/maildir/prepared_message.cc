#include "store/maildir/prepared_message.h"

#include <atomic>
#include <cstring>
#include <future>
#include <utility>

#include "mime/cache_record.h"
#include "store/maildir/maildir_user_store.h"
#include "store/maildir/names.h"
#include "store/maildir/sync_threads.h"

namespace peregrine::store::maildir {

struct MaildirPreparedMessage::State {
  std::string_view source;
  // Set by the handle's destructor: the task then skips this message.
  std::atomic<bool> abandoned{false};
  std::promise<void> done_promise;
  std::future<void> done = done_promise.get_future();
  // Written by the task before `done` is ready; read after it.
  std::optional<AppendParts> parts;
};

AppendParts analyze_for_append(std::string_view bytes, bool full_text_index) {
  mime::AnalyzedMessage analyzed = mime::analyze_message(bytes, full_text_index);
  AppendParts parts;
  parts.record = mime::serialize(analyzed.record);
  if (full_text_index) {
    parts.term_record = packed_search_text(std::move(analyzed.text));
  }
  return parts;
}

MaildirPreparedMessage::MaildirPreparedMessage(std::shared_ptr<State> state)
    : state_(std::move(state)) {}

MaildirPreparedMessage::~MaildirPreparedMessage() {
  state_->abandoned.store(true, std::memory_order_relaxed);
  state_->done.wait();
}

std::string_view MaildirPreparedMessage::source() const { return state_->source; }

bool MaildirPreparedMessage::made_from(std::string_view bytes) const {
  const std::string_view source = state_->source;
  return source.size() == bytes.size() &&
         (source.data() == bytes.data() ||
          std::memcmp(source.data(), bytes.data(), bytes.size()) == 0);
}

std::optional<AppendParts> MaildirPreparedMessage::take() {
  state_->done.wait();
  return std::exchange(state_->parts, std::nullopt);
}

std::vector<std::unique_ptr<PreparedMessage>> prepare_messages(
    std::span<const std::string_view> messages, const PrepareOptions& options) {
  std::vector<std::unique_ptr<PreparedMessage>> handles;
  if (messages.empty()) {
    return handles;
  }
  std::vector<std::shared_ptr<MaildirPreparedMessage::State>> states;
  states.reserve(messages.size());
  handles.reserve(messages.size());
  for (std::string_view bytes : messages) {
    auto state = std::make_shared<MaildirPreparedMessage::State>();
    state->source = bytes;
    states.push_back(state);
    handles.push_back(std::make_unique<MaildirPreparedMessage>(std::move(state)));
  }
  // The future of the task itself is not kept: each handle waits for its
  // own message's promise, which the task always sets.
  (void)sync_threads().run([states = std::move(states), options] {
    for (const auto& state : states) {
      const std::string_view bytes = state->source;
      if (!state->abandoned.load(std::memory_order_relaxed) && !bytes.empty() &&
          bytes.size() <= options.max_message_size) {
        try {
          // As append() stores it: with CRLF line ends.
          if (has_bare_lf(bytes)) {
            const std::string converted = to_crlf(bytes);
            state->parts = analyze_for_append(converted, options.full_text_index);
          } else {
            state->parts = analyze_for_append(bytes, options.full_text_index);
          }
        } catch (...) {
          state->parts.reset();  // append() then analyses the message itself
        }
      }
      state->done_promise.set_value();
    }
  });
  return handles;
}

}  // namespace peregrine::store::maildir
