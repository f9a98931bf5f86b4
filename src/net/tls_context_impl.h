#pragma once

// Internal to src/net: the Asio SSL context behind a TlsContext.

#include <asio/ssl/context.hpp>

#include "net/tls_context.h"

namespace peregrine::net {

struct TlsContext::Impl {
  asio::ssl::context context{asio::ssl::context::tls_server};
};

}  // namespace peregrine::net
