#!/usr/bin/env bash
# Server memory (docs/benchmarks.md, "Memory"): RSS of an idle server, then
# with 1,000 idle logged-in IMAP connections. Release build.
#   bench/memory.sh [connections]       (BUILD=dir to use another build dir)
set -euo pipefail
cd "$(dirname "$0")/.."
build="${BUILD:-build/release}"
connections="${1:-1000}"
if [[ ! -x "$build/src/app/peregrine" ]]; then
  cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DPEREGRINE_TESTS=OFF >/dev/null
  cmake --build "$build" -j2 --target peregrine
fi
# Each connection is one descriptor in the server and one in the client.
ulimit -n "$(( connections * 2 + 512 > $(ulimit -Hn) ? $(ulimit -Hn) : connections * 2 + 512 ))"
exec python3 bench/memory.py --bin "$build/src/app/peregrine" --connections "$connections"
