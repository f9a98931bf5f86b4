#include "store/maildir/sqlite.h"

#include <sqlite3.h>

#include <utility>

#include "store/maildir/wal_vfs.h"

namespace peregrine::store::maildir {

// ---- Statement ----

Statement::Statement(Database* db, sqlite3_stmt* stmt, bool owned)
    : db_(db), stmt_(stmt), owned_(owned) {}

Statement::Statement(Statement&& other) noexcept
    : db_(other.db_),
      stmt_(std::exchange(other.stmt_, nullptr)),
      owned_(other.owned_),
      failed_bind_(other.failed_bind_) {}

Statement::~Statement() {
  if (stmt_ == nullptr) {
    return;
  }
  if (owned_) {
    sqlite3_finalize(stmt_);
  } else {
    db_->release(stmt_);
  }
}

Statement& Statement::bind(int index, std::int64_t value) {
  failed_bind_ |= sqlite3_bind_int64(stmt_, index, value) != SQLITE_OK;
  return *this;
}

Statement& Statement::bind_text(int index, std::string_view value) {
  failed_bind_ |= sqlite3_bind_text64(stmt_, index, value.data(), value.size(), SQLITE_TRANSIENT,
                                      SQLITE_UTF8) != SQLITE_OK;
  return *this;
}

Statement& Statement::bind_blob(int index, std::string_view value) {
  // A zero-length blob must not bind as NULL: give SQLite a valid pointer.
  const char* data = value.empty() ? "" : value.data();
  failed_bind_ |=
      sqlite3_bind_blob64(stmt_, index, data, value.size(), SQLITE_TRANSIENT) != SQLITE_OK;
  return *this;
}

base::Result<bool> Statement::step() {
  if (failed_bind_) {
    return std::unexpected(db_->error(SQLITE_MISUSE, "bind"));
  }
  int rc = sqlite3_step(stmt_);
  if (rc == SQLITE_ROW) {
    return true;
  }
  if (rc == SQLITE_DONE) {
    return false;
  }
  return std::unexpected(db_->error(rc, sqlite3_sql(stmt_)));
}

base::Result<void> Statement::run() {
  for (;;) {
    auto row = step();
    if (!row) {
      return std::unexpected(row.error());
    }
    if (!*row) {
      return {};
    }
  }
}

std::int64_t Statement::column_int(int index) const { return sqlite3_column_int64(stmt_, index); }

std::string_view Statement::column_text(int index) const {
  const unsigned char* text = sqlite3_column_text(stmt_, index);
  int size = sqlite3_column_bytes(stmt_, index);
  if (text == nullptr) {
    return {};
  }
  return {reinterpret_cast<const char*>(text), static_cast<std::size_t>(size)};
}

std::string_view Statement::column_blob(int index) const {
  const void* data = sqlite3_column_blob(stmt_, index);
  int size = sqlite3_column_bytes(stmt_, index);
  if (data == nullptr) {
    return {};
  }
  return {static_cast<const char*>(data), static_cast<std::size_t>(size)};
}

// ---- Transaction ----

Transaction::Transaction(Transaction&& other) noexcept : db_(std::exchange(other.db_, nullptr)) {}

Transaction::~Transaction() {
  if (db_ != nullptr) {
    (void)db_->exec("ROLLBACK");
  }
}

base::Result<void> Transaction::commit() {
  Database* db = std::exchange(db_, nullptr);
  if (db == nullptr) {
    return base::fail(base::MailError::kInternal, "transaction already ended");
  }
  if (auto r = db->exec("COMMIT"); !r) {
    // A failed COMMIT may leave the transaction open (SQLITE_BUSY); end it.
    (void)db->exec("ROLLBACK");
    return r;
  }
  return {};
}

std::string read_only_uri(const std::filesystem::path& path) {
  std::string out = "'file:";
  for (unsigned char c : path.string()) {
    if (c == '%' || c == '?' || c == '#' || c < 0x21 || c >= 0x7f) {
      constexpr char kHex[] = "0123456789ABCDEF";
      out += '%';
      out += kHex[c >> 4];
      out += kHex[c & 15];
    } else if (c == '\'') {
      out += "''";
    } else {
      out += static_cast<char>(c);
    }
  }
  return out + "?mode=ro'";
}

// ---- Database ----

base::Result<std::unique_ptr<Database>> Database::open(const std::filesystem::path& path) {
  sqlite3* handle = nullptr;
  int rc = sqlite3_open_v2(
      path.c_str(), &handle,
      SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX | SQLITE_OPEN_URI,
      register_wal_vfs());  // a WAL frame's two writes become one (wal_vfs.h)
  if (rc != SQLITE_OK) {
    std::string message =
        "open " + path.string() + ": " + (handle ? sqlite3_errmsg(handle) : sqlite3_errstr(rc));
    sqlite3_close(handle);
    return base::fail(base::MailError::kTemporary, std::move(message));
  }
  sqlite3_extended_result_codes(handle, 1);
  return std::unique_ptr<Database>(new Database(handle));
}

Database::~Database() {
  for (auto& [sql, cached] : cache_) {
    sqlite3_finalize(cached.stmt);
  }
  sqlite3_close(db_);
}

base::Result<void> Database::exec(std::string_view sql) {
  std::string text(sql);
  char* message = nullptr;
  int rc = sqlite3_exec(db_, text.c_str(), nullptr, nullptr, &message);
  if (rc != SQLITE_OK) {
    base::Error e = error(rc, text);
    sqlite3_free(message);
    return std::unexpected(std::move(e));
  }
  return {};
}

base::Result<Statement> Database::prepare(std::string_view sql) {
  auto [it, inserted] = cache_.try_emplace(std::string(sql));
  Cached& cached = it->second;
  if (inserted) {
    int rc = sqlite3_prepare_v3(db_, sql.data(), static_cast<int>(sql.size()),
                                SQLITE_PREPARE_PERSISTENT, &cached.stmt, nullptr);
    if (rc != SQLITE_OK) {
      base::Error e = error(rc, sql);
      cache_.erase(it);
      return std::unexpected(std::move(e));
    }
  }
  if (cached.in_use) {
    // The same SQL is being stepped elsewhere: give this use its own copy.
    sqlite3_stmt* stmt = nullptr;
    int rc = sqlite3_prepare_v2(db_, sql.data(), static_cast<int>(sql.size()), &stmt, nullptr);
    if (rc != SQLITE_OK) {
      return std::unexpected(error(rc, sql));
    }
    return Statement(this, stmt, true);
  }
  cached.in_use = true;
  in_use_[cached.stmt] = &cached;
  return Statement(this, cached.stmt, false);
}

void Database::release(sqlite3_stmt* stmt) {
  sqlite3_reset(stmt);
  sqlite3_clear_bindings(stmt);
  auto it = in_use_.find(stmt);
  if (it != in_use_.end()) {
    it->second->in_use = false;
    in_use_.erase(it);
  }
}

bool Database::transaction_open() const { return sqlite3_get_autocommit(db_) == 0; }

ReadScope::ReadScope(Database& db) {
  if (db.transaction_open()) {
    return;
  }
  // Best effort: without it each statement reads in a transaction of its own.
  if (auto begin = db.prepare("BEGIN"); begin && begin->run()) {
    db_ = &db;
  }
}

ReadScope::~ReadScope() {
  if (db_ == nullptr) {
    return;
  }
  auto commit = db_->prepare("COMMIT");
  if (!commit || !commit->run()) {
    (void)db_->exec("ROLLBACK");
  }
}

base::Result<Transaction> Database::begin() {
  if (auto r = exec("BEGIN IMMEDIATE"); !r) {
    return std::unexpected(r.error());
  }
  return Transaction(this);
}

base::Result<void> Database::create_function(const char* name, int args, SqlFunction fn,
                                             void* data) {
  int rc = sqlite3_create_function_v2(db_, name, args, SQLITE_UTF8 | SQLITE_DETERMINISTIC, data, fn,
                                      nullptr, nullptr, nullptr);
  if (rc != SQLITE_OK) {
    return std::unexpected(error(rc, name));
  }
  return {};
}

void Database::set_rollback_hook(void (*fn)(void*), void* arg) {
  sqlite3_rollback_hook(db_, fn, arg);
}

void Database::set_update_hook(UpdateHook fn, void* arg) {
  update_fn_ = fn;
  update_arg_ = arg;
  sqlite3_update_hook(
      db_,
      fn == nullptr ? nullptr
                    : +[](void* self, int, const char*, const char* table, sqlite3_int64 rowid) {
                        auto* db = static_cast<Database*>(self);
                        db->update_fn_(db->update_arg_, table, rowid);
                      },
      this);
}

base::Result<std::int64_t> Database::data_version() {
  auto s = prepare("PRAGMA data_version");
  if (!s) {
    return std::unexpected(s.error());
  }
  auto row = s->step();
  if (!row) {
    return std::unexpected(row.error());
  }
  return *row ? s->column_int(0) : 0;
}

std::int64_t Database::changes() const { return sqlite3_changes64(db_); }

std::int64_t Database::last_insert_rowid() const { return sqlite3_last_insert_rowid(db_); }

base::Error Database::error(int rc, std::string_view what) const {
  base::MailError code;
  switch (rc & 0xff) {
    case SQLITE_BUSY:
    case SQLITE_LOCKED:
    case SQLITE_FULL:
    case SQLITE_IOERR:
    case SQLITE_CANTOPEN:
    case SQLITE_READONLY:
    case SQLITE_PERM:
    case SQLITE_NOMEM:
      code = base::MailError::kTemporary;
      break;
    default:
      code = base::MailError::kInternal;
      break;
  }
  std::string message = "index: ";
  message += (rc == SQLITE_MISUSE) ? "invalid bind" : sqlite3_errmsg(db_);
  message += " (";
  message += what.substr(0, 120);
  message += ")";
  return base::Error{code, std::move(message)};
}

}  // namespace peregrine::store::maildir
