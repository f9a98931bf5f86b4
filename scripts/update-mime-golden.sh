#!/usr/bin/env bash
# Regenerates tests/mime/golden/<stem>.golden (ENVELOPE and BODYSTRUCTURE of
# each corpus message, as src/mime/corpus_test.cc expects them) with mime_dump.
#
# Run it only after the change that moves the goldens has been checked against
# Dovecot: tests/mime/dovecot_crosscheck.py --dump BUILD/tests/mime_dump
# --known tests/mime/known_differences.json must pass first. Review the diff
# of tests/mime/golden/ before committing it.
#
# Usage: scripts/update-mime-golden.sh [build dir]   (default build/golden)
set -euo pipefail
cd "$(dirname "$0")/.."

build=${1:-build/golden}
corpus=tests/mime/corpus
golden=tests/mime/golden

if [ ! -f "$build/CMakeCache.txt" ]; then
  cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Debug >/dev/null
fi
cmake --build "$build" -j2 --target mime_dump
dump="$build/tests/mime_dump"

shopt -s nullglob
messages=()
for f in "$corpus"/*; do
  name=$(basename "$f")
  # The same selection as corpus_test.cc: regular files, no dotfiles, no README*.
  [[ -f $f && $name != .* && $name != README* ]] && messages+=("$f")
done
if ((${#messages[@]} == 0)); then
  echo "update-mime-golden: no messages in $corpus" >&2
  exit 1
fi

mkdir -p "$golden"
# Goldens whose message is gone would fail corpus_test: remove them.
for g in "$golden"/*.golden; do
  stem=$(basename "$g" .golden)
  found=no
  for f in "${messages[@]}"; do
    b=$(basename "$f")
    [ "${b%.*}" = "$stem" ] && found=yes && break
  done
  if [ $found = no ]; then
    echo "update-mime-golden: removing stale $g"
    rm -f "$g"
  fi
done

"$dump" --golden-dir "$golden" "${messages[@]}"
echo "update-mime-golden: wrote ${#messages[@]} golden files to $golden"
git status --short -- "$golden" 2>/dev/null || true
