// Shows that parsing works on a view of the message and never makes a second
// copy of it: the bytes allocated while parse_message runs on a 5 MB message
// are counted and must stay a small fraction of the message size.
//
// This file replaces the global operator new/delete for the whole mime_test
// binary with counting versions that forward to malloc/free (so ASan still
// checks every heap access; only its new/delete-vs-malloc/free mismatch
// report is lost). Counting is off except inside count_allocations().

#include <gtest/gtest.h>
#include <malloc.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <new>
#include <string>

#include "mime/cache_record.h"
#include "mime/part.h"

namespace {

std::atomic<bool> g_counting{false};
std::atomic<size_t> g_allocations{0};
std::atomic<size_t> g_bytes{0};
std::atomic<size_t> g_largest{0};
std::atomic<int64_t> g_live{0};
std::atomic<int64_t> g_peak_live{0};

void note_allocation(void* p) {
  if (p == nullptr || !g_counting.load(std::memory_order_relaxed)) {
    return;
  }
  size_t n = malloc_usable_size(p);
  g_allocations.fetch_add(1, std::memory_order_relaxed);
  g_bytes.fetch_add(n, std::memory_order_relaxed);
  size_t largest = g_largest.load(std::memory_order_relaxed);
  while (n > largest && !g_largest.compare_exchange_weak(largest, n)) {
  }
  int64_t live = g_live.fetch_add(static_cast<int64_t>(n)) + static_cast<int64_t>(n);
  int64_t peak = g_peak_live.load(std::memory_order_relaxed);
  while (live > peak && !g_peak_live.compare_exchange_weak(peak, live)) {
  }
}

void note_free(void* p) {
  if (p != nullptr && g_counting.load(std::memory_order_relaxed)) {
    g_live.fetch_sub(static_cast<int64_t>(malloc_usable_size(p)));
  }
}

void* counted_malloc(size_t n) {
  void* p = std::malloc(n == 0 ? 1 : n);
  note_allocation(p);
  return p;
}

void* counted_aligned(size_t n, std::align_val_t align) {
  void* p = nullptr;
  size_t a = std::max(static_cast<size_t>(align), sizeof(void*));
  if (posix_memalign(&p, a, n == 0 ? 1 : n) != 0) {
    return nullptr;
  }
  note_allocation(p);
  return p;
}

void counted_free(void* p) {
  note_free(p);
  std::free(p);
}

void* throwing(void* p) {
  if (p == nullptr) {
    throw std::bad_alloc();
  }
  return p;
}

}  // namespace

void* operator new(size_t n) { return throwing(counted_malloc(n)); }
void* operator new[](size_t n) { return throwing(counted_malloc(n)); }
void* operator new(size_t n, const std::nothrow_t&) noexcept { return counted_malloc(n); }
void* operator new[](size_t n, const std::nothrow_t&) noexcept { return counted_malloc(n); }
void* operator new(size_t n, std::align_val_t a) { return throwing(counted_aligned(n, a)); }
void* operator new[](size_t n, std::align_val_t a) { return throwing(counted_aligned(n, a)); }
void* operator new(size_t n, std::align_val_t a, const std::nothrow_t&) noexcept {
  return counted_aligned(n, a);
}
void* operator new[](size_t n, std::align_val_t a, const std::nothrow_t&) noexcept {
  return counted_aligned(n, a);
}
void operator delete(void* p) noexcept { counted_free(p); }
void operator delete[](void* p) noexcept { counted_free(p); }
void operator delete(void* p, size_t) noexcept { counted_free(p); }
void operator delete[](void* p, size_t) noexcept { counted_free(p); }
void operator delete(void* p, const std::nothrow_t&) noexcept { counted_free(p); }
void operator delete[](void* p, const std::nothrow_t&) noexcept { counted_free(p); }
void operator delete(void* p, std::align_val_t) noexcept { counted_free(p); }
void operator delete[](void* p, std::align_val_t) noexcept { counted_free(p); }
void operator delete(void* p, size_t, std::align_val_t) noexcept { counted_free(p); }
void operator delete[](void* p, size_t, std::align_val_t) noexcept { counted_free(p); }
void operator delete(void* p, std::align_val_t, const std::nothrow_t&) noexcept { counted_free(p); }
void operator delete[](void* p, std::align_val_t, const std::nothrow_t&) noexcept {
  counted_free(p);
}

