#include "imap/proto/command.h"

namespace peregrine::imap {

std::string_view command_name(CommandId id) {
  switch (id) {
    case CommandId::kCapability:
      return "CAPABILITY";
    case CommandId::kNoop:
      return "NOOP";
    case CommandId::kLogout:
      return "LOGOUT";
    case CommandId::kStartTls:
      return "STARTTLS";
    case CommandId::kAuthenticate:
      return "AUTHENTICATE";
    case CommandId::kLogin:
      return "LOGIN";
    case CommandId::kSelect:
      return "SELECT";
    case CommandId::kExamine:
      return "EXAMINE";
    case CommandId::kCreate:
      return "CREATE";
    case CommandId::kDelete:
      return "DELETE";
    case CommandId::kRename:
      return "RENAME";
    case CommandId::kSubscribe:
      return "SUBSCRIBE";
    case CommandId::kUnsubscribe:
      return "UNSUBSCRIBE";
    case CommandId::kList:
      return "LIST";
    case CommandId::kLsub:
      return "LSUB";
    case CommandId::kStatus:
      return "STATUS";
    case CommandId::kAppend:
      return "APPEND";
    case CommandId::kCheck:
      return "CHECK";
    case CommandId::kClose:
      return "CLOSE";
    case CommandId::kExpunge:
      return "EXPUNGE";
    case CommandId::kSearch:
      return "SEARCH";
    case CommandId::kFetch:
      return "FETCH";
    case CommandId::kStore:
      return "STORE";
    case CommandId::kCopy:
      return "COPY";
    case CommandId::kMove:
      return "MOVE";
    case CommandId::kIdle:
      return "IDLE";
    case CommandId::kUnselect:
      return "UNSELECT";
    case CommandId::kNamespace:
      return "NAMESPACE";
    case CommandId::kEnable:
      return "ENABLE";
    case CommandId::kId:
      return "ID";
    case CommandId::kSort:
      return "SORT";
    case CommandId::kThread:
      return "THREAD";
  }
  return "";
}

std::string_view status_item_name(StatusItem item) {
  switch (item) {
    case StatusItem::kMessages:
      return "MESSAGES";
    case StatusItem::kRecent:
      return "RECENT";
    case StatusItem::kUidNext:
      return "UIDNEXT";
    case StatusItem::kUidValidity:
      return "UIDVALIDITY";
    case StatusItem::kUnseen:
      return "UNSEEN";
    case StatusItem::kDeleted:
      return "DELETED";
    case StatusItem::kSize:
      return "SIZE";
    case StatusItem::kHighestModSeq:
      return "HIGHESTMODSEQ";
  }
  return "";
}

std::string_view sort_key_name(SortKey key) {
  switch (key) {
    case SortKey::kArrival:
      return "ARRIVAL";
    case SortKey::kCc:
      return "CC";
    case SortKey::kDate:
      return "DATE";
    case SortKey::kFrom:
      return "FROM";
    case SortKey::kSize:
      return "SIZE";
    case SortKey::kSubject:
      return "SUBJECT";
    case SortKey::kTo:
      return "TO";
    case SortKey::kDisplayFrom:
      return "DISPLAYFROM";
    case SortKey::kDisplayTo:
      return "DISPLAYTO";
  }
  return "";
}

bool ExtValue::operator==(const ExtValue& o) const {
  return is_list == o.is_list && text == o.text && items == o.items;
}

}  // namespace peregrine::imap
