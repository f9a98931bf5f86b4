#include "auth/sasl.h"

#include <array>
#include <cstdint>

#include "base/ascii.h"

namespace peregrine::auth {
namespace {

using base::fail;
using base::MailError;
using base::Result;

constexpr char kAlphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

constexpr std::array<std::int8_t, 256> make_decode_table() {
  std::array<std::int8_t, 256> table{};
  for (auto& v : table) {
    v = -1;
  }
  for (int i = 0; i < 64; ++i) {
    table[static_cast<unsigned char>(kAlphabet[i])] = static_cast<std::int8_t>(i);
  }
  return table;
}
constexpr std::array<std::int8_t, 256> kDecode = make_decode_table();

// Strict UTF-8 (RFC 3629): no overlong forms, no surrogates, nothing past
// U+10FFFF.
bool is_valid_utf8(std::string_view s) {
  std::size_t i = 0;
  while (i < s.size()) {
    auto c = static_cast<unsigned char>(s[i]);
    std::size_t len;
    std::uint32_t cp;
    if (c < 0x80) {
      ++i;
      continue;
    } else if (c >= 0xc2 && c <= 0xdf) {
      len = 2;
      cp = c & 0x1f;
    } else if (c >= 0xe0 && c <= 0xef) {
      len = 3;
      cp = c & 0x0f;
    } else if (c >= 0xf0 && c <= 0xf4) {
      len = 4;
      cp = c & 0x07;
    } else {
      return false;
    }
    if (i + len > s.size()) {
      return false;
    }
    for (std::size_t k = 1; k < len; ++k) {
      auto cc = static_cast<unsigned char>(s[i + k]);
      if ((cc & 0xc0) != 0x80) {
        return false;
      }
      cp = (cp << 6) | (cc & 0x3f);
    }
    if ((len == 3 && cp < 0x800) || (len == 4 && (cp < 0x10000 || cp > 0x10ffff)) ||
        (cp >= 0xd800 && cp <= 0xdfff)) {
      return false;
    }
    i += len;
  }
  return true;
}

Result<std::string> decode_response(std::string_view text) {
  if (text.size() > kMaxSaslResponseBytes) {
    return fail(MailError::kTooBig,
                "SASL response longer than " + std::to_string(kMaxSaslResponseBytes) + " bytes");
  }
  return decode_base64(text);
}

class PlainServer final : public SaslServer {
 public:
  const char* mechanism() const override { return "PLAIN"; }
  SaslChallenge initial_challenge() const override { return SaslChallenge{}; }
  Result<SaslStep> step(std::string_view response) override {
    if (done_) {
      return fail(MailError::kInternal, "PLAIN exchange already finished");
    }
    done_ = true;
    auto credentials = decode_sasl_plain(response);
    if (!credentials) {
      return std::unexpected(credentials.error());
    }
    return SaslStep(std::move(*credentials));
  }

 private:
  bool done_ = false;
};

// Challenges of LOGIN: "Username:" and "Password:", base64-encoded.
class LoginServer final : public SaslServer {
 public:
  const char* mechanism() const override { return "LOGIN"; }
  SaslChallenge initial_challenge() const override {
    return SaslChallenge{encode_base64("Username:")};
  }
  Result<SaslStep> step(std::string_view response) override {
    if (state_ == State::kDone) {
      return fail(MailError::kInternal, "LOGIN exchange already finished");
    }
    State state = state_;
    state_ = State::kDone;  // any error ends the exchange
    auto decoded = decode_response(response);
    if (!decoded) {
      return std::unexpected(decoded.error());
    }
    if (decoded->size() > kMaxSaslFieldBytes) {
      return fail(MailError::kBadInput,
                  "LOGIN field longer than " + std::to_string(kMaxSaslFieldBytes) + " bytes");
    }
    if (decoded->find('\0') != std::string::npos) {
      return fail(MailError::kBadInput, "LOGIN field contains NUL");
    }
    if (decoded->empty()) {
      return fail(MailError::kBadInput,
                  state == State::kUser ? "empty LOGIN user name" : "empty LOGIN password");
    }
    if (state == State::kUser) {
      if (!is_valid_utf8(*decoded)) {
        return fail(MailError::kBadInput, "LOGIN user name is not UTF-8");
      }
      credentials_.authcid = std::move(*decoded);
      state_ = State::kPassword;
      return SaslStep(SaslChallenge{encode_base64("Password:")});
    }
    credentials_.password = std::move(*decoded);
    return SaslStep(std::move(credentials_));
  }

