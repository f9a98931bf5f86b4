#include "auth/password_scheme.h"

#include <crypt.h>
#include <sodium.h>

#include <memory>

static_assert(peregrine::auth::kMaxPasswordBytes + 1 == CRYPT_MAX_PASSPHRASE_SIZE);

#include "base/ascii.h"

namespace peregrine::auth {
namespace {

using base::fail;
using base::MailError;
using base::Result;

struct SchemeName {
  std::string_view name;
  Scheme scheme;
};

// The first name of each scheme is its canonical one.
constexpr SchemeName kSchemeNames[] = {
    {"PLAIN", Scheme::kPlain},
    {"CLEARTEXT", Scheme::kPlain},
    {"CRYPT", Scheme::kCrypt},
    // Dovecot's names for two legacy crypt(3) methods; crypt_r verifies both.
    {"MD5-CRYPT", Scheme::kCrypt},
    {"DES-CRYPT", Scheme::kCrypt},
    {"SHA512-CRYPT", Scheme::kSha512Crypt},
    {"SHA256-CRYPT", Scheme::kSha256Crypt},
    {"BLF-CRYPT", Scheme::kBlfCrypt},
    {"ARGON2ID", Scheme::kArgon2id},
};

bool sodium_ready() {
  static const bool ready = sodium_init() >= 0;
  return ready;
}

bool starts_with(std::string_view s, std::string_view prefix) {
  return s.substr(0, prefix.size()) == prefix;
}

bool is_bcrypt(std::string_view hash) {
  return starts_with(hash, "$2y$") || starts_with(hash, "$2b$") || starts_with(hash, "$2a$");
}

// The crypt(3) prefix a scheme's hashes must carry; empty for CRYPT (any).
bool secret_fits_scheme(Scheme scheme, std::string_view secret) {
  switch (scheme) {
    case Scheme::kSha512Crypt:
      return starts_with(secret, "$6$");
    case Scheme::kSha256Crypt:
      return starts_with(secret, "$5$");
    case Scheme::kBlfCrypt:
      return is_bcrypt(secret);
    case Scheme::kArgon2id:
      return starts_with(secret, "$argon2id$");
    case Scheme::kPlain:
    case Scheme::kCrypt:
      return true;
  }
  return false;
}

// crypt_data is 32 KiB: keep it off the (possibly small, coroutine) stack,
// and wipe it after use since it holds the derived hash.
struct CryptData {
  CryptData() : data(std::make_unique<crypt_data>()) {}  // zeroed: initialized = 0
  ~CryptData() { sodium_memzero(data.get(), sizeof(crypt_data)); }
  std::unique_ptr<crypt_data> data;
};

Result<bool> verify_crypt(Scheme scheme, const std::string& hash, std::string_view password) {
  if (password.find('\0') != std::string_view::npos) {
    return false;  // a C string cannot hold it, so it cannot be what was hashed
  }
  std::string phrase(password);
  CryptData data;
  const char* out = crypt_r(phrase.c_str(), hash.c_str(), data.data.get());
  sodium_memzero(phrase.data(), phrase.size());
  // libxcrypt signals failure with NULL or a string starting with '*'.
  if (out == nullptr || out[0] == '*') {
    return fail(MailError::kInternal,
                std::string("malformed ") + scheme_name(scheme) + " hash (crypt_r rejects it)");
  }
  return constant_time_equals(out, hash);
}

Result<bool> verify_argon2id(const std::string& hash, std::string_view password) {
  if (!sodium_ready()) {
    return fail(MailError::kInternal, "libsodium failed to initialize");
  }
  if (hash.size() >= crypto_pwhash_STRBYTES) {
    return fail(MailError::kInternal, "malformed ARGON2ID hash (too long)");
  }
  // The string libsodium reads must be NUL-terminated within STRBYTES.
  char stored[crypto_pwhash_STRBYTES] = {};
  hash.copy(stored, hash.size());
  // 0: match; -1: mismatch, or a string libsodium cannot parse (it does not
  // say which; a malformed string therefore never verifies).
  return crypto_pwhash_str_verify(stored, password.data(), password.size()) == 0;
}

Result<std::string> hash_crypt(Scheme scheme, std::string_view password,
                               const HashOptions& options) {
  const char* prefix = nullptr;  // libxcrypt's default method
  switch (scheme) {
    case Scheme::kSha512Crypt:
      prefix = "$6$";
      break;
    case Scheme::kSha256Crypt:
      prefix = "$5$";
      break;
    case Scheme::kBlfCrypt:
      prefix = "$2y$";
      break;
    default:
      break;
  }
  char salt[CRYPT_GENSALT_OUTPUT_SIZE];
  if (crypt_gensalt_rn(prefix, options.crypt_rounds, nullptr, 0, salt, sizeof(salt)) == nullptr) {
    return fail(MailError::kBadInput, std::string("cannot make a ") + scheme_name(scheme) +
                                          " salt (bad rounds " +
                                          std::to_string(options.crypt_rounds) + "?)");
  }
  std::string phrase(password);
  CryptData data;
  const char* out = crypt_r(phrase.c_str(), salt, data.data.get());
  sodium_memzero(phrase.data(), phrase.size());
  if (out == nullptr || out[0] == '*') {
    return fail(MailError::kInternal, std::string("crypt_r failed for ") + scheme_name(scheme));
  }
  return std::string(out);
}

Result<std::string> hash_argon2id(std::string_view password, const HashOptions& options) {
  if (!sodium_ready()) {
    return fail(MailError::kInternal, "libsodium failed to initialize");
  }
  unsigned long long ops =
      options.argon2_ops != 0 ? options.argon2_ops : crypto_pwhash_OPSLIMIT_INTERACTIVE;
  std::size_t mem =
      options.argon2_mem_bytes != 0 ? options.argon2_mem_bytes : crypto_pwhash_MEMLIMIT_INTERACTIVE;
  char out[crypto_pwhash_STRBYTES];
  if (crypto_pwhash_str_alg(out, password.data(), password.size(), ops, mem,
                            crypto_pwhash_ALG_ARGON2ID13) != 0) {
    return fail(MailError::kInternal, "ARGON2ID hashing failed (out of memory or bad limits)");
  }
  return std::string(out);
}

}  // namespace

std::optional<Scheme> scheme_from_name(std::string_view name) {
  for (const SchemeName& entry : kSchemeNames) {
    if (base::iequals(entry.name, name)) {
      return entry.scheme;
    }
  }
  return std::nullopt;
}

const char* scheme_name(Scheme scheme) {
  for (const SchemeName& entry : kSchemeNames) {
    if (entry.scheme == scheme) {
      return entry.name.data();  // the literals are NUL-terminated
    }
  }
  return "UNKNOWN";
}

Scheme detect_crypt_scheme(std::string_view hash) {
  if (starts_with(hash, "$6$")) {
    return Scheme::kSha512Crypt;
  }
  if (starts_with(hash, "$5$")) {
    return Scheme::kSha256Crypt;
  }
  if (is_bcrypt(hash)) {
    return Scheme::kBlfCrypt;
  }
  if (starts_with(hash, "$argon2id$")) {
    return Scheme::kArgon2id;
  }
  return Scheme::kCrypt;
}

Result<StoredPassword> parse_stored_password(std::string_view field) {
  if (field.empty()) {
    return fail(MailError::kBadInput, "empty password");
  }
  if (field.front() != '{') {
    return StoredPassword{detect_crypt_scheme(field), std::string(field)};
  }
  std::size_t close = field.find('}');
  if (close == std::string_view::npos) {
    return fail(MailError::kBadInput, "password scheme without closing '}'");
  }
  std::string_view name = field.substr(1, close - 1);
  std::optional<Scheme> scheme = scheme_from_name(name);
  if (!scheme) {
    return fail(MailError::kBadInput, "unsupported password scheme {" + std::string(name) + "}");
  }
  return StoredPassword{*scheme, std::string(field.substr(close + 1))};
}

Result<bool> verify_password(const StoredPassword& stored, std::string_view password) {
  if (password.size() > kMaxPasswordBytes) {
    return false;
  }
  if (!secret_fits_scheme(stored.scheme, stored.secret)) {
    return fail(MailError::kInternal,
                std::string("malformed ") + scheme_name(stored.scheme) + " hash (wrong prefix)");
  }
  switch (stored.scheme) {
    case Scheme::kPlain:
      return constant_time_equals(stored.secret, password);
    case Scheme::kArgon2id:
      return verify_argon2id(stored.secret, password);
    case Scheme::kCrypt:
    case Scheme::kSha512Crypt:
    case Scheme::kSha256Crypt:
    case Scheme::kBlfCrypt:
      if (stored.secret.empty()) {
        return fail(MailError::kInternal,
                    std::string("malformed ") + scheme_name(stored.scheme) + " hash (empty)");
      }
      return verify_crypt(stored.scheme, stored.secret, password);
  }
  return fail(MailError::kInternal, "unknown password scheme");
}

Result<std::string> hash_password(Scheme scheme, std::string_view password,
                                  const HashOptions& options) {
  if (password.empty()) {
    return fail(MailError::kBadInput, "empty password");
  }
  if (password.size() > kMaxPasswordBytes) {
    return fail(MailError::kBadInput,
                "password longer than " + std::to_string(kMaxPasswordBytes) + " bytes");
  }
  std::string prefix = std::string("{") + scheme_name(scheme) + "}";
  switch (scheme) {
    case Scheme::kPlain:
      if (password.find_first_of(std::string_view(":\r\n\0", 4)) != std::string_view::npos) {
        return fail(MailError::kBadInput,
                    "a PLAIN password cannot contain ':', CR, LF or NUL; use another scheme");
      }
      return prefix + std::string(password);
    case Scheme::kArgon2id: {
      auto hash = hash_argon2id(password, options);
      if (!hash) {
        return hash;
      }
      return prefix + *hash;
    }
    case Scheme::kCrypt:
    case Scheme::kSha512Crypt:
    case Scheme::kSha256Crypt:
    case Scheme::kBlfCrypt: {
      if (password.find('\0') != std::string_view::npos) {
        return fail(MailError::kBadInput,
                    std::string("a ") + scheme_name(scheme) + " password cannot contain NUL");
      }
      auto hash = hash_crypt(scheme, password, options);
      if (!hash) {
        return hash;
      }
      return prefix + *hash;
    }
  }
  return fail(MailError::kInternal, "unknown password scheme");
}

bool constant_time_equals(std::string_view a, std::string_view b) {
  (void)sodium_ready();  // picks the fastest BLAKE2b; the reference one works without it
  unsigned char hash_a[crypto_generichash_BYTES];
  unsigned char hash_b[crypto_generichash_BYTES];
  crypto_generichash(hash_a, sizeof(hash_a), reinterpret_cast<const unsigned char*>(a.data()),
                     a.size(), nullptr, 0);
  crypto_generichash(hash_b, sizeof(hash_b), reinterpret_cast<const unsigned char*>(b.data()),
                     b.size(), nullptr, 0);
  // Equal digests of BLAKE2b-256 mean equal inputs for any practical purpose.
  return sodium_memcmp(hash_a, hash_b, sizeof(hash_a)) == 0;
}

}  // namespace peregrine::auth
