// The `peregrine` command line: parses arguments and runs a subcommand.

#include <sysexits.h>

#include <CLI/CLI.hpp>

#include "app/commands.h"

namespace {

using peregrine::app::DeliverArgs;
using peregrine::app::IndexArgs;
using peregrine::app::ServeArgs;
using peregrine::app::UserArgs;

// One `peregrine user <action>` subcommand; every action takes --config.
CLI::App* add_user_action(CLI::App& user, UserArgs& args, const std::string& action,
                          const std::string& description) {
  CLI::App* sub = user.add_subcommand(action, description);
  sub->add_option("-c,--config", args.config, "configuration file")->required();
  sub->callback([&args, action] { args.action = action; });
  return sub;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Peregrine mail store server"};
  app.set_version_flag("--version", "peregrine 0.1.0");
  app.require_subcommand(1);

  ServeArgs serve_args;
  CLI::App* serve = app.add_subcommand("serve", "run the server in the foreground");
  serve->add_option("-c,--config", serve_args.config, "configuration file")->required();

  UserArgs user_args;
  CLI::App* user = app.add_subcommand("user", "manage users in the passwd file");
  user->require_subcommand(1);
  for (auto [action, description] :
       {std::pair{"add", "add a user"}, std::pair{"passwd", "change a user's password"}}) {
    CLI::App* sub = add_user_action(*user, user_args, action, description);
    sub->add_option("user", user_args.user, "user name")->required();
    sub->add_option("-p,--password", user_args.password,
                    "the password (default: read a line from stdin)");
    sub->add_option("-s,--scheme", user_args.scheme,
                    "password scheme: SHA512-CRYPT (default), SHA256-CRYPT, BLF-CRYPT, "
                    "ARGON2ID, CRYPT, PLAIN");
  }
  add_user_action(*user, user_args, "del", "delete a user")
      ->add_option("user", user_args.user, "user name")
      ->required();
  add_user_action(*user, user_args, "list", "list the users");

  IndexArgs index_args;
  CLI::App* index = app.add_subcommand("index", "look after a user's full-text index");
  index->require_subcommand(1);
  for (auto [action, description] :
       {std::pair{"rebuild", "rebuild the index from the message files"},
        std::pair{"stats", "print messages indexed and the index's size"}}) {
    CLI::App* sub = index->add_subcommand(action, description);
    sub->add_option("-c,--config", index_args.config, "configuration file")->required();
    sub->add_option("user", index_args.user, "user name")->required();
    sub->callback([&index_args, a = std::string(action)] { index_args.action = a; });
  }

  DeliverArgs deliver_args;
  CLI::App* deliver =
      app.add_subcommand("deliver", "deliver a message from stdin to a user's mailbox");
  deliver->add_option("-c,--config", deliver_args.config, "configuration file")->required();
  deliver->add_option("-u,--user", deliver_args.user, "recipient user")->required();
  deliver->add_option("-m,--mailbox", deliver_args.mailbox, "mailbox (default INBOX)");
  deliver->add_option("-f,--from", deliver_args.sender,
                      "envelope sender, written as Return-Path (\"\" for <>)");
  deliver->add_option("-a,--address", deliver_args.address,
                      "recipient address as the MTA got it, written as Delivered-To");

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int code = app.exit(e);
    return code == 0 ? EX_OK : EX_USAGE;
  }
  if (serve->parsed()) {
    serve_args.argv = argv;
    return peregrine::app::run_serve(serve_args);
  }
  if (user->parsed()) {
    return peregrine::app::run_user(user_args);
  }
  if (index->parsed()) {
    return peregrine::app::run_index(index_args);
  }
  if (deliver->parsed()) {
    return peregrine::app::run_deliver(deliver_args);
  }
  return EX_USAGE;
}
