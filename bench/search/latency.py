#!/usr/bin/env python3
"""SEARCH latency on a kept store, one or more Peregrine builds side by side.

Not part of CI. Loading 100,000 messages takes minutes, so this tool works
on a store loaded once (bench/search/run.py's layout: a data directory
with the user `bench`, password `bench`, its INBOX holding the messages)
and never changes it: each build gets its own copy (the Maildir hard-linked,
its files being immutable; the SQLite index copied), started on its own
port. Then, in alternating rounds (each query on each build in turn, one
connection per build, INBOX EXAMINEd), it times each SEARCH and prints per
build and query the median, the quartiles and the number of hits, which
must agree between builds.

--instructions N then restarts each build under valgrind's callgrind
(counting only while the queries run), runs each query N times and prints
the server's instructions per SEARCH: a figure the machine's load does not
move, unlike the times.

  bench/search/latency.py --data /work/data/p100k/data \
      --bin old=/path/to/peregrine-before --bin new=build/release/src/app/peregrine \
      [--rounds 15] [--port-base 28100] [--query 'SEARCH TEXT migratio' ...]

Python standard library only.
"""

from __future__ import annotations

import argparse
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
import tomllib
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from run import Client, free_port_in, stop_all, wait_port  # noqa: E402

DEFAULT_QUERIES = [
    "SEARCH TEXT migratio",  # a fragment of a common word: a third of the messages
    "SEARCH FROM jennif",  # a fragment of a first name: a few thousand
    "SEARCH SUBJECT migratio",  # the same fragment in one column
    "SEARCH TEXT qqqzzzx",  # in no message: the fixed cost of a text search
    "SEARCH UID 1",  # no text: the fixed cost of any SEARCH
]


class Build:
    def __init__(self, name: str, binary: str, data: Path, work: Path, port: int,
                 fts: bool = True, env: dict[str, str] | None = None):
        self.name, self.binary, self.port = name, binary, port
        self.work, self.fts, self.env = work, fts, env
        copy = work / "data" / "bench"
        copy.mkdir(parents=True)
        src = data / "bench"
        subprocess.run(["cp", "-al", str(src / "Maildir"), str(copy / "Maildir")], check=True)
        for f in src.iterdir():
            if f.is_file() and not f.name.endswith(("-wal", "-shm")):
                shutil.copyfile(f, copy / f.name)
        users = work / "users"
        # The password file of the store's layout (run.py: plaintext "bench").
        subprocess.run([binary, "user", "add", "--config", str(self._config(users)), "bench",
                        "--password", "bench"], check=True, capture_output=True)
        self.proc = None

    @classmethod
    def of_kept_store(cls, name: str, binary: str, store: Path, work: Path, port: int,
                      env: dict[str, str] | None = None) -> "Build":
        """A copy of an append_cpu.py --work directory (peregrine.toml and
        data/), keeping its [search] fts."""
        settings = tomllib.loads((store / "peregrine.toml").read_text())
        return cls(name, binary, store / "data", work, port,
                   fts=settings.get("search", {}).get("fts", True), env=env)

    def _config(self, users: Path) -> Path:
        users.touch()
        config = self.work / "peregrine.toml"
        config.write_text(
            f'[server]\ndata_dir = "{self.work}/data"\n\n[imap]\nlisten = ["127.0.0.1:{self.port}"]\n\n'
            f'[auth]\npasswd_file = "{users}"\nplaintext = "always"\n'
            "failure_delay_base_ms = 0\nfailure_delay_max_ms = 0\n\n"
            f'[log]\nlevel = "warn"\n\n[search]\nfts = {"true" if self.fts else "false"}\n')
        return config

    def start(self) -> Client:
        log = open(self.work / "server.log", "ab")
        self.proc = subprocess.Popen([self.binary, "serve", "--config", str(self.work / "peregrine.toml")],
                                     stdout=log, stderr=log, env=self.env)
        wait_port(self.port, self.proc, "peregrine")
        c = Client(self.port)
        c.command('LOGIN bench "bench"')
        c.command("EXAMINE INBOX")
        return c

    def stop(self) -> None:
        if self.proc and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            self.proc.wait(timeout=60)


