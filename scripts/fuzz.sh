#!/usr/bin/env bash
# Builds the libFuzzer targets with clang and runs mime_fuzz.
# Usage: scripts/fuzz.sh [seconds]   (default 600)
# Crashes go to build/fuzz/artifacts/; see tests/fuzz/README.md.
set -euo pipefail
cd "$(dirname "$0")/.."

seconds=${1:-600}
build=build/fuzz

CC=clang CXX=clang++ cmake -S . -B "$build" -G Ninja -DPEREGRINE_FUZZ=ON -DPEREGRINE_TESTS=OFF \
  -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build "$build" -j2 --target mime_fuzz

mkdir -p "$build/corpus" "$build/artifacts"
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1

# First directory: the working corpus (written); the seeds are only read.
exec "$build/tests/fuzz/mime_fuzz" "$build/corpus" tests/mime/corpus \
  -dict=tests/fuzz/mime.dict -max_len=262144 -max_total_time="$seconds" \
  -timeout=10 -rss_limit_mb=4096 -artifact_prefix="$build/artifacts/" -print_final_stats=1
