#!/usr/bin/env python3
"""SEARCH benchmark: Peregrine beside Dovecot 2.3 on one generated mailbox.

Not part of CI. Loads the same N messages (bench/gen_mail.py output, one
file each) into a Peregrine user (files dropped into its Maildir and adopted
at the first SELECT, which also indexes them) and a Dovecot user (files
dropped into its Maildir, indexed at its first SELECT), then measures, in
alternating rounds, the median latency of:

  SEARCH TEXT <word fragment>, SEARCH FROM <name fragment>,
  SORT (DATE) and THREAD REFERENCES (only where the server offers them),

Each query is timed twice in its round: after the other server's query
before it (for Peregrine, a Dovecot scan of seconds, during which
Peregrine sits idle), and once more at once, repeated on the same
connection (both servers, so that this row compares them alike). On the shared
VM this runs on, the first is 2-4x the second: memory a process has not
touched for some seconds costs more to reach again (page_touch.py), so a
query after another server's long scan does the same work more slowly
(docs/benchmarks.md, "SEARCH after a pause"). Both medians are printed.

plus the full-text index size as a share of the mail size (peregrine index
stats), APPEND throughput with the index on vs off and the latency of one
APPEND into the N-message mailbox vs into an empty one.

APPEND throughput: pipelined LITERAL+ APPENDs into a new mailbox, in
alternating rounds, on two Peregrine instances that differ only in
`[search] fts`, each with the same N messages in its user's INBOX (so the
index is the one difference; the on/off ratio is taken from these), and,
as before, into a second user of the instance without the index who has
no mail at all. Two kinds of message: new mail (bench/gen_mail.py with
--append-seed, a new slice each round: Message-IDs, signatures and
sentences the index has not seen, whose terms join its vocabulary) and,
as before, the first --append-count messages of --mail, every round the
same (their terms are all in the vocabulary already).

Usage:
  bench/search/run.py --bin build/release/src/app/peregrine \
      --mail /tmp/mail100k --count 100000 [--rounds 15] [--port-base 21000]

Python standard library only. Run as root (Dovecot's mail files belong to
the vmail user; see /work/shared/DOVECOT-REFERENCE.md).
"""

from __future__ import annotations

import argparse
import os
import pwd
import re
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "tests" / "common"))
from dovecot_server import dovecot_conf  # noqa: E402  (the one writer of Dovecot's config)

HOST = "127.0.0.1"
PASSWORD = "bench"


class Client:
    """A minimal pipelining IMAP client on a socket."""

    def __init__(self, port: int):
        # Loading 100,000 messages at the first SELECT takes long on a busy machine.
        self.sock = socket.create_connection((HOST, port), timeout=7200)
        self.buf = b""
        self.n = 0
        self.readline()  # greeting

    def readline(self) -> bytes:
        while b"\r\n" not in self.buf:
            chunk = self.sock.recv(1 << 20)
            if not chunk:
                raise ConnectionError("closed")
            self.buf += chunk
        line, _, self.buf = self.buf.partition(b"\r\n")
        return line

    def read_until(self, tag: bytes) -> list[bytes]:
        lines = []
        while True:
            line = self.readline()
            m = re.search(rb"\{(\d+)\}$", line)
            if m:  # a literal: read it whole
                need = int(m.group(1))
                while len(self.buf) < need:
                    self.buf += self.sock.recv(1 << 20)
                line += self.buf[:need]
                self.buf = self.buf[need:]
                line += self.readline()
            lines.append(line)
            if line.startswith(tag + b" "):
                return lines

    def command(self, text: str | bytes) -> list[bytes]:
        self.n += 1
        tag = f"b{self.n}".encode()
        if isinstance(text, str):
            text = text.encode()
        self.sock.sendall(tag + b" " + text + b"\r\n")
        lines = self.read_until(tag)
        if not lines[-1].split()[1:2] == [b"OK"]:
            raise RuntimeError(f"{text[:80]!r}: {lines[-1]!r}")
        return lines

    def timed(self, text: str) -> float:
        t = time.perf_counter()
        self.command(text)
        return (time.perf_counter() - t) * 1000.0

    def append_many(self, mailbox: str, messages: list[bytes]) -> float:
        """Pipelined APPENDs with LITERAL+; returns seconds for all."""
        t = time.perf_counter()
        tags = []
        for m in messages:
            self.n += 1
            tag = f"b{self.n}".encode()
            tags.append(tag)
            self.sock.sendall(tag + f" APPEND {mailbox} {{{len(m)}+}}\r\n".encode() + m + b"\r\n")
        for tag in tags:
            lines = self.read_until(tag)
            if lines[-1].split()[1:2] != [b"OK"]:
                raise RuntimeError(lines[-1])
        return time.perf_counter() - t


