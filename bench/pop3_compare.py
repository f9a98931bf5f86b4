#!/usr/bin/env python3
"""POP3 download, Peregrine against Dovecot 2.3, on the same generated mail.

For each client count (default 1, 5 and 15) and each round, both servers in
alternating order: the mail is loaded into each user's INBOX over IMAP
(APPEND; not timed), then bench/pop3load logs every user in over POP3, RETRs
and DELEs every message and QUITs, and reports messages/s and MB/s. Medians
over the rounds, the ratio Peregrine/Dovecot, and each server's CPU seconds
per 1,000 messages (its whole process tree, bench/proctree.py) are printed
as a Markdown table (and written to --out).

Both servers keep their default durability: Peregrine fsyncs every message
file and index commit; Dovecot runs with mail_fsync = optimized (its
default). Dovecot is a private instance (own base_dir, state, log) on
loopback; Peregrine runs from build/release. Ports 21500-21599.

Usage: bench/pop3_compare.py --peregrine BIN --pop3load BIN [--users 15]
       [--messages 370] [--size-scale 4.5] [--clients 1,5,15] [--rounds 3]
       [--work DIR] [--out FILE] [--peregrine-config TOML] [--port-base 21500]
Standard library only.
"""

from __future__ import annotations

import argparse
import os
import pwd
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
import compare_servers as servers  # noqa: E402  (the shared Dovecot set-up)
import proctree  # noqa: E402  (CPU of a server's process tree)

PEREGRINE_IMAP, PEREGRINE_POP3 = 21510, 21511
DOVECOT_IMAP, DOVECOT_POP3 = 21520, 21521
START_TIMEOUT = 60.0


def wait_port(port: int, proc: subprocess.Popen, what: str) -> None:
    deadline = time.monotonic() + START_TIMEOUT
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"{what} exited at start")
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return
        except OSError:
            time.sleep(0.1)
    raise RuntimeError(f"{what} did not listen on {port}")


def generate_mail(work: Path, count: int, scale: float) -> list[Path]:
    out = work / f"mail-{count}-{scale}"
    done = out / ".done"
    if not done.exists():
        shutil.rmtree(out, ignore_errors=True)
        subprocess.run([sys.executable, str(HERE / "gen_mail.py"), "--count", str(count), "--crlf",
                        "--size-scale", str(scale), "--max-size", "4000000", "--seed", "110",
                        "--out", str(out)], check=True)
        done.touch()
    return sorted(p for p in out.iterdir() if p.suffix == ".eml")


def peregrine_config(imap_port: int, pop3_port: int) -> str:
    """Peregrine's configuration for the POP3 benchmarks (data in ./data,
    users in ./users, plaintext logins, no login delay)."""
    return f"""[server]
data_dir = "data"
[imap]
listen = ["127.0.0.1:{imap_port}"]
[pop3]
listen = ["127.0.0.1:{pop3_port}"]
[auth]
passwd_file = "users"
plaintext = "always"
failure_delay_base_ms = 0
failure_delay_max_ms = 0
[limits]
max_connections_per_ip = 1000
[log]
level = "warn"
"""


class Peregrine:
    name = "peregrine"

    def __init__(self, binary: str, work: Path, users: dict[str, str], extra_config: str = ""):
        self.binary = os.path.abspath(binary)
        self.extra_config = extra_config
        self.dir = work / "peregrine"
        self.users = users
        self.proc = None
        self.imap_port, self.pop3_port = PEREGRINE_IMAP, PEREGRINE_POP3

    def start(self) -> None:
        shutil.rmtree(self.dir, ignore_errors=True)
        self.dir.mkdir(parents=True)
        conf = self.dir / "peregrine.toml"
        conf.write_text(peregrine_config(self.imap_port, self.pop3_port) + self.extra_config)
        for user, password in self.users.items():
            subprocess.run([self.binary, "user", "add", "--config", str(conf), user,
                            "--password", password, "--scheme", "PLAIN"], check=True,
                           capture_output=True)
        log = open(self.dir / "server.log", "wb")
        self.proc = subprocess.Popen([self.binary, "serve", "--config", str(conf)],
                                     stdout=log, stderr=log, stdin=subprocess.DEVNULL,
                                     cwd=self.dir)
        wait_port(self.pop3_port, self.proc, "peregrine")

    def stop(self) -> None:
        if self.proc and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(60)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(10)


