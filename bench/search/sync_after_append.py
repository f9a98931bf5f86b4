#!/usr/bin/env python3
"""How long a selected session's NOOP takes after another session's APPEND.

Not part of CI. The first sync of a mailbox after an append reads cur/
(docs/formats/maildir-store.md, "Sync"); in a big mailbox that scan is
the NOOP's time. Each build named starts on its own copy of a kept store
(an append_cpu.py --work directory, copied as latency.py copies one); in
each, one session SELECTs INBOX and another APPENDs a message to it; then,
round after round and build after build, the second session APPENDs and
the first times a NOOP. Prints the median, least and most per build.

  bench/search/sync_after_append.py --store /work/data/p100k-on \\
      --mail /work/data/mail100k before=/tmp/peregrine-old after=build/release/src/app/peregrine

Python standard library only.
"""

from __future__ import annotations

import argparse
import imaplib
import shutil
import socket
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from latency import Build  # noqa: E402
from run import free_port_in, stop_all  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--store", required=True, type=Path, help="an append_cpu.py --work directory")
    ap.add_argument("--mail", required=True, type=Path, help="directory of NNNNNN.eml files")
    ap.add_argument("--rounds", type=int, default=12)
    ap.add_argument("--port-base", type=int, default=27960)
    ap.add_argument("builds", nargs="+", help="NAME=BINARY")
    args = ap.parse_args()

    message = sorted(args.mail.glob("*.eml"))[0].read_bytes()
    if b"\r\n" not in message:
        message = message.replace(b"\n", b"\r\n")
    work = Path(tempfile.mkdtemp(prefix="peregrine-sync-after-append-", dir=args.store.parent))
    builds: list[Build] = []
    try:
        sessions = []
        for i, spec in enumerate(args.builds):
            name, binary = spec.split("=", 1)
            b = Build.of_kept_store(name, str(Path(binary).resolve()), args.store, work / name,
                                    free_port_in(args.port_base + 10 * i))
            builds.append(b)
            b.start().command("LOGOUT")
            selected = imaplib.IMAP4("127.0.0.1", b.port)
            selected.login("bench", "bench")
            selected.select("INBOX")
            appender = imaplib.IMAP4("127.0.0.1", b.port)
            appender.login("bench", "bench")
            # imaplib writes a literal and its CRLF apart: without this the
            # second write waits for a delayed ACK.
            appender.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            sessions.append((selected, appender))
        times: dict[str, list[float]] = {b.name: [] for b in builds}
        for _ in range(args.rounds):
            for b, (selected, appender) in zip(builds, sessions):
                appender.append("INBOX", None, None, message)
                t = time.perf_counter()
                selected.noop()
                times[b.name].append(1000 * (time.perf_counter() - t))
        for name, values in times.items():
            print(f"{name:>12}: NOOP after APPEND median {statistics.median(values):7.1f} ms "
                  f"(least {min(values):.1f}, most {max(values):.1f})")
    finally:
        stop_all(builds)
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
