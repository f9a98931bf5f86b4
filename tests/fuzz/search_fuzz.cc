// libFuzzer target for SORT/THREAD's algorithms (src/search): the base
// subject of the input's first line, and both threading algorithms over
// messages described by the remaining lines, so loops, duplicate ids and
// missing parents come up in every shape. Any broken invariant aborts, so
// the fuzzer saves the input. See tests/fuzz/README.md.
//
// A message line: "<id> <sent date byte> <subject...>|<ref> <ref> ...",
// where ids and references are short tokens (the first byte of each picks
// one of a few ids, so they collide often).

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "search/base_subject.h"
#include "search/sort.h"
#include "search/thread.h"

namespace peregrine::search {
namespace {

void check(bool ok, const char* what) {
  if (!ok) {
    std::fprintf(stderr, "search_fuzz: invariant broken: %s\n", what);
    std::abort();
  }
}

std::string_view next_line(std::string_view& in) {
  size_t nl = in.find('\n');
  std::string_view line = in.substr(0, nl);
  in.remove_prefix(nl == std::string_view::npos ? in.size() : nl + 1);
  return line;
}

std::string id_of(char c) { return "<" + std::to_string(static_cast<unsigned char>(c) % 16) + ">"; }

// The threads must hold every message exactly once, children counts must
// describe exactly the entries given, and a dummy appears only at the top
// with at least two children.
void check_threads(const std::vector<ThreadEntry>& threads, size_t messages) {
  std::vector<int> seen(messages + 1, 0);
  size_t i = 0;
  while (i < threads.size()) {
    std::vector<uint32_t> pending{1};  // subtrees still to read, per level
    bool top = true;
    while (!pending.empty()) {
      if (pending.back() == 0) {
        pending.pop_back();
        continue;
      }
      --pending.back();
      check(i < threads.size(), "children counts promise more entries than exist");
      const ThreadEntry& e = threads[i++];
      if (e.seq == 0) {
        check(top && e.children >= 2, "a dummy below the top or with fewer than two children");
      } else {
        check(e.seq <= messages, "unknown sequence number");
        ++seen[e.seq];
      }
      top = false;
      pending.push_back(e.children);
    }
  }
  for (size_t s = 1; s <= messages; ++s) {
    check(seen[s] == 1, "a message missing or repeated");
  }
}

}  // namespace
}  // namespace peregrine::search

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace peregrine::search;
  std::string_view in(reinterpret_cast<const char*>(data), size);

  std::string_view subject = next_line(in);
  BaseSubject base = extract_base_subject(subject);
  check(base.text.size() <= subject.size(), "base subject longer than the subject");
  check(extract_base_subject(base.text).text == base.text, "base subject not a fixed point");

  std::vector<ThreadMessage> messages;
  std::vector<SortCriterion> criteria = {{SortField::kSubject, false}, {SortField::kDate, true}};
  Sorter sorter(criteria);
  while (!in.empty() && messages.size() < 200) {
    std::string_view line = next_line(in);
    if (line.size() < 2) {
      continue;
    }
    peregrine::mime::CacheRecord record;
    record.message_id = line[0] == '-' ? "" : id_of(line[0]);
    record.sent_date = peregrine::mime::DateTime{static_cast<unsigned char>(line[1]) % 8, 0};
    std::string_view rest = line.substr(2);
    size_t bar = rest.find('|');
    record.subject = std::string(rest.substr(0, bar));
    if (bar != std::string_view::npos) {
      for (char c : rest.substr(bar + 1)) {
        if (c != ' ') {
          record.references.push_back(id_of(c));
        }
      }
    }
    MessageFacts facts{static_cast<uint32_t>(messages.size() + 1), 0, line.size()};
    messages.push_back(thread_message(facts, &record));
    sorter.add(facts, &record);
  }
  check_threads(thread_references(messages), messages.size());
  check_threads(thread_ordered_subject(messages), messages.size());
  std::vector<uint32_t> order = sorter.sorted();
  check(order.size() == messages.size(), "SORT lost a message");
  return 0;
}