namespace peregrine::mime {
namespace {

struct AllocStats {
  size_t allocations = 0;
  size_t bytes = 0;  // total allocated while counting, frees not subtracted
  size_t largest = 0;
  int64_t peak_live = 0;  // most bytes held at once by allocations made while counting
};

AllocStats count_allocations(const std::function<void()>& fn) {
  g_allocations = 0;
  g_bytes = 0;
  g_largest = 0;
  g_live = 0;
  g_peak_live = 0;
  g_counting = true;
  fn();
  g_counting = false;
  return {g_allocations.load(), g_bytes.load(), g_largest.load(), g_peak_live.load()};
}

void append_base64_lines(std::string& out, size_t bytes) {
  static constexpr char kAlphabet[] =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  uint32_t x = 2463534242u;
  size_t written = 0;
  while (written < bytes) {
    for (int i = 0; i < 76; ++i) {
      x ^= x << 13;
      x ^= x >> 17;
      x ^= x << 5;
      out += kAlphabet[x & 63];
    }
    out += "\r\n";
    written += 78;
  }
}

// A ~5 MB message: multipart/mixed holding a 500 KB text part, a 4 MB base64
// PDF, and small parts (plain, alternative pairs, forwarded messages) for
// 200 parts in all.
std::string make_big_message() {
  std::string m;
  m.reserve(5'200'000);
  m += "Received: from mx.example.org by mail.example.net; Mon, 1 Jan 2024 10:00:00 +0000\r\n"
       "From: \"Sender Name\" <sender@example.org>\r\n"
       "To: rcpt@example.net\r\n"
       "Subject: =?utf-8?Q?Quarterly_r=C3=A9port?=\r\n"
       "Date: Mon, 1 Jan 2024 10:00:00 +0000\r\n"
       "Message-ID: <big@example.org>\r\n"
       "MIME-Version: 1.0\r\n"
       "Content-Type: multipart/mixed; boundary=\"=_outer\"\r\n"
       "\r\n"
       "This is a multi-part message in MIME format.\r\n";

  m += "--=_outer\r\nContent-Type: text/plain; charset=utf-8\r\n"
       "Content-Transfer-Encoding: 8bit\r\n\r\n";
  const std::string line = "The quick brown fox jumps over the lazy dog, again and again. 0123\r\n";
  for (size_t n = 0; n < 500'000; n += line.size()) {
    m += line;
  }

  m += "--=_outer\r\nContent-Type: application/pdf; name=\"report.pdf\"\r\n"
       "Content-Disposition: attachment; filename=\"report.pdf\"\r\n"
       "Content-Transfer-Encoding: base64\r\n\r\n";
  append_base64_lines(m, 4'000'000);

  // Root + 2 parts so far; 66 groups of three parts each bring it to 200.
  for (int i = 0; i < 66; ++i) {
    std::string n = std::to_string(i);
    if (i % 2 == 0) {
      // multipart/alternative with a plain and an HTML part: 3 parts.
      m += "--=_outer\r\nContent-Type: multipart/alternative; boundary=\"=_alt" + n +
           "\"\r\n\r\n--=_alt" + n +
           "\r\nContent-Type: text/plain; charset=iso-8859-1\r\n"
           "Content-Transfer-Encoding: quoted-printable\r\n\r\nCaf=E9 number " +
           n + "\r\n--=_alt" + n +
           "\r\nContent-Type: text/html; charset=utf-8\r\n\r\n<p>Caf&eacute; " + n +
           "</p>\r\n--=_alt" + n + "--\r\n";
    } else {
      // A forwarded message with a one-part body: the message/rfc822 part,
      // the encapsulated message, its body part.
      m += "--=_outer\r\nContent-Type: message/rfc822\r\n\r\n"
           "From: fwd" +
           n + "@example.com\r\nSubject: forwarded " + n +
           "\r\nMIME-Version: 1.0\r\nContent-Type: multipart/mixed; boundary=\"=_in" + n +
           "\"\r\n\r\n--=_in" + n + "\r\nContent-Type: text/plain\r\n\r\nInner text " + n +
           "\r\n--=_in" + n + "--\r\n";
    }
  }
  m += "--=_outer--\r\n";
  return m;
}

// The counter itself works: a copy of the message would be seen.
TEST(MimeAlloc, CounterSeesACopy) {
  const std::string message(100'000, 'x');
  std::string copy;
  AllocStats s = count_allocations([&] { copy = message; });
  EXPECT_GE(s.bytes, message.size());
  EXPECT_GE(s.largest, message.size());
  EXPECT_EQ(s.allocations, 1u);
}

TEST(MimeAlloc, ParseMessageHoldsNoSecondCopy) {
  const std::string message = make_big_message();
  ASSERT_GT(message.size(), 4'500'000u);

  Part root;
  AllocStats s = count_allocations([&] { root = parse_message(message); });
  size_t parts = count_parts(root);
  std::printf(
      "parse_message on %zu bytes, %zu parts: %zu allocations, %zu bytes total "
      "(%.2f%% of the message), largest %zu, peak live %lld\n",
      message.size(), parts, s.allocations, s.bytes,
      100.0 * static_cast<double>(s.bytes) / static_cast<double>(message.size()), s.largest,
      static_cast<long long>(s.peak_live));

  EXPECT_GE(parts, 200u);
  // What parsing holds at once stays under 5% of the message: no copy of it,
  // nor of its 4 MB attachment (89%) or 500 KB text part (11%).
  EXPECT_LT(s.peak_live, static_cast<int64_t>(message.size() / 20));
  // No single allocation is anywhere near the size of a part's body.
  EXPECT_LT(s.largest, message.size() / 50);
  // Everything allocated, freed or not: per-part bookkeeping (a Part is
  // ~450 bytes, the children vectors grow by doubling, each part header is
  // parsed into a field vector) for 200 parts, still far from one copy.
  EXPECT_LT(s.bytes, message.size() * 15 / 100);
}

// For information, and a guard against the search text decoding attachments:
// analyze_message decodes the text parts (copies are expected) but must not
// decode the 4 MB base64 attachment.
TEST(MimeAlloc, AnalyzeMessageDoesNotDecodeAttachments) {
  const std::string message = make_big_message();
  AnalyzedMessage a;
  AllocStats s = count_allocations([&] { a = analyze_message(message); });
  std::printf(
      "analyze_message on %zu bytes: %zu allocations, %zu bytes total, largest %zu, "
      "peak live %lld; record %zu bytes serialized\n",
      message.size(), s.allocations, s.bytes, s.largest, static_cast<long long>(s.peak_live),
      serialize(a.record).size());
  // The decoded PDF alone would be 3 MB.
  EXPECT_LT(s.largest, 2'000'000u);
}

}  // namespace
}  // namespace peregrine::mime