def count_instructions(build: Build, queries: list[str], runs: int) -> dict[str, float]:
    """The server's instructions (user space) per run of each query, counted by
    callgrind in a server of its own, started after the timed rounds."""
    out = build.work / "callgrind.out"
    log = open(build.work / "callgrind.log", "ab")
    proc = subprocess.Popen(["valgrind", "--tool=callgrind", "--instr-atstart=no",
                             f"--callgrind-out-file={out}", build.binary, "serve", "--config",
                             str(build.work / "peregrine.toml")], stdout=log, stderr=log)
    result = {}
    try:
        for _ in range(600):
            try:
                c = Client(build.port)
                break
            except OSError:
                time.sleep(0.5)
        c.command('LOGIN bench "bench"')
        c.command("EXAMINE INBOX")
        control = lambda *a: subprocess.run(["callgrind_control", *a, str(proc.pid)],  # noqa: E731
                                            check=True, capture_output=True)
        for q in queries:
            c.command(q)  # warm, as in the timed rounds
            control("-z")
            control("-i", "on")
            for _ in range(runs):
                c.command(q)
            control("-i", "off")
            before = set(build.work.glob("callgrind.out*"))
            control("-d")
            dump = max(set(build.work.glob("callgrind.out*")) - before,
                       key=lambda f: f.stat().st_mtime)
            total = 0.0
            for line in dump.read_text(errors="replace").splitlines():
                if line.startswith(("totals:", "summary:")):
                    total = float(line.split()[1])
            result[q] = total / runs
        c.command("LOGOUT")
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=300)
    return result


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--data", required=True, help="the kept data directory (holds bench/)")
    ap.add_argument("--bin", action="append", required=True, help="NAME=PATH, once per build")
    ap.add_argument("--rounds", type=int, default=15)
    ap.add_argument("--port-base", type=int, default=28100)
    ap.add_argument("--query", action="append", help="a SEARCH command (default: a set of five)")
    ap.add_argument("--instructions", type=int, default=0, metavar="N",
                    help="also count the server's instructions over N runs of each query")
    args = ap.parse_args()
    queries = args.query or DEFAULT_QUERIES

    work = Path(tempfile.mkdtemp(prefix="peregrine-search-latency-", dir=Path(args.data).parent))
    builds: list[Build] = []
    try:
        for i, spec in enumerate(args.bin):
            name, _, path = spec.partition("=")
            builds.append(Build(name, path, Path(args.data), work / name,
                                free_port_in(args.port_base + 10 * i)))
        clients = {b.name: b.start() for b in builds}
        hits: dict[tuple[str, str], int] = {}
        for q in queries:
            for b in builds:
                lines = clients[b.name].command(q)
                hits[(b.name, q)] = sum(len(l.split()) - 2 for l in lines
                                        if l.startswith(b"* SEARCH"))
        samples: dict[tuple[str, str], list[float]] = {}
        for _ in range(args.rounds):
            for q in queries:
                for b in builds:
                    samples.setdefault((b.name, q), []).append(clients[b.name].timed(q))
        load = os.getloadavg()
        print(f"# {args.rounds} rounds, load average {load[0]:.1f} {load[1]:.1f} {load[2]:.1f}")
        for q in queries:
            agree = len({hits[(b.name, q)] for b in builds}) == 1
            print(f"{q}  ({hits[(builds[0].name, q)]} hits{'' if agree else ', BUILDS DISAGREE'})")
            for b in builds:
                v = samples[(b.name, q)]
                quart = statistics.quantiles(v, n=4) if len(v) > 1 else [v[0]] * 3
                print(f"  {b.name:>10}: median {statistics.median(v):7.2f} ms"
                      f"  (quartiles {quart[0]:.2f}-{quart[2]:.2f}, min {min(v):.2f})")
        for c in clients.values():
            c.command("LOGOUT")
        if args.instructions:
            counts = {}
            for b in builds:
                b.stop()
                counts[b.name] = count_instructions(b, queries, args.instructions)
            print(f"# server instructions per SEARCH (callgrind, {args.instructions} runs)")
            for q in queries:
                print(q)
                for b in builds:
                    print(f"  {b.name:>10}: {counts[b.name][q] / 1e6:8.2f} M")
        return 0
    finally:
        stop_all(builds)
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
