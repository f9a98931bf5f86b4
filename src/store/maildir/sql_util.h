#pragma once

// Small helpers the Index's .cc files share to run typed queries.

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/result.h"
#include "store/maildir/sqlite.h"

namespace peregrine::store::maildir {

// SQL text from pieces.
inline std::string sql(std::string_view a, std::string_view b, std::string_view c = {}) {
  std::string out(a);
  out += b;
  out += c;
  return out;
}

// Runs a statement that returns no rows.
template <typename Bind>
base::Result<void> run(Database& db, std::string_view text, Bind&& bind) {
  auto s = db.prepare(text);
  if (!s) {
    return std::unexpected(s.error());
  }
  bind(*s);
  return s->run();
}

// Calls each(statement) for every row of a statement, until it returns
// false.
template <typename Bind, typename Each>
base::Result<void> each_row(Database& db, std::string_view text, Bind&& bind, Each&& each) {
  auto s = db.prepare(text);
  if (!s) {
    return std::unexpected(s.error());
  }
  bind(*s);
  for (;;) {
    auto row = s->step();
    if (!row) {
      return std::unexpected(row.error());
    }
    if (!*row || !each(static_cast<const Statement&>(*s))) {
      return {};
    }
  }
}

// The first column of a statement's first row, as an integer; 0 when it
// returns no row.
template <typename Bind>
base::Result<std::int64_t> query_int(Database& db, std::string_view text, Bind&& bind) {
  std::int64_t out = 0;
  auto r = each_row(db, text, std::forward<Bind>(bind), [&](const Statement& s) {
    out = s.column_int(0);
    return false;
  });
  if (!r) {
    return std::unexpected(r.error());
  }
  return out;
}
inline base::Result<std::int64_t> query_int(Database& db, std::string_view text) {
  return query_int(db, text, [](Statement&) {});
}

// Collects every row of a statement through `read`.
template <typename T, typename Bind, typename Read>
base::Result<std::vector<T>> collect(Database& db, std::string_view text, Bind&& bind,
                                     Read&& read) {
  std::vector<T> out;
  auto r = each_row(db, text, std::forward<Bind>(bind), [&](const Statement& s) {
    out.push_back(read(s));
    return true;
  });
  if (!r) {
    return std::unexpected(r.error());
  }
  return out;
}

}  // namespace peregrine::store::maildir
