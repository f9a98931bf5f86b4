#!/usr/bin/env python3
"""How much memory a query touches, and what it costs to reach it afresh.

Not part of CI. Starts the server on a store an earlier run kept (as
session.py --reuse does: --work holds peregrine.toml and data/), selects
INBOX, and for each query: runs it three times (so everything it reads is
loaded), clears the accessed bits of every page of the server
(/proc/PID/clear_refs), runs it once more, and reads from
/proc/PID/smaps how many kilobytes of memory that run touched (the
Referenced lines), by mapping. Then it times the query back to back.

On this machine (a PVM guest, whose host shadows the page tables) clearing
the bits also costs the next touch of each page what a page costs after
the process sat idle for seconds, so the run after clear_refs is a
repeatable stand-in for a query after a pause (docs/benchmarks.md,
"SEARCH after a pause"): the fewer pages a query touches, the less a pause
costs it.

  bench/search/touched.py --bin build/release/src/app/peregrine \\
      --work /work/data/sess "SEARCH TEXT migratio" "SEARCH UNSEEN"

Python standard library only.
"""

from __future__ import annotations

import argparse
import re
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from run import free_port_in  # noqa: E402
from session import kept_server  # noqa: E402


def referenced_kb(pid: int) -> dict[str, int]:
    """Kilobytes referenced since the last clear_refs, by mapping name."""
    out: dict[str, int] = {}
    name = "[anon]"
    for line in open(f"/proc/{pid}/smaps"):
        if re.match(r"^[0-9a-f]+-[0-9a-f]+ ", line):
            fields = line.split()
            name = Path(fields[5]).name if len(fields) > 5 else "[anon]"
        elif line.startswith("Referenced:"):
            out[name] = out.get(name, 0) + int(line.split()[1])
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bin", required=True)
    ap.add_argument("--work", required=True, help="a store kept by session.py or run.py")
    ap.add_argument("--port-base", type=int, default=28400)
    ap.add_argument("--repeat", type=int, default=20, help="back-to-back runs timed")
    ap.add_argument("queries", nargs="+")
    args = ap.parse_args()

    server = kept_server(args.bin, Path(args.work), free_port_in(args.port_base))
    server.start()
    try:
        c = server.login()
        c.command("SELECT INBOX")
        pid = server.proc.pid
        for q in args.queries:
            for _ in range(3):
                c.command(q)
            Path(f"/proc/{pid}/clear_refs").write_text("1")
            t = time.perf_counter()
            c.command(q)
            fresh_ms = (time.perf_counter() - t) * 1000
            touched = referenced_kb(pid)
            times = []
            for _ in range(args.repeat):
                t = time.perf_counter()
                c.command(q)
                times.append((time.perf_counter() - t) * 1000)
            top = sorted(touched.items(), key=lambda kv: -kv[1])[:4]
            print(f"{q}: touched {sum(touched.values())} KB "
                  f"({', '.join(f'{k} {v}' for k, v in top)}); "
                  f"{fresh_ms:.1f} ms with its pages reached afresh, "
                  f"{statistics.median(times):.1f} ms back to back (median of {args.repeat})",
                  flush=True)
        c.command("LOGOUT")
    finally:
        server.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
