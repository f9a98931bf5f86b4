#!/usr/bin/env bash
# MIME parsing benchmark: Peregrine against GMime 3 (docs/benchmarks.md).
# Generates the corpus into build/bench-corpus if missing (2,000 messages,
# seed 1), builds Release in build/bench, and runs mime_bench.
# Usage: scripts/bench-mime.sh [google-benchmark flags...]
set -euo pipefail
cd "$(dirname "$0")/.."

corpus=build/bench-corpus
build=build/bench

if [ ! -f "$corpus/002000.eml" ]; then
  rm -rf "$corpus"
  python3 bench/gen_mail.py --count 2000 --seed 1 --out "$corpus" --stats
fi

cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DPEREGRINE_BENCH=ON \
  -DPEREGRINE_TESTS=OFF >/dev/null
cmake --build "$build" -j2 --target mime_bench

exec "$build/bench/mime_bench" --benchmark_min_time=3 "$@" "$corpus"
