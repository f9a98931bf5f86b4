#!/usr/bin/env python3
"""SORT and THREAD on a large mailbox: median latency of each command.

Generates N messages (threads by References, "Re:"/"Fwd:" subjects, random
dates, a few thousand senders), drops them into alice's Maildir, lets the
server fold them in (one SELECT, which parses each message once and writes
its cache record), then times each command R times on one connection.
Starts the real server through tests/integration/harness.py on a loopback
port in a temp dir. Standard library only.

    bench/sort_thread.py --bin build/release/src/app/peregrine [--messages 100000]
"""

import argparse
import email.utils
import os
import random
import statistics
import sys
import time
from datetime import datetime, timedelta, timezone

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests",
                                "integration"))
import harness  # noqa: E402

COMMANDS = [
    ("SORT (DATE)", "SORT", ("(DATE)", "UTF-8", "ALL")),
    ("SORT (SUBJECT)", "SORT", ("(SUBJECT)", "UTF-8", "ALL")),
    ("SORT (REVERSE ARRIVAL)", "SORT", ("(REVERSE ARRIVAL)", "UTF-8", "ALL")),
    ("SORT (FROM DATE)", "SORT", ("(FROM DATE)", "UTF-8", "ALL")),
    ("THREAD REFERENCES", "THREAD", ("REFERENCES", "UTF-8", "ALL")),
    ("THREAD ORDEREDSUBJECT", "THREAD", ("ORDEREDSUBJECT", "UTF-8", "ALL")),
]


def generate(n, seed=1):
    rng = random.Random(seed)
    start = datetime(2020, 1, 1, tzinfo=timezone.utc)
    ids = []
    for i in range(n):
        topic = rng.randrange(max(1, n // 20))
        refs = []
        subject = f"Topic {topic} about things"
        if ids and rng.random() < 0.6:
            parent = rng.randrange(max(0, len(ids) - 2000), len(ids))
            refs = ids[max(0, parent - 5):parent + 1]
            subject = rng.choice(["Re: ", "RE: ", "Fwd: ", "[list] Re: "]) + subject
        mid = f"<{i}.{seed}@bench.example>"
        ids.append(mid)
        sent = start + timedelta(seconds=rng.randrange(3 * 365 * 86400))
        headers = (f"From: User {rng.randrange(3000)} <u{rng.randrange(3000)}@example.org>\r\n"
                   f"To: list@example.org\r\n"
                   f"Subject: {subject}\r\n"
                   f"Date: {email.utils.format_datetime(sent)}\r\n"
                   f"Message-ID: {mid}\r\n")
        if refs:
            headers += f"References: {' '.join(refs)}\r\n"
        body = "Some text of the message.\r\n" * rng.randrange(1, 20)
        yield (headers + "\r\n" + body).encode()


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--bin", required=True)
    ap.add_argument("--messages", type=int, default=100000)
    ap.add_argument("--rounds", type=int, default=5)
    args = ap.parse_args()

    server = harness.Server(binary=args.bin)
    server.start()
    try:
        imap = server.login()
        imap.logout()
        cur = os.path.join(server.maildir("alice"), "cur")
        t0 = time.monotonic()
        for i, msg in enumerate(generate(args.messages)):
            with open(os.path.join(cur, f"{1600000000 + i}.M{i}P1.bench:2,S"), "wb") as f:
                f.write(msg)
        print(f"wrote {args.messages} messages in {time.monotonic() - t0:.1f} s")
        imap = server.login()
        imap.sock.settimeout(3600)
        t0 = time.monotonic()
        typ, data = imap.select("INBOX", readonly=True)
        print(f"SELECT (folds them in) {time.monotonic() - t0:.1f} s: {typ} {data}")
        print(f"{'command':<24} {'median ms':>10} {'min ms':>8}   (n={args.messages}, "
              f"{args.rounds} rounds)")
        for name, verb, cmd_args in COMMANDS:
            times = []
            for _ in range(args.rounds):
                t = time.monotonic()
                typ, data = imap._simple_command(verb, *cmd_args)
                times.append((time.monotonic() - t) * 1000)
                assert typ == "OK", (name, typ, data)
                imap.response(verb)
            print(f"{name:<24} {statistics.median(times):>10.0f} {min(times):>8.0f}")
        imap.logout()
    finally:
        server.stop(check=False)
        server.cleanup()


if __name__ == "__main__":
    main()
