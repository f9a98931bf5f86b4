#!/usr/bin/env python3
"""POP3 download, one Peregrine build against another (A/B), same data.

The mail is loaded once (IMAP APPEND, with build A) into a data directory,
which is then copied afresh for every run, so every run starts from the same
files and index, written back to disk (sync) before the timed part. Rounds
alternate the order of the builds (A first in odd rounds, B first in even
ones). Each run: start the server on the copy, bench/pop3load with
--clients N over every user (login, STAT, RETR+DELE of every message,
QUIT), stop the server. Per run it prints messages/s, the clients' summed
login and QUIT time, the rest (RETR+DELE round trips) per message, the
server's CPU, and the load average; then the medians per build.

Usage: bench/pop3_ab.py --a BIN --b BIN --pop3load BIN [--users 5]
       [--messages 370] [--clients 1] [--rounds 4] [--mail DIR]
       [--work DIR] [--port-base 26100]
--mail: a directory of *.eml (e.g. bench/pop3_compare.py's generated mail);
without it, bench/gen_mail.py generates the seeds' mix.
Standard library only; needs no root (Peregrine only).
"""

from __future__ import annotations

import argparse
import os
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import compare_servers as servers  # noqa: E402  (reload_inboxes)
import proctree  # noqa: E402  (CPU of a server's process tree)
from pop3_compare import peregrine_config  # noqa: E402


def start(binary: str, root: Path, port: int) -> subprocess.Popen:
    log = open(root / "server.log", "ab")
    proc = subprocess.Popen([binary, "serve", "--config", str(root / "peregrine.toml")],
                            stdout=log, stderr=log, stdin=subprocess.DEVNULL, cwd=root)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"{binary} exited at start")
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return proc
        except OSError:
            time.sleep(0.05)
    raise RuntimeError(f"{binary} did not listen on {port}")


def stop(proc: subprocess.Popen) -> None:
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(60)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(10)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--a", required=True, help="peregrine binary A (loads the mail)")
    p.add_argument("--b", required=True, help="peregrine binary B")
    p.add_argument("--pop3load", required=True)
    p.add_argument("--users", type=int, default=5)
    p.add_argument("--messages", type=int, default=370, help="per user")
    p.add_argument("--clients", type=int, default=1)
    p.add_argument("--rounds", type=int, default=4)
    p.add_argument("--mail", default=None)
    p.add_argument("--work", default=None)
    p.add_argument("--port-base", type=int, default=26100)
    args = p.parse_args(argv)
    imap_port, pop3_port = args.port_base, args.port_base + 1

    work = Path(args.work or tempfile.mkdtemp(prefix="pop3ab-")).resolve()
    work.mkdir(parents=True, exist_ok=True)
    count = args.users * args.messages
    if args.mail:
        mail = sorted(Path(args.mail).glob("*.eml"))[:count]
    else:
        out = work / "mail"
        if not (out / ".done").exists():
            shutil.rmtree(out, ignore_errors=True)
            subprocess.run([sys.executable, str(HERE / "gen_mail.py"), "--count", str(count),
                            "--crlf", "--size-scale", "4.5", "--max-size", "4000000", "--seed",
                            "110", "--out", str(out)], check=True)
            (out / ".done").touch()
        mail = sorted(out.glob("*.eml"))
    if len(mail) < count:
        raise SystemExit(f"need {count} messages, have {len(mail)}")
    users = {f"bench{i:02d}": f"pw{i:02d}" for i in range(args.users)}
    users_file = work / "users.txt"
    users_file.write_text("".join(f"{u} {pw}\n" for u, pw in users.items()))

    # The snapshot every run starts from.
    snapshot = work / "snapshot"
    if not (snapshot / ".done").exists():
        shutil.rmtree(snapshot, ignore_errors=True)
        snapshot.mkdir(parents=True)
        (snapshot / "peregrine.toml").write_text(peregrine_config(imap_port, pop3_port))
        for user, password in users.items():
            subprocess.run([args.a, "user", "add", "--config", str(snapshot / "peregrine.toml"),
                            user, "--password", password, "--scheme", "PLAIN"], check=True,
                           capture_output=True)
        proc = start(args.a, snapshot, imap_port)
        try:
            servers.reload_inboxes(imap_port, list(users.items()),
                                   [mail[i * args.messages:(i + 1) * args.messages]
                                    for i in range(args.users)])
        finally:
            stop(proc)
        (snapshot / ".done").touch()

    builds = {"A": args.a, "B": args.b}
    results: dict[str, list[dict[str, float]]] = {"A": [], "B": []}
    for r in range(args.rounds):
        for name in (["A", "B"] if r % 2 == 0 else ["B", "A"]):
            run_dir = work / "run"
            shutil.rmtree(run_dir, ignore_errors=True)
            shutil.copytree(snapshot, run_dir, symlinks=True)
            os.sync()
            proc = start(builds[name], run_dir, pop3_port)
            try:
                cpu_before = proctree.cpu_seconds(proc.pid)
                out = subprocess.run([args.pop3load, "--port", str(pop3_port), "--clients",
                                      str(args.clients), "--users", str(users_file)],
                                     capture_output=True, text=True, timeout=3600)
                cpu = proctree.cpu_seconds(proc.pid) - cpu_before
            finally:
                stop(proc)
            if out.returncode != 0:
                raise RuntimeError(f"pop3load against {name}: {out.stderr.strip()[-2000:]}")
            got = {k: float(v) for k, v in (kv.split("=", 1) for kv in out.stdout.split()[1:])}
            if got["messages"] != count or got["errors"] != 0:
                raise RuntimeError(f"{name}: {out.stdout.strip()}")
            got["cpu_ms_per_msg"] = cpu * 1000 / got["messages"]
            got["retr_ms_per_msg"] = ((got["seconds"] * args.clients - got["login_s"] -
                                       got["quit_s"]) * 1000 / got["messages"])
            got["load"] = os.getloadavg()[0]
            results[name].append(got)
            print(f"round {r + 1} {name}: {got['msgs_per_s']:.0f} msg/s, "
                  f"per user: login {got['login_s'] * 1000 / args.users:.1f} ms, "
                  f"QUIT {got['quit_s'] * 1000 / args.users:.1f} ms; "
                  f"RETR+DELE {got['retr_ms_per_msg']:.3f} ms/msg; "
                  f"server CPU {got['cpu_ms_per_msg']:.3f} ms/msg; load {got['load']:.1f}",
                  flush=True)
    for name in ("A", "B"):
        runs = results[name]

        def med(key: str) -> float:
            return statistics.median(x[key] for x in runs)

        print(f"median {name} ({builds[name]}): {med('msgs_per_s'):.0f} msg/s, "
              f"login {med('login_s') * 1000 / args.users:.1f} ms/user, "
              f"QUIT {med('quit_s') * 1000 / args.users:.1f} ms/user, "
              f"RETR+DELE {med('retr_ms_per_msg'):.3f} ms/msg, "
              f"CPU {med('cpu_ms_per_msg'):.3f} ms/msg")
    a = statistics.median(x["msgs_per_s"] for x in results["A"])
    b = statistics.median(x["msgs_per_s"] for x in results["B"])
    print(f"B / A: {b / a:.2f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
