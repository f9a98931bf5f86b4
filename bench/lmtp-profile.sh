#!/usr/bin/env bash
# What one LMTP delivery costs Peregrine, in counts that do not depend on the
# machine's load (docs/benchmarks.md, "LMTP delivery", "Per delivery"):
# CPU time (user and system), context switches and syscalls per message,
# measured on the running server while bench/lmtpload delivers.
#
#   bench/lmtp-profile.sh [BIN ...]     (default: build/release/src/app/peregrine)
#   CLIENTS="1 10"  MESSAGES=200 (per run: split over the clients)
#   FTS=true|false  ([search] fts of the server)
#   MODE=perf|strace|record|timeline|rate   perf stat, strace -f -c, perf
#     record -g (EVENT=cpu-clock, or e.g. sched:sched_switch; run N's
#     samples are in $WORK/perf.N.data; CALLGRAPH="--call-graph dwarf,16384"
#     for whole stacks of a Release build, which keeps no frame pointers),
#     a system-wide trace of switches,
#     wake-ups, the delivery's system calls and block requests read by
#     bench/lmtp_timeline.py (one client: CLIENTS=1; $WORK/timeline.N.data),
#     or just the rate
#   WORK=/tmp/peregrine-lmtp-profile  PORT_BASE=29100
#   WRAP="taskset -c 0"  a command the server runs under (it must exec it)
#   HUGE_PAGES=true      the server's [server] huge_pages
#   WARM=1               untimed warm-up messages per user before the run
#
# Each run starts the server on an empty data directory, delivers WARM
# untimed warm-up messages to each of 10 users, attaches the counter, then
# delivers MESSAGES messages (seed-11 messages of bench/gen_mail.py) and
# prints one line per run: CPU and switches or the syscalls per
# delivery. Several BINs are run in turn (A/B). The runs late in one
# invocation are faster: the inodes the last invocation freed at its end
# age out of ext4's recently-deleted window meanwhile (docs/benchmarks.md,
# "LMTP delivery"), so give the BINs in a balanced order (A B B A A B ...)
# and leave a few minutes between invocations. Not part of CI.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
work="${WORK:-/tmp/peregrine-lmtp-profile}"
port_base="${PORT_BASE:-29100}"
clients_list="${CLIENTS:-1 10}"
messages="${MESSAGES:-200}"
fts="${FTS:-true}"
mode="${MODE:-perf}"
bins=("$@")
[[ ${#bins[@]} -gt 0 ]] || bins=("$root/build/release/src/app/peregrine")
users=(u01 u02 u03 u04 u05 u06 u07 u08 u09 u10)
user_list=$(IFS=,; echo "${users[*]}")
p_imap=$((port_base + 1)) p_lmtp=$((port_base + 2))

mkdir -p "$work"
[[ -x "$work/lmtpload" ]] || g++ -O2 -std=c++20 -pthread bench/lmtpload/lmtpload.cc -o "$work/lmtpload"
[[ -d "$work/mail" ]] || python3 bench/gen_mail.py --count 300 --seed 11 --out "$work/mail" >/dev/null
cat >"$work/peregrine.toml" <<TOML
[server]
data_dir = "$work/data/current"
huge_pages = ${HUGE_PAGES:-true}
[imap]
listen = ["127.0.0.1:$p_imap"]
[lmtp]
listen = ["127.0.0.1:$p_lmtp"]
[auth]
passwd_file = "$work/users"
[search]
fts = $fts
[log]
level = "warn"
TOML

. "$root/bench/wait_port.sh"

for clients in $clients_list; do
  for bin in "${bins[@]}"; do
    : >"$work/users"
    for u in "${users[@]}"; do
      "$bin" user add --config "$work/peregrine.toml" "$u" --password pw --scheme PLAIN
    done
    # A new directory per run, all removed at the end: ext4 without a
    # journal does not reuse an inode freed in the last minute, and skipping
    # many of them makes every file creation dearer (docs/benchmarks.md).
    run_id=$((${run_id:-0} + 1))
    [[ -e "$work/data/current" ]] && mv "$work/data/current" "$work/data/old.$run_id.$$"
    mkdir -p "$work/data"
    ${WRAP:-} "$bin" serve --config "$work/peregrine.toml" >>"$work/log" 2>&1 &
    pid=$!
    wait_port "$p_lmtp"
    "$work/lmtpload" --port "$p_lmtp" --dir "$work/mail" --users "$user_list" \
      --clients 10 --messages "${WARM:-1}" >/dev/null
    per_client=$((messages / clients))
    total=$((per_client * clients))
    case "$mode" in
      perf)
        perf stat -x, -e task-clock,context-switches,block:block_rq_issue -p "$pid" \
          -o "$work/counters" &
        counter=$!
        ;;
      strace)
        strace -f -c -o "$work/counters" -p "$pid" 2>/dev/null &
        counter=$!
        ;;
      record)
        perf record -q -e "${EVENT:-cpu-clock}" ${CALLGRAPH:--g} -p "$pid" -o "$work/perf.$run_id.data" 2>/dev/null &
        counter=$!
        ;;
      timeline)
        s=syscalls:sys
        perf record -q -a -o "$work/timeline.$run_id.data" \
          -e sched:sched_switch,sched:sched_wakeup,block:block_rq_issue \
          -e ${s}_enter_recvfrom,${s}_exit_recvfrom,${s}_enter_sendto,${s}_enter_futex \
          -e ${s}_enter_fsync,${s}_exit_fsync,${s}_enter_fdatasync,${s}_exit_fdatasync \
          -e ${s}_enter_linkat,${s}_enter_pwrite64,${s}_enter_rename 2>/dev/null &
        counter=$!
        ;;
      *) counter= ;;
    esac
    sleep 1
    read -r -a before < <(cut -d' ' -f14,15 "/proc/$pid/stat")
    out=$("$work/lmtpload" --port "$p_lmtp" --dir "$work/mail" --users "$user_list" \
      --clients "$clients" --messages "$per_client")
    read -r -a after < <(cut -d' ' -f14,15 "/proc/$pid/stat")
    if [[ -n $counter ]]; then
      kill -INT "$counter"
      wait "$counter" 2>/dev/null || true
    fi
    kill "$pid"
    wait "$pid" 2>/dev/null || true
    echo "bin=$bin clients=$clients fts=$fts run=$run_id uptime=\"$(uptime | sed 's/.*average: //')\" $out"
    tick=$(getconf CLK_TCK)
    awk -v u=$((after[0] - before[0])) -v s=$((after[1] - before[1])) -v t="$tick" -v n="$total" \
      'BEGIN { printf "  CPU per delivery: user %.2f ms, system %.2f ms\n", u / t * 1000 / n, s / t * 1000 / n }'
    case "$mode" in
      perf)
        awk -F, -v n="$total" '$3 ~ /task-clock|context-switches|block_rq_issue/ {
          printf "  %s per delivery: %.2f\n", $3, $1 / n }' "$work/counters"
        ;;
      strace)
        awk -v n="$total" '$1 ~ /^[0-9.]+$/ && NF >= 5 {
          printf "  %-16s %7.2f per delivery\n", $NF, $4 / n }' "$work/counters"
        ;;
      timeline)
        perf script -i "$work/timeline.$run_id.data" -F comm,pid,tid,cpu,time,event,trace 2>/dev/null |
          python3 bench/lmtp_timeline.py "$pid"
        ;;
    esac
  done
done
rm -rf "$work/data"