def free_port_in(base: int) -> int:
    for port in range(base, base + 100):
        with socket.socket() as s:
            try:
                s.bind((HOST, port))
                return port
            except OSError:
                continue
    raise RuntimeError("no free port")


def wait_port(port: int, proc: subprocess.Popen, what: str) -> None:
    for _ in range(300):
        if proc.poll() is not None and what == "peregrine":
            raise RuntimeError(f"{what} exited")
        try:
            socket.create_connection((HOST, port), timeout=1).close()
            return
        except OSError:
            time.sleep(0.1)
    raise RuntimeError(f"{what} did not listen on {port}")


class Peregrine:
    def __init__(self, binary: str, work: Path, port: int, fts: bool,
                 users: tuple[str, ...] = ("bench",)):
        self.binary, self.work, self.port, self.fts = binary, work, port, fts
        self.config = work / "peregrine.toml"
        work.mkdir(parents=True)
        (work / "users").write_text("")
        self.config.write_text(
            f'[server]\ndata_dir = "{work}/data"\n\n[imap]\nlisten = ["{HOST}:{port}"]\n\n'
            f'[auth]\npasswd_file = "{work}/users"\nplaintext = "always"\n'
            f"failure_delay_base_ms = 0\nfailure_delay_max_ms = 0\n\n"
            f"[limits]\nmax_connections_per_ip = 100\n\n[log]\nlevel = \"warn\"\n\n"
            f"[search]\nfts = {'true' if fts else 'false'}\n")
        for user in users:
            subprocess.run([binary, "user", "add", "--config", str(self.config), user,
                            "--password", PASSWORD], check=True, capture_output=True)
        self.proc = None

    def maildir(self) -> Path:
        return self.work / "data" / "bench" / "Maildir"

    def start(self) -> None:
        self.log = open(self.work / "server.log", "ab")
        self.proc = subprocess.Popen([self.binary, "serve", "--config", str(self.config)],
                                     stdout=self.log, stderr=self.log)
        wait_port(self.port, self.proc, "peregrine")

    def stop(self) -> None:
        if self.proc and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            self.proc.wait(timeout=60)

    def stats(self) -> dict[str, str]:
        out = subprocess.run([self.binary, "index", "stats", "--config", str(self.config),
                              "bench"], check=True, capture_output=True, text=True).stdout
        return dict(line.split(": ", 1) for line in out.splitlines())

    def login(self, user: str = "bench") -> Client:
        c = Client(self.port)
        c.command(f'LOGIN {user} "{PASSWORD}"')
        return c

    def load(self, files: list[Path]) -> tuple[Client, float]:
        """Drops `files` into the user's INBOX and has the first SELECT adopt
        (and, with the index on, index) them. Returns that client, still in
        INBOX, and the SELECT's seconds."""
        self.login().command("LOGOUT")  # the first login makes the store and its Maildir
        drop_files(files, self.maildir(), None)
        c = self.login()
        t = time.perf_counter()
        c.command("SELECT INBOX")
        return c, time.perf_counter() - t


