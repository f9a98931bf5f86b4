#!/usr/bin/env python3
"""SORT and THREAD benchmark: Peregrine beside Dovecot 2.3 on one mailbox.

Not part of CI. Loads the same N messages (bench/gen_mail.py output) into
both servers the way bench/search/run.py does (its server classes), SELECTs
once, then times the first SORT (DATE) of the session (cold: Peregrine reads
its keys from the store), and then, in alternating rounds, the median
latency of SORT (DATE), SORT (SUBJECT), SORT (FROM), SORT (REVERSE ARRIVAL)
and THREAD REFERENCES, and THREAD REFERENCES in a fresh session of a
mailbox no other session has open (Peregrine reads the keys again).

Usage (as root, Dovecot's files belong to vmail):
  bench/search/sort_vs_dovecot.py --bin build/release/src/app/peregrine \
      --mail /work/data/mail100k --count 10000 [--rounds 5] [--port-base 25000]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from run import Dovecot, Peregrine, drop_files, free_port_in, median  # noqa: E402

QUERIES = {
    "SORT (DATE)": "SORT (DATE) UTF-8 ALL",
    "SORT (SUBJECT)": "SORT (SUBJECT) UTF-8 ALL",
    "SORT (FROM)": "SORT (FROM) UTF-8 ALL",
    "SORT (REVERSE ARRIVAL)": "SORT (REVERSE ARRIVAL) UTF-8 ALL",
    "THREAD REFERENCES": "THREAD REFERENCES UTF-8 ALL",
}


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", required=True)
    ap.add_argument("--mail", required=True, help="directory of NNNNNN.eml files")
    ap.add_argument("--count", type=int, default=10000)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--port-base", type=int, default=25000)
    args = ap.parse_args()
    files = sorted(Path(args.mail).glob("*.eml"))[: args.count]
    with tempfile.TemporaryDirectory(prefix="sort-bench-") as tmp:
        work = Path(tmp)
        work.chmod(0o755)  # Dovecot's auth and mail processes run as other users
        per = Peregrine(args.bin, work / "peregrine", free_port_in(args.port_base), fts=True)
        dov = Dovecot(work / "dovecot", free_port_in(args.port_base + 100))
        try:
            per.start()
            per.login().command("LOGOUT")
            drop_files(files, per.maildir(), None)
            dov.start()
            drop_files(files, dov.maildir(), (dov.uid, dov.gid))
            servers = {"peregrine": per, "dovecot": dov}
            clients = {}
            results: dict[str, dict[str, float]] = {n: {} for n in servers}
            for name, server in servers.items():
                c = server.login()
                c.command("SELECT INBOX")
                results[name]["first SORT (DATE) ms"] = c.timed(QUERIES["SORT (DATE)"])
                clients[name] = c
            samples: dict[tuple[str, str], list[float]] = {}
            for _ in range(args.rounds):
                for label, cmd in QUERIES.items():
                    for name in servers:
                        samples.setdefault((name, label), []).append(clients[name].timed(cmd))
            for name, c in clients.items():
                c.command("LOGOUT")
            # Fresh sessions: nothing of the mailbox is open in the server.
            for _ in range(args.rounds):
                for name, server in servers.items():
                    c = server.login()
                    c.command("SELECT INBOX")
                    samples.setdefault((name, "fresh session THREAD REFERENCES"), []).append(
                        c.timed(QUERIES["THREAD REFERENCES"]))
                    c.command("LOGOUT")
                    time.sleep(0.2)
            for (name, label), values in samples.items():
                results[name][label + " ms"] = median(values)
        finally:
            per.stop()
            dov.stop()
    print(f"# {len(files)} messages, {args.rounds} rounds, medians")
    print(f"{'':40} {'peregrine':>10} {'dovecot':>10} {'dov/per':>7}")
    for label in results["peregrine"]:
        p, d = results["peregrine"][label], results["dovecot"][label]
        print(f"{label:40} {p:10.1f} {d:10.1f} {d / p:7.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
