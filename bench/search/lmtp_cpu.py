#!/usr/bin/env python3
"""LMTP delivery's server CPU per message, with the full-text index on or off.

Not part of CI. bench/lmtp-compare.sh measures throughput beside Dovecot,
which moves with the machine's load; this tool measures what does not: it
starts one Peregrine on an empty data directory, delivers one untimed
message to each user (the mailboxes and indexes are made), then runs
bench/lmtpload (--clients, --messages per client) and prints the server's
CPU per delivery (user and system, /proc/PID/stat) and the bytes it wrote
(/proc/PID/io). --callgrind FILE runs the server under valgrind's
callgrind and counts instructions during the timed deliveries only (user
space: the count the load does not move).

  g++ -O2 -std=c++20 -pthread bench/lmtpload/lmtpload.cc -o /tmp/lmtpload
  python3 bench/gen_mail.py --count 300 --seed 11 --out /tmp/lmtp-mail
  bench/search/lmtp_cpu.py --bin build/release/src/app/peregrine \\
      --lmtpload /tmp/lmtpload --mail /tmp/lmtp-mail --work /tmp/lmtp-cpu \\
      --users 3 --messages 200 [--callgrind /tmp/lmtp.callgrind]

Python standard library only.
"""

from __future__ import annotations

import argparse
import shutil
import signal
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from append_cpu import cpu_seconds, written_bytes  # noqa: E402
from run import HOST, free_port_in, wait_port  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--bin", required=True)
    ap.add_argument("--lmtpload", required=True, help="bench/lmtpload/lmtpload.cc, built")
    ap.add_argument("--mail", required=True, help="directory of .eml files")
    ap.add_argument("--work", required=True, help="scratch directory (emptied first)")
    ap.add_argument("--users", type=int, default=3)
    ap.add_argument("--clients", type=int, default=1)
    ap.add_argument("--messages", type=int, default=200, help="per client")
    ap.add_argument("--fts", choices=("on", "off"), default="on")
    ap.add_argument("--port-base", type=int, default=27100)
    ap.add_argument("--callgrind", help="run the server under callgrind; its output file "
                    "(instructions counted during the timed deliveries only)")
    args = ap.parse_args()

    work = Path(args.work).resolve()
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    imap = free_port_in(args.port_base)
    lmtp = free_port_in(imap + 1)
    config = work / "peregrine.toml"
    config.write_text(
        f'[server]\ndata_dir = "{work}/data"\n'
        # valgrind cannot follow the re-exec that sets malloc's tunables.
        f'{"huge_pages = false" if args.callgrind else ""}\n\n[imap]\nlisten = ["{HOST}:{imap}"]\n\n'
        f'[lmtp]\nlisten = ["{HOST}:{lmtp}"]\n\n[auth]\npasswd_file = "{work}/users"\n\n'
        f'[log]\nlevel = "warn"\n\n[search]\nfts = {"true" if args.fts == "on" else "false"}\n')
    (work / "users").write_text("")
    users = [f"u{n:02d}" for n in range(1, args.users + 1)]
    for u in users:
        subprocess.run([args.bin, "user", "add", "--config", str(config), u, "--password", "pw",
                        "--scheme", "PLAIN"], check=True, capture_output=True)
    command = [args.bin, "serve", "--config", str(config)]
    if args.callgrind:
        command = ["valgrind", "--tool=callgrind", "--instr-atstart=no",
                   f"--callgrind-out-file={args.callgrind}"] + command
    log = open(work / "server.log", "ab")
    proc = subprocess.Popen(command, stdout=log, stderr=log)
    load = [args.lmtpload, "--port", str(lmtp), "--dir", args.mail, "--users", ",".join(users)]
    try:
        wait_port(lmtp, proc, "peregrine")
        subprocess.run(load + ["--clients", str(len(users)), "--messages", "1"], check=True,
                       capture_output=True)
        if args.callgrind:
            subprocess.run(["callgrind_control", "-i", "on", str(proc.pid)], check=True,
                           capture_output=True)
        u0, s0 = cpu_seconds(proc.pid)
        w0 = written_bytes(proc.pid)
        out = subprocess.run(load + ["--clients", str(args.clients), "--messages",
                                     str(args.messages)], check=True, capture_output=True,
                             text=True).stdout.strip()
        u1, s1 = cpu_seconds(proc.pid)
        w1 = written_bytes(proc.pid)
        if args.callgrind:
            subprocess.run(["callgrind_control", "-i", "off", str(proc.pid)], check=True,
                           capture_output=True)
        n = args.clients * args.messages
        print(f"fts={args.fts} {out} cpu={(u1 - u0 + s1 - s0) * 1000 / n:.2f} ms/msg "
              f"(user {(u1 - u0) * 1000 / n:.2f}, sys {(s1 - s0) * 1000 / n:.2f}) "
              f"disk_writes={(w1 - w0) / 1024 / n:.0f} KiB/msg", flush=True)
        return 0
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=120)


if __name__ == "__main__":
    sys.exit(main())
