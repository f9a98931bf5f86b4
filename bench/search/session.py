#!/usr/bin/env python3
"""Why a SEARCH on the connection that loaded the mailbox may be slower.

Not part of CI. Loads N messages into a fresh Peregrine store the way
bench/search/run.py does (files dropped into the Maildir, adopted and
indexed at the first SELECT), then times the same SEARCH commands

  (a) on the connection that did the load,
  (b) on a new connection to the same server process,
  (c) on a new connection to a new server process on the same store,

each in three conditions (--conditions): queries back to back, an idle
pause before each query (--idle seconds: the page cache and this VM's
DAMON age pages), and a read of --read-bytes of other files before each
(what Dovecot's scan does between Peregrine's queries in run.py); also
a 1 s pause ("short"), or another process writing over --thrash-mb of its
memory for 1 s ("thrash": caches and TLBs lose the server's lines, but
little time passes).

Per query it records, besides the time, what the server did: its CPU time
(the sum of its threads' /proc/PID/task/*/schedstat, in ns), its minor and
major page faults (/proc/PID/stat), the bytes it read from the disk
(/proc/PID/io read_bytes), the part of the CPU time its network threads
took (those waiting in epoll when the probe starts), and how long its threads were runnable but
waited for a core (the run-queue delay of schedstat). A slower query with
the same CPU time did the same work more slowly or waited (the machine);
one with more CPU time did more work (our code). (This VM has no hardware
performance counters, so perf cannot count instructions; latency.py
--instructions counts them under callgrind on a fresh process.)

  bench/search/session.py --bin build/release/src/app/peregrine \\
      --mail /work/data/mail100k --count 100000 --work /work/data/sl2 \\
      [--idle 20] [--read-dir /work/data/mail100k] [--rounds 3]

The store is kept in --work (reuse it with bench/search/latency.py --data
WORK/data). Python standard library only.
"""

from __future__ import annotations

import argparse
import os
import re
import signal
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from run import Peregrine, free_port_in  # noqa: E402

QUERIES = ["SEARCH TEXT migratio", "SEARCH FROM jennif", "SEARCH UID 1"]


def server_counters(pid: int) -> dict[str, int]:
    """The server process's cumulative counters."""
    cpu_ns = wait_ns = slices = 0
    threads = {}
    for task in os.listdir(f"/proc/{pid}/task"):
        try:
            with open(f"/proc/{pid}/task/{task}/schedstat") as f:
                run_ns, queued_ns, runs = (int(x) for x in f.read().split()[:3])
        except (OSError, ValueError):
            continue  # a thread that ended between listing and reading
        threads[task] = run_ns
        cpu_ns += run_ns
        wait_ns += queued_ns
        slices += runs
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    # Fields after the name, from 3 (state): minflt is field 10, majflt 12.
    minflt, majflt = int(fields[7]), int(fields[9])
    io = {}
    with open(f"/proc/{pid}/io") as f:
        for line in f:
            k, _, v = line.partition(":")
            io[k] = int(v)
    return {"cpu_ns": cpu_ns, "wait_ns": wait_ns, "slices": slices, "minflt": minflt,
            "majflt": majflt, "read_bytes": io["read_bytes"], "threads": threads}


class Probe:
    """Runs one command and reports its time and the server's work for it."""

    def __init__(self, pid: int):
        self.pid = pid
        self.io: set[str] | None = None

    def network_threads(self) -> set[str]:
        """The server's threads waiting in epoll (between commands): its
        network threads; the others (in futex waits) are the storage pool,
        whose thread runs the user's strand, and the sync threads."""
        out = set()
        for _ in range(10):  # the thread that just answered may not be back in epoll yet
            for task in os.listdir(f"/proc/{self.pid}/task"):
                with open(f"/proc/{self.pid}/task/{task}/wchan") as f:
                    if "epoll" in f.read():
                        out.add(task)
            time.sleep(0.02)
        return out

    def run(self, client, command: str) -> dict[str, float]:
        if self.io is None:
            self.io = self.network_threads()
        before = server_counters(self.pid)
        t = time.perf_counter()
        lines = client.command(command)
        ms = (time.perf_counter() - t) * 1000.0
        after = server_counters(self.pid)
        out = {k: after[k] - before[k] for k in before if k != "threads"}
        out["io_ms"] = sum(ns - before["threads"].get(name, 0)
                           for name, ns in after["threads"].items()
                           if name in self.io) / 1e6
        out["cpu_ns"] /= 1e6  # ms
        out["wait_ns"] /= 1e6
        out["ms"] = ms
        out["hits"] = sum(len(l.split()) - 2 for l in lines if l.startswith(b"* SEARCH"))
        out["answer_bytes"] = sum(len(l) + 2 for l in lines)
        return out


def read_other_files(directory: Path, limit: int) -> float:
    """Reads up to `limit` bytes of the files in `directory`; returns seconds."""
    t = time.perf_counter()
    total = 0
    for name in sorted(os.listdir(directory)):
        with open(directory / name, "rb") as f:
            while chunk := f.read(1 << 20):
                total += len(chunk)
        if total >= limit:
            break
    return time.perf_counter() - t


