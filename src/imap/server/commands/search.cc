// SEARCH and UID SEARCH: every RFC 3501/9051 key, evaluated by
// search::evaluate (src/search) through select_messages, the one place
// SEARCH, SORT and THREAD evaluate a key; CHARSET (UTF-8, US-ASCII, and the
// charsets the MIME engine converts); the ESEARCH result options MIN, MAX,
// COUNT, ALL (RFC 4731) and SAVE (RFC 5182).

#include "imap/proto/response_writer.h"
#include "imap/server/commands/commands.h"
#include "imap/server/commands/sort_thread_input.h"

namespace peregrine::imap::commands {

void search(CommandContext& ctx) {
  const auto& args = std::get<Search>(ctx.command.args);
  SelectedView& view = ctx.view();
  const bool save = args.result_options && args.result_options->save;
  auto found = select_messages(ctx, args.key, args.charset.value_or(""));
  if (!found) {
    // RFC 5182 §2.1: a failed SEARCH with SAVE leaves "$" empty.
    if (save) {
      view.set_saved_result({});
    }
    return;
  }
  std::vector<std::uint32_t> numbers;
  numbers.reserve(found->size());
  for (std::uint32_t seq : *found) {
    numbers.push_back(ctx.command.uid ? view.uid_at(seq) : seq);
  }
  if (!args.result_options) {
    write_search(ctx.out, numbers);
    return ctx.ok("Search completed");
  }
  const SearchReturn& ret = *args.result_options;
  if (save) {
    // With MIN and/or MAX alone, only those are saved (RFC 5182 §2.1).
    std::vector<store::Uid> uids;
    if ((ret.min || ret.max) && !ret.all && !ret.count) {
      if (!found->empty() && ret.min) {
        uids.push_back(view.uid_at(found->front()));
      }
      if (!found->empty() && ret.max && (!ret.min || found->size() > 1)) {
        uids.push_back(view.uid_at(found->back()));
      }
    } else {
      uids.reserve(found->size());
      for (std::uint32_t seq : *found) {
        uids.push_back(view.uid_at(seq));
      }
    }
    view.set_saved_result(std::move(uids));
    if (!ret.min && !ret.max && !ret.all && !ret.count) {
      // SAVE alone: no ESEARCH response (RFC 5182 §2.1).
      return ctx.ok("Search completed, result saved");
    }
  }
  write_esearch(ctx.out, esearch_response(ctx.command.tag, ctx.command.uid, ret, numbers));
  ctx.ok("Search completed");
}

}  // namespace peregrine::imap::commands
