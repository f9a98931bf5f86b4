#!/usr/bin/env bash
# Peregrine against Dovecot 2.3 in one run, with the ceiling (docs/benchmarks.md).
#
#   bench/compare.sh [--seconds 2] [--rounds 3] [--rows login,list,...] [--users 10]
#                    [--profile-seconds 2] [--out bench/results]   (bench/compare.py --help)
#
# Installs what is missing (scripts/deps.sh, which lists Dovecot's packages;
# and, for this script only, matplotlib for the chart and perf for the
# profiles), creates the vmail system user Dovecot's mail processes run as,
# builds Peregrine, peregrine-bench, imap-responder and pop3load (Release, build/release
# or BUILD=dir), and runs bench/compare.py, which writes
# bench/results/DATE-compare.md and .png. Needs root (Dovecot switches to
# vmail). Ports 21310-21311 (Dovecot IMAP, POP3), 21320-21321 (Peregrine)
# and 21330 (the ceiling) on 127.0.0.1 must be free. The POP3 rows are
# optional: --rows pop3 (or --rows login,pop3,...). About 9 minutes on 2 cores with the defaults.
# Environment: BUILD=dir, BENCH_BIN=path (another peregrine-bench).
set -euo pipefail
cd "$(dirname "$0")/.."

if [ "$(id -u)" -ne 0 ]; then
  echo "compare: run as root (Dovecot's mail processes switch to the vmail user)" >&2
  exit 2
fi

./scripts/deps.sh
# Only this benchmark needs these; CI does not install them.
extra=()
for p in python3-matplotlib linux-perf; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || extra+=("$p")
done
if ((${#extra[@]})); then
  echo "compare: installing ${extra[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${extra[@]}" ||
    echo "compare: could not install ${extra[*]}; going on without (no chart or no profiles)" >&2
fi
id vmail >/dev/null 2>&1 || useradd --system --user-group --no-create-home vmail

build="${BUILD:-build/release}"
launcher=()
if command -v ccache >/dev/null; then
  launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_C_COMPILER_LAUNCHER=ccache)
fi
mkdir -p "$build"
targets=(peregrine imap-responder pop3load)
[ -n "${BENCH_BIN:-}" ] || targets+=(peregrine-bench)
echo "compare: building ${targets[*]} (Release) in $build"
if ! { cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DPEREGRINE_TESTS=OFF \
  -DPEREGRINE_BENCH=ON "${launcher[@]}" && cmake --build "$build" -j2 --target "${targets[@]}"; } \
  >"$build/compare-build.log" 2>&1; then
  tail -n 30 "$build/compare-build.log"
  echo "compare: the build failed; the whole log is $build/compare-build.log" >&2
  exit 2
fi

# Debian's python3, which sees python3-matplotlib (a python3 earlier in PATH,
# e.g. from pyenv, may not).
py=/usr/bin/python3
[ -x "$py" ] || py=python3
find_bin() { find "$build" -name "$1" -type f -perm -u+x -print -quit; }
bench_bin="${BENCH_BIN:-$(find_bin peregrine-bench)}"
exec "$py" bench/compare.py --bench "$bench_bin" --peregrine "$build/src/app/peregrine" \
  --responder "$(find_bin imap-responder)" --pop3load "$(find_bin pop3load)" "$@"
