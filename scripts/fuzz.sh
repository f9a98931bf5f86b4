#!/usr/bin/env bash
# Builds the libFuzzer targets with clang and runs one of them.
# Usage: scripts/fuzz.sh [seconds] [mime|imap_proto|search|term_record|pop3_proto|smtp_proto|loadgen_response|text_tokens]   (defaults: 600, mime)
# Crashes go to build/fuzz/artifacts/; see tests/fuzz/README.md.
set -euo pipefail
cd "$(dirname "$0")/.."

seconds=${1:-600}
target=${2:-mime}
build=build/fuzz
case "$target" in
  mime) seeds=tests/mime/corpus dict=tests/fuzz/mime.dict max_len=262144 ;;
  imap_proto) seeds=tests/fuzz/imap_seeds dict=tests/fuzz/imap.dict max_len=4096 ;;
  search) seeds=tests/fuzz/search_seeds dict=tests/fuzz/search.dict max_len=4096 ;;
  term_record) seeds=tests/fuzz/term_record_seeds dict=tests/fuzz/term_record.dict max_len=65536 ;;
  pop3_proto) seeds=tests/fuzz/pop3_seeds dict=tests/fuzz/pop3.dict max_len=4096 ;;
  smtp_proto) seeds=tests/fuzz/smtp_seeds dict=tests/fuzz/smtp.dict max_len=8192 ;;
  loadgen_response) seeds=tests/fuzz/loadgen_seeds dict=tests/fuzz/imap.dict max_len=4096 ;;
  text_tokens) seeds=tests/fuzz/text_tokens_seeds dict=tests/fuzz/search.dict max_len=4096 ;;
  *) echo "fuzz.sh: unknown target $target (mime, imap_proto, search, term_record, pop3_proto, smtp_proto, loadgen_response or text_tokens)" >&2; exit 64 ;;
esac

CC=clang CXX=clang++ cmake -S . -B "$build" -G Ninja -DPEREGRINE_FUZZ=ON -DPEREGRINE_TESTS=OFF \
  -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build "$build" -j2 --target "${target}_fuzz"

mkdir -p "$build/corpus-$target" "$build/artifacts" "$seeds"
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1

# First directory: the working corpus (written); the seeds are only read.
exec "$build/tests/fuzz/${target}_fuzz" "$build/corpus-$target" "$seeds" \
  -dict="$dict" -max_len="$max_len" -max_total_time="$seconds" \
  -timeout=10 -rss_limit_mb=4096 -artifact_prefix="$build/artifacts/" -print_final_stats=1
