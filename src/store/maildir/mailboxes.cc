// Mailbox operations of MaildirUserStore: list, create, delete, rename,
// subscriptions, status, open, \Recent claims and watches.

#include <atomic>
#include <map>
#include <utility>

#include "store/maildir/maildir_user_store.h"
#include "store/maildir/names.h"

namespace peregrine::store::maildir {

using base::MailError;
using base::Result;

namespace {

// Every proper ancestor of a name: "A/B/C" -> "A", "A/B".
std::vector<std::string> ancestors(std::string_view name) {
  std::vector<std::string> out;
  for (std::size_t pos = name.find(kHierarchyDelimiter); pos != std::string_view::npos;
       pos = name.find(kHierarchyDelimiter, pos + 1)) {
    out.emplace_back(name.substr(0, pos));
  }
  return out;
}

}  // namespace

Result<std::vector<MailboxEntry>> MaildirUserStore::list_mailboxes() {
  auto rows = index_->all_mailboxes();
  if (!rows) {
    return std::unexpected(rows.error());
  }
  auto subscribed = index_->subscriptions();
  if (!subscribed) {
    return std::unexpected(subscribed.error());
  }
  std::set<std::string, std::less<>> subs(subscribed->begin(), subscribed->end());

  std::map<std::string, MailboxEntry, std::less<>> entries;
  for (const MailboxRow& row : *rows) {
    MailboxEntry& e = entries[row.name];
    e.name = row.name;
    e.selectable = true;
    e.special_use = row.special_use;
  }
  for (const MailboxRow& row : *rows) {
    for (std::string& parent : ancestors(row.name)) {
      auto [it, inserted] = entries.try_emplace(parent);
      if (inserted) {
        it->second.name = parent;
        it->second.selectable = false;
      }
      it->second.has_children = true;
    }
  }
  std::vector<MailboxEntry> out;
  out.reserve(entries.size());
  for (auto& [name, e] : entries) {
    e.subscribed = subs.contains(name);
    out.push_back(std::move(e));
  }
  return out;
}

Result<std::vector<std::string>> MaildirUserStore::list_subscriptions() {
  return index_->subscriptions();
}

Result<std::string> MaildirUserStore::new_mailbox_name(std::string_view name) {
  auto canonical = normalize_mailbox_name(name);
  if (!canonical) {
    return std::unexpected(canonical.error());
  }
  if (*canonical == kInbox) {
    return base::fail(MailError::kExists, "INBOX always exists");
  }
  auto existing = index_->find_mailbox(*canonical);
  if (!existing) {
    return std::unexpected(existing.error());
  }
  if (*existing) {
    return base::fail(MailError::kExists, "mailbox " + *canonical + " exists");
  }
  return canonical;
}

Result<void> MaildirUserStore::create_mailbox(std::string_view name, SpecialUse use) {
  auto canonical = new_mailbox_name(name);
  if (!canonical) {
    return std::unexpected(canonical.error());
  }
  // The folder first: a crash before the commit leaves a folder that the next
  // sync adopts, which is what was asked for.
  if (auto r = make_folder(mailbox_dir(*canonical), false); !r) {
    return r;
  }
  auto tx = index_->begin();
  if (!tx) {
    return std::unexpected(tx.error());
  }
  auto uidvalidity = take_uidvalidity();
  if (!uidvalidity) {
    return std::unexpected(uidvalidity.error());
  }
  MailboxRow row;
  row.name = *canonical;
  row.uidvalidity = *uidvalidity;
  row.special_use = use;
  if (auto id = index_->insert_mailbox(row); !id) {
    return std::unexpected(id.error());
  }
  return tx->commit();
}

Result<void> MaildirUserStore::delete_mailbox(std::string_view name) {
  auto canonical = normalize_mailbox_name(name);
  if (!canonical) {
    return std::unexpected(canonical.error());
  }
  if (*canonical == kInbox) {
    return base::fail(MailError::kNoPermission, "INBOX cannot be deleted");
  }
  auto row = require_mailbox(*canonical);
  if (!row) {
    return std::unexpected(row.error());
  }
  // No removal may be pending across the folder's rename below (or its
  // undoing): its entry would name a path that is no longer the file's.
  if (auto r = finish_removals(); !r) {
    return r;
  }
  // Take the folder out of the Maildir in one atomic rename (a name starting
  // with ".." is no Maildir++ folder), so no program sees it half-deleted;
  // then forget it in the index; then remove the files at leisure. A crash
  // before the commit leaves a mailbox whose folder is gone: the next sync
  // forgets it. A crash after leaves a "..deleted." directory: removed at
  // the next folder scan.
  static std::atomic<std::uint64_t> counter{0};
  std::filesystem::path dir = mailbox_dir(row->name);
  std::filesystem::path trash =
      maildir_ / ("..deleted." + std::to_string(row->id) + "." + std::to_string(now_micros()) +
                  "." + std::to_string(counter.fetch_add(1)));
  bool moved = false;
  if (auto r = fs_.rename(dir, trash); r) {
    moved = true;
  } else if (r.error().code != MailError::kNotFound) {
    return r;
  }
  if (moved) {
    if (auto r = fs_.sync_dir(maildir_); !r) {
      (void)fs_.rename(trash, dir);
      return r;
    }
  }
  auto tx = index_->begin();
  auto deleted = [&]() -> Result<void> {
    if (!tx) {
      return std::unexpected(tx.error());
    }
    if (auto r = index_->delete_mailbox(row->id); !r) {
      return r;
    }
    return tx->commit();
  }();
  if (!deleted) {
    if (moved) {
      (void)fs_.rename(trash, dir);
    }
    return deleted;
  }
  if (moved) {
    (void)remove_tree(trash);  // leftovers are removed at the next folder scan
  }
  listeners_.publish_mailbox_deleted(static_cast<std::uint64_t>(row->id));
  return {};
}

Result<void> MaildirUserStore::rename_mailbox(std::string_view from_name,
                                              std::string_view to_name) {
  auto from = normalize_mailbox_name(from_name);
  if (!from) {
    return std::unexpected(from.error());
  }
  auto to = new_mailbox_name(to_name);
  if (!to) {
    return std::unexpected(to.error());
  }
  // The folders' files move: no removal may be pending with their old paths.
  if (auto r = finish_removals(); !r) {
    return r;
  }
  if (*from == kInbox) {
    return rename_inbox(*to);
  }
  if (is_same_or_below(*to, *from)) {
    return base::fail(MailError::kBadInput, "cannot rename " + *from + " below itself");
  }
  auto from_row = require_mailbox(*from);
  if (!from_row) {
    return std::unexpected(from_row.error());
  }
  auto rows = index_->all_mailboxes();
  if (!rows) {
    return std::unexpected(rows.error());
  }

  struct Step {
    std::int64_t id;
    std::string old_name;
    std::string new_name;
  };
  std::vector<Step> steps;
  for (const MailboxRow& row : *rows) {
    if (!is_same_or_below(row.name, *from)) {
      continue;
    }
    std::string new_name = *to + row.name.substr(from->size());
    auto checked = normalize_mailbox_name(new_name);  // the length bound
    if (!checked) {
      return std::unexpected(checked.error());
    }
    auto clash = index_->find_mailbox(new_name);
    if (!clash) {
      return std::unexpected(clash.error());
    }
    if (*clash) {
      return base::fail(MailError::kExists, "mailbox " + new_name + " exists");
    }
    // A folder of that name that the index does not know (another program's)
    // would make the directory rename fail after the commit.
    if (auto info = fs_.stat(mailbox_dir(new_name)); info) {
      return base::fail(MailError::kExists,
                        "a folder directory for " + new_name + " exists in the Maildir");
    }
    steps.push_back(Step{row.id, row.name, std::move(new_name)});
  }

  // The index first, with the directory renames in its journal, in one
  // transaction; then the renames. A crash between is finished by the
  // journal replay at the next open or sync, so the index and the folders
  // never disagree for long, and no message is re-adopted with a new UID.
  auto tx = index_->begin();
  if (!tx) {
    return std::unexpected(tx.error());
  }
  for (const Step& s : steps) {
    if (auto r = index_->rename_mailbox(s.id, s.new_name); !r) {
      return r;
    }
    if (auto r = index_->add_pending_rename(folder_dir(s.old_name), folder_dir(s.new_name)); !r) {
      return r;
    }
    auto was = index_->remove_subscription(s.old_name);
    if (!was) {
      return std::unexpected(was.error());
    }
    if (*was) {
      if (auto r = index_->add_subscription(s.new_name); !r) {
        return std::unexpected(r.error());
      }
    }
  }
  if (auto r = tx->commit(); !r) {
    return r;
  }
  return replay_pending_renames();
}

Result<void> MaildirUserStore::rename_inbox(std::string_view to) {
  auto inbox = require_mailbox(kInbox);
  if (!inbox) {
    return std::unexpected(inbox.error());
  }
  // The journal below names each file as the index knows it: fold in any
  // rename another program made first.
  if (auto r = sync_row(*inbox); !r) {
    return r;
  }
  inbox = require_mailbox(kInbox);
  if (!inbox) {
    return std::unexpected(inbox.error());
  }
  std::filesystem::path to_dir = mailbox_dir(to);
  if (auto r = make_folder(to_dir, false); !r) {
    return r;
  }
  auto messages = index_->messages(inbox->id, UidSet::all());
  if (!messages) {
    return std::unexpected(messages.error());
  }
  const ModSeq modseq = inbox->highest_modseq + 1;
  std::vector<Uid> moved;
  {
    auto tx = index_->begin();
    if (!tx) {
      return std::unexpected(tx.error());
    }
    auto uidvalidity = take_uidvalidity();
    if (!uidvalidity) {
      return std::unexpected(uidvalidity.error());
    }
    MailboxRow row;
    row.name = std::string(to);
    row.uidvalidity = *uidvalidity;
    row.uidnext = inbox->uidnext;
    row.highest_modseq = inbox->highest_modseq;
    row.first_unclaimed_uid = inbox->first_unclaimed_uid;
    auto id = index_->insert_mailbox(row);
    if (!id) {
      return std::unexpected(id.error());
    }
    const std::string to_rel = folder_dir(to) + "/cur/";
    for (const MessageRow& m : *messages) {
      if (auto r = index_->add_pending_rename("cur/" + m.file_name, to_rel + m.file_name); !r) {
        return r;
      }
    }
    auto uids = index_->move_all_messages(inbox->id, *id, modseq);
    if (!uids) {
      return std::unexpected(uids.error());
    }
    moved = std::move(*uids);
    if (auto r = index_->set_counters(inbox->id, inbox->uidnext, modseq); !r) {
      return r;
    }
    if (auto r = tx->commit(); !r) {
      return r;
    }
  }
  auto replayed = replay_pending_renames();
  listeners_.publish_expunged(static_cast<std::uint64_t>(inbox->id), moved, modseq);
  return replayed;
}

Result<void> MaildirUserStore::subscribe(std::string_view name) {
  auto canonical = normalize_mailbox_name(name);
  if (!canonical) {
    return std::unexpected(canonical.error());
  }
  // False (subscribed already) is no error: SUBSCRIBE is idempotent.
  auto added = index_->add_subscription(*canonical);
  return added ? Result<void>{} : std::unexpected(added.error());
}

Result<void> MaildirUserStore::unsubscribe(std::string_view name) {
  auto canonical = normalize_mailbox_name(name);
  if (!canonical) {
    return std::unexpected(canonical.error());
  }
  auto removed = index_->remove_subscription(*canonical);
  if (removed && !*removed) {
    return base::fail(MailError::kNotFound, "not subscribed to " + *canonical);
  }
  return removed ? Result<void>{} : std::unexpected(removed.error());
}

Result<MailboxInfo> MaildirUserStore::status(std::string_view mailbox) {
  ReadScope read = index_->read_scope();
  auto row = require_mailbox(mailbox);
  if (!row) {
    return std::unexpected(row.error());
  }
  auto counts = index_->counts(*row);
  if (!counts) {
    return std::unexpected(counts.error());
  }
  auto subscribed = index_->is_subscribed(row->name);
  if (!subscribed) {
    return std::unexpected(subscribed.error());
  }
  MailboxInfo info;
  info.name = row->name;
  info.uidvalidity = row->uidvalidity;
  info.uidnext = row->uidnext;
  info.highest_modseq = row->highest_modseq;
  info.messages = counts->messages;
  info.unseen = counts->unseen;
  info.recent = counts->recent;
  info.size = counts->size;
  info.special_use = row->special_use;
  info.subscribed = *subscribed;
  return info;
}

Result<MailboxSnapshot> MaildirUserStore::open_mailbox(std::string_view mailbox) {
  ReadScope read = index_->read_scope();
  auto info = status(mailbox);
  if (!info) {
    return std::unexpected(info.error());
  }
  auto row = require_mailbox(info->name);
  if (!row) {
    return std::unexpected(row.error());
  }
  auto messages = index_->messages(row->id, UidSet::all());
  if (!messages) {
    return std::unexpected(messages.error());
  }
  MailboxSnapshot snapshot;
  snapshot.info = std::move(*info);
  snapshot.messages.reserve(messages->size());
  for (MessageRow& m : *messages) {
    snapshot.messages.push_back(std::move(m.meta));
  }
  return snapshot;
}

Result<std::vector<Uid>> MaildirUserStore::claim_recent(std::string_view mailbox) {
  auto row = require_mailbox(mailbox);
  if (!row) {
    return std::unexpected(row.error());
  }
  if (row->first_unclaimed_uid >= row->uidnext) {
    return std::vector<Uid>();
  }
  auto tx = index_->begin();
  if (!tx) {
    return std::unexpected(tx.error());
  }
  auto uids = index_->uids_from(row->id, row->first_unclaimed_uid);
  if (!uids) {
    return uids;
  }
  if (auto r = index_->set_first_unclaimed_uid(row->id, row->uidnext); !r) {
    return std::unexpected(r.error());
  }
  if (auto r = tx->commit(); !r) {
    return std::unexpected(r.error());
  }
  return uids;
}

Result<Watch> MaildirUserStore::watch(std::string_view mailbox, MailboxListener& listener) {
  auto row = require_mailbox(mailbox);
  if (!row) {
    return std::unexpected(row.error());
  }
  return listeners_.add(static_cast<std::uint64_t>(row->id), listener);
}

}  // namespace peregrine::store::maildir
