// Compression of the full-text index's term records: zlib (deflate level 1,
// format 1 of docs/formats/maildir-store.md, "Full-text index") against
// Zstandard at a few levels, and as the store writes format 2 (level 1,
// matches of 7 bytes or more).
// Reads every n-th record of a user's index, unpacks it to the record's
// bytes, then times packing and unpacking each record alone, as the store
// does (one context per thread, reset per record). Not part of CI.
//
//   g++ -O2 -std=c++20 bench/search/record_codec.cc -o /tmp/record_codec -lsqlite3 -lz -lzstd
//   /tmp/record_codec DATA_DIR/USER/index.sqlite [every=50] [rounds=20]

#include <sqlite3.h>
#include <zlib.h>
#include <zstd.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

namespace {

using Clock = std::chrono::steady_clock;

double micros_per(Clock::time_point start, std::size_t n) {
  return std::chrono::duration<double, std::micro>(Clock::now() - start).count() /
         static_cast<double>(n);
}

// The record's bytes of a stored packing (format byte 0, 1 or 2); empty
// when it cannot be read.
std::string record_of(const std::string& packed) {
  if (packed.empty()) {
    return {};
  }
  if (packed[0] == 0) {
    return packed.substr(1);
  }
  if (packed.size() < 5) {
    return {};
  }
  std::uint32_t n = 0;
  for (int i = 0; i < 4; ++i) {
    n |= static_cast<std::uint32_t>(static_cast<unsigned char>(packed[1 + i])) << (8 * i);
  }
  std::string out(n, '\0');
  if (packed[0] == 1) {
    uLongf size = n;
    if (uncompress(reinterpret_cast<Bytef*>(out.data()), &size,
                   reinterpret_cast<const Bytef*>(packed.data() + 5), packed.size() - 5) != Z_OK ||
        size != n) {
      return {};
    }
    return out;
  }
  if (packed[0] == 2 && ZSTD_decompress(out.data(), n, packed.data() + 5, packed.size() - 5) == n) {
    return out;
  }
  return {};
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s INDEX.sqlite [every] [rounds]\n", argv[0]);
    return 64;
  }
  const long every = argc > 2 ? std::atol(argv[2]) : 50;
  const int rounds = argc > 3 ? std::atoi(argv[3]) : 20;
  sqlite3* db = nullptr;
  if (sqlite3_open_v2(argv[1], &db, SQLITE_OPEN_READONLY, nullptr) != SQLITE_OK) {
    std::fprintf(stderr, "cannot open %s\n", argv[1]);
    return 66;
  }
  sqlite3_stmt* stmt = nullptr;
  if (sqlite3_prepare_v2(db, "SELECT terms FROM search_docs WHERE id % ?1 = 0", -1, &stmt,
                         nullptr) != SQLITE_OK) {
    std::fprintf(stderr, "no term records: %s\n", sqlite3_errmsg(db));
    return 65;
  }
  sqlite3_bind_int64(stmt, 1, every);
  std::vector<std::string> records;
  std::size_t raw = 0;
  while (sqlite3_step(stmt) == SQLITE_ROW) {
    std::string packed(static_cast<const char*>(sqlite3_column_blob(stmt, 0)),
                       static_cast<std::size_t>(sqlite3_column_bytes(stmt, 0)));
    std::string record = record_of(packed);
    if (record.size() >= 128) {  // smaller ones are stored as they are
      raw += record.size();
      records.push_back(std::move(record));
    }
  }
  sqlite3_finalize(stmt);
  sqlite3_close(db);
  if (records.empty()) {
    std::fprintf(stderr, "no record of 128 bytes or more\n");
    return 65;
  }
  std::printf("%zu records, %.0f bytes on average\n", records.size(),
              static_cast<double>(raw) / static_cast<double>(records.size()));
  const std::size_t runs = records.size() * static_cast<std::size_t>(rounds);
  std::vector<std::string> packed(records.size());
  std::string buffer;

  z_stream deflater{};
  deflateInit2(&deflater, 1, Z_DEFLATED, 15, 8, Z_DEFAULT_STRATEGY);
  std::size_t bytes = 0;
  auto start = Clock::now();
  for (int r = 0; r < rounds; ++r) {
    bytes = 0;
    for (std::size_t i = 0; i < records.size(); ++i) {
      deflateReset(&deflater);
      std::string& out = packed[i];
      out.resize(deflateBound(&deflater, records[i].size()));
      deflater.next_in = reinterpret_cast<Bytef*>(records[i].data());
      deflater.avail_in = static_cast<uInt>(records[i].size());
      deflater.next_out = reinterpret_cast<Bytef*>(out.data());
      deflater.avail_out = static_cast<uInt>(out.size());
      deflate(&deflater, Z_FINISH);
      out.resize(out.size() - deflater.avail_out);
      bytes += out.size();
    }
  }
  double pack = micros_per(start, runs);
  deflateEnd(&deflater);
  start = Clock::now();
  for (int r = 0; r < rounds; ++r) {
    for (std::size_t i = 0; i < records.size(); ++i) {
      buffer.resize(records[i].size());
      uLongf size = buffer.size();
      uncompress(reinterpret_cast<Bytef*>(buffer.data()), &size,
                 reinterpret_cast<const Bytef*>(packed[i].data()), packed[i].size());
    }
  }
  std::printf("zlib level 1   %.3f of the bytes, pack %.1f us, unpack %.1f us a record\n",
              static_cast<double>(bytes) / static_cast<double>(raw), pack, micros_per(start, runs));

  ZSTD_CCtx* cctx = ZSTD_createCCtx();
  ZSTD_DCtx* dctx = ZSTD_createDCtx();
  // Levels 1, 3 and -1, and what the store writes (term_record.cc):
  // level 1 with matches of 7 bytes or more (0: the level's own).
  struct Setting {
    const char* name;
    int level;
    int min_match;
  };
  for (const Setting& setting : {Setting{"level 1", 1, 0}, Setting{"level 3", 3, 0},
                                 Setting{"level -1", -1, 0}, Setting{"1, min 7", 1, 7}}) {
    ZSTD_CCtx_reset(cctx, ZSTD_reset_session_and_parameters);
    ZSTD_CCtx_setParameter(cctx, ZSTD_c_compressionLevel, setting.level);
    ZSTD_CCtx_setParameter(cctx, ZSTD_c_minMatch, setting.min_match);
    start = Clock::now();
    for (int r = 0; r < rounds; ++r) {
      bytes = 0;
      for (std::size_t i = 0; i < records.size(); ++i) {
        std::string& out = packed[i];
        out.resize(ZSTD_compressBound(records[i].size()));
        out.resize(
            ZSTD_compress2(cctx, out.data(), out.size(), records[i].data(), records[i].size()));
        bytes += out.size();
      }
    }
    pack = micros_per(start, runs);
    start = Clock::now();
    for (int r = 0; r < rounds; ++r) {
      for (std::size_t i = 0; i < records.size(); ++i) {
        buffer.resize(records[i].size());
        ZSTD_decompressDCtx(dctx, buffer.data(), buffer.size(), packed[i].data(), packed[i].size());
      }
    }
    std::printf("zstd %-9s %.3f of the bytes, pack %.1f us, unpack %.1f us a record\n",
                setting.name, static_cast<double>(bytes) / static_cast<double>(raw), pack,
                micros_per(start, runs));
  }
  ZSTD_freeCCtx(cctx);
  ZSTD_freeDCtx(dctx);
  return 0;
}
