#pragma once

// A thin RAII layer over SQLite: a connection with a cache of prepared
// statements, statements that reset themselves, and transactions that roll
// back unless committed. SQLite errors become base::Error: busy, locked, full
// and I/O errors kTemporary; corruption and anything else kInternal.
//
// Not thread-safe: one Database belongs to one UserStore.

#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>

#include "base/result.h"

struct sqlite3;
struct sqlite3_stmt;
struct sqlite3_context;
struct sqlite3_value;

namespace peregrine::store::maildir {

// An SQL string literal naming `path` as a read-only URI filename
// ('file:...?mode=ro'), for ATTACH: the characters a URI gives a meaning
// escaped as %XX, and quotes doubled.
std::string read_only_uri(const std::filesystem::path& path);

class Database;

// A prepared statement in use. Bind parameters (1-based), step through rows,
// read columns; on destruction it is reset and goes back to the cache.
class Statement {
 public:
  Statement(Statement&& other) noexcept;
  Statement& operator=(Statement&&) = delete;
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;
  ~Statement();

  Statement& bind(int index, std::int64_t value);
  Statement& bind_text(int index, std::string_view value);
  Statement& bind_blob(int index, std::string_view value);

  // Advances to the next row: true if there is one, false when done.
  base::Result<bool> step();
  // Steps to completion, for statements that return no rows.
  base::Result<void> run();

  std::int64_t column_int(int index) const;
  // Valid until the next step() or the statement's end.
  std::string_view column_text(int index) const;
  std::string_view column_blob(int index) const;

 private:
  friend class Database;
  Statement(Database* db, sqlite3_stmt* stmt, bool owned);

  Database* db_;
  sqlite3_stmt* stmt_;
  bool owned_;  // not from the cache (the cached one was in use): finalize on destruction
  bool failed_bind_ = false;
};

// BEGIN IMMEDIATE .. COMMIT; rolls back on destruction unless committed.
class Transaction {
 public:
  Transaction(Transaction&& other) noexcept;
  Transaction& operator=(Transaction&&) = delete;
  Transaction(const Transaction&) = delete;
  Transaction& operator=(const Transaction&) = delete;
  ~Transaction();

  base::Result<void> commit();

 private:
  friend class Database;
  explicit Transaction(Database* db) : db_(db) {}
  Database* db_;
};

// A read transaction (BEGIN .. COMMIT) around statements that only read,
// unless the connection is in a transaction already (then nothing): they see
// one snapshot, and SQLite takes its read locks once rather than once a
// statement (in WAL mode a read lock and its release are three system
// calls: two fcntl and an fstat). Nothing may begin a write transaction
// while one lives.
class ReadScope {
 public:
  explicit ReadScope(Database& db);
  ~ReadScope();
  ReadScope(const ReadScope&) = delete;
  ReadScope& operator=(const ReadScope&) = delete;

 private:
  Database* db_ = nullptr;  // set when this scope began the transaction
};

class Database {
 public:
  // Opens (creating) the database file.
  static base::Result<std::unique_ptr<Database>> open(const std::filesystem::path& path);
  ~Database();
  Database(const Database&) = delete;
  Database& operator=(const Database&) = delete;

  // Runs SQL text (several statements allowed), uncached, no rows returned.
  base::Result<void> exec(std::string_view sql);
  // A statement for `sql`, prepared once per connection and cached.
  base::Result<Statement> prepare(std::string_view sql);
  base::Result<Transaction> begin();
  // Whether a transaction is open (not in autocommit mode).
  bool transaction_open() const;

  // Registers a deterministic SQL function of `args` arguments for this
  // connection (triggers of the schema may call it).
  using SqlFunction = void (*)(sqlite3_context*, int, sqlite3_value**);
  // `data` is what sqlite3_user_data gives the function (or null).
  base::Result<void> create_function(const char* name, int args, SqlFunction fn,
                                     void* data = nullptr);

  // Calls fn(arg) whenever a transaction of this connection rolls back.
  void set_rollback_hook(void (*fn)(void*), void* arg);
  // Calls fn(arg, table, rowid) for every row a statement of this
  // connection inserts, updates or deletes in a rowid table (triggers and
  // foreign key actions included). fn must not use the connection.
  using UpdateHook = void (*)(void*, const char* table, std::int64_t rowid);
  void set_update_hook(UpdateHook fn, void* arg);
  // Changes when another connection commits to the database file.
  base::Result<std::int64_t> data_version();

  // Rows changed by the last INSERT/UPDATE/DELETE.
  std::int64_t changes() const;
  std::int64_t last_insert_rowid() const;

  // An Error for SQLite result code `rc`, with the connection's message.
  base::Error error(int rc, std::string_view what) const;

 private:
  friend class Statement;
  explicit Database(sqlite3* db) : db_(db) {}
  void release(sqlite3_stmt* stmt);

  struct Cached {
    sqlite3_stmt* stmt = nullptr;
    bool in_use = false;
  };
  sqlite3* db_;
  UpdateHook update_fn_ = nullptr;
  void* update_arg_ = nullptr;
  std::unordered_map<std::string, Cached> cache_;
  std::unordered_map<sqlite3_stmt*, Cached*> in_use_;
};

}  // namespace peregrine::store::maildir
