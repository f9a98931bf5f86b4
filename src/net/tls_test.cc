// TLS: loading the certificate, STARTTLS (with the plaintext-injection
// defence), implicit TLS, a failed handshake.

#include <gtest/gtest.h>
#include <openssl/ssl.h>

#include <asio/this_coro.hpp>
#include <fstream>

#include "net/test_util.h"
#include "net/tls_context.h"
#include "test_support/temp_dir.h"

namespace peregrine::net {
namespace {

using test::CertFiles;
using test::Client;
using test::run_bounded;
using test::TestServer;
using test::TestServerOptions;
using test_support::TempDir;

class TlsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    files_ = test::make_self_signed_cert(dir_.path());
    auto loaded = TlsContext::load(files_.cert, files_.key);
    ASSERT_TRUE(loaded) << loaded.error().message;
    tls_ = *loaded;
  }

  TempDir dir_;
  CertFiles files_;
  std::shared_ptr<TlsContext> tls_;
};

TEST_F(TlsTest, StartTlsUpgradesInPlaceAndDropsInjectedPlaintext) {
  TestServerOptions options;
  options.tls = tls_;
  TestServer server(options);
  EXPECT_TRUE(run_bounded([&]() -> asio::awaitable<void> {
    Client client(co_await asio::this_coro::executor);
    EXPECT_TRUE(co_await client.connect("127.0.0.1", server.port));
    EXPECT_EQ(co_await client.line(), "* HELLO");
    co_await client.send("TLS\r\n");
    EXPECT_EQ(co_await client.line(), "TLS no");
    // A man in the middle appends a command to STARTTLS in the same packet
    // (CVE-2011-0411): it must not run inside the TLS session.
    co_await client.send("STARTTLS\r\nECHO injected\r\n");
    EXPECT_EQ(co_await client.line(), "OK begin TLS");
    EXPECT_TRUE(co_await client.handshake());
    co_await client.send("TLS\r\n");
    EXPECT_EQ(co_await client.line(), "TLS yes");
    co_await client.send("ECHO secret\r\n");
    EXPECT_EQ(co_await client.line(), "secret");
    // A second STARTTLS is refused by the connection (already TLS).
    co_await client.send("STARTTLS\r\n");
    EXPECT_EQ(co_await client.line(), "OK begin TLS");
    EXPECT_EQ(co_await client.rest(), "");
  }));
  EXPECT_EQ(server.handler->discarded_before_tls.load() > 0, true);
  std::lock_guard lock(server.handler->mu);
  EXPECT_EQ(server.handler->tls_failures, std::vector<std::string>{"tls"});
}

TEST_F(TlsTest, StartTlsWithoutTlsConfiguredFails) {
  TestServer server({});
  EXPECT_TRUE(run_bounded([&]() -> asio::awaitable<void> {
    Client client(co_await asio::this_coro::executor);
    EXPECT_TRUE(co_await client.connect("127.0.0.1", server.port));
    EXPECT_EQ(co_await client.line(), "* HELLO");
    co_await client.send("STARTTLS\r\n");
    EXPECT_EQ(co_await client.line(), "OK begin TLS");
    EXPECT_EQ(co_await client.rest(), "");
  }));
  std::lock_guard lock(server.handler->mu);
  EXPECT_EQ(server.handler->tls_failures, std::vector<std::string>{"tls"});
}

TEST_F(TlsTest, ImplicitTlsListener) {
  TestServerOptions options;
  options.tls = tls_;
  options.implicit_tls = true;
  TestServer server(options);
  EXPECT_TRUE(run_bounded([&]() -> asio::awaitable<void> {
    Client client(co_await asio::this_coro::executor);
    EXPECT_TRUE(co_await client.connect("127.0.0.1", server.tls_port));
    EXPECT_TRUE(co_await client.handshake());
    EXPECT_EQ(co_await client.line(), "* HELLO");
    co_await client.send("TLS\r\nPEER\r\n");
    EXPECT_EQ(co_await client.line(), "TLS yes");
    EXPECT_EQ(co_await client.line(), "PEER 127.0.0.1 loopback");
    // Large writes go through TLS records in pieces.
    co_await client.send("BIG 1000000\r\n");
    auto big = co_await client.read_n(1000002);
    EXPECT_TRUE(big.has_value());
    co_await client.send("QUIT\r\n");
    EXPECT_EQ(co_await client.line(), "BYE");
    // The server ends with close_notify: a clean end of stream.
    EXPECT_EQ(co_await client.rest(), "");
  }));
}