class Dovecot:
    def __init__(self, work: Path, port: int):
        self.work, self.port = work, port
        work.mkdir(parents=True)
        pw = pwd.getpwnam("vmail")
        self.uid, self.gid = pw.pw_uid, pw.pw_gid
        mail = work / "mail"
        mail.mkdir()
        os.chown(mail, self.uid, self.gid)
        (work / "state").mkdir()
        (work / "passwd").write_text(f"bench:{{PLAIN}}{PASSWORD}::::::\n")
        self.conf = work / "dovecot.conf"
        self.conf.write_text(dovecot_conf(
            header="Written by bench/search/run.py.",
            instance=f"peregrine-bench-search-{os.getpid()}", root=work,
            log=work / "dovecot.log", ports={"imap": port}, passwd=work / "passwd",
            scheme="PLAIN", uid=self.uid, gid=self.gid, first_valid_uid=1, mail=mail))
        self.proc = None

    def maildir(self) -> Path:
        return self.work / "mail" / "bench"

    def start(self) -> None:
        self.proc = subprocess.Popen(["dovecot", "-F", "-c", str(self.conf)],
                                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        wait_port(self.port, self.proc, "dovecot")

    def stop(self) -> None:
        if self.proc and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            self.proc.wait(timeout=60)

    def login(self) -> Client:
        c = Client(self.port)
        c.command(f'LOGIN bench "{PASSWORD}"')
        return c


def drop_files(files: list[Path], maildir: Path, owner: tuple[int, int] | None) -> None:
    for sub in ("cur", "new", "tmp"):
        (maildir / sub).mkdir(parents=True, exist_ok=True)
    for i, f in enumerate(files):
        target = maildir / "cur" / f"{1700000000 + i}.M{i}P1.bench:2,"
        shutil.copyfile(f, target)
        os.utime(target, (1700000000 + i, 1700000000 + i))
    if owner:
        for root, dirs, names in os.walk(maildir.parent):
            for n in dirs + names:
                os.chown(os.path.join(root, n), *owner)
            os.chown(root, *owner)


def stop_all(servers) -> None:
    """Stops every server, even when stopping one fails."""
    for s in servers:
        try:
            s.stop()
        except Exception as e:  # keep stopping the others
            print(f"stop: {e}", file=sys.stderr)


def median(values: list[float]) -> float:
    return statistics.median(values) if values else float("nan")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--bin", required=True)
    ap.add_argument("--mail", required=True, help="directory of NNNNNN.eml files")
    ap.add_argument("--count", type=int, default=100000)
    ap.add_argument("--rounds", type=int, default=15)
    ap.add_argument("--append-count", type=int, default=300)
    ap.add_argument("--append-seed", type=int, default=7919,
                    help="bench/gen_mail.py seed of the new mail APPENDed (not --mail's)")
    ap.add_argument("--port-base", type=int, default=21000)
    ap.add_argument("--text", default="migratio", help="SEARCH TEXT fragment")
    ap.add_argument("--from", dest="from_", default="jennif", help="SEARCH FROM fragment")
    args = ap.parse_args()

    files = sorted(Path(args.mail).glob("*.eml"))[: args.count]
    work = Path(tempfile.mkdtemp(prefix="peregrine-bench-search-"))
    work.chmod(0o755)  # Dovecot's auth and mail processes run as other users
    print(f"# {len(files)} messages, work dir {work}", flush=True)
    on = Peregrine(args.bin, work / "on", free_port_in(args.port_base), fts=True)
    off = Peregrine(args.bin, work / "off", free_port_in(args.port_base + 10), fts=False,
                    users=("bench", "empty"))
    dov = Dovecot(work / "dovecot", free_port_in(args.port_base + 20))
    servers = [on, off, dov]
    try:
        # Peregrine creates its store at the first login; then the files go in.
        on.start()
        on.login().command("LOGOUT")
        drop_files(files, on.maildir(), None)
        dov.start()
        drop_files(files, dov.maildir(), (dov.uid, dov.gid))
        off.start()
        c, secs = off.load(files)
        c.command("LOGOUT")
        print(f"# peregrine without the index: first SELECT {secs:.1f} s", flush=True)

        results: dict[str, dict[str, float | str]] = {"peregrine": {}, "dovecot": {}}
        clients = {}
        for name, server in (("peregrine", on), ("dovecot", dov)):
            c = server.login()
            t = time.perf_counter()
            c.command("SELECT INBOX")
            results[name]["first SELECT (load + index) s"] = time.perf_counter() - t
            caps = b" ".join(c.command("CAPABILITY")[:-1]).upper()
            results[name]["caps"] = caps.decode(errors="replace")
            clients[name] = c
            print(f"# {name}: first SELECT {results[name]['first SELECT (load + index) s']:.1f} s",
                  flush=True)

        queries = {
            f"SEARCH TEXT {args.text}": f"SEARCH TEXT {args.text}",
            f"SEARCH FROM {args.from_}": f"SEARCH FROM {args.from_}",
            "SORT (DATE)": "SORT (DATE) UTF-8 ALL",
            "THREAD REFERENCES": "THREAD REFERENCES UTF-8 ALL",
        }
        needs = {"SORT (DATE)": "SORT", "THREAD REFERENCES": "THREAD=REFERENCES"}
        # How many messages each text search finds: the same on both servers,
        # or the comparison means nothing.
        for label in (f"SEARCH TEXT {args.text}", f"SEARCH FROM {args.from_}"):
            for name in ("peregrine", "dovecot"):
                lines = clients[name].command(queries[label])
                hits = sum(len(l.split()) - 2 for l in lines if l.startswith(b"* SEARCH"))
                results[name][label + " hits"] = hits
        samples: dict[tuple[str, str], list[float]] = {}
        load_before = os.getloadavg()
        for _round in range(args.rounds):
            for label, cmd in queries.items():
                for name in ("peregrine", "dovecot"):
                    if label in needs and needs[label] not in str(results[name]["caps"]).split():
                        continue
                    samples.setdefault((name, label), []).append(clients[name].timed(cmd))
                    # The same query again at once: no other server ran in
                    # between (Dovecot's scans take seconds). Both servers,
                    # so that this row compares them in the same condition.
                    samples.setdefault((name, label + ", repeated at once"), []).append(
                        clients[name].timed(cmd))
        load_after = os.getloadavg()
        for name in results:
            results[name]["load average before / after the rounds"] = (
                f"{load_before[0]:.1f} / {load_after[0]:.1f}")
        for (name, label), values in samples.items():
            results[name][label + " ms"] = median(values)
        for name in results:
            for label in needs:
                results[name].setdefault(label + " ms", "not measured (not offered)")

        # Index size.
        clients["peregrine"].command("LOGOUT")
        stats = on.stats()
        results["peregrine"]["index bytes"] = int(stats["index_bytes"])
        results["peregrine"]["mail bytes"] = int(stats["mail_bytes"])
        results["peregrine"]["index share %"] = 100.0 * int(stats["index_bytes"]) / max(
            1, int(stats["mail_bytes"]))
        for part in ("records_bytes", "words_bytes", "terms_bytes"):
            if part in stats:
                results["peregrine"][f"index: {part}"] = int(stats[part])

        # APPEND throughput, index on vs off, alternating rounds: new mail,
        # then the mailbox's own first messages again.
        def crlf(m: bytes) -> bytes:
            return m if b"\r\n" in m else m.replace(b"\n", b"\r\n")

        rounds = 3
        new_dir = work / "append-mail"
        subprocess.run([sys.executable, str(Path(__file__).resolve().parents[1] / "gen_mail.py"),
                        "--count", str(rounds * args.append_count), "--seed",
                        str(args.append_seed), "--out", str(new_dir)],
                       check=True, stdout=subprocess.DEVNULL)
        new_files = sorted(new_dir.glob("*.eml"))
        new_mail = [[crlf(f.read_bytes())
                     for f in new_files[r * args.append_count:(r + 1) * args.append_count]]
                    for r in range(rounds)]
        own = [crlf(f.read_bytes()) for f in files[: args.append_count]]
        for kind, samples in (("new mail", new_mail), ("its own messages", [own] * rounds)):
            rates = {"on": [], "off": [], "off, empty store": []}
            for r in range(rounds):
                for label, server, user in (("on", on, "bench"), ("off", off, "bench"),
                                            ("off, empty store", off, "empty")):
                    c = server.login(user)
                    box = f"App{'New' if kind == 'new mail' else 'Own'}{r}"
                    c.command(f"CREATE {box}")
                    secs = c.append_many(box, samples[r])
                    rates[label].append(len(samples[r]) / secs)
                    c.command("LOGOUT")
            for label, values in rates.items():
                results["peregrine"][f"APPEND msg/s ({kind}), index {label}"] = median(values)
                results["peregrine"][f"APPEND msg/s ({kind}), index {label}, rounds"] = " ".join(
                    f"{v:.1f}" for v in values)
            results["peregrine"][f"APPEND on/off % ({kind})"] = (
                100.0 * median(rates["on"]) / median(rates["off"]))

        # One APPEND into the big mailbox vs an empty one.
        c = on.login()
        c.command("CREATE Empty")
        one = own[0]
        big, empty = [], []
        for _ in range(args.rounds):
            big.append(c.append_many("INBOX", [one]) * 1000)
            empty.append(c.append_many("Empty", [one]) * 1000)
        results["peregrine"][f"one APPEND into {len(files)} ms"] = median(big)
        results["peregrine"]["one APPEND into empty ms"] = median(empty)
        c.command("LOGOUT")
        clients["dovecot"].command("LOGOUT")

        for name, values in results.items():
            print(f"## {name}")
            for k, v in values.items():
                if k == "caps":
                    continue
                print(f"  {k}: {v:.2f}" if isinstance(v, float) else f"  {k}: {v}")
        return 0
    finally:
        stop_all(servers)
        if os.environ.get("KEEP_WORK") != "1":
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
