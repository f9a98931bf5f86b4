#include "imap/server/command_table.h"

#include <array>

#include "imap/server/commands/commands.h"

namespace peregrine::imap {
namespace {

constexpr std::uint16_t kSelectedMessages = kInSelected | kUsesMessageNumbers;

constexpr std::array kTable = {
    CommandSpec{CommandId::kCapability, kInAnyState, commands::capability},
    CommandSpec{CommandId::kNoop, kInAnyState, commands::noop},
    CommandSpec{CommandId::kLogout, kInAnyState, commands::logout},
    CommandSpec{CommandId::kStartTls, kInNotAuthenticated, commands::starttls},
    CommandSpec{CommandId::kAuthenticate, kInNotAuthenticated, commands::authenticate},
    CommandSpec{CommandId::kLogin, kInNotAuthenticated, commands::login},
    CommandSpec{CommandId::kSelect, kAfterLogin, commands::select},
    CommandSpec{CommandId::kExamine, kAfterLogin, commands::select},
    CommandSpec{CommandId::kCreate, kAfterLogin, commands::create},
    CommandSpec{CommandId::kDelete, kAfterLogin, commands::delete_},
    CommandSpec{CommandId::kRename, kAfterLogin, commands::rename},
    CommandSpec{CommandId::kSubscribe, kAfterLogin, commands::subscribe},
    CommandSpec{CommandId::kUnsubscribe, kAfterLogin, commands::subscribe},
    CommandSpec{CommandId::kList, kAfterLogin, commands::list},
    CommandSpec{CommandId::kLsub, kAfterLogin, commands::list},
    CommandSpec{CommandId::kStatus, kAfterLogin, commands::status},
    CommandSpec{CommandId::kAppend, kAfterLogin, commands::append},
    CommandSpec{CommandId::kCheck, kInSelected, commands::check},
    CommandSpec{CommandId::kClose, kInSelected, commands::close},
    CommandSpec{CommandId::kExpunge, kSelectedMessages | kWritesMailbox, commands::expunge},
    CommandSpec{CommandId::kSearch, kSelectedMessages | kNoExpungeUnlessUid, commands::search},
    CommandSpec{CommandId::kFetch, kSelectedMessages | kNoExpungeUnlessUid, commands::fetch},
    CommandSpec{CommandId::kStore, kSelectedMessages | kNoExpungeUnlessUid | kWritesMailbox,
                commands::store},
    CommandSpec{CommandId::kCopy, kSelectedMessages, commands::copy},
    CommandSpec{CommandId::kMove, kSelectedMessages | kWritesMailbox, commands::copy},
    CommandSpec{CommandId::kIdle, kAfterLogin, commands::idle},
    CommandSpec{CommandId::kUnselect, kInSelected, commands::unselect},
    CommandSpec{CommandId::kNamespace, kAfterLogin, commands::namespace_},
    CommandSpec{CommandId::kEnable, kAfterLogin, commands::enable},
    CommandSpec{CommandId::kId, kInAnyState, commands::id},
    CommandSpec{CommandId::kSort, kSelectedMessages | kNoExpungeUnlessUid, commands::sort},
    CommandSpec{CommandId::kThread, kSelectedMessages | kNoExpungeUnlessUid, commands::thread},
};

constexpr bool table_in_enum_order() {
  for (size_t i = 0; i < kTable.size(); ++i) {
    if (static_cast<size_t>(kTable[i].id) != i) {
      return false;
    }
  }
  return true;
}
static_assert(table_in_enum_order(), "kTable must list the commands in CommandId order");

}  // namespace

const CommandSpec& command_spec(CommandId id) { return kTable[static_cast<size_t>(id)]; }

std::string state_error(const CommandSpec& spec, SessionState state) {
  std::string name(command_name(spec.id));
  switch (state) {
    case SessionState::kNotAuthenticated:
      if ((spec.flags & kInNotAuthenticated) == 0) {
        return name + " is not allowed before logging in";
      }
      return {};
    case SessionState::kAuthenticated:
      if ((spec.flags & kInAuthenticated) == 0) {
        return (spec.flags & kInSelected) != 0 ? name + " needs a selected mailbox"
                                               : name + " is not allowed after logging in";
      }
      return {};
    case SessionState::kSelected:
      if ((spec.flags & kInSelected) == 0) {
        return name + " is not allowed after logging in";
      }
      return {};
    case SessionState::kLogout:
      return "the session is logging out";
  }
  return {};
}

}  // namespace peregrine::imap
