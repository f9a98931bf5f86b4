#pragma once

// Errors are values: functions that can fail return Result<T>, a
// std::expected carrying an Error (mail_error.h) on failure.
//
// GCC only: clang 14 cannot compile libstdc++ 12's <expected>, so the MIME
// engine (also built with clang, for the fuzzer) does not include this header.

#include <expected>
#include <string>
#include <utility>

#include "base/mail_error.h"

namespace peregrine::base {

template <typename T>
using Result = std::expected<T, Error>;

inline std::unexpected<Error> fail(MailError code, std::string message) {
  return std::unexpected<Error>(Error{code, std::move(message)});
}

}  // namespace peregrine::base
