// MIME parsing throughput: Peregrine against GMime 3 on the same bytes.
//
//   mime_bench [benchmark flags] CORPUS_DIR     (or PEREGRINE_BENCH_CORPUS=DIR)
//
// CORPUS_DIR holds .eml files, e.g. from bench/gen_mail.py. Every file is
// read into memory first; one benchmark iteration is one pass over all of
// them. Reported: bytes_per_second (message bytes) and items_per_second
// (messages). See docs/benchmarks.md for figures and scripts/bench-mime.sh.
//
//   Peregrine/Structure  parse_message (the MIME tree with every part's
//                        Content-* fields) + build_envelope of the top-level
//                        header: what delivery needs before rendering.
//   GMime/Structure      g_mime_parser_construct_message over a memory
//                        stream of the same bytes, then a walk of the tree
//                        reading each part's content type, parameters,
//                        disposition, encoding and ids, and the message's
//                        address fields, subject, date and Message-ID, so
//                        nothing GMime parses lazily is left unparsed.
//   Peregrine/Analyze    analyze_message: the above plus the rendered
//                        ENVELOPE/BODY/BODYSTRUCTURE, SORT/THREAD keys, and
//                        the decoded search text (for information: GMime
//                        has no equivalent).
//   Peregrine/Fold       fold_search_text over the search texts of the
//                        corpus (made once, before timing): the
//                        i;unicode-casemap folding delivery applies before
//                        it stores a text. Bytes are search-text bytes.
//   ICU/FullCaseFold     the same texts, ASCII lower-cased and the rest
//                        through ICU's full case folding (the folding used
//                        before i;unicode-casemap), for comparison.

#include <benchmark/benchmark.h>
#include <gmime/gmime.h>
#include <iconv.h>
#include <unicode/unistr.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "mime/cache_record.h"
#include "mime/case_fold.h"
#include "mime/envelope.h"
#include "mime/header.h"
#include "mime/part.h"

namespace {

struct Corpus {
  std::vector<std::string> messages;
  // The same bytes as GByteArrays for GMime's memory streams (not owned by
  // the streams, so no copy per parse).
  std::vector<GByteArray*> arrays;
  size_t total_bytes = 0;
};

Corpus& corpus() {
  static Corpus c;
  return c;
}

bool load_corpus(const std::string& dir) {
  std::vector<std::filesystem::path> files;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(dir, ec)) {
    if (e.is_regular_file() && e.path().extension() == ".eml") {
      files.push_back(e.path());
    }
  }
  if (ec || files.empty()) {
    std::fprintf(stderr, "mime_bench: no .eml files in %s\n", dir.c_str());
    return false;
  }
  std::sort(files.begin(), files.end());
  Corpus& c = corpus();
  for (const auto& path : files) {
    std::ifstream in(path, std::ios::binary);
    std::ostringstream s;
    s << in.rdbuf();
    c.messages.push_back(s.str());
    c.total_bytes += c.messages.back().size();
  }
  for (std::string& m : c.messages) {
    GByteArray* a = g_byte_array_new();
    // Points at the string's bytes; freed with g_byte_array_free(a, FALSE).
    a->data = reinterpret_cast<guint8*>(m.data());
    a->len = static_cast<guint>(m.size());
    c.arrays.push_back(a);
  }
  return true;
}

void set_counters(benchmark::State& state) {
  const Corpus& c = corpus();
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * c.total_bytes));
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations() * c.messages.size()));
}

void BM_PeregrineStructure(benchmark::State& state) {
  using namespace peregrine::mime;
  const Corpus& c = corpus();
  for (auto _ : state) {
    for (const std::string& m : c.messages) {
      Part root = parse_message(m);
      Envelope envelope =
          build_envelope(Header::parse(std::string_view(m).substr(0, root.header_size)));
      benchmark::DoNotOptimize(root);
      benchmark::DoNotOptimize(envelope);
    }
  }
  set_counters(state);
}