 private:
  enum class State { kUser, kPassword, kDone };
  State state_ = State::kUser;
  Credentials credentials_;
};

}  // namespace

std::string encode_base64(std::string_view data) {
  std::string out;
  out.reserve((data.size() + 2) / 3 * 4);
  std::size_t i = 0;
  for (; i + 3 <= data.size(); i += 3) {
    std::uint32_t v = static_cast<std::uint32_t>(static_cast<unsigned char>(data[i])) << 16 |
                      static_cast<std::uint32_t>(static_cast<unsigned char>(data[i + 1])) << 8 |
                      static_cast<unsigned char>(data[i + 2]);
    out += kAlphabet[v >> 18];
    out += kAlphabet[(v >> 12) & 63];
    out += kAlphabet[(v >> 6) & 63];
    out += kAlphabet[v & 63];
  }
  std::size_t rest = data.size() - i;
  if (rest > 0) {
    std::uint32_t v = static_cast<std::uint32_t>(static_cast<unsigned char>(data[i])) << 16;
    if (rest == 2) {
      v |= static_cast<std::uint32_t>(static_cast<unsigned char>(data[i + 1])) << 8;
    }
    out += kAlphabet[v >> 18];
    out += kAlphabet[(v >> 12) & 63];
    out += rest == 2 ? kAlphabet[(v >> 6) & 63] : '=';
    out += '=';
  }
  return out;
}

Result<std::string> decode_base64(std::string_view text) {
  auto bad = [] { return fail(MailError::kBadInput, "bad base64"); };
  if (text.size() % 4 != 0) {
    return bad();
  }
  std::string out;
  out.reserve(text.size() / 4 * 3);
  for (std::size_t i = 0; i < text.size(); i += 4) {
    bool last = i + 4 == text.size();
    std::size_t pad = 0;
    if (last) {
      pad = text[i + 3] == '=' ? (text[i + 2] == '=' ? 2 : 1) : 0;
    }
    std::uint32_t v = 0;
    for (std::size_t k = 0; k < 4 - pad; ++k) {
      std::int8_t d = kDecode[static_cast<unsigned char>(text[i + k])];
      if (d < 0) {
        return bad();  // includes '=' anywhere but the end
      }
      v = v << 6 | static_cast<std::uint32_t>(d);
    }
    if (pad == 0) {
      out += static_cast<char>(v >> 16);
      out += static_cast<char>((v >> 8) & 0xff);
      out += static_cast<char>(v & 0xff);
    } else if (pad == 1) {  // 18 bits: 2 bytes and 2 unused bits
      if ((v & 0x3) != 0) {
        return bad();
      }
      v >>= 2;
      out += static_cast<char>(v >> 8);
      out += static_cast<char>(v & 0xff);
    } else {  // 12 bits: 1 byte and 4 unused bits
      if ((v & 0xf) != 0) {
        return bad();
      }
      out += static_cast<char>(v >> 4);
    }
  }
  return out;
}

Result<Credentials> parse_sasl_plain(std::string_view message) {
  std::size_t first = message.find('\0');
  std::size_t second =
      first == std::string_view::npos ? std::string_view::npos : message.find('\0', first + 1);
  if (second == std::string_view::npos) {
    return fail(MailError::kBadInput, "PLAIN message needs authzid NUL authcid NUL password");
  }
  if (message.find('\0', second + 1) != std::string_view::npos) {
    return fail(MailError::kBadInput, "PLAIN message has more than two NULs");
  }
  Credentials c;
  c.authzid = std::string(message.substr(0, first));
  c.authcid = std::string(message.substr(first + 1, second - first - 1));
  c.password = std::string(message.substr(second + 1));
  if (c.authcid.empty()) {
    return fail(MailError::kBadInput, "PLAIN message has an empty user name");
  }
  if (c.password.empty()) {
    return fail(MailError::kBadInput, "PLAIN message has an empty password");
  }
  for (const std::string* field : {&c.authzid, &c.authcid, &c.password}) {
    if (field->size() > kMaxSaslFieldBytes) {
      return fail(MailError::kBadInput,
                  "PLAIN field longer than " + std::to_string(kMaxSaslFieldBytes) + " bytes");
    }
  }
  // The identities must be UTF-8 (RFC 4616 section 2); the password is
  // compared as bytes, so a legacy client's Latin-1 password still works.
  if (!is_valid_utf8(c.authzid) || !is_valid_utf8(c.authcid)) {
    return fail(MailError::kBadInput, "PLAIN user name is not UTF-8");
  }
  return c;
}

Result<Credentials> decode_sasl_plain(std::string_view base64) {
  auto message = decode_response(base64);
  if (!message) {
    return std::unexpected(message.error());
  }
  return parse_sasl_plain(*message);
}

std::unique_ptr<SaslServer> make_sasl_server(std::string_view mechanism) {
  if (base::iequals(mechanism, "PLAIN")) {
    return std::make_unique<PlainServer>();
  }
  if (base::iequals(mechanism, "LOGIN")) {
    return std::make_unique<LoginServer>();
  }
  return nullptr;
}

}  // namespace peregrine::auth
