#!/usr/bin/env python3
"""APPEND cost with the full-text index on or off: server CPU and bytes written.

Not part of CI. The wall-clock rate of bench/search/run.py's APPEND rows
moves with the machine's load and its fsync latency. This tool runs one
Peregrine instance on a data directory it keeps between runs (so the
N-message index is loaded once; copy it to start each run from the same
state), APPENDs --append-count messages per round with pipelined LITERAL+
APPENDs into a new mailbox, and prints per round the rate, the server's
CPU per message (user and system, /proc/PID/stat), the bytes it wrote per
message (/proc/PID/io: message files, WAL, checkpoints, temporary files)
and the WAL's size after the round. The messages APPENDed are ones the
store has not seen (new mail brings new terms to the vocabulary), a new
slice each round from --sample-from on.

--callgrind FILE runs the server under valgrind's callgrind, counting
instructions only from the first round's start to the last round's end
(the rounds' LOGIN, CREATE and LOGOUT included): a count that does not move
with the machine's load, for comparing builds and settings.
--perf FILE records the server with `perf record --call-graph dwarf`.

  bench/search/append_cpu.py --bin build/release/src/app/peregrine \
      --mail /tmp/mail100k --count 10000 --work /tmp/ac-on --fts on
  bench/search/append_cpu.py ... --count 0 --sample-from 10000 \
      --work /tmp/ac-off --fts off

Python standard library only.
"""

from __future__ import annotations

import argparse
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from run import HOST, PASSWORD, Client, drop_files, free_port_in, wait_port  # noqa: E402

TICKS = os.sysconf("SC_CLK_TCK")


def cpu_seconds(pid: int) -> tuple[float, float]:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return int(fields[11]) / TICKS, int(fields[12]) / TICKS  # utime, stime


def written_bytes(pid: int) -> int:
    for line in Path(f"/proc/{pid}/io").read_text().splitlines():
        if line.startswith("write_bytes:"):
            return int(line.split()[1])
    return 0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--bin", required=True)
    ap.add_argument("--mail", required=True, help="directory of NNNNNN.eml files")
    ap.add_argument("--count", type=int, default=10000, help="messages in INBOX")
    ap.add_argument("--work", required=True, help="data directory, kept between runs")
    ap.add_argument("--fts", choices=("on", "off"), default="on")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--append-count", type=int, default=300)
    ap.add_argument("--port-base", type=int, default=27000)
    ap.add_argument("--sample-from", type=int,
                    help="first message APPENDed (default: --count, the first not loaded)")
    ap.add_argument("--keep-wal", help="copy the index's WAL here after the rounds")
    ap.add_argument("--perf", help="perf record output file")
    ap.add_argument("--callgrind", help="run the server under callgrind; its output file "
                    "(instructions counted during the rounds only)")
    args = ap.parse_args()

    work = Path(args.work).resolve()
    port = free_port_in(args.port_base)
    config = work / "peregrine.toml"
    fresh = not work.exists()
    work.mkdir(parents=True, exist_ok=True)
    config.write_text(
        f'[server]\ndata_dir = "{work}/data"\n'
        # valgrind cannot follow the re-exec that sets malloc's tunables.
        f'{"huge_pages = false" if args.callgrind else ""}\n\n[imap]\nlisten = ["{HOST}:{port}"]\n\n'
        f'[auth]\npasswd_file = "{work}/users"\nplaintext = "always"\n'
        f"failure_delay_base_ms = 0\nfailure_delay_max_ms = 0\n\n"
        f"[limits]\nmax_connections_per_ip = 100\n\n[log]\nlevel = \"warn\"\n\n"
        f"[search]\nfts = {'true' if args.fts == 'on' else 'false'}\n")
    files = sorted(Path(args.mail).glob("*.eml"))
    if fresh:
        (work / "users").write_text("")
        subprocess.run([args.bin, "user", "add", "--config", str(config), "bench",
                        "--password", PASSWORD], check=True, capture_output=True)
    log = open(work / "server.log", "ab")
    command = [args.bin, "serve", "--config", str(config)]
    if args.callgrind:
        command = ["valgrind", "--tool=callgrind", "--instr-atstart=no",
                   f"--callgrind-out-file={args.callgrind}"] + command
    proc = subprocess.Popen(command, stdout=log, stderr=log)
    perf = None
    try:
        wait_port(port, proc, "peregrine")

        def login() -> Client:
            c = Client(port)
            c.command(f'LOGIN bench "{PASSWORD}"')
            return c

        if fresh:
            login().command("LOGOUT")
            maildir = work / "data" / "bench" / "Maildir"
            drop_files(files[: args.count], maildir, None)
            t = time.perf_counter()
            c = login()
            c.command("SELECT INBOX")
            c.command("LOGOUT")
            print(f"# loaded {args.count} messages in {time.perf_counter() - t:.1f} s",
                  flush=True)
        # Each round APPENDs messages the store has not seen (new mail brings
        # new terms to the vocabulary): from --sample-from on, a new slice a round.
        first = args.count if args.sample_from is None else args.sample_from

        def sample(r: int) -> list[bytes]:
            start = first + r * args.append_count
            out = [f.read_bytes() for f in files[start: start + args.append_count]]
            return [m if b"\r\n" in m else m.replace(b"\n", b"\r\n") for m in out]
        if args.perf:
            perf = subprocess.Popen(["perf", "record", "--call-graph", "dwarf,32768", "-F", "999",
                                     "-o", args.perf, "-p",
                                     str(proc.pid)], stdout=subprocess.DEVNULL,
                                    stderr=subprocess.DEVNULL)
            time.sleep(1)
        if args.callgrind:
            subprocess.run(["callgrind_control", "-i", "on", str(proc.pid)], check=True,
                           capture_output=True)
        wal = work / "data" / "bench" / "index.sqlite-wal"
        for r in range(args.rounds):
            c = login()
            box = f"App{time.time_ns()}"
            c.command(f"CREATE {box}")
            u0, s0 = cpu_seconds(proc.pid)
            w0 = written_bytes(proc.pid)
            messages = sample(r)
            secs = c.append_many(box, messages)
            u1, s1 = cpu_seconds(proc.pid)
            w1 = written_bytes(proc.pid)
            wal_size = wal.stat().st_size if wal.exists() else 0
            c.command("LOGOUT")
            n = len(messages)
            print(f"fts={args.fts} n={args.count} round={r} rate={n / secs:.1f} msg/s "
                  f"cpu={(u1 - u0 + s1 - s0) * 1000 / n:.2f} ms/msg "
                  f"(user {(u1 - u0) * 1000 / n:.2f}, sys {(s1 - s0) * 1000 / n:.2f}) "
                  f"disk_writes={(w1 - w0) / 1024 / n:.0f} KiB/msg wal={wal_size // 1024} KiB", flush=True)
        if args.keep_wal and wal.exists():
            shutil.copyfile(wal, args.keep_wal)
        if args.callgrind:
            subprocess.run(["callgrind_control", "-i", "off", str(proc.pid)], check=True,
                           capture_output=True)
        return 0
    finally:
        if perf:
            perf.send_signal(signal.SIGINT)
            perf.wait(timeout=60)
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=60)


if __name__ == "__main__":
    sys.exit(main())