void walk_part(GMimeObject* /*parent*/, GMimeObject* part, gpointer data) {
  auto* sink = static_cast<size_t*>(data);
  GMimeContentType* type = g_mime_object_get_content_type(part);
  if (type != nullptr) {
    const char* media = g_mime_content_type_get_media_type(type);
    const char* subtype = g_mime_content_type_get_media_subtype(type);
    const char* charset = g_mime_content_type_get_parameter(type, "charset");
    const char* boundary = g_mime_content_type_get_parameter(type, "boundary");
    *sink += (media ? media[0] : 0) + (subtype ? subtype[0] : 0) + (charset != nullptr) +
             (boundary != nullptr);
  }
  GMimeContentDisposition* disposition = g_mime_object_get_content_disposition(part);
  if (disposition != nullptr) {
    *sink += g_mime_content_disposition_get_disposition(disposition) != nullptr;
  }
  *sink += g_mime_object_get_content_id(part) != nullptr;
  *sink += g_mime_object_get_header(part, "Content-Description") != nullptr;
  if (GMIME_IS_PART(part)) {
    GMimePart* leaf = GMIME_PART(part);
    *sink += static_cast<size_t>(g_mime_part_get_content_encoding(leaf));
    *sink += g_mime_part_get_filename(leaf) != nullptr;
  } else if (GMIME_IS_MESSAGE_PART(part)) {
    GMimeMessage* inner = g_mime_message_part_get_message(GMIME_MESSAGE_PART(part));
    if (inner != nullptr) {
      *sink += internet_address_list_length(g_mime_message_get_from(inner));
      *sink += g_mime_message_get_subject(inner) != nullptr;
    }
  }
}

void BM_GMimeStructure(benchmark::State& state) {
  const Corpus& c = corpus();
  size_t sink = 0;
  for (auto _ : state) {
    for (GByteArray* a : c.arrays) {
      GMimeStream* stream = g_mime_stream_mem_new_with_byte_array(a);
      g_mime_stream_mem_set_owner(GMIME_STREAM_MEM(stream), FALSE);
      GMimeParser* parser = g_mime_parser_new_with_stream(stream);
      GMimeMessage* message = g_mime_parser_construct_message(parser, nullptr);
      if (message != nullptr) {
        sink += internet_address_list_length(g_mime_message_get_from(message));
        sink += internet_address_list_length(g_mime_message_get_sender(message));
        sink += internet_address_list_length(g_mime_message_get_reply_to(message));
        sink += internet_address_list_length(g_mime_message_get_to(message));
        sink += internet_address_list_length(g_mime_message_get_cc(message));
        sink += internet_address_list_length(g_mime_message_get_bcc(message));
        sink += g_mime_message_get_subject(message) != nullptr;
        sink += g_mime_message_get_date(message) != nullptr;
        sink += g_mime_message_get_message_id(message) != nullptr;
        sink += g_mime_object_get_header(GMIME_OBJECT(message), "In-Reply-To") != nullptr;
        g_mime_message_foreach(message, walk_part, &sink);
        g_object_unref(message);
      }
      g_object_unref(parser);
      g_object_unref(stream);
    }
  }
  benchmark::DoNotOptimize(sink);
  set_counters(state);
}

void BM_PeregrineAnalyze(benchmark::State& state) {
  const Corpus& c = corpus();
  for (auto _ : state) {
    for (const std::string& m : c.messages) {
      peregrine::mime::AnalyzedMessage a = peregrine::mime::analyze_message(m);
      benchmark::DoNotOptimize(a);
    }
  }
  set_counters(state);
}

// The corpus's search texts, as analyze_message makes them (unfolded).
const std::vector<peregrine::mime::SearchText>& search_texts() {
  static const std::vector<peregrine::mime::SearchText> texts = [] {
    std::vector<peregrine::mime::SearchText> out;
    for (const std::string& m : corpus().messages) {
      out.push_back(peregrine::mime::analyze_message(m).text);
    }
    return out;
  }();
  return texts;
}

void set_text_counters(benchmark::State& state) {
  size_t bytes = 0;
  for (const peregrine::mime::SearchText& t : search_texts()) {
    bytes += t.from.size() + t.to.size() + t.cc.size() + t.bcc.size() + t.subject.size() +
             t.headers.size() + t.body.size();
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * bytes));
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations() * search_texts().size()));
}

void BM_PeregrineFold(benchmark::State& state) {
  const auto& texts = search_texts();
  for (auto _ : state) {
    for (peregrine::mime::SearchText t : texts) {
      peregrine::mime::fold_search_text(t);
      benchmark::DoNotOptimize(t);
    }
  }
  set_text_counters(state);
}

std::string icu_full_fold(const std::string& s) {
  if (std::all_of(s.begin(), s.end(),
                  [](char c) { return static_cast<unsigned char>(c) < 0x80; })) {
    std::string out = s;
    for (char& c : out) {
      c = (c >= 'A' && c <= 'Z') ? static_cast<char>(c + 32) : c;
    }
    return out;
  }
  icu::UnicodeString u =
      icu::UnicodeString::fromUTF8(icu::StringPiece(s.data(), static_cast<int32_t>(s.size())));
  u.foldCase();
  std::string out;
  u.toUTF8String(out);
  return out;
}

