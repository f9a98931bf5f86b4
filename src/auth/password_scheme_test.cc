#include "auth/password_scheme.h"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <string>
#include <vector>

namespace peregrine::auth {
namespace {

using base::MailError;

// Cheap costs so the tests stay fast; the defaults are exercised once each.
const HashOptions kFast{.crypt_rounds = 0, .argon2_ops = 1, .argon2_mem_bytes = 64 * 1024};

bool verifies(std::string_view field, std::string_view password) {
  auto stored = parse_stored_password(field);
  EXPECT_TRUE(stored) << field << ": " << stored.error().message;
  if (!stored) {
    return false;
  }
  auto ok = verify_password(*stored, password);
  EXPECT_TRUE(ok) << field << ": " << ok.error().message;
  return ok && *ok;
}

// Made with Dovecot 2.3's `doveadm pw -s SCHEME -p PASSWORD`.
struct Vector {
  const char* stored;
  const char* password;
};
const Vector kDovecotVectors[] = {
    {"{PLAIN}secret", "secret"},
    {"{CLEARTEXT}secret", "secret"},
    {"{SHA512-CRYPT}$6$ZECpVzwtlsloPOey$1VHFFh.X."
     "uy0xzugQyu1VVjCds16HhZkUfoMozsn9kiCy870XBR2sy5bpu7Q6z"
     "H5H.1mR5916fQ4jX2ZxiOGW.",
     "secret"},
    {"{SHA512-CRYPT}$6$./ZvYWkmwpING/j9$ByRVsdf0bG624dbvaAA4sVecdgkEf5keB3VJ1PKpuz0LBXRbx1Ym3L5cPu2"
     "aWgJPA4b/2BSfUWl82PJ5oNoMz.",
     "p\xC3\xA4:ss w\xC3\xB6rd"},
    {"{SHA256-CRYPT}$5$btGyZq/tjlEkzr30$/F/h3YRwTlIBiGV3msAjlQP58PPs4CpbujXxYznvVH0", "secret"},
    {"{SHA256-CRYPT}$5$IyzzAKNMSwk/PDjC$jDXVXtUwY6i8UoEk6uekPFmQQJx8zfYSZy95wP3LDT.",
     "correct horse battery staple"},
    {"{BLF-CRYPT}$2y$05$.xymqIeRTvzwqAsB9BFjYecVCXMF8wYpkfuhK7YWAMF4dKZCXjOy.", "secret"},
    {"{BLF-CRYPT}$2y$05$2Qakxj/vGGfj/arZYLGS2e2icIOITms9YySe7MaQikQB4YcRxbOOW",
     "p\xC3\xA4:ss w\xC3\xB6rd"},
    {"{CRYPT}$2y$05$Ix/S.U9gsGzRbWPmB3dCf.jBAmdPrhaysq7r.cGhq.TF.4083Wbwa", "secret"},
    {"{MD5-CRYPT}$1$9GXzCGCB$QUN64Xq4yMIrEnmZCbVVs1", "secret"},
    {"{DES-CRYPT}tjWjQst2NgD.g", "secret"},
    {"{ARGON2ID}$argon2id$v=19$m=65536,t=3,p=1$jiTwUTh9Hd5geGzV0/"
     "p9gQ$s9zNdCIcoOfhM4Stx8uJvxU9AVioBW"
     "WHpotuJxKhL1M",
     "secret"},
    {"{ARGON2ID}$argon2id$v=19$m=65536,t=3,p=1$rIUs5iaKAA4FJCoGhqkCGw$"
     "T48CCtftV67Zd4CcjbfaD7oBz9aLLd"
     "gHmgzgW2/ESUs",
     "p\xC3\xA4:ss w\xC3\xB6rd"},
    // Without {SCHEME}: the crypt prefix tells.
    {"$6$ZECpVzwtlsloPOey$1VHFFh.X.uy0xzugQyu1VVjCds16HhZkUfoMozsn9kiCy870XBR2sy5bpu7Q6zH5H."
     "1mR5916f"
     "Q4jX2ZxiOGW.",
     "secret"},
    {"$2y$05$.xymqIeRTvzwqAsB9BFjYecVCXMF8wYpkfuhK7YWAMF4dKZCXjOy.", "secret"},
    {"$argon2id$v=19$m=65536,t=3,p=1$jiTwUTh9Hd5geGzV0/p9gQ$s9zNdCIcoOfhM4Stx8uJvxU9AVioBWWHpotuJxK"
     "hL1M",
     "secret"},
    {"$1$9GXzCGCB$QUN64Xq4yMIrEnmZCbVVs1", "secret"},
};

TEST(PasswordScheme, VerifiesDovecotHashes) {
  for (const Vector& v : kDovecotVectors) {
    EXPECT_TRUE(verifies(v.stored, v.password)) << v.stored;
    EXPECT_FALSE(verifies(v.stored, std::string(v.password) + "x")) << v.stored;
    if (std::string_view(v.stored).find("argon2id") == std::string_view::npos) {
      // (ARGON2ID at Dovecot's cost is slow: one mismatch is enough there.)
      EXPECT_FALSE(verifies(v.stored, "Secret")) << v.stored;
      EXPECT_FALSE(verifies(v.stored, "")) << v.stored;
    }
  }
}

TEST(PasswordScheme, SchemeNames) {
  struct Case {
    const char* name;
    std::optional<Scheme> scheme;
  };
  const Case cases[] = {
      {"PLAIN", Scheme::kPlain},
      {"plain", Scheme::kPlain},
      {"CLEARTEXT", Scheme::kPlain},
      {"CRYPT", Scheme::kCrypt},
      {"MD5-CRYPT", Scheme::kCrypt},
      {"DES-CRYPT", Scheme::kCrypt},
      {"SHA512-CRYPT", Scheme::kSha512Crypt},
      {"sha256-crypt", Scheme::kSha256Crypt},
      {"BLF-CRYPT", Scheme::kBlfCrypt},
      {"Argon2id", Scheme::kArgon2id},
      {"SSHA", std::nullopt},
      {"ARGON2I", std::nullopt},
      {"", std::nullopt},
      {"PLAIN.b64", std::nullopt},
  };
  for (const Case& c : cases) {
    EXPECT_EQ(scheme_from_name(c.name), c.scheme) << c.name;
  }
  EXPECT_STREQ(scheme_name(Scheme::kPlain), "PLAIN");
  EXPECT_STREQ(scheme_name(Scheme::kCrypt), "CRYPT");
  EXPECT_STREQ(scheme_name(Scheme::kSha512Crypt), "SHA512-CRYPT");
  EXPECT_STREQ(scheme_name(Scheme::kSha256Crypt), "SHA256-CRYPT");
  EXPECT_STREQ(scheme_name(Scheme::kBlfCrypt), "BLF-CRYPT");
  EXPECT_STREQ(scheme_name(Scheme::kArgon2id), "ARGON2ID");
}

TEST(PasswordScheme, DetectsBareCryptPrefixes) {
  EXPECT_EQ(detect_crypt_scheme("$6$salt$hash"), Scheme::kSha512Crypt);
  EXPECT_EQ(detect_crypt_scheme("$5$salt$hash"), Scheme::kSha256Crypt);
  EXPECT_EQ(detect_crypt_scheme("$2y$05$x"), Scheme::kBlfCrypt);
  EXPECT_EQ(detect_crypt_scheme("$2b$05$x"), Scheme::kBlfCrypt);
  EXPECT_EQ(detect_crypt_scheme("$2a$05$x"), Scheme::kBlfCrypt);
  EXPECT_EQ(detect_crypt_scheme("$argon2id$v=19$x"), Scheme::kArgon2id);
  EXPECT_EQ(detect_crypt_scheme("$y$j9T$x"), Scheme::kCrypt);
  EXPECT_EQ(detect_crypt_scheme("$1$x$y"), Scheme::kCrypt);
  EXPECT_EQ(detect_crypt_scheme("tjWjQst2NgD.g"), Scheme::kCrypt);
}

TEST(PasswordScheme, ParseStoredPassword) {
  auto p = parse_stored_password("{sha512-crypt}$6$abc");
  ASSERT_TRUE(p);
  EXPECT_EQ(p->scheme, Scheme::kSha512Crypt);
  EXPECT_EQ(p->secret, "$6$abc");
  p = parse_stored_password("{PLAIN}a}b{c");
  ASSERT_TRUE(p);
  EXPECT_EQ(p->scheme, Scheme::kPlain);
  EXPECT_EQ(p->secret, "a}b{c");
  p = parse_stored_password("$y$j9T$abc");
  ASSERT_TRUE(p);
  EXPECT_EQ(p->scheme, Scheme::kCrypt);
  EXPECT_EQ(p->secret, "$y$j9T$abc");

  struct Bad {
    const char* field;
    const char* message;
  };
  for (const Bad& b :
       {Bad{"", "empty password"}, Bad{"{SSHA512}abc", "unsupported password scheme {SSHA512}"},
        Bad{"{}abc", "unsupported password scheme {}"},
        Bad{"{PLAIN", "password scheme without closing '}'"}}) {
    auto r = parse_stored_password(b.field);
    ASSERT_FALSE(r) << b.field;
    EXPECT_EQ(r.error().code, MailError::kBadInput);
    EXPECT_EQ(r.error().message, b.message);
  }
}

TEST(PasswordScheme, MalformedSecretsAreInternalErrors) {
  struct Case {
    StoredPassword stored;
    const char* message;
  };
  const Case cases[] = {
      {{Scheme::kSha512Crypt, "$5$abc$def"}, "malformed SHA512-CRYPT hash (wrong prefix)"},
      {{Scheme::kSha256Crypt, "secret"}, "malformed SHA256-CRYPT hash (wrong prefix)"},
      {{Scheme::kBlfCrypt, "$6$x$y"}, "malformed BLF-CRYPT hash (wrong prefix)"},
      {{Scheme::kArgon2id, "$argon2i$v=19$x"}, "malformed ARGON2ID hash (wrong prefix)"},
      {{Scheme::kBlfCrypt, "$2y$05$short"}, "malformed BLF-CRYPT hash (crypt_r rejects it)"},
      {{Scheme::kCrypt, "!locked"}, "malformed CRYPT hash (crypt_r rejects it)"},
      {{Scheme::kCrypt, ""}, "malformed CRYPT hash (empty)"},
      {{Scheme::kArgon2id, "$argon2id$" + std::string(200, 'x')},
       "malformed ARGON2ID hash (too long)"},
  };
  for (const Case& c : cases) {
    auto r = verify_password(c.stored, "secret");
    ASSERT_FALSE(r) << c.stored.secret;
    EXPECT_EQ(r.error().code, MailError::kInternal);
    EXPECT_EQ(r.error().message, c.message);
  }
  // libsodium cannot tell a malformed string from a mismatch: it never verifies.
  auto r = verify_password({Scheme::kArgon2id, "$argon2id$garbage"}, "secret");
  ASSERT_TRUE(r);
  EXPECT_FALSE(*r);
}

TEST(PasswordScheme, PasswordBounds) {
  std::string longest(kMaxPasswordBytes, 'p');
  auto stored = hash_password(Scheme::kSha256Crypt, longest, kFast);
  ASSERT_TRUE(stored) << stored.error().message;
  EXPECT_TRUE(verifies(*stored, longest));
  EXPECT_FALSE(verifies("{PLAIN}" + longest + "p", longest + "p"));  // over the bound
  auto too_long = hash_password(Scheme::kSha512Crypt, longest + "p");
  ASSERT_FALSE(too_long);
  EXPECT_EQ(too_long.error().code, MailError::kBadInput);

  // A NUL cannot reach crypt(3), so it never matches a crypt hash...
  EXPECT_FALSE(verifies(kDovecotVectors[2].stored, std::string("secret\0x", 8)));
  EXPECT_FALSE(verifies(kDovecotVectors[2].stored, std::string("secret\0", 7)));
  auto nul = hash_password(Scheme::kSha512Crypt, std::string("a\0b", 3));
  ASSERT_FALSE(nul);
  EXPECT_EQ(nul.error().message, "a SHA512-CRYPT password cannot contain NUL");
  // ...but ARGON2ID takes a length, so it hashes and verifies it exactly.
  auto argon = hash_password(Scheme::kArgon2id, std::string("a\0b", 3), kFast);
  ASSERT_TRUE(argon) << argon.error().message;
  EXPECT_TRUE(verifies(*argon, std::string("a\0b", 3)));
  EXPECT_FALSE(verifies(*argon, "a"));

  auto empty = hash_password(Scheme::kPlain, "");
  ASSERT_FALSE(empty);
  EXPECT_EQ(empty.error().message, "empty password");
}

TEST(PasswordScheme, HashThenVerifyEveryScheme) {
  const std::string password = "p\xC3\xA4ss w\xC3\xB6rd!";
  struct Case {
    Scheme scheme;
    const char* prefix;
  };
  const Case cases[] = {
      {Scheme::kPlain, "{PLAIN}p\xC3\xA4ss"},
      {Scheme::kSha512Crypt, "{SHA512-CRYPT}$6$"},
      {Scheme::kSha256Crypt, "{SHA256-CRYPT}$5$"},
      {Scheme::kBlfCrypt, "{BLF-CRYPT}$2y$"},
      {Scheme::kCrypt, "{CRYPT}$"},
      {Scheme::kArgon2id, "{ARGON2ID}$argon2id$v=19$"},
  };
  for (const Case& c : cases) {
    auto stored = hash_password(c.scheme, password, kFast);
    ASSERT_TRUE(stored) << scheme_name(c.scheme) << ": " << stored.error().message;
    EXPECT_EQ(stored->rfind(c.prefix, 0), 0u) << *stored;
    EXPECT_EQ(stored->find(':'), std::string::npos) << *stored;
    EXPECT_TRUE(verifies(*stored, password)) << *stored;
    EXPECT_FALSE(verifies(*stored, "p\xC3\xA4ss w\xC3\xB6rd?")) << *stored;
    // A fresh salt each time.
    if (c.scheme != Scheme::kPlain) {
      EXPECT_NE(*stored, *hash_password(c.scheme, password, kFast));
    }
  }
}

TEST(PasswordScheme, DefaultCostsAndChosenRounds) {
  auto argon = hash_password(Scheme::kArgon2id, "secret");
  ASSERT_TRUE(argon);
  EXPECT_NE(argon->find("$m=65536,t=2,p=1$"), std::string::npos) << *argon;
  auto sha = hash_password(Scheme::kSha512Crypt, "secret", {.crypt_rounds = 10000});
  ASSERT_TRUE(sha);
  EXPECT_EQ(sha->rfind("{SHA512-CRYPT}$6$rounds=10000$", 0), 0u) << *sha;
  EXPECT_TRUE(verifies(*sha, "secret"));
  auto blf = hash_password(Scheme::kBlfCrypt, "secret", {.crypt_rounds = 4});
  ASSERT_TRUE(blf);
  EXPECT_EQ(blf->rfind("{BLF-CRYPT}$2y$04$", 0), 0u) << *blf;
  auto bad = hash_password(Scheme::kBlfCrypt, "secret", {.crypt_rounds = 99});
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().code, MailError::kBadInput);
}

TEST(PasswordScheme, PlainRefusesCharactersThatBreakTheFile) {
  for (std::string_view password : {std::string_view("a:b"), std::string_view("a\nb"),
                                    std::string_view("a\rb"), std::string_view("a\0b", 3)}) {
    auto r = hash_password(Scheme::kPlain, password);
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error().code, MailError::kBadInput);
  }
  // The crypt family and ARGON2ID take them: the hash has no ':'.
  auto r = hash_password(Scheme::kSha256Crypt, "a:b\n", kFast);
  ASSERT_TRUE(r);
  EXPECT_TRUE(verifies(*r, "a:b\n"));
}

