#!/usr/bin/env bash
# LMTP delivery throughput, Peregrine against Dovecot 2.3's LMTP, side by side
# (docs/benchmarks.md, "LMTP delivery"). Both store Maildir on the same
# filesystem with fsync on: Peregrine always fsyncs a delivery (file,
# directory, index commit) before its 250; Dovecot runs with
# mail_fsync = optimized, its default, which fsyncs saved mail before the
# reply. bench/lmtpload/lmtpload drives N parallel clients (LHLO once, then
# MAIL/RCPT/DATA per message) with bench/gen_mail.py messages to 10 users.
# Rounds alternate which server goes first; each run starts its server on an
# empty data directory; medians are printed with the ratio.
#
#   bench/lmtp-compare.sh [rounds]     (default 3)
#   MESSAGES_1=2000 MESSAGES_10=400    messages per client for 1 and 10 clients
#              (rounds of a few seconds: a round of 400 lasted half a second,
#              and a checkpoint or a stall moved its rate by more than a change)
#   BUILD=build/release  WORK=/tmp/peregrine-lmtp-bench  PORT_BASE=21600
#   WARMUP=1   before timing, one untimed delivery to each user, so that both
#              servers have made the users' mailboxes and indexes (the first
#              delivery to a new user is account set-up, not delivery);
#              WARMUP=0 times it too (a cold start)
#   NO_INDEX=1 also run Peregrine with its full-text index off ([search]
#              fts = false), in turn with the others: Dovecot as configured
#              here indexes no text, so that series compares the same work,
#              and the difference to the default is what the index costs
#
# Needs: dovecot-core dovecot-lmtpd, a system user vmail (DOVECOT-REFERENCE).
# Not part of CI.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
rounds="${1:-3}"
build="${BUILD:-build/release}"
work="${WORK:-/tmp/peregrine-lmtp-bench}"
port_base="${PORT_BASE:-21600}"
messages_1="${MESSAGES_1:-2000}"
messages_10="${MESSAGES_10:-400}"
warmup="${WARMUP:-1}"
no_index="${NO_INDEX:-0}"
users=(u01 u02 u03 u04 u05 u06 u07 u08 u09 u10)
user_list=$(IFS=,; echo "${users[*]}")

command -v dovecot >/dev/null || { echo "lmtp-compare: dovecot is not installed" >&2; exit 69; }
id vmail >/dev/null 2>&1 || { echo "lmtp-compare: no system user vmail" >&2; exit 69; }
if [[ ! -x "$build/src/app/peregrine" ]]; then
  cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DPEREGRINE_TESTS=OFF >/dev/null
  cmake --build "$build" -j2 --target peregrine
fi
bin="$root/$build/src/app/peregrine"

# Data is set aside, not deleted, until the script ends: ext4 without a
# journal (this machine's) skips inodes freed in the last minutes when it
# makes a file, and a delivery creates one, so deleting a round's thousands
# of files just before the next round made that round pay for the search
# (docs/benchmarks.md, "LMTP delivery"). The previous invocation's work goes
# the same way; leave a few minutes between invocations.
spent="$work.spent.$$"
[[ -e "$work" ]] && mkdir -p "$spent" && mv "$work" "$spent/previous"
trap 'rm -rf "$spent"' EXIT
mkdir -p "$work" "$spent"
chmod 755 "$work"
g++ -O2 -std=c++20 -pthread bench/lmtpload/lmtpload.cc -o "$work/lmtpload"
python3 bench/gen_mail.py --count 300 --seed 11 --out "$work/mail" >/dev/null

# ---- Peregrine ----
p_imap=$((port_base + 1)) p_lmtp=$((port_base + 2))
mkdir -p "$work/peregrine"
cat >"$work/peregrine/peregrine.toml" <<TOML
[server]
data_dir = "$work/peregrine/data"
[imap]
listen = ["127.0.0.1:$p_imap"]
[lmtp]
listen = ["127.0.0.1:$p_lmtp"]
[auth]
passwd_file = "$work/peregrine/users"
[log]
level = "warn"
TOML
: >"$work/peregrine/users"
for u in "${users[@]}"; do
  "$bin" user add --config "$work/peregrine/peregrine.toml" "$u" --password pw --scheme PLAIN
done

# The same server with the full-text index off (NO_INDEX=1), its own data.
mkdir -p "$work/peregrine-noindex"
sed -e "s|$work/peregrine/data|$work/peregrine-noindex/data|" "$work/peregrine/peregrine.toml" \
  >"$work/peregrine-noindex/peregrine.toml"
printf '[search]\nfts = false\n' >>"$work/peregrine-noindex/peregrine.toml"

# start_peregrine DIR (peregrine or peregrine-noindex)
start_peregrine() {
  local dir="$work/$1"
  [[ -e "$dir/data" ]] && mv "$dir/data" "$spent/$1.$round.$clients"
  "$bin" serve --config "$dir/peregrine.toml" >>"$dir/log" 2>&1 &
  echo $! >"$dir/pid"
  wait_port "$p_lmtp"
}
stop_peregrine() {
  local dir="$work/$1"
  kill "$(cat "$dir/pid")"
  wait "$(cat "$dir/pid")" 2>/dev/null || true
}

