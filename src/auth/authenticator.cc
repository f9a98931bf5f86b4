#include "auth/authenticator.h"

#include <utility>

namespace peregrine::auth {
namespace {

using base::fail;
using base::MailError;
using base::Result;

UserInfo user_info(const PasswdEntry& entry) {
  return UserInfo{entry.user, entry.home, entry.uid, entry.gid};
}

}  // namespace

Authenticator::Authenticator(std::filesystem::path passwd_file, base::FileSystem& fs)
    : path_(std::move(passwd_file)), fs_(fs) {}

Result<std::shared_ptr<const Authenticator::Snapshot>> Authenticator::snapshot() {
  std::lock_guard<std::mutex> lock(mu_);
  auto info = fs_.stat(path_);
  if (!info) {
    loaded_info_.reset();
    snapshot_.reset();
    return fail(MailError::kTemporary, "passwd file: " + info.error().message);
  }
  // Unchanged since the last read: same inode (an atomic replace makes a new
  // one), size and modification time.
  if (loaded_info_ && *loaded_info_ == *info) {
    if (snapshot_) {
      return snapshot_;
    }
    return fail(MailError::kTemporary, load_error_);
  }
  loaded_info_ = *info;
  snapshot_.reset();
  auto file = PasswdFile::read(fs_, path_);
  if (!file) {
    load_error_ = "passwd file " + file.error().message;
    if (file.error().code != MailError::kBadInput) {
      loaded_info_.reset();  // an I/O error: try again next time
    }
    return fail(MailError::kTemporary, load_error_);
  }
  auto snapshot = std::make_shared<Snapshot>();
  for (const PasswdEntry& entry : file->entries()) {
    Result<StoredPassword> stored = parse_stored_password(entry.password);
    if (entry.password.empty()) {
      stored = fail(MailError::kAuthFailed, "has no password");
    }
    if (stored && !snapshot->decoy) {
      snapshot->decoy = *stored;
    }
    snapshot->users.emplace(entry.user, User{entry, std::move(stored)});
  }
  snapshot_ = std::move(snapshot);
  return snapshot_;
}

Result<UserInfo> Authenticator::verify(std::string_view user, std::string_view password) {
  auto snap = snapshot();
  if (!snap) {
    return std::unexpected(snap.error());
  }
  const Snapshot& users = **snap;
  auto it = users.users.find(std::string(user));
  if (it == users.users.end()) {
    if (users.decoy) {
      (void)verify_password(*users.decoy, password);
    }
    return fail(MailError::kAuthFailed, "unknown user " + std::string(user));
  }
  const User& found = it->second;
  if (!found.stored) {
    MailError code = found.stored.error().code == MailError::kAuthFailed ? MailError::kAuthFailed
                                                                         : MailError::kInternal;
    return fail(code, "user " + found.entry.user + " (passwd file line " +
                          std::to_string(found.entry.line) + "): " + found.stored.error().message);
  }
  auto ok = verify_password(*found.stored, password);
  if (!ok) {
    return fail(MailError::kInternal, "user " + found.entry.user + " (passwd file line " +
                                          std::to_string(found.entry.line) +
                                          "): " + ok.error().message);
  }
  if (!*ok) {
    return fail(MailError::kAuthFailed, "wrong password for user " + found.entry.user);
  }
  return user_info(found.entry);
}

Result<UserInfo> Authenticator::lookup(std::string_view user) {
  auto snap = snapshot();
  if (!snap) {
    return std::unexpected(snap.error());
  }
  auto it = (*snap)->users.find(std::string(user));
  if (it == (*snap)->users.end()) {
    return fail(MailError::kNotFound, "unknown user " + std::string(user));
  }
  return user_info(it->second.entry);
}

}  // namespace peregrine::auth