void BM_IcuFullCaseFold(benchmark::State& state) {
  const auto& texts = search_texts();
  for (auto _ : state) {
    for (peregrine::mime::SearchText t : texts) {
      for (std::string* s : {&t.from, &t.to, &t.cc, &t.bcc, &t.subject, &t.headers, &t.body}) {
        *s = icu_full_fold(*s);
      }
      benchmark::DoNotOptimize(t);
    }
  }
  set_text_counters(state);
}

// Parts GMime sees in a message, counted the way count_parts() does: every
// part, and for a message/rfc822 part also the parts of the message inside.
void count_gmime_parts(GMimeObject* /*parent*/, GMimeObject* part, gpointer data);

size_t gmime_parts(GMimeMessage* message) {
  size_t n = 0;  // foreach visits the top-level part too
  g_mime_message_foreach(message, count_gmime_parts, &n);
  return n;
}

void count_gmime_parts(GMimeObject* /*parent*/, GMimeObject* part, gpointer data) {
  auto* n = static_cast<size_t*>(data);
  ++*n;
  if (GMIME_IS_MESSAGE_PART(part)) {
    GMimeMessage* inner = g_mime_message_part_get_message(GMIME_MESSAGE_PART(part));
    if (inner != nullptr) {
      *n += gmime_parts(inner);
    }
  }
}

// Both parsers must find the same structure, or the comparison is moot.
void report_part_counts() {
  const Corpus& c = corpus();
  size_t ours = 0;
  size_t theirs = 0;
  size_t differing = 0;
  for (size_t i = 0; i < c.messages.size(); ++i) {
    size_t a = peregrine::mime::count_parts(peregrine::mime::parse_message(c.messages[i]));
    GMimeStream* stream = g_mime_stream_mem_new_with_byte_array(c.arrays[i]);
    g_mime_stream_mem_set_owner(GMIME_STREAM_MEM(stream), FALSE);
    GMimeParser* parser = g_mime_parser_new_with_stream(stream);
    GMimeMessage* message = g_mime_parser_construct_message(parser, nullptr);
    size_t b = message != nullptr ? gmime_parts(message) : 0;
    if (message != nullptr) {
      g_object_unref(message);
    }
    g_object_unref(parser);
    g_object_unref(stream);
    ours += a;
    theirs += b;
    differing += a != b;
    if (a != b && differing <= 5) {
      std::fprintf(stderr, "  message %zu: Peregrine %zu parts, GMime %zu\n", i + 1, a, b);
    }
  }
  std::fprintf(stderr, "parts: Peregrine %zu, GMime %zu (%zu messages differ)\n", ours, theirs,
               differing);
}

}  // namespace

BENCHMARK(BM_PeregrineStructure)->Name("Peregrine/Structure")->Unit(benchmark::kMillisecond);
BENCHMARK(BM_GMimeStructure)->Name("GMime/Structure")->Unit(benchmark::kMillisecond);
BENCHMARK(BM_PeregrineAnalyze)->Name("Peregrine/Analyze")->Unit(benchmark::kMillisecond);
BENCHMARK(BM_PeregrineFold)->Name("Peregrine/Fold")->Unit(benchmark::kMillisecond);
BENCHMARK(BM_IcuFullCaseFold)->Name("ICU/FullCaseFold")->Unit(benchmark::kMillisecond);

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  std::string dir;
  if (argc > 1) {
    dir = argv[1];
  } else if (const char* env = std::getenv("PEREGRINE_BENCH_CORPUS")) {
    dir = env;
  } else {
    std::fprintf(stderr,
                 "usage: mime_bench [benchmark flags] CORPUS_DIR (or PEREGRINE_BENCH_CORPUS)\n");
    return 2;
  }
  g_mime_init();
  // GMime decodes RFC 2047 header text through glibc iconv, and glibc
  // unloads a gconv module when its last descriptor closes, so a message in
  // koi8-r after one in utf-8 reloads the module (dlopen, mmap, relocation).
  // Keeping one descriptor per corpus charset open pins the modules, as in a
  // long-running process: GMime is measured at its best.
  std::vector<iconv_t> pinned;
  for (const char* charset : {"ISO-8859-1", "WINDOWS-1252", "KOI8-R", "ISO-2022-JP"}) {
    pinned.push_back(iconv_open("UTF-8", charset));
  }
  if (!load_corpus(dir)) {
    return 2;
  }
  std::fprintf(stderr, "corpus: %zu messages, %.1f MB\n", corpus().messages.size(),
               static_cast<double>(corpus().total_bytes) / 1e6);
  report_part_counts();
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  for (GByteArray* a : corpus().arrays) {
    g_byte_array_free(a, FALSE);
  }
  for (iconv_t cd : pinned) {
    if (cd != reinterpret_cast<iconv_t>(-1)) {
      iconv_close(cd);
    }
  }
  g_mime_shutdown();
  return 0;
}
