// SORT and UID SORT (RFC 5256), the DISPLAYFROM and DISPLAYTO keys
// (RFC 5957 SORT=DISPLAY) and the ESORT result options MIN, MAX, COUNT and
// ALL (RFC 5267 §4.2). The order itself is search::Sorter's.

#include "search/sort.h"

#include "imap/proto/response_writer.h"
#include "imap/server/commands/commands.h"
#include "imap/server/commands/sort_thread_input.h"

namespace peregrine::imap::commands {
namespace {

search::SortField field_of(SortKey key) {
  switch (key) {
    case SortKey::kArrival:
      return search::SortField::kArrival;
    case SortKey::kCc:
      return search::SortField::kCc;
    case SortKey::kDate:
      return search::SortField::kDate;
    case SortKey::kFrom:
      return search::SortField::kFrom;
    case SortKey::kSize:
      return search::SortField::kSize;
    case SortKey::kSubject:
      return search::SortField::kSubject;
    case SortKey::kTo:
      return search::SortField::kTo;
    case SortKey::kDisplayFrom:
      return search::SortField::kDisplayFrom;
    case SortKey::kDisplayTo:
      return search::SortField::kDisplayTo;
  }
  return search::SortField::kArrival;
}

}  // namespace

void sort(CommandContext& ctx) {
  const auto& args = std::get<Sort>(ctx.command.args);
  if (args.result_options && args.result_options->save) {
    return ctx.bad("SORT RETURN (SAVE) is not supported");
  }
  std::optional<std::vector<std::uint32_t>> selected = select_messages(ctx, args.key, args.charset);
  if (!selected) {
    return;
  }
  std::vector<search::SortCriterion> criteria;
  for (const SortCriterion& c : args.criteria) {
    criteria.push_back(search::SortCriterion{field_of(c.key), c.reverse});
  }
  search::Sorter sorter(criteria);
  sorter.reserve(selected->size());
  // The sorter refers to the keys: `held` keeps those the hub does not.
  const UncachedKeys held = for_each_message(
      ctx, *selected,
      [&](const search::MessageFacts& m, const search::MessageKeys* keys) { sorter.add(m, keys); },
      sorter.needs_records());
  std::vector<std::uint32_t> order = sorter.sorted();
  if (ctx.command.uid) {
    for (std::uint32_t& n : order) {
      n = ctx.view().uid_at(n);
    }
  }
  if (!args.result_options) {
    write_sort(ctx.out, order);
    return ctx.ok("Sort completed");
  }
  // ESORT: MIN and MAX are the first and last in sort order; ALL lists
  // them in sort order (RFC 5267 §4.2).
  ESearchResponse r =
      esearch_response(ctx.command.tag, ctx.command.uid, *args.result_options, order);
  write_esearch(ctx.out, r);
  ctx.ok("Sort completed");
}

}  // namespace peregrine::imap::commands