class Dovecot:
    name = "dovecot"

    def __init__(self, work: Path, users: dict[str, str]):
        self.dir = work / "dovecot"
        self.users = users
        self.proc = None
        self.imap_port, self.pop3_port = DOVECOT_IMAP, DOVECOT_POP3

    def start(self) -> None:
        shutil.rmtree(self.dir, ignore_errors=True)
        self.dir.mkdir(parents=True)
        pw = pwd.getpwnam("vmail") if os.geteuid() == 0 else pwd.getpwuid(os.geteuid())
        mail = self.dir / "mail"
        mail.mkdir()
        os.chown(mail, pw.pw_uid, pw.pw_gid)
        (self.dir / "state").mkdir()
        passwd = self.dir / "passwd"
        passwd.write_text("".join(f"{u}:{{PLAIN}}{p}::::::\n" for u, p in self.users.items()))
        conf = self.dir / "dovecot.conf"
        conf.write_text(servers.dovecot_conf(
            header="Written by bench/pop3_compare.py.",
            instance=f"peregrine-pop3bench-{os.getpid()}", root=self.dir,
            log=self.dir / "dovecot.log", ports={"imap": self.imap_port, "pop3": self.pop3_port},
            passwd=passwd, scheme="PLAIN", uid=pw.pw_uid, gid=pw.pw_gid,
            first_valid_uid=min(pw.pw_uid, 1) if pw.pw_uid else 0, mail=mail))
        out = open(self.dir / "dovecot.out", "wb")
        self.proc = subprocess.Popen(["dovecot", "-F", "-c", str(conf)], stdout=out,
                                     stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                     start_new_session=True)
        wait_port(self.pop3_port, self.proc, "dovecot")

    def stop(self) -> None:
        if self.proc is None or self.proc.poll() is not None:
            return
        self.proc.send_signal(signal.SIGTERM)
        try:
            self.proc.wait(60)
        except subprocess.TimeoutExpired:
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait(10)


def load(server, users: dict[str, str], mail: list[Path], per_user: int) -> float:
    return servers.reload_inboxes(server.imap_port, list(users.items()),
                                  [mail[i * per_user:(i + 1) * per_user]
                                   for i in range(len(users))])