TEST(PasswordScheme, ConstantTimeEquals) {
  EXPECT_TRUE(constant_time_equals("", ""));
  EXPECT_TRUE(constant_time_equals("secret", "secret"));
  EXPECT_FALSE(constant_time_equals("secret", "secreT"));
  EXPECT_FALSE(constant_time_equals("secret", "secret "));
  EXPECT_FALSE(constant_time_equals("", "x"));
  EXPECT_TRUE(constant_time_equals(std::string_view("a\0b", 3), std::string_view("a\0b", 3)));
  EXPECT_FALSE(constant_time_equals(std::string_view("a\0b", 3), std::string_view("a\0c", 3)));
}

// Runs `doveadm pw -t STORED -p PASSWORD`; its exit status is 0 when Dovecot
// verifies the password. -1 if doveadm could not be run.
int doveadm_verify(const std::string& stored, const std::string& password) {
  pid_t pid = ::fork();
  if (pid < 0) {
    return -1;
  }
  if (pid == 0) {
    // Quiet: doveadm prints its verdict on stdout and stderr.
    FILE* null_out = std::freopen("/dev/null", "w", stdout);
    FILE* null_err = std::freopen("/dev/null", "w", stderr);
    (void)null_out;
    (void)null_err;
    ::execlp("doveadm", "doveadm", "pw", "-t", stored.c_str(), "-p", password.c_str(),
             static_cast<char*>(nullptr));
    ::_exit(127);
  }
  int status = 0;
  if (::waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status) == 127) {
    return -1;
  }
  return WEXITSTATUS(status);
}

// Users move between Dovecot and Peregrine both ways: Dovecot must accept our
// hashes too. Skipped where Dovecot is not installed.
TEST(PasswordScheme, DovecotVerifiesOurHashes) {
  if (doveadm_verify("{PLAIN}x", "x") != 0) {
    GTEST_SKIP() << "doveadm not available";
  }
  const std::string password = "p\xC3\xA4ss w\xC3\xB6rd";
  for (Scheme scheme : {Scheme::kPlain, Scheme::kSha512Crypt, Scheme::kSha256Crypt,
                        Scheme::kBlfCrypt, Scheme::kCrypt, Scheme::kArgon2id}) {
    auto stored = hash_password(scheme, password, {.argon2_ops = 1, .argon2_mem_bytes = 1 << 20});
    ASSERT_TRUE(stored) << stored.error().message;
    EXPECT_EQ(doveadm_verify(*stored, password), 0) << *stored;
    EXPECT_NE(doveadm_verify(*stored, "wrong"), 0) << *stored;
  }
}

}  // namespace
}  // namespace peregrine::auth