# ---- Dovecot ----
d_lmtp=$((port_base + 3))
d="$work/dovecot"
mkdir -p "$d/state"
: >"$d/users"
for u in "${users[@]}"; do
  echo "$u:{PLAIN}pw:$(id -u vmail):$(id -g vmail)::$d/home/$u::" >>"$d/users"
done
# The configuration comes from the one writer of Dovecot configuration,
# tests/common/dovecot_server.py: LMTP only, mail_fsync = optimized. Each
# user's home is given in the passwd file ($d/home/USER, apart from the
# Maildir), which takes precedence over the configuration's default home.
python3 - "$root/tests/common" "$d" "$d_lmtp" "$(id -u vmail)" "$(id -g vmail)" \
  >"$d/dovecot.conf" <<'PY'
import sys
sys.path.insert(0, sys.argv[1])
from dovecot_server import dovecot_conf
d, port, uid, gid = sys.argv[2], int(sys.argv[3]), sys.argv[4], sys.argv[5]
print(dovecot_conf(header="Written by bench/lmtp-compare.sh.", instance="lmtp-bench", root=d,
                   log=f"{d}/log", ports={"lmtp": port}, passwd=f"{d}/users", scheme="PLAIN",
                   uid=uid, gid=gid, first_valid_uid=uid, mail=f"{d}/mail",
                   fsync="optimized"), end="")
PY
doveconf -c "$d/dovecot.conf" -n >/dev/null

start_dovecot() {
  [[ -e "$d/mail" ]] && mv "$d/mail" "$spent/dovecot.$round.$clients"
  mkdir -p "$d/mail"
  chown vmail:vmail "$d/mail"
  dovecot -c "$d/dovecot.conf"
  wait_port "$d_lmtp"
}
stop_dovecot() {
  local pid
  pid=$(cat "$d/run/master.pid")
  kill "$pid"
  for _ in $(seq 100); do kill -0 "$pid" 2>/dev/null || return 0; sleep 0.1; done
}

. "$root/bench/wait_port.sh"

# run SERVER CLIENTS -> appends "server clients msgs_per_s mb_per_s" to results
run() {
  local server=$1 clients=$2 port messages out
  if [[ $server == dovecot ]]; then port=$d_lmtp; start_dovecot; else port=$p_lmtp; start_peregrine "$server"; fi
  messages=$messages_1
  [[ $clients == 10 ]] && messages=$messages_10
  if [[ $warmup == 1 ]]; then
    "$work/lmtpload" --port "$port" --dir "$work/mail" --users "$user_list" \
      --clients "${#users[@]}" --messages 1 >/dev/null
  fi
  out=$("$work/lmtpload" --port "$port" --dir "$work/mail" --users "$user_list" \
    --clients "$clients" --messages "$messages")
  if [[ $server == dovecot ]]; then stop_dovecot; else stop_peregrine "$server"; fi
  echo "$server round=$round $out"
  echo "$server $clients $(sed -E 's/.*msgs_per_s=([0-9.]+) mb_per_s=([0-9.]+).*/\1 \2/' <<<"$out")" \
    >>"$work/results"
}

: >"$work/results"
servers=(peregrine dovecot)
[[ $no_index == 1 ]] && servers+=(peregrine-noindex)
for round in $(seq "$rounds"); do
  for clients in 1 10; do
    # Each round starts with the next server in turn.
    for k in $(seq 0 $((${#servers[@]} - 1))); do
      run "${servers[(round - 1 + k) % ${#servers[@]}]}" "$clients"
    done
  done
done

python3 - "$work/results" <<'PY'
import statistics, sys
rows = [line.split() for line in open(sys.argv[1])]
print("\n| clients | Peregrine msg/s | Dovecot msg/s | ratio | Peregrine MB/s | Dovecot MB/s |")
print("| --- | --- | --- | --- | --- | --- |")
for clients in ("1", "10"):
    med = {}
    for server in ("peregrine", "dovecot"):
        vals = [(float(r[2]), float(r[3])) for r in rows if r[0] == server and r[1] == clients]
        med[server] = (statistics.median(v[0] for v in vals), statistics.median(v[1] for v in vals))
    p, d = med["peregrine"], med["dovecot"]
    print(f"| {clients} | {p[0]:.0f} | {d[0]:.0f} | {p[0] / d[0]:.2f}x | {p[1]:.1f} | {d[1]:.1f} |")
noindex = [r for r in rows if r[0] == "peregrine-noindex"]
if noindex:
    print("\n| clients | Peregrine, index off, msg/s | Dovecot msg/s | ratio | index on / off |")
    print("| --- | --- | --- | --- | --- |")
    for clients in ("1", "10"):
        med = {server: statistics.median(float(r[2]) for r in rows
                                         if r[0] == server and r[1] == clients)
               for server in ("peregrine", "peregrine-noindex", "dovecot")}
        n, d = med["peregrine-noindex"], med["dovecot"]
        print(f"| {clients} | {n:.0f} | {d:.0f} | {n / d:.2f}x | {100 * med['peregrine'] / n:.0f}% |")
PY
