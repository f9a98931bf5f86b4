#include "imap/proto/response_writer.h"

#include <charconv>

#include "imap/proto/wire_string.h"

namespace peregrine::imap {
namespace {

std::string_view status_name(ResponseStatus status) {
  switch (status) {
    case ResponseStatus::kOk:
      return "OK";
    case ResponseStatus::kNo:
      return "NO";
    case ResponseStatus::kBad:
      return "BAD";
    case ResponseStatus::kPreauth:
      return "PREAUTH";
    case ResponseStatus::kBye:
      return "BYE";
  }
  return "BAD";
}

void append_text(std::string& out, std::string_view text) {
  for (char c : text) {
    out += (c == '\r' || c == '\n' || c == '\0') ? ' ' : c;
  }
}

void append_status(std::string& out, std::string_view tag, ResponseStatus status,
                   const ResponseCode* code, std::string_view text) {
  out += tag;
  out += ' ';
  out += status_name(status);
  if (code != nullptr) {
    out += " [";
    out += code->text();
    out += ']';
  }
  if (!text.empty()) {
    out += ' ';
    append_text(out, text);
  }
  out += "\r\n";
}

void append_count(std::string& out, uint32_t n, std::string_view name) {
  out += "* ";
  append_number(out, n);
  out += ' ';
  out += name;
  out += "\r\n";
}

void append_atoms(std::string& out, std::span<const std::string> atoms) {
  for (size_t i = 0; i < atoms.size(); ++i) {
    if (i > 0) {
      out += ' ';
    }
    out += atoms[i];
  }
}

// A quoted single character, or NIL.
void append_delimiter(std::string& out, std::optional<char> d) {
  if (!d) {
    out += "NIL";
    return;
  }
  out += '"';
  if (*d == '"' || *d == '\\') {
    out += '\\';
  }
  out += *d;
  out += '"';
}

void append_numbers(std::string& out, std::string_view name, std::span<const uint32_t> numbers,
                    std::optional<uint64_t> modseq) {
  out += "* ";
  out += name;
  // Written in place: a SEARCH answer may hold 100,000 numbers, and growing
  // the string number by number cost more than the digits (at most 11
  // bytes each, space included).
  size_t at = out.size();
  out.resize(at + numbers.size() * 11);
  for (uint32_t n : numbers) {
    out[at++] = ' ';
    at = static_cast<size_t>(std::to_chars(out.data() + at, out.data() + at + 10, n).ptr -
                             out.data());
  }
  out.resize(at);
  if (modseq) {
    out += " (MODSEQ ";
    append_number(out, *modseq);
    out += ')';
  }
  out += "\r\n";
}

void append_list_entry(std::string& out, std::string_view name, const ListEntry& e) {
  out += "* ";
  out += name;
  out += " (";
  append_atoms(out, e.attributes);
  out += ") ";
  append_delimiter(out, e.delimiter);
  out += ' ';
  append_astring(out, e.mailbox);
  if (!e.child_info.empty() || e.old_name) {
    out += " (";
    bool first = true;
    if (!e.child_info.empty()) {
      out += "\"CHILDINFO\" (";
      for (size_t i = 0; i < e.child_info.size(); ++i) {
        if (i > 0) {
          out += ' ';
        }
        append_string(out, e.child_info[i]);
      }
      out += ')';
      first = false;
    }
    if (e.old_name) {
      out += first ? "" : " ";
      out += "\"OLDNAME\" (";
      append_astring(out, *e.old_name);
      out += ')';
    }
    out += ')';
  }
  out += "\r\n";
}

// Threads in pre-order (ThreadListNode), each top-level thread in its own
// parentheses: "(2)(3 6 (4 23)(44 7 96))". A count of children larger than
// the nodes that follow is cut short, never read past the end.
void append_thread_lists(std::string& out, std::span<const ThreadListNode> nodes) {
  struct Frame {
    uint32_t total;  // child lists of this branching
    uint32_t next;   // lists opened so far
  };
  std::vector<Frame> open;
  size_t i = 0;
  while (i < nodes.size()) {
    out += '(';
    bool space = false;
    for (;;) {
      // A chain of single replies stays in one list: "3 6 ...".
      uint32_t children = 0;
      while (i < nodes.size()) {
        const ThreadListNode& n = nodes[i++];
        if (n.id != 0) {
          if (space) {
            out += ' ';
          }
          append_number(out, n.id);
          space = true;
        }
        children = n.children;
        if (children != 1) {
          break;
        }
      }
      if (children > 1) {
        if (space) {
          out += ' ';
        }
        open.push_back(Frame{children, 0});
      }
      // The next sibling list to open, closing finished ones: "(4 23)(44 ...".
      bool descended = false;
      while (!open.empty()) {
        Frame& f = open.back();
        if (f.next > 0) {
          out += ')';
        }
        if (f.next < f.total && i < nodes.size()) {
          out += '(';
          ++f.next;
          space = false;
          descended = true;
          break;
        }
        open.pop_back();
      }
      if (!descended) {
        break;
      }
    }
    out += ')';
  }
}

void append_namespaces(std::string& out, std::span<const Namespace> spaces) {
  if (spaces.empty()) {
    out += "NIL";
    return;
  }
  out += '(';
  for (const Namespace& ns : spaces) {
    out += '(';
    append_string(out, ns.prefix);
    out += ' ';
    append_delimiter(out, ns.delimiter);
    out += ')';
  }
  out += ')';
}

}  // namespace

void write_tagged(std::string& out, std::string_view tag, ResponseStatus status,
                  std::string_view text) {
  append_status(out, tag, status, nullptr, text);
}

void write_tagged(std::string& out, std::string_view tag, ResponseStatus status,
                  const ResponseCode& code, std::string_view text) {
  append_status(out, tag, status, &code, text);
}

void write_untagged(std::string& out, ResponseStatus status, std::string_view text) {
  append_status(out, "*", status, nullptr, text);
}

void write_untagged(std::string& out, ResponseStatus status, const ResponseCode& code,
                    std::string_view text) {
  append_status(out, "*", status, &code, text);
}

void write_continuation(std::string& out, std::string_view text) {
  out += "+ ";
  append_text(out, text);
  out += "\r\n";
}

void write_exists(std::string& out, uint32_t count) { append_count(out, count, "EXISTS"); }
void write_recent(std::string& out, uint32_t count) { append_count(out, count, "RECENT"); }
void write_expunge(std::string& out, uint32_t seq) { append_count(out, seq, "EXPUNGE"); }

void write_vanished(std::string& out, const SequenceSet& uids, bool earlier) {
  out += earlier ? "* VANISHED (EARLIER) " : "* VANISHED ";
  append_sequence_set(out, uids);
  out += "\r\n";
}

void write_flags(std::string& out, std::span<const std::string> flags) {
  out += "* FLAGS (";
  append_atoms(out, flags);
  out += ")\r\n";
}

void write_capability(std::string& out, std::span<const std::string> capabilities) {
  out += "* CAPABILITY";
  for (const std::string& c : capabilities) {
    out += ' ';
    out += c;
  }
  out += "\r\n";
}

void write_enabled(std::string& out, std::span<const std::string> capabilities) {
  out += "* ENABLED";
  for (const std::string& c : capabilities) {
    out += ' ';
    out += c;
  }
  out += "\r\n";
}

void write_list(std::string& out, const ListEntry& entry) { append_list_entry(out, "LIST", entry); }
void write_lsub(std::string& out, const ListEntry& entry) { append_list_entry(out, "LSUB", entry); }

void write_status(std::string& out, std::string_view mailbox, std::span<const StatusValue> values) {
  out += "* STATUS ";
  append_astring(out, mailbox);
  out += " (";
  for (size_t i = 0; i < values.size(); ++i) {
    if (i > 0) {
      out += ' ';
    }
    out += status_item_name(values[i].item);
    out += ' ';
    append_number(out, values[i].value);
  }
  out += ")\r\n";
}

void write_search(std::string& out, std::span<const uint32_t> numbers,
                  std::optional<uint64_t> modseq) {
  append_numbers(out, "SEARCH", numbers, modseq);
}

void write_sort(std::string& out, std::span<const uint32_t> numbers,
                std::optional<uint64_t> modseq) {
  append_numbers(out, "SORT", numbers, modseq);
}

void write_esearch(std::string& out, const ESearchResponse& r) {
  out += "* ESEARCH";
  if (!r.tag.empty()) {
    out += " (TAG ";
    append_string(out, r.tag);
    out += ')';
  }
  if (r.uid) {
    out += " UID";
  }
  auto field = [&](std::string_view name, std::optional<uint64_t> v) {
    if (v) {
      out += ' ';
      out += name;
      out += ' ';
      append_number(out, *v);
    }
  };
  field("MIN", r.min);
  field("MAX", r.max);
  field("COUNT", r.count);
  if (r.all && (r.all->saved || !r.all->ranges.empty())) {
    out += " ALL ";
    append_sequence_set(out, *r.all);
  }
  field("MODSEQ", r.modseq);
  out += "\r\n";
}

ESearchResponse esearch_response(std::string_view tag, bool uid, const SearchReturn& options,
                                 std::span<const uint32_t> numbers) {
  ESearchResponse r;
  r.tag = std::string(tag);
  r.uid = uid;
  if (!numbers.empty()) {
    if (options.min) {
      r.min = numbers.front();
    }
    if (options.max) {
      r.max = numbers.back();
    }
    if (options.all) {
      r.all = SequenceSet::from_sorted(numbers);
    }
  }
  if (options.count) {
    r.count = static_cast<uint32_t>(numbers.size());
  }
  return r;
}

void write_thread(std::string& out, std::span<const ThreadListNode> threads) {
  out += "* THREAD";
  if (!threads.empty()) {
    out += ' ';
  }
  append_thread_lists(out, threads);
  out += "\r\n";
}

void write_thread(std::string& out, std::span<const ThreadNode> threads) {
  std::vector<ThreadListNode> flat;
  std::vector<const ThreadNode*> stack;
  for (auto it = threads.rbegin(); it != threads.rend(); ++it) {
    stack.push_back(&*it);
  }
  while (!stack.empty()) {
    const ThreadNode* n = stack.back();
    stack.pop_back();
    flat.push_back(ThreadListNode{n->id, static_cast<uint32_t>(n->children.size())});
    for (auto it = n->children.rbegin(); it != n->children.rend(); ++it) {
      stack.push_back(&*it);
    }
  }
  write_thread(out, flat);
}

void write_namespace(std::string& out, std::span<const Namespace> personal,
                     std::span<const Namespace> other_users, std::span<const Namespace> shared) {
  out += "* NAMESPACE ";
  append_namespaces(out, personal);
  out += ' ';
  append_namespaces(out, other_users);
  out += ' ';
  append_namespaces(out, shared);
  out += "\r\n";
}

void write_id(std::string& out, const std::optional<std::vector<IdField>>& fields) {
  out += "* ID ";
  if (!fields || fields->empty()) {
    out += "NIL\r\n";
    return;
  }
  out += '(';
  for (size_t i = 0; i < fields->size(); ++i) {
    if (i > 0) {
      out += ' ';
    }
    append_string(out, (*fields)[i].name);
    out += ' ';
    append_nstring(out, (*fields)[i].value);
  }
  out += ")\r\n";
}

}  // namespace peregrine::imap
