#!/usr/bin/env bash
# POP3 download benchmark, Peregrine against Dovecot 2.3 (not part of CI).
# Usage: bench/pop3-compare.sh [pop3_compare.py options, e.g. --messages 100 --rounds 3]
# Builds Peregrine (Release) and bench/pop3load, then runs
# bench/pop3_compare.py; see its header for what is measured. The result
# table is printed and written to build/bench/pop3-compare.md.
#
# bench/compare.sh may source this file and call `pop3_compare [options]`.
set -euo pipefail

pop3_compare() {
  local root
  root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
  command -v dovecot >/dev/null || { echo "pop3-compare: dovecot is not installed (scripts/deps.sh)" >&2; return 69; }
  mkdir -p "$root/build/release" "$root/build/bench"
  cmake -S "$root" -B "$root/build/release" -G Ninja -DCMAKE_BUILD_TYPE=Release \
    -DPEREGRINE_TESTS=OFF >/dev/null
  cmake --build "$root/build/release" -j2 --target peregrine >/dev/null
  g++ -O2 -std=c++20 -pthread "$root/bench/pop3load/pop3load.cc" -o "$root/build/bench/pop3load"
  python3 "$root/bench/pop3_compare.py" --peregrine "$root/build/release/src/app/peregrine" \
    --pop3load "$root/build/bench/pop3load" --work "$root/build/bench/pop3" \
    --out "$root/build/bench/pop3-compare.md" "$@"
}

if [[ "${BASH_SOURCE[0]}" == "$0" ]]; then
  pop3_compare "$@"
fi
