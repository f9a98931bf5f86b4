// `peregrine user`: adds, changes, deletes and lists users in the passwd file.

#include <sysexits.h>
#include <termios.h>
#include <unistd.h>

#include <iostream>
#include <string>

#include "app/commands.h"
#include "app/settings.h"
#include "auth/passwd_file.h"
#include "auth/password_scheme.h"
#include "base/files.h"

namespace peregrine::app {
namespace {

int fail(std::string_view what, int code) {
  std::cerr << "peregrine user: " << what << "\n";
  return code;
}

int exit_code(base::MailError error) {
  switch (error) {
    case base::MailError::kNotFound:
      return EX_NOUSER;
    case base::MailError::kExists:
    case base::MailError::kBadInput:
    case base::MailError::kTooBig:
      return EX_DATAERR;
    default:
      return EX_IOERR;
  }
}

// The first line of stdin, without its line end. On a terminal, prompts
// on stderr and does not echo.
std::optional<std::string> read_password() {
  const bool tty = isatty(STDIN_FILENO) == 1;
  termios saved{};
  if (tty) {
    std::cerr << "Password: " << std::flush;
    if (tcgetattr(STDIN_FILENO, &saved) == 0) {
      termios quiet = saved;
      quiet.c_lflag &= ~static_cast<tcflag_t>(ECHO);
      tcsetattr(STDIN_FILENO, TCSAFLUSH, &quiet);
    }
  }
  std::string line;
  const bool got = static_cast<bool>(std::getline(std::cin, line));
  if (tty) {
    tcsetattr(STDIN_FILENO, TCSAFLUSH, &saved);
    std::cerr << "\n";
  }
  if (!got && line.empty()) {
    return std::nullopt;
  }
  if (!line.empty() && line.back() == '\r') {
    line.pop_back();
  }
  return line;
}

// The stored form of the password the arguments or stdin give.
base::Result<std::string> new_password(const UserArgs& args) {
  auto scheme = auth::scheme_from_name(args.scheme);
  if (!scheme) {
    return base::fail(base::MailError::kBadInput, "unknown password scheme " + args.scheme);
  }
  std::optional<std::string> password = args.password ? args.password : read_password();
  if (!password || password->empty()) {
    return base::fail(base::MailError::kBadInput, "empty password");
  }
  return auth::hash_password(*scheme, *password);
}

}  // namespace

int run_user(const UserArgs& args) {
  std::optional<config::Settings> settings = load_settings(args.config);
  if (!settings) {
    return EX_CONFIG;
  }
  base::FileSystem& fs = base::real_file_system();
  const std::filesystem::path& path = settings->auth.passwd_file;
  const bool adding = args.action == "add" || args.action == "list";
  auto file = auth::PasswdFile::read(
      fs, path, adding ? auth::MissingFile::kEmpty : auth::MissingFile::kError);
  if (!file) {
    return fail(path.string() + ": " + file.error().message, EX_IOERR);
  }

  if (args.action == "list") {
    for (const auth::PasswdEntry& entry : file->entries()) {
      std::cout << entry.user << "\n";
    }
    return EX_OK;
  }
  if (args.user.empty()) {
    return fail("a user name is required", EX_USAGE);
  }

  base::Result<void> edited;
  if (args.action == "del") {
    edited = file->remove(args.user);
  } else {
    if (args.action == "passwd" && file->find(args.user) == nullptr) {
      return fail("no such user: " + args.user, EX_NOUSER);
    }
    if (args.action == "add" && file->find(args.user) != nullptr) {
      return fail("user exists: " + args.user, EX_DATAERR);
    }
    auto stored = new_password(args);
    if (!stored) {
      return fail(stored.error().message, exit_code(stored.error().code));
    }
    edited = args.action == "add" ? file->add({.name = args.user, .password = *stored})
                                  : file->set_password(args.user, *stored);
  }
  if (!edited) {
    return fail(edited.error().message, exit_code(edited.error().code));
  }
  if (auto written = file->write(fs, path); !written) {
    return fail(path.string() + ": " + written.error().message, EX_CANTCREAT);
  }
  return EX_OK;
}

}  // namespace peregrine::app
