#pragma once

// The password database the protocols use: a passwd-file, re-read whenever
// it changes on disk, and password verification against it.
//
// Thread safety
// -------------
// verify() and lookup() may be called from any thread at once. A mutex guards
// the cached file (held for a stat and, when the file changed, the re-read);
// hashing runs outside it, on an immutable snapshot.

#include <cstdint>
#include <filesystem>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>

#include "auth/passwd_file.h"
#include "auth/password_scheme.h"
#include "base/files.h"
#include "base/result.h"

namespace peregrine::auth {

struct UserInfo {
  std::string name;
  std::string home;  // empty if the passwd-file gives none
  std::optional<std::uint32_t> uid;
  std::optional<std::uint32_t> gid;
};

class Authenticator {
 public:
  // `fs` must outlive the Authenticator. The file is first read on first use.
  explicit Authenticator(std::filesystem::path passwd_file,
                         base::FileSystem& fs = base::real_file_system());

  // Checks `password` for `user` (case-sensitive). Errors:
  //  kAuthFailed   unknown user, wrong password, or a user with no password;
  //                the message says which, for the log only (tell the client
  //                just "authentication failed").
  //  kTemporary    the passwd-file cannot be read or does not parse (every
  //                login fails until it is fixed: a half-edited file must not
  //                resurrect a removed user).
  //  kInternal     the user's stored password is malformed or has a scheme
  //                we do not support.
  // An unknown user costs about as much time as a known one.
  base::Result<UserInfo> verify(std::string_view user, std::string_view password);

  // The user's details without a password check (for LMTP delivery).
  // kNotFound for an unknown user; kTemporary as for verify().
  base::Result<UserInfo> lookup(std::string_view user);

 private:
  struct User {
    PasswdEntry entry;
    // The parsed password field, or why it cannot be used.
    base::Result<StoredPassword> stored;
  };
  struct Snapshot {
    std::unordered_map<std::string, User> users;
    // A usable stored password of some user, checked (and the result thrown
    // away) for unknown users so that they take as long as known ones.
    std::optional<StoredPassword> decoy;
  };

  // The current file's users, re-read if the file changed since last time.
  base::Result<std::shared_ptr<const Snapshot>> snapshot();

  const std::filesystem::path path_;
  base::FileSystem& fs_;
  std::mutex mu_;
  std::shared_ptr<const Snapshot> snapshot_;   // guarded by mu_
  std::optional<base::FileInfo> loaded_info_;  // guarded by mu_; what snapshot_ was read from
  std::string load_error_;  // guarded by mu_; why the file at loaded_info_ is unusable
};

}  // namespace peregrine::auth