TEST_F(TlsTest, OnlyTls12AndUpWithForwardSecretAeadSuites) {
  TestServerOptions options;
  options.tls = tls_;
  options.implicit_tls = true;
  TestServer server(options);
  EXPECT_TRUE(run_bounded([&]() -> asio::awaitable<void> {
    auto executor = co_await asio::this_coro::executor;
    // TLS 1.1 (allowed on the client side for the test) is refused.
    Client old(executor);
    SSL_CTX* old_ctx = old.ssl_context().native_handle();
    SSL_CTX_set_min_proto_version(old_ctx, TLS1_VERSION);
    SSL_CTX_set_max_proto_version(old_ctx, TLS1_1_VERSION);
    SSL_CTX_set_cipher_list(old_ctx, "DEFAULT:@SECLEVEL=0");
    EXPECT_TRUE(co_await old.connect("127.0.0.1", server.tls_port));
    EXPECT_FALSE(co_await old.handshake());
    // TLS 1.2 gets an ECDHE AEAD suite even when the client prefers CBC.
    Client tls12(executor);
    SSL_CTX* ctx12 = tls12.ssl_context().native_handle();
    SSL_CTX_set_max_proto_version(ctx12, TLS1_2_VERSION);
    SSL_CTX_set_cipher_list(ctx12, "ECDHE-RSA-AES128-SHA:ECDHE-ECDSA-AES128-SHA:AES128-SHA:ALL");
    EXPECT_TRUE(co_await tls12.connect("127.0.0.1", server.tls_port));
    EXPECT_TRUE(co_await tls12.handshake());
    EXPECT_EQ(tls12.tls_version(), "TLSv1.2");
    EXPECT_EQ(tls12.tls_cipher(), "ECDHE-ECDSA-AES128-GCM-SHA256");
    EXPECT_EQ(co_await tls12.line(), "* HELLO");
    // By default, TLS 1.3.
    Client tls13(executor);
    EXPECT_TRUE(co_await tls13.connect("127.0.0.1", server.tls_port));
    EXPECT_TRUE(co_await tls13.handshake());
    EXPECT_EQ(tls13.tls_version(), "TLSv1.3");
  }));
}

TEST_F(TlsTest, FailedHandshakeEndsOnlyThatConnection) {
  TestServerOptions options;
  options.tls = tls_;
  options.implicit_tls = true;
  TestServer server(options);
  EXPECT_TRUE(run_bounded([&]() -> asio::awaitable<void> {
    auto executor = co_await asio::this_coro::executor;
    Client plain(executor);
    EXPECT_TRUE(co_await plain.connect("127.0.0.1", server.tls_port));
    co_await plain.send("A1 CAPABILITY\r\n");  // not a ClientHello
    auto rest = co_await plain.rest();
    EXPECT_TRUE(!rest || rest->find("HELLO") == std::string::npos);
    Client good(executor);
    EXPECT_TRUE(co_await good.connect("127.0.0.1", server.tls_port));
    EXPECT_TRUE(co_await good.handshake());
    EXPECT_EQ(co_await good.line(), "* HELLO");
  }));
  EXPECT_EQ(server.handler->served.load(), 1);
}

TEST_F(TlsTest, LoadErrorsNameTheFile) {
  auto missing = TlsContext::load(dir_.path() / "nope.crt", files_.key);
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.error().code, base::MailError::kBadInput);
  EXPECT_NE(missing.error().message.find("nope.crt"), std::string::npos);

  std::ofstream(dir_.path() / "garbage.key") << "not a key\n";
  auto garbage = TlsContext::load(files_.cert, dir_.path() / "garbage.key");
  ASSERT_FALSE(garbage);
  EXPECT_NE(garbage.error().message.find("garbage.key"), std::string::npos);

  CertFiles other = test::make_self_signed_cert(dir_.path(), "other");
  auto mismatch = TlsContext::load(files_.cert, other.key);
  ASSERT_FALSE(mismatch);
  EXPECT_NE(mismatch.error().message.find("mismatch"), std::string::npos)
      << mismatch.error().message;
}

}  // namespace
}  // namespace peregrine::net
