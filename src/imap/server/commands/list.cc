// LIST and LSUB: "*" and "%" patterns, \Noselect, \HasChildren /
// \HasNoChildren (RFC 3348), special-use attributes (RFC 6154), and the
// LIST-EXTENDED (RFC 5258) options SUBSCRIBED, SPECIAL-USE and CHILDREN.

#include <map>
#include <set>

#include "base/ascii.h"
#include "imap/proto/response_writer.h"
#include "imap/server/commands/commands.h"

namespace peregrine::imap::commands {
namespace {

// Longer patterns cannot match a name the store accepts; refusing them
// bounds the matching work.
constexpr size_t kMaxPatternBytes = 1024;
constexpr char kDelimiter = store::kHierarchyDelimiter;

// "*" matches any run of characters, "%" any run without the delimiter
// (RFC 3501 §6.3.8). Dynamic programming over name positions, O(|p| |n|).
bool matches(std::string_view pattern, std::string_view name) {
  std::vector<char> row(name.size() + 1, 0);
  std::vector<char> next(name.size() + 1, 0);
  row[0] = 1;
  for (char p : pattern) {
    for (size_t j = 0; j <= name.size(); ++j) {
      if (p == '*') {
        next[j] = row[j] || (j > 0 && next[j - 1]);
      } else if (p == '%') {
        next[j] = row[j] || (j > 0 && name[j - 1] != kDelimiter && next[j - 1]);
      } else {
        next[j] = j > 0 && row[j - 1] && name[j - 1] == p;
      }
    }
    row.swap(next);
  }
  return row[name.size()] != 0;
}

// The pattern a name is matched against: reference and pattern joined, with
// INBOX as the first level matched in any case.
std::string full_pattern(std::string_view reference, std::string_view pattern) {
  std::string full = std::string(reference) + std::string(pattern);
  if (full.size() >= 5 && base::iequals(full.substr(0, 5), "INBOX") &&
      (full.size() == 5 || full[5] == kDelimiter || full[5] == '*' || full[5] == '%')) {
    full.replace(0, 5, "INBOX");
  }
  return full;
}

const char* special_use_attribute(store::SpecialUse use) {
  switch (use) {
    case store::SpecialUse::kNone:
      return nullptr;
    case store::SpecialUse::kAll:
      return "\\All";
    case store::SpecialUse::kArchive:
      return "\\Archive";
    case store::SpecialUse::kDrafts:
      return "\\Drafts";
    case store::SpecialUse::kFlagged:
      return "\\Flagged";
    case store::SpecialUse::kJunk:
      return "\\Junk";
    case store::SpecialUse::kSent:
      return "\\Sent";
    case store::SpecialUse::kTrash:
      return "\\Trash";
  }
  return nullptr;
}

struct ListOptions {
  bool select_subscribed = false;
  bool select_special_use = false;
  bool return_subscribed = false;
};

// Reads LIST-EXTENDED options; false (with `error`) for one not offered.
bool read_options(const List& args, ListOptions& options, std::string& error) {
  for (const ExtParam& p : args.selection) {
    if (p.name == "SUBSCRIBED") {
      options.select_subscribed = true;
      options.return_subscribed = true;
    } else if (p.name == "SPECIAL-USE") {
      options.select_special_use = true;
    } else if (p.name != "REMOTE") {
      error = "LIST selection option " + p.name + " is not supported";
      return false;
    }
  }
  for (const ExtParam& p : args.return_options) {
    if (p.name == "SUBSCRIBED") {
      options.return_subscribed = true;
    } else if (p.name != "CHILDREN" && p.name != "SPECIAL-USE") {
      error = "LIST return option " + p.name + " is not supported";
      return false;
    }
  }
  return true;
}

ListEntry entry_of(const store::MailboxEntry& m) {
  ListEntry e;
  e.delimiter = kDelimiter;
  e.mailbox = m.name;
  if (!m.selectable) {
    e.attributes.emplace_back("\\Noselect");
  }
  e.attributes.emplace_back(m.has_children ? "\\HasChildren" : "\\HasNoChildren");
  if (const char* use = special_use_attribute(m.special_use)) {
    e.attributes.emplace_back(use);
  }
  return e;
}

void lsub(CommandContext& ctx, const List& args, const std::vector<store::MailboxEntry>& all,
          const std::vector<std::string>& subscribed) {
  std::set<std::string, std::less<>> selectable;
  for (const store::MailboxEntry& m : all) {
    if (m.selectable) {
      selectable.insert(m.name);
    }
  }
  std::set<std::string, std::less<>> subs(subscribed.begin(), subscribed.end());
  std::map<std::string, bool> found;  // name -> \Noselect
  for (const std::string& pattern : args.patterns) {
    std::string full = full_pattern(args.reference, pattern);
    if (full.size() > kMaxPatternBytes) {
      continue;
    }
    for (const std::string& name : subscribed) {
      if (matches(full, name)) {
        found.emplace(name, !selectable.contains(name));
      }
      // With "%", a subscribed name below a matching level shows that level
      // as \Noselect when it is not subscribed itself (RFC 3501 §6.3.9).
      for (size_t d = name.find(kDelimiter); d != std::string::npos;
           d = name.find(kDelimiter, d + 1)) {
        std::string_view parent(name.data(), d);
        if (!subs.contains(parent) && matches(full, parent)) {
          found.emplace(std::string(parent), true);
        }
      }
    }
  }
  for (const auto& [name, noselect] : found) {
    ListEntry e;
    e.delimiter = kDelimiter;
    e.mailbox = name;
    if (noselect) {
      e.attributes.emplace_back("\\Noselect");
    }
    write_lsub(ctx.out, e);
  }
  ctx.ok("Lsub completed");
}

}  // namespace

void list(CommandContext& ctx) {
  const auto& args = std::get<List>(ctx.command.args);
  bool is_lsub = ctx.command.id == CommandId::kLsub;
  ListOptions options;
  std::string error;
  if (!read_options(args, options, error)) {
    return ctx.bad(error);
  }
  if (!is_lsub && !args.extended && args.patterns.size() == 1 && args.patterns[0].empty()) {
    // The hierarchy delimiter and root name (RFC 3501 §6.3.8).
    ListEntry root;
    root.attributes.emplace_back("\\Noselect");
    root.delimiter = kDelimiter;
    write_list(ctx.out, root);
    return ctx.ok("List completed");
  }
  auto all = ctx.store().list_mailboxes();
  if (!all) {
    return ctx.fail(all.error());
  }
  std::vector<std::string> subscribed;
  if (is_lsub || options.return_subscribed) {
    auto subs = ctx.store().list_subscriptions();
    if (!subs) {
      return ctx.fail(subs.error());
    }
    subscribed = std::move(*subs);
  }
  if (is_lsub) {
    return lsub(ctx, args, *all, subscribed);
  }
  std::set<std::string, std::less<>> subs(subscribed.begin(), subscribed.end());
  std::map<std::string, ListEntry> found;
  for (const std::string& pattern : args.patterns) {
    std::string full = full_pattern(args.reference, pattern);
    if (full.size() > kMaxPatternBytes) {
      continue;
    }
    std::set<std::string, std::less<>> existing;
    for (const store::MailboxEntry& m : *all) {
      existing.insert(m.name);
      if (!matches(full, m.name) || (options.select_subscribed && !subs.contains(m.name)) ||
          (options.select_special_use && m.special_use == store::SpecialUse::kNone)) {
        continue;
      }
      ListEntry e = entry_of(m);
      if (options.return_subscribed && subs.contains(m.name)) {
        e.attributes.emplace_back("\\Subscribed");
      }
      found.emplace(m.name, std::move(e));
    }
    if (options.select_subscribed) {
      for (const std::string& name : subscribed) {
        if (!existing.contains(name) && matches(full, name)) {
          ListEntry e;
          e.delimiter = kDelimiter;
          e.mailbox = name;
          e.attributes = {"\\NonExistent", "\\Subscribed"};
          found.emplace(name, std::move(e));
        }
      }
    }
  }
  for (const auto& [name, entry] : found) {
    write_list(ctx.out, entry);
  }
  ctx.ok("List completed");
}

}  // namespace peregrine::imap::commands