def phase(label: str, probe: Probe, client, rounds: int, before_query, log) -> None:
    rows: dict[str, list[dict[str, float]]] = {}
    for _ in range(rounds):
        for q in QUERIES:
            before_query()  # before each query: each one comes after the pause
            rows.setdefault(q, []).append(probe.run(client, q))
    load = os.getloadavg()[0]
    for q in QUERIES:
        r = rows[q]
        med = {k: statistics.median(x[k] for x in r) for k in r[0]}
        each = " ".join(f"{x['ms']:.1f}" for x in r)
        line = (f"{label:<34} {q:<22} ms {med['ms']:7.2f} [{each}] cpu {med['cpu_ns']:6.2f} ms"
                f" (io threads {med['io_ms']:5.2f})"
                f" runq {med['wait_ns']:5.2f} ms slices {med['slices']:3.0f} minflt {med['minflt']:6.0f} majflt {med['majflt']:4.0f}"
                f" read {med['read_bytes'] / 1024:7.0f} KB answer {med['answer_bytes']:.0f} B hits {med['hits']:.0f}"
                f" load {load:.1f}")
        print(line, flush=True)
        log.write(line + "\n")
        log.flush()


def thrash_memory(megabytes: int, seconds: float) -> None:
    """Another process writes over `megabytes` of its own memory for
    `seconds`: the CPU caches and TLBs lose the server's lines and pages,
    while the server's mapped pages stay in place and no time passes for
    anything that ages with time."""
    code = ("import time\n"
            f"b = bytearray({megabytes} << 20)\n"
            f"end = time.monotonic() + {seconds}\n"
            "while time.monotonic() < end:\n"
            "    for i in range(0, len(b), 64): b[i] = (b[i] + 1) & 255\n")
    subprocess.run([sys.executable, "-c", code], check=True)


def conditions(args):
    other = Path(args.read_dir)
    all_ = {
        "back": ("back to back", lambda: None),
        "idle": (f"after {args.idle:.0f} s idle", lambda: time.sleep(args.idle)),
        "short": ("after 1 s idle", lambda: time.sleep(1.0)),
        "read": (f"after reading {args.read_bytes >> 20} MB",
                 lambda: read_other_files(other, args.read_bytes)),
        "thrash": (f"after {args.thrash_mb} MB written elsewhere",
                   lambda: thrash_memory(args.thrash_mb, 1.0)),
    }
    return [all_[c] for c in args.conditions.split(",")]


def kept_server(binary: str, work: Path, port: int) -> Peregrine:
    """The server of a store loaded by an earlier run, on `port`."""
    server = Peregrine.__new__(Peregrine)
    server.binary, server.work, server.port, server.fts = binary, work, port, True
    server.config = work / "peregrine.toml"
    server.config.write_text(re.sub(r'listen = \["[^"]*"\]', f'listen = ["127.0.0.1:{port}"]',
                                    server.config.read_text()))
    server.proc = None
    return server


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--bin", required=True)
    ap.add_argument("--mail", required=True, help="directory of NNNNNN.eml files")
    ap.add_argument("--count", type=int, default=100000)
    ap.add_argument("--work", required=True, help="a new directory; the store is kept there")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--idle", type=float, default=20.0)
    ap.add_argument("--read-dir", help="files to read between rounds (default: --mail)")
    ap.add_argument("--read-bytes", type=int, default=2 << 30)
    ap.add_argument("--port-base", type=int, default=28200)
    ap.add_argument("--conditions", default="back,idle,read",
                    help="between rounds: back, idle, short, read, thrash (comma-separated)")
    ap.add_argument("--thrash-mb", type=int, default=256)
    ap.add_argument("--query", action="append",
                    help="a SEARCH command to time (default: " + "; ".join(QUERIES) + ")")
    ap.add_argument("--reuse", action="store_true",
                    help="--work holds a store this script loaded: only (c), no load")
    ap.add_argument("--profile", action="store_true",
                    help="record each (c) condition with perf record -e cpu-clock")
    args = ap.parse_args()
    args.read_dir = args.read_dir or args.mail
    if args.query:
        QUERIES[:] = args.query

    work = Path(args.work)
    files = sorted(Path(args.mail).glob("*.eml"))[: args.count]
    if args.reuse:
        server = kept_server(args.bin, work, free_port_in(args.port_base))
    else:
        server = Peregrine(args.bin, work, free_port_in(args.port_base), fts=True)
    try:
        if args.reuse:
            server.start()
            return fresh_process(server, args, work)
        log = open(work / "session.log", "a")
        server.start()
        loader, secs = server.load(files)
        line = f"# {len(files)} messages loaded by the first SELECT in {secs:.1f} s"
        print(line, flush=True)
        log.write(line + "\n")
        probe = Probe(server.proc.pid)
        for name, before in conditions(args):
            phase(f"(a) loading connection, {name}", probe, loader, args.rounds, before, log)
        fresh = server.login()
        fresh.command("SELECT INBOX")
        for name, before in conditions(args):
            phase(f"(b) new connection, {name}", probe, fresh, args.rounds, before, log)
        fresh.command("LOGOUT")
        loader.command("LOGOUT")
        server.stop()
        server.start()
        return fresh_process(server, args, work)
    finally:
        server.stop()


def fresh_process(server, args, work: Path) -> int:
    log = open(work / "session.log", "a")
    probe = Probe(server.proc.pid)
    c = server.login()
    c.command("SELECT INBOX")
    for q in QUERIES:
        c.command(q)  # the first SEARCH reads what later ones keep
    for name, before in conditions(args):
        perf = None
        if args.profile:
            out = work / f"perf-{name.replace(' ', '_')}.data"
            perf = subprocess.Popen(["perf", "record", "-q", "-e", "cpu-clock", "-F", "1000",
                                     "-o", str(out), "-p", str(server.proc.pid)],
                                    stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            time.sleep(1.0)
        phase(f"(c) new process, {name}", probe, c, args.rounds, before, log)
        if perf:
            perf.send_signal(signal.SIGINT)
            perf.wait(timeout=120)
    c.command("LOGOUT")
    return 0


if __name__ == "__main__":
    sys.exit(main())
