#include "store/api/user_store.h"

namespace peregrine::store {

base::Result<AppendedUid> UserStore::append(std::string_view mailbox,
                                            const AppendMessage& message) {
  auto result = append(mailbox, std::span<const AppendMessage>(&message, 1));
  if (!result) {
    return std::unexpected(result.error());
  }
  if (result->uids.size() != 1) {
    return base::fail(base::MailError::kInternal, "append returned no UID");
  }
  return AppendedUid{result->uidvalidity, result->uids.front()};
}

}  // namespace peregrine::store
