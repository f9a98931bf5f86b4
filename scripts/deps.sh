#!/usr/bin/env bash
# Installs the Debian packages Peregrine builds and tests with. Guarded: when
# everything is present it only checks and returns, so a second run is fast.
set -euo pipefail

packages=(
  build-essential cmake ninja-build pkg-config clang libclang-rt-14-dev
  libgtest-dev libgmock-dev libbenchmark-dev
  libicu-dev libssl-dev libsqlite3-dev libsodium-dev libcrypt-dev zlib1g-dev libzstd-dev
  libasio-dev libtomlplusplus-dev libcli11-dev libspdlog-dev libfmt-dev
  libgmime-3.0-dev python3
  dovecot-core dovecot-imapd dovecot-pop3d dovecot-lmtpd
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done

if ((${#missing[@]})); then
  echo "deps: installing ${missing[*]}"
  sudo_cmd=()
  [ "$(id -u)" -eq 0 ] || sudo_cmd=(sudo)
  export DEBIAN_FRONTEND=noninteractive
  "${sudo_cmd[@]}" apt-get update -qq
  "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
