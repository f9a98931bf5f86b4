// SEARCH and UID SEARCH: every RFC 3501/9051 key, evaluated by
// search::evaluate (src/search); CHARSET (UTF-8, US-ASCII, and the
// charsets the MIME engine converts); the ESEARCH
// result options MIN, MAX, COUNT, ALL (RFC 4731) and SAVE (RFC 5182).

#include "imap/proto/response_writer.h"
#include "imap/server/commands/commands.h"
#include "imap/server/search_view.h"
#include "search/search_program.h"

namespace peregrine::imap::commands {

void search(CommandContext& ctx) {
  const auto& args = std::get<Search>(ctx.command.args);
  SelectedView& view = ctx.view();
  const bool save = args.result_options && args.result_options->save;
  const std::string charset = args.charset.value_or("");
  if (!search::charset_supported(charset)) {
    // RFC 5182 §2.1: a failed SEARCH with SAVE leaves "$" empty.
    if (save) {
      view.set_saved_result({});
    }
    const std::string supported[] = {"US-ASCII", "UTF-8"};
    return ctx.no(ResponseCode::bad_charset(supported), "unknown charset " + charset);
  }
  // "$" reads the result saved before this command, even when it saves anew.
  const std::vector<store::Uid> saved = view.saved_result();
  search::SearchOptions options;
  options.charset = charset;
  options.saved = &saved;
  auto found = search::evaluate(SearchView(view), ctx.store(), args.key, options);
  if (!found) {
    if (save) {
      view.set_saved_result({});
    }
    return ctx.fail(found.error(), /*bad_input_is_bad=*/true);
  }
  auto number = [&](std::uint32_t seq) { return ctx.command.uid ? view.uid_at(seq) : seq; };
  if (!args.result_options) {
    std::vector<std::uint32_t> numbers;
    numbers.reserve(found->size());
    for (std::uint32_t seq : *found) {
      numbers.push_back(number(seq));
    }
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
  ESearchResponse r;
  r.tag = ctx.command.tag;
  r.uid = ctx.command.uid;
  if (!found->empty()) {
    if (ret.min) {
      r.min = number(found->front());
    }
    if (ret.max) {
      r.max = number(found->back());
    }
    if (ret.all) {
      std::vector<std::uint32_t> numbers;
      numbers.reserve(found->size());
      for (std::uint32_t seq : *found) {
        numbers.push_back(number(seq));
      }
      r.all = SequenceSet::from_sorted(numbers);
    }
  }
  if (ret.count) {
    r.count = static_cast<std::uint32_t>(found->size());
  }
  write_esearch(ctx.out, r);
  ctx.ok("Search completed");
}

}  // namespace peregrine::imap::commands
