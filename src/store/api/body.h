#pragma once

// A message's bytes, open for reading by range, so FETCH BODY[1.2]<0.1024>
// reads just those bytes. A Body stays readable after the message is
// expunged or moved (it holds the open file), and is independent of the
// UserStore that opened it: it may be used on any thread, by one thread at a
// time, and may outlive the UserStore.

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>

#include "base/result.h"

namespace peregrine::store {

class Body {
 public:
  virtual ~Body() = default;

  // The message's size in bytes (equal to MessageMeta::size).
  virtual std::uint64_t size() const = 0;

  // Reads up to out.size() bytes starting at `offset` into `out`; returns how
  // many were read, fewer only at the end of the message (0 at or past it).
  // kTemporary on an I/O error.
  virtual base::Result<std::size_t> read_into(std::uint64_t offset, std::span<char> out) const = 0;

  // The bytes [offset, offset + length) clipped to the message.
  base::Result<std::string> read(std::uint64_t offset, std::size_t length) const;
  // The whole message.
  base::Result<std::string> read_all() const { return read(0, static_cast<std::size_t>(size())); }
};

}  // namespace peregrine::store
