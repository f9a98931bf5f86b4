#pragma once

// Password schemes, compatible with Dovecot's: a stored password is written
// "{SCHEME}secret" in a passwd-file, or a bare crypt(3) string. Verifying
// checks a candidate against it; hashing makes a new stored password.
//
//   PLAIN (also CLEARTEXT)  the password itself; compared in constant time
//   SHA512-CRYPT            "$6$..."   (libxcrypt)
//   SHA256-CRYPT            "$5$..."   (libxcrypt)
//   BLF-CRYPT               "$2y$..."  bcrypt (libxcrypt; $2a$ and $2b$ verify too)
//   CRYPT                   anything libxcrypt's crypt_r accepts (yescrypt "$y$",
//                           md5crypt "$1$", DES, ...); new hashes use libxcrypt's
//                           default method (yescrypt on Debian 12)
//   ARGON2ID                "$argon2id$..." (libsodium)
//
// All functions are thread-safe.

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

#include "base/result.h"

namespace peregrine::auth {

enum class Scheme { kPlain, kCrypt, kSha512Crypt, kSha256Crypt, kBlfCrypt, kArgon2id };

// Scheme names are case-insensitive; CLEARTEXT is an alias of PLAIN.
std::optional<Scheme> scheme_from_name(std::string_view name);
// The canonical name: "PLAIN", "CRYPT", "SHA512-CRYPT", ...
const char* scheme_name(Scheme scheme);

// The scheme of a bare crypt string, by its prefix: "$6$" SHA512-CRYPT,
// "$5$" SHA256-CRYPT, "$2y$"/"$2b$"/"$2a$" BLF-CRYPT, "$argon2id$" ARGON2ID,
// anything else CRYPT.
Scheme detect_crypt_scheme(std::string_view hash);

// A password as stored: the scheme and what follows "{SCHEME}".
struct StoredPassword {
  Scheme scheme = Scheme::kPlain;
  std::string secret;
};

// Splits a passwd-file password field. "{SHA512-CRYPT}$6$..." names its
// scheme; a field without "{" is a crypt string (detect_crypt_scheme).
// Errors (kBadInput): an unknown scheme ("unsupported password scheme
// {SSHA}"), an unterminated "{", an empty field.
base::Result<StoredPassword> parse_stored_password(std::string_view field);

// Passwords longer than this never verify and cannot be hashed. It is
// libxcrypt's limit (CRYPT_MAX_PASSPHRASE_SIZE less the NUL), applied to every
// scheme alike; it also bounds SHA-crypt's cost, which grows with the length.
inline constexpr std::size_t kMaxPasswordBytes = 511;

// Whether `password` matches. false for a mismatch, a password over
// kMaxPasswordBytes, or one with a NUL byte for the crypt family.
// Errors: kInternal when the stored secret is malformed for its scheme (a
// SHA512-CRYPT secret that is not "$6$...", a hash crypt_r rejects), so an
// operator learns of a broken entry instead of a silent login failure.
base::Result<bool> verify_password(const StoredPassword& stored, std::string_view password);

struct HashOptions {
  // Cost: SHA-crypt rounds, bcrypt log2 rounds, yescrypt cost factor; 0 uses
  // libxcrypt's default for the method.
  unsigned long crypt_rounds = 0;
  // ARGON2ID cost; 0 uses libsodium's "interactive" limits (2 passes, 64 MiB).
  unsigned long long argon2_ops = 0;
  std::size_t argon2_mem_bytes = 0;
};

// A new stored password, ready for a passwd-file: "{SHA512-CRYPT}$6$...",
// with a fresh random salt. Errors: kBadInput for a password over
// kMaxPasswordBytes, a NUL in a password for the crypt family, or a PLAIN
// password with ':' or a line break (it would break the passwd-file line);
// kInternal if the library fails.
base::Result<std::string> hash_password(Scheme scheme, std::string_view password,
                                        const HashOptions& options = {});

// Constant-time equality: the time depends on neither the contents nor the
// lengths (both are hashed first).
bool constant_time_equals(std::string_view a, std::string_view b);

}  // namespace peregrine::auth
