#!/usr/bin/env python3
"""APPEND rates of several configurations, interleaved round by round.

Not part of CI. On this machine a disk's fsync latency moves by half within
minutes, so two runs one after the other (append_cpu.py, run.py's rounds)
compare the disk's moods as much as the builds. This tool starts every
configuration at once, each on its own copy of a kept store (an
append_cpu.py --work directory: peregrine.toml, users and data/bench/; the
Maildir hard-linked, the index copied), and then, round after round, logs in
to each server in turn (the order rotated each round), CREATEs a mailbox,
APPENDs --count known messages (pipelined, LITERAL+, as run.py does) and
logs out. Each round of one configuration is set against the same round of
the last configuration named: the medians of those ratios are what it
prints, with the rates.

  bench/search/append_ab.py --mail /work/data/mail100k \\
      main=build/release/src/app/peregrine,/work/data/p100k-on \\
      off=build/release/src/app/peregrine,/work/data/p100k-off

A configuration may add environment variables: NAME=BIN,STORE,VAR=VALUE...

Python standard library only.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from run import Client, wait_port  # noqa: E402


def copy_store(src: Path, dst: Path, port: int) -> None:
    if dst.exists():
        shutil.rmtree(dst)
    (dst / "data" / "bench").mkdir(parents=True)
    shutil.copy(src / "users", dst / "users")
    toml = (src / "peregrine.toml").read_text().replace(str(src), str(dst))
    lines = [f'listen = ["127.0.0.1:{port}"]' if line.startswith("listen") else line
             for line in toml.splitlines()]
    (dst / "peregrine.toml").write_text("\n".join(lines) + "\n")
    subprocess.run(["cp", "-al", str(src / "data/bench/Maildir"), str(dst / "data/bench/Maildir")],
                   check=True)
    subprocess.run(["cp", "-a", str(src / "data/bench/index.sqlite"), str(dst / "data/bench/")],
                   check=True)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--mail", required=True, help="directory of NNNNNN.eml files")
    ap.add_argument("--rounds", type=int, default=10)
    ap.add_argument("--count", type=int, default=150, help="messages APPENDed a round")
    ap.add_argument("--work", default="/tmp/peregrine-append-ab")
    ap.add_argument("--port-base", type=int, default=27200)
    ap.add_argument("configs", nargs="+", help="NAME=BIN,STORE[,VAR=VALUE...]")
    args = ap.parse_args()

    files = sorted(Path(args.mail).glob("*.eml"))[: args.count]
    sample = [f.read_bytes() for f in files]
    sample = [m if b"\r\n" in m else m.replace(b"\n", b"\r\n") for m in sample]
    work = Path(args.work)
    servers = []
    for i, config in enumerate(args.configs):
        name, rest = config.split("=", 1)
        binary, store, *variables = rest.split(",")
        env = dict(os.environ)
        for variable in variables:
            key, value = variable.split("=", 1)
            env[key] = value
        port = args.port_base + i
        copy_store(Path(store), work / name, port)
        servers.append({"name": name, "binary": str(Path(binary).resolve()), "env": env,
                        "dir": work / name, "port": port, "rates": []})
    subprocess.run(["sync"], check=True)
    time.sleep(2)
    try:
        for s in servers:
            s["proc"] = subprocess.Popen(
                [s["binary"], "serve", "--config", str(s["dir"] / "peregrine.toml")], env=s["env"],
                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            wait_port(s["port"], s["proc"], "peregrine")
        for r in range(args.rounds):
            k = r % len(servers)
            for s in servers[k:] + servers[:k]:
                c = Client(s["port"])
                c.command("LOGIN bench bench")
                c.command(f"CREATE AB{r}")
                s["rates"].append(len(sample) / c.append_many(f"AB{r}", sample))
                c.command("LOGOUT")
        base = servers[-1]
        print(f"# {args.rounds} rounds of {len(sample)} APPENDs, load average "
              + " ".join(f"{x:.1f}" for x in os.getloadavg()))
        for s in servers:
            ratios = [x / y for x, y in zip(s["rates"], base["rates"])]
            print(f"{s['name']:>12}: median {statistics.median(s['rates']):6.1f} msg/s, "
                  f"{100 * statistics.median(ratios):5.1f}% of {base['name']} "
                  f"(rounds: {' '.join(f'{x:.0f}' for x in s['rates'])})")
    finally:
        for s in servers:
            if "proc" in s:
                s["proc"].kill()
                s["proc"].wait()
    return 0


if __name__ == "__main__":
    sys.exit(main())
