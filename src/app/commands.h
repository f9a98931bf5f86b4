#pragma once

// The `peregrine` subcommands. Each returns the process exit code (sysexits.h
// values for failures) and writes its errors to stderr.

#include <filesystem>
#include <optional>
#include <string>

namespace peregrine::app {

// `peregrine serve --config FILE`: runs the server in the foreground until
// SIGTERM or SIGINT; 0 after a graceful stop.
struct ServeArgs {
  std::filesystem::path config;
  char** argv = nullptr;  // the command line, to run again with [server] huge_pages
};
int run_serve(const ServeArgs& args);

// `peregrine user add|passwd|del|list --config FILE [USER] [--password PW]
// [--scheme SCHEME]`: edits the passwd file atomically. Without --password
// the password is the first line of stdin.
struct UserArgs {
  std::string action;  // "add", "passwd", "del", "list"
  std::filesystem::path config;
  std::string user;
  std::optional<std::string> password;
  std::string scheme = "SHA512-CRYPT";
};
int run_user(const UserArgs& args);

// `peregrine deliver --config FILE -u USER [-m MAILBOX] [-f SENDER]
// [-a ADDRESS] < message`: delivers one message as LMTP would. USER may be
// an address (user@domain) with LMTP's rule; SENDER becomes Return-Path,
// ADDRESS Delivered-To (neither header without its option, for MTAs that
// add their own). A leading mbox "From " line is
// dropped. A MAILBOX that does not exist means INBOX. Exit codes
// (delivery::exit_code): EX_OK, EX_NOUSER (unknown user), EX_DATAERR (empty
// or oversized message), EX_CANTCREAT (larger than the quota),
// EX_TEMPFAIL (mailbox full, store or configuration error).
struct DeliverArgs {
  std::filesystem::path config;
  std::string user;
  std::string mailbox = "INBOX";
  std::optional<std::string> sender;
  std::string address;
};
int run_deliver(const DeliverArgs& args);

// `peregrine index rebuild|stats --config FILE USER`: rebuilds the user's
// full-text index from the message files, or prints its state (messages,
// messages indexed, size on disk and as a share of the mail's size).
// EX_NOUSER for an unknown user, EX_TEMPFAIL for a store error.
struct IndexArgs {
  std::string action;  // "rebuild", "stats"
  std::filesystem::path config;
  std::string user;
};
int run_index(const IndexArgs& args);

}  // namespace peregrine::app
