#!/usr/bin/env python3
"""Server memory: RSS of an idle server, then with N idle logged-in IMAP
connections. Starts the real server through tests/integration/harness.py on a
loopback port in a temp dir. Standard library only.

    bench/memory.py --bin build/release/src/app/peregrine [--connections 1000]
"""

import argparse
import os
import resource
import socket
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests",
                                "integration"))
import harness  # noqa: E402


def rss_kib(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    raise RuntimeError("no VmRSS")


def settle(pid, seconds=2.0):
    """RSS after it stops moving (bounded)."""
    last = rss_kib(pid)
    for _ in range(int(seconds / 0.25)):
        time.sleep(0.25)
        now = rss_kib(pid)
        if now == last:
            break
        last = now
    return rss_kib(pid)


def open_logged_in(port, user, password, count, timeout=30.0):
    socks = []
    for i in range(count):
        s = socket.create_connection((harness.HOST, port), timeout=timeout)
        f = s.makefile("rb")
        greeting = f.readline()
        if not greeting.startswith(b"* OK"):
            raise RuntimeError(f"connection {i}: greeting {greeting!r}")
        s.sendall(f'a LOGIN "{user}" "{password}"\r\n'.encode())
        for _ in range(20):
            line = f.readline()
            if line.startswith(b"a "):
                break
        if not line.startswith(b"a OK"):
            raise RuntimeError(f"connection {i}: login {line!r}")
        socks.append((s, f))
    return socks


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--bin", default=os.environ.get("PEREGRINE_BIN"))
    ap.add_argument("--connections", type=int, default=1000)
    args = ap.parse_args()
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    want = min(hard, max(soft, args.connections * 2 + 256))
    resource.setrlimit(resource.RLIMIT_NOFILE, (want, hard))
    if want < args.connections + 64:
        sys.exit(f"open-file limit {want} is too low for {args.connections} connections")

    server = harness.Server(binary=args.bin, users={"bench": "bench-pw"},
                            limits={"max_connections_per_ip": args.connections + 100})
    try:
        server.start()
        pid = server.proc.pid
        # One login first, so the user's store exists (not counted as idle).
        warm = open_logged_in(server.port, "bench", "bench-pw", 1)
        for s, _f in warm:
            s.close()
        idle = settle(pid)
        start = time.monotonic()
        socks = open_logged_in(server.port, "bench", "bench-pw", args.connections)
        took = time.monotonic() - start
        loaded = settle(pid)
        print(f"idle server RSS:                {idle / 1024:8.1f} MiB")
        print(f"with {args.connections} idle logged-in connections: "
              f"{loaded / 1024:8.1f} MiB")
        print(f"added:                          {(loaded - idle) / 1024:8.1f} MiB "
              f"({(loaded - idle) / max(1, args.connections):.1f} KiB per connection)")
        print(f"opening + LOGIN of {args.connections} connections took {took:.2f} s")
        for s, _f in socks:
            s.close()
        server.stop()
    finally:
        server.cleanup()


if __name__ == "__main__":
    main()
