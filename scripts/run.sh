#!/usr/bin/env bash
# Builds Peregrine (Release), sets up var/ with a demo user and sample mail on
# the first run, and starts the server in the foreground on 127.0.0.1.
# Stop it with Ctrl-C. Delete var/ to start over.
set -euo pipefail
cd "$(dirname "$0")/.."

./scripts/deps.sh
echo "run: building Release into build/release (the first build takes a few minutes)"
mkdir -p build/release
if ! { cmake -S . -B build/release -G Ninja -DCMAKE_BUILD_TYPE=Release -DPEREGRINE_TESTS=OFF &&
  cmake --build build/release -j2 --target peregrine; } >build/release/build.log 2>&1; then
  tail -n 40 build/release/build.log
  echo "run: the build failed; the whole log is build/release/build.log" >&2
  exit 1
fi
bin=build/release/src/app/peregrine
config=var/peregrine.toml

# First run only. The marker is written last, so an interrupted setup is redone.
if [ ! -f var/.setup-done ]; then
  rm -rf var
  mkdir -p var
  tls_config=""
  tls_listen="[]"
  pop3_tls_listen="[]"
  if command -v openssl >/dev/null; then
    mkdir -p var/tls
    openssl req -x509 -newkey rsa:2048 -nodes -subj /CN=localhost -days 3650 \
      -keyout var/tls/key.pem -out var/tls/cert.pem 2>/dev/null
    chmod 600 var/tls/key.pem
    tls_config=$'[tls]\ncert = "tls/cert.pem"\nkey = "tls/key.pem"\n'
    tls_listen='["127.0.0.1:1993"]'
    pop3_tls_listen='["127.0.0.1:1995"]'
  fi
  cat >"$config" <<TOML
# Peregrine's demo configuration (docs/configuration.md lists every key).
# Relative paths are relative to this file's directory.
[server]
data_dir = "data"

[imap]
listen = ["127.0.0.1:1143"]
tls_listen = $tls_listen

[pop3]
listen = ["127.0.0.1:1110"]
tls_listen = $pop3_tls_listen

$tls_config
[auth]
passwd_file = "users"
plaintext = "loopback"
TOML
  "$bin" user add --config "$config" demo --password demo
  for message in scripts/sample-mail/*.eml; do
    "$bin" deliver --config "$config" -u demo <"$message" 2>/dev/null
  done
  touch var/.setup-done
  echo "run: created var/ with user demo (password demo) and $(ls scripts/sample-mail/*.eml | wc -l) messages"
fi

# A var/ made before POP3 existed gets its listener.
if ! grep -q '^\[pop3\]' "$config"; then
  printf '\n[pop3]\nlisten = ["127.0.0.1:1110"]\n' >>"$config"
fi
# LMTP for an MTA on this host (also added to a var/ made before LMTP existed).
if ! grep -q '^\[lmtp\]' "$config"; then
  printf '\n[lmtp]\nlisten = ["127.0.0.1:2424"]\n' >>"$config"
fi

cat <<'TEXT'

Peregrine is starting on 127.0.0.1:1143 (IMAP, STARTTLS when var/tls exists),
127.0.0.1:1993 (IMAP over TLS, self-signed certificate), 127.0.0.1:1110 (POP3,
STLS when var/tls exists), 127.0.0.1:1995 (POP3 over TLS) and 127.0.0.1:2424
(LMTP, for an MTA: see docs/postfix.md). Log in as demo / demo:

  curl 'imap://demo:demo@127.0.0.1:1143/INBOX;UID=1'            # prints the first message
  curl -v 'imap://demo:demo@127.0.0.1:1143/INBOX' -X 'FETCH 1 BODY[]'   # curl shows a custom
                                         # command's literal only in its -v transcript
  curl -k 'imaps://demo:demo@127.0.0.1:1993/INBOX' -X 'SEARCH ALL'
  curl 'pop3://demo:demo@127.0.0.1:1110/'                       # POP3: lists the messages
  curl 'pop3://demo:demo@127.0.0.1:1110/1'                      # POP3: prints the first one
  mutt -f 'imap://demo@127.0.0.1:1143/INBOX'
  Thunderbird: IMAP server 127.0.0.1, port 1143, STARTTLS (accept the certificate),
               normal password, user name demo

Deliver more mail:  build/release/src/app/peregrine deliver --config var/peregrine.toml -u demo < message.eml
or over LMTP:
  python3 -c 'import smtplib, sys; smtplib.LMTP("127.0.0.1", 2424).sendmail("me@example.org", ["demo@example.org"], sys.stdin.buffer.read())' < message.eml
Stop with Ctrl-C.

TEXT
exec "$bin" serve --config "$config"
