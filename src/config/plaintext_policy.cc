#include "config/plaintext_policy.h"

namespace peregrine::config {

bool plaintext_auth_allowed(PlaintextAuth mode, bool tls, bool loopback) {
  switch (mode) {
    case PlaintextAuth::kAlways:
      return true;
    case PlaintextAuth::kLoopback:
      return tls || loopback;
    case PlaintextAuth::kTlsOnly:
      return tls;
  }
  return false;
}

}  // namespace peregrine::config
