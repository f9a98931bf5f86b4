#pragma once

// Dovecot's passwd-file format, one user per line:
//
//   user:password:uid:gid:gecos:home:shell:extra_fields
//
// Only user and password are needed; missing trailing fields are empty and
// everything after the seventh ':' (Dovecot's extra fields) is ignored. The
// password is "{SCHEME}secret" or a bare crypt string (password_scheme.h); an
// empty password means the user cannot log in. Blank lines and lines whose
// first non-blank character is '#' are skipped. docs/configuration.md has the
// format for operators.

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/files.h"
#include "base/result.h"

namespace peregrine::auth {

struct PasswdEntry {
  std::string user;
  std::string password;  // the raw field: "{SHA512-CRYPT}$6$...", "$2y$...", or empty
  std::optional<std::uint32_t> uid;
  std::optional<std::uint32_t> gid;
  std::string gecos;
  std::string home;
  std::string shell;
  std::size_t line = 0;  // 1-based line number in the file
};

// Parses a whole file. Errors (kBadInput) name the line: "line 3: uid 'x' is
// not a number", "line 7: duplicate user alice (first on line 2)", "line 4:
// missing ':' after the user name", "line 5: bad user name: ...".
base::Result<std::vector<PasswdEntry>> parse_passwd(std::string_view text);

// Succeeds for a name that can be written to a passwd-file and read back as
// the same name: 1-255 bytes, no ':', no control characters, not starting
// with '#', no leading or trailing space or tab. Errors (kBadInput) say why.
base::Result<void> check_user_name(std::string_view name);

// What `add` needs to write a line "name:password:uid:gid::home::".
struct NewUser {
  std::string name;
  std::string password = {};  // a stored password, e.g. from hash_password()
  std::optional<std::uint32_t> uid = {};
  std::optional<std::uint32_t> gid = {};
  std::string home = {};
};

enum class MissingFile { kError, kEmpty };

// A passwd-file held for editing. Edits change only the lines they concern:
// every other line, comment and blank line, and each line's ending, is kept
// byte for byte. Not thread-safe; two processes editing the same file at once
// can lose one's change (the last write wins, the file is never torn).
class PasswdFile {
 public:
  // Parses `text`; errors as parse_passwd.
  static base::Result<PasswdFile> parse(std::string text);
  // Reads and parses `path`. With MissingFile::kEmpty a file that does not
  // exist reads as empty (so the first `add` creates it).
  static base::Result<PasswdFile> read(base::FileSystem& fs, const std::filesystem::path& path,
                                       MissingFile missing = MissingFile::kError);

  const std::vector<PasswdEntry>& entries() const { return entries_; }
  // nullptr if there is no such user (names are case-sensitive).
  const PasswdEntry* find(std::string_view user) const;

  // Appends a user. Errors (kBadInput): a bad name (check_user_name), a
  // password, home with ':' or a control character; kExists: the user exists.
  base::Result<void> add(const NewUser& user);
  // Replaces a user's password field. kNotFound if there is no such user,
  // kBadInput for a password with ':' or a control character.
  base::Result<void> set_password(std::string_view user, std::string_view password);
  // Deletes a user's line. kNotFound if there is no such user.
  base::Result<void> remove(std::string_view user);

  // The file's contents as they would be written.
  std::string text() const;
  // Replaces `path` atomically (base::atomic_write); a new file gets mode 0600.
  base::Result<void> write(base::FileSystem& fs, const std::filesystem::path& path) const;

 private:
  PasswdFile() = default;
  base::Result<void> reparse();

  std::vector<std::string> lines_;  // each with its line ending, if it had one
  std::vector<PasswdEntry> entries_;
};

}  // namespace peregrine::auth
