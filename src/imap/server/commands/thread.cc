// THREAD and UID THREAD (RFC 5256) with the ORDEREDSUBJECT and REFERENCES
// algorithms (search/thread.h).

#include "search/thread.h"

#include "imap/proto/response_writer.h"
#include "imap/server/commands/commands.h"
#include "imap/server/commands/sort_thread_input.h"

namespace peregrine::imap::commands {

void thread(CommandContext& ctx) {
  const auto& args = std::get<Thread>(ctx.command.args);
  const bool references = args.algorithm == "REFERENCES";
  if (!references && args.algorithm != "ORDEREDSUBJECT") {
    return ctx.bad("unknown threading algorithm");
  }
  std::optional<std::vector<std::uint32_t>> selected = select_messages(ctx, args.key, args.charset);
  if (!selected) {
    return;
  }
  std::vector<search::ThreadMessage> messages;
  messages.reserve(selected->size());
  (void)for_each_message(ctx, *selected,  // thread_message copies the keys
                         [&](const search::MessageFacts& m, const search::MessageKeys* keys) {
                           messages.push_back(search::thread_message(m, keys));
                         });
  std::vector<search::ThreadEntry> threads =
      references ? search::thread_references(std::move(messages))
                 : search::thread_ordered_subject(std::move(messages));
  std::vector<ThreadListNode> nodes;
  nodes.reserve(threads.size());
  for (const search::ThreadEntry& e : threads) {
    std::uint32_t id = e.seq;
    if (id != 0 && ctx.command.uid) {
      id = ctx.view().uid_at(id);
    }
    nodes.push_back(ThreadListNode{id, e.children});
  }
  write_thread(ctx.out, nodes);
  ctx.ok("Thread completed");
}

}  // namespace peregrine::imap::commands
