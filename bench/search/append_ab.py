#!/usr/bin/env python3
"""APPEND rates of several configurations, interleaved round by round.

Not part of CI. On this machine a disk's fsync latency moves by half within
minutes, so two runs one after the other (append_cpu.py, run.py's rounds)
compare the disk's moods as much as the builds. This tool starts every
configuration at once, each on its own copy of a kept store (an
append_cpu.py --work directory: peregrine.toml, whose [search] fts it
keeps, and data/bench/; copied as latency.py copies one: the Maildir
hard-linked, the index copied), and then, round after round, logs in
to each server in turn (the order rotated each round), CREATEs a mailbox,
APPENDs --count known messages (pipelined, LITERAL+, as run.py does) and
logs out. Each round of one configuration is set against the same round of
the last configuration named: the medians of those ratios are what it
prints, with the rates, and the server's CPU time (user and system, from
/proc) and the client's per APPEND.

  bench/search/append_ab.py --mail /work/data/mail100k \\
      main=build/release/src/app/peregrine,/work/data/p100k-on \\
      off=build/release/src/app/peregrine,/work/data/p100k-off

A configuration may add environment variables: NAME=BIN,STORE,VAR=VALUE...

--fresh takes a new slice of --mail each round (round r the messages
r*count to (r+1)*count - 1, the same for every configuration), so that
with a --mail of messages the store does not hold (bench/gen_mail.py with
another --seed) every round appends new mail: new Message-IDs, signatures
and sentences, whose terms the full-text index has to add to its
vocabulary. Without it every round appends the same --count messages, and
from the second round on (with --mail the store's own messages, from the
first) every term is one the vocabulary holds.

Python standard library only.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from latency import Build  # noqa: E402
from run import Client, free_port_in, stop_all  # noqa: E402


def process_cpu(pid: int) -> float:
    """User plus system CPU seconds of process `pid` so far, all threads."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--mail", required=True, help="directory of NNNNNN.eml files")
    ap.add_argument("--rounds", type=int, default=10)
    ap.add_argument("--count", type=int, default=150, help="messages APPENDed a round")
    ap.add_argument("--port-base", type=int, default=27200)
    ap.add_argument("--fresh", action="store_true",
                    help="a new slice of --mail each round (needs rounds * count files)")
    ap.add_argument("configs", nargs="+", help="NAME=BIN,STORE[,VAR=VALUE...]")
    args = ap.parse_args()

    files = sorted(Path(args.mail).glob("*.eml"))
    slices = args.rounds if args.fresh else 1
    if len(files) < slices * args.count:
        ap.error(f"{args.mail} holds {len(files)} messages, {slices * args.count} needed")

    def crlf(m: bytes) -> bytes:
        return m if b"\r\n" in m else m.replace(b"\n", b"\r\n")

    samples = [[crlf(f.read_bytes()) for f in files[i * args.count:(i + 1) * args.count]]
               for i in range(slices)]
    specs = []  # (name, binary, store, env)
    for config in args.configs:
        name, rest = config.split("=", 1)
        binary, store, *variables = rest.split(",")
        env = dict(os.environ)
        for variable in variables:
            key, value = variable.split("=", 1)
            env[key] = value
        specs.append((name, str(Path(binary).resolve()), Path(store), env))
    # Beside the stores: the copies hard-link their Maildirs.
    work = Path(tempfile.mkdtemp(prefix="peregrine-append-ab-", dir=specs[0][2].parent))
    builds: list[Build] = []
    rates: dict[str, list[float]] = {}
    cpu: dict[str, list[tuple[float, float]]] = {}  # (server, client) seconds an APPEND
    try:
        for i, (name, binary, store, env) in enumerate(specs):
            builds.append(Build.of_kept_store(name, binary, store, work / name,
                                              free_port_in(args.port_base + 10 * i), env=env))
            rates[name] = []
            cpu[name] = []
        subprocess.run(["sync"], check=True)
        time.sleep(2)
        for b in builds:
            # No session stays: each round's LOGIN opens the store afresh.
            b.start().command("LOGOUT")
        for r in range(args.rounds):
            sample = samples[r % slices]
            k = r % len(builds)
            for b in builds[k:] + builds[:k]:
                c = Client(b.port)
                c.command('LOGIN bench "bench"')
                c.command(f"CREATE AB{r}")
                server_before, client_before = process_cpu(b.proc.pid), time.process_time()
                rates[b.name].append(len(sample) / c.append_many(f"AB{r}", sample))
                cpu[b.name].append(((process_cpu(b.proc.pid) - server_before) / len(sample),
                                    (time.process_time() - client_before) / len(sample)))
                c.command("LOGOUT")
        base = rates[builds[-1].name]
        print(f"# {args.rounds} rounds of {args.count} "
              f"{'new ' if args.fresh else ''}APPENDs, load average "
              + " ".join(f"{x:.1f}" for x in os.getloadavg()))
        for b in builds:
            ratios = [x / y for x, y in zip(rates[b.name], base)]
            print(f"{b.name:>12}: median {statistics.median(rates[b.name]):6.1f} msg/s, "
                  f"{100 * statistics.median(ratios):5.1f}% of {builds[-1].name} "
                  f"(rounds: {' '.join(f'{x:.0f}' for x in rates[b.name])}); CPU an APPEND: "
                  f"server {1000 * statistics.median(x for x, _ in cpu[b.name]):.2f} ms, "
                  f"client {1000 * statistics.median(y for _, y in cpu[b.name]):.2f} ms")
    finally:
        stop_all(builds)
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