def run_load(pop3load: str, server, clients: int, users_file: Path) -> dict[str, float]:
    """pop3load's figures, plus cpu_s: CPU seconds the server's process tree
    spent during the run (bench/proctree.py; Dovecot's per-login processes
    count once they have exited and been reaped)."""
    cpu_before = proctree.cpu_seconds(server.proc.pid)
    proc = subprocess.run([pop3load, "--port", str(server.pop3_port), "--clients", str(clients),
                           "--users", str(users_file)], capture_output=True, text=True,
                          timeout=3600)
    if proc.returncode != 0:
        raise RuntimeError(f"pop3load against {server.name}: {proc.stderr.strip()[-2000:]}")
    cpu_after = proctree.cpu_seconds(server.proc.pid)
    fields = dict(kv.split("=", 1) for kv in proc.stdout.split()[1:])
    got = {k: float(v) for k, v in fields.items()}
    got["cpu_s"] = cpu_after - cpu_before
    return got


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--peregrine", required=True)
    p.add_argument("--pop3load", required=True)
    p.add_argument("--users", type=int, default=15)
    p.add_argument("--messages", type=int, default=370, help="per user")
    p.add_argument("--size-scale", type=float, default=4.5)
    p.add_argument("--clients", default="1,5,15")
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--work", default=None)
    p.add_argument("--out", default=None)
    p.add_argument("--peregrine-config", default="",
                   help="TOML appended to Peregrine's config, e.g. '[search]\\nfts = false'")
    p.add_argument("--port-base", type=int, default=21500,
                   help="ports base+10, +11 (Peregrine) and +20, +21 (Dovecot)")
    args = p.parse_args(argv)
    global PEREGRINE_IMAP, PEREGRINE_POP3, DOVECOT_IMAP, DOVECOT_POP3
    PEREGRINE_IMAP, PEREGRINE_POP3 = args.port_base + 10, args.port_base + 11
    DOVECOT_IMAP, DOVECOT_POP3 = args.port_base + 20, args.port_base + 21

    work = Path(args.work or tempfile.mkdtemp(prefix="pop3bench-")).resolve()
    work.mkdir(parents=True, exist_ok=True)
    users = {f"bench{i:02d}": f"pw{i:02d}" for i in range(args.users)}
    users_file = work / "users.txt"
    users_file.write_text("".join(f"{u} {p}\n" for u, p in users.items()))
    mail = generate_mail(work, args.users * args.messages, args.size_scale)
    total_mb = sum(f.stat().st_size for f in mail) / 2**20
    print(f"mail: {len(mail)} messages, {total_mb:.1f} MB, "
          f"{total_mb * 1024 / len(mail):.1f} KB average", flush=True)

    extra = args.peregrine_config.replace("\\n", "\n") + "\n"
    servers = [Peregrine(args.peregrine, work, users, extra), Dovecot(work, users)]
    results: dict[tuple[str, int], list[dict[str, float]]] = {}
    try:
        for s in servers:
            s.start()
        for clients in [int(c) for c in args.clients.split(",")]:
            for r in range(args.rounds):
                order = servers if r % 2 == 0 else list(reversed(servers))
                for s in order:
                    seconds = load(s, users, mail, args.messages)
                    # Written back before the timed run: what the load left
                    # dirty (Dovecot does not fsync what it stores) would
                    # otherwise be flushed during it, at one server's cost.
                    os.sync()
                    got = run_load(args.pop3load, s, clients, users_file)
                    if got["messages"] != len(mail):
                        raise RuntimeError(f"{s.name} moved {got['messages']} of {len(mail)}")
                    results.setdefault((s.name, clients), []).append(got)
                    print(f"clients={clients} round={r + 1} {s.name}: "
                          f"{got['msgs_per_s']:.0f} msg/s {got['mb_per_s']:.1f} MB/s "
                          f"cpu {got['cpu_s'] * 1000 / got['messages']:.2f} s/1k msgs "
                          f"login {got.get('login_s', 0):.1f} s quit {got.get('quit_s', 0):.1f} s "
                          f"(load {seconds:.0f} s, uptime load {os.getloadavg()[0]:.1f})",
                          flush=True)
    finally:
        for s in servers:
            s.stop()

    lines = [f"POP3 download of {len(mail)} messages ({total_mb:.0f} MB, "
             f"{total_mb * 1024 / len(mail):.0f} KB average) for {args.users} users; "
             f"median of {args.rounds} rounds.", "",
             "| clients | Peregrine msg/s | Dovecot msg/s | Peregrine MB/s | Dovecot MB/s | ratio "
             "| Peregrine CPU s/1k msgs | Dovecot CPU s/1k msgs |",
             "| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"]
    for clients in [int(c) for c in args.clients.split(",")]:
        pm = statistics.median(x["msgs_per_s"] for x in results[("peregrine", clients)])
        dm = statistics.median(x["msgs_per_s"] for x in results[("dovecot", clients)])
        pb = statistics.median(x["mb_per_s"] for x in results[("peregrine", clients)])
        db = statistics.median(x["mb_per_s"] for x in results[("dovecot", clients)])
        pc = statistics.median(x["cpu_s"] * 1000 / x["messages"]
                               for x in results[("peregrine", clients)])
        dc = statistics.median(x["cpu_s"] * 1000 / x["messages"]
                               for x in results[("dovecot", clients)])
        lines.append(f"| {clients} | {pm:.0f} | {dm:.0f} | {pb:.1f} | {db:.1f} | {pm / dm:.2f}x "
                     f"| {pc:.2f} | {dc:.2f} |")
    table = "\n".join(lines)
    print(table)
    if args.out:
        Path(args.out).write_text(table + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
