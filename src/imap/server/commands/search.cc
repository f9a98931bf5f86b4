// SEARCH and UID SEARCH: every RFC 3501 key (search_eval.h), CHARSET, and
// the ESEARCH result options MIN, MAX, COUNT, ALL (RFC 4731).

#include "imap/proto/response_writer.h"
#include "imap/server/commands/commands.h"
#include "imap/server/search_eval.h"

namespace peregrine::imap::commands {

void search(CommandContext& ctx) {
  const auto& args = std::get<Search>(ctx.command.args);
  if (args.result_options && args.result_options->save) {
    return ctx.bad("SEARCH RETURN (SAVE) is not supported");
  }
  SelectedView& view = ctx.view();
  SearchEvaluator eval(view, ctx.store(), args.key, args.charset.value_or(""));
  if (const auto& e = eval.error()) {
    if (e->code == base::MailError::kNotFound) {
      const std::string supported[] = {"US-ASCII", "UTF-8"};
      return ctx.no(ResponseCode::bad_charset(supported), e->message);
    }
    return ctx.bad(e->message);
  }
  std::vector<std::uint32_t> found;
  for (std::uint32_t seq = 1; seq <= view.count(); ++seq) {
    if (eval.matches(seq)) {
      found.push_back(ctx.command.uid ? view.uid_at(seq) : seq);
    }
  }
  if (!args.result_options) {
    write_search(ctx.out, found);
    return ctx.ok("Search completed");
  }
  ESearchResponse r =
      esearch_response(ctx.command.tag, ctx.command.uid, *args.result_options, found);
  write_esearch(ctx.out, r);
  ctx.ok("Search completed");
}

}  // namespace peregrine::imap::commands
