#!/usr/bin/env python3
"""Peregrine against Dovecot, in one run, with the ceiling (docs/benchmarks.md).

bench/compare.sh installs what is missing, builds, and calls this. It sets up
the same users and messages for Dovecot and Peregrine, starts both and the
canned-response responder on loopback, warms them, and runs every row of
ROWS against each server with peregrine-bench, alternating the servers'
order, over several rounds. A row's figure is the median of its rounds. Then
it writes the results table and chart (compare_report.py).

    bench/compare.py --bench BIN --peregrine BIN --responder BIN [--seconds 2]
                     [--rounds 3] [--rows login,list...] [--out bench/results]

Rows for other protocols: a row names a driver (DRIVERS); "imap" runs
peregrine-bench, "pop3" bench/pop3load (--pop3load; rows optional: --rows
pop3), "lmtp" bench/lmtpload of the lmtp branch (--lmtpload, which also
gives both servers an LMTP listener; rows optional: --rows lmtp). A driver
takes its port from server.ports[driver]; a server without that port (the
ceiling, for POP3 and LMTP) is skipped for the row. Standard library only (the chart uses matplotlib when
it is installed).
"""

import argparse
import dataclasses
import datetime
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import compare_report  # noqa: E402
import compare_servers as servers  # noqa: E402
import proctree  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
PORT_BASE = 21300  # this benchmark's ports: 21310 Dovecot, 21320 Peregrine, 21330 ceiling


@dataclasses.dataclass
class Row:
    """One line of the table. users: how many users the clients spread over
    (None: one per client); mailbox: what the workload works on; prep: what
    runs before each measured run ("empty": the mailbox is emptied)."""
    name: str
    workload: str
    clients: int
    driver: str = "imap"
    users: int | None = None
    mailbox: str | None = None
    prep: str | None = None
    note: str = ""

    @property
    def key(self):
        return f"{self.name}/{self.clients}"


ROWS = [
    Row("login+logout", "login", 1), Row("login+logout", "login", 10),
    Row('LIST "" *', "list", 1), Row('LIST "" *', "list", 10),
    Row("STATUS", "status", 1, mailbox="INBOX"), Row("STATUS", "status", 10, mailbox="INBOX"),
    Row("FETCH metadata 1:*", "fetch_meta", 1, mailbox="INBOX"),
    Row("FETCH metadata 1:*", "fetch_meta", 5, mailbox="INBOX"),
    Row("FETCH BODY[]", "fetch_body", 1, mailbox="INBOX"),
    Row("FETCH BODY[]", "fetch_body", 5, mailbox="INBOX"),
    Row("STORE flags", "store", 1, mailbox="INBOX"), Row("STORE flags", "store", 5, mailbox="INBOX"),
    Row("APPEND", "append", 1, mailbox="Append", prep="empty"),
    Row("APPEND", "append", 5, mailbox="Append", prep="empty"),
    Row("mix", "mix", 1, mailbox="Mix"), Row("mix", "mix", 5, mailbox="Mix"),
    Row("mix, one mailbox", "mix", 10, users=1, mailbox="Mix",
        note="10 clients in one user's mailbox: the 0-errors target"),
]
# Rows run only when --rows names them: the default list already takes about
# 9 minutes on 2 cores, and these would push it past 10.
OPTIONAL_ROWS = [
    Row("SEARCH TEXT", "search", 1, mailbox="INBOX"),
    Row("SEARCH TEXT", "search", 5, mailbox="INBOX"),
    # POP3: len(POP3_USERS) users, each with the INBOX's messages, loaded
    # again over IMAP before every run (not timed); clients share the users.
    Row("POP3 download", "pop3", 1, driver="pop3", prep="reload",
        note="ops = messages RETR'd and DELE'd, login and QUIT (the expunge) included"),
    Row("POP3 download", "pop3", 5, driver="pop3", prep="reload",
        note="ops = messages RETR'd and DELE'd, login and QUIT (the expunge) included"),
    # LMTP: LMTP_MESSAGES per client, delivered to the POP3 users (emptied
    # first), MAIL/RCPT/DATA pipelined. Needs --lmtpload and a Peregrine
    # with LMTP (the lmtp branch).
    Row("LMTP delivery", "lmtp", 1, driver="lmtp", prep="clear",
        note="ops = messages delivered (250 after DATA)"),
    Row("LMTP delivery", "lmtp", 5, driver="lmtp", prep="clear",
        note="ops = messages delivered (250 after DATA)"),
]
LMTP_MESSAGES = 100  # per client


@dataclasses.dataclass
class Run:
    """One measured run of one row against one server."""
    ops: int = 0
    ops_per_sec: float = 0.0
    errors: int = 0
    violations: int = 0
    cpu_seconds: float = 0.0
    peak_rss: int = 0
    exit_code: int = 0
    samples: list = dataclasses.field(default_factory=list)
    commands: dict = dataclasses.field(default_factory=dict)


class ImapDriver:
    """peregrine-bench, the IMAP load generator (bench/loadgen)."""

    def __init__(self, binary, append_source, no_check_supported):
        self.binary = binary
        self.append_source = append_source
        self.no_check_supported = no_check_supported

    def command(self, server, row, users, seconds, seed, json_path):
        cmd = [self.binary, "--host", servers.HOST, "--port", str(server.ports["imap"]),
               "--user-format", "bench%d", "--users", str(users), "--password", servers.PASSWORD,
               "--clients", str(row.clients), "--seconds", str(seconds), "--seed", str(seed),
               "--workload", row.workload, "--json", json_path, "--quiet"]
        if row.mailbox:
            cmd += ["--mailbox", row.mailbox]
        if row.workload in ("append", "mix"):
            cmd += ["--append-source", self.append_source]
        if server.name == "ceiling" and self.no_check_supported:
            cmd.append("--no-check")
        return cmd


def parse_key_values(proc, expected, verb):
    """The result line of pop3load and lmtpload ("messages=N ... msgs_per_s=R
    ... errors=E") as the JSON fields run_once reads: ops = messages, and an
    error more for a non-zero exit or a count other than `expected`."""
    fields = dict(kv.split("=", 1) for kv in proc.stdout.split() if "=" in kv)
    messages = int(float(fields.get("messages", 0)))
    errors = int(float(fields.get("errors", 0))) + (proc.returncode != 0)
    samples = []
    if messages != expected:
        errors += 1
        samples.append(f"{os.path.basename(proc.args[0])} {verb} {messages} of {expected}")
    return {"ops": messages, "ops_per_sec": float(fields.get("msgs_per_s", 0.0)),
            "errors": errors, "violations": 0, "violation_samples": samples}


class Pop3Driver:
    """bench/pop3load: every POP3 user's INBOX downloaded (USER/PASS, STAT,
    RETR and DELE of each message, QUIT), by row.clients clients. It runs
    until the mail is gone, not for a set time, and prints key=value pairs
    on stdout (no JSON): parse() turns them into the JSON fields run_once
    reads. The seconds, seed and users arguments do not apply."""

    def __init__(self, binary, work, expected):
        self.binary = binary
        self.expected = expected  # messages a complete download moves
        self.users_file = os.path.join(work, "pop3-users.txt")
        with open(self.users_file, "w") as f:
            f.writelines(f"{u} {servers.PASSWORD}\n" for u in servers.POP3_USERS)

    def command(self, server, row, users, seconds, seed, json_path):
        return [self.binary, "--host", servers.HOST, "--port", str(server.ports["pop3"]),
                "--clients", str(row.clients), "--users", self.users_file]

    def parse(self, proc):
        return parse_key_values(proc, self.expected, "downloaded")


class LmtpDriver:
    """bench/lmtpload (lmtp branch): row.clients clients, each one connection,
    deliver LMTP_MESSAGES messages each (the generated mail, in turn) to the
    POP3 users, and it prints key=value pairs like pop3load."""

    def __init__(self, binary, mail_dir):
        self.binary = binary
        self.mail_dir = mail_dir

    def command(self, server, row, users, seconds, seed, json_path):
        return [self.binary, "--host", servers.HOST, "--port", str(server.ports["lmtp"]),
                "--dir", self.mail_dir, "--users", ",".join(servers.POP3_USERS),
                "--clients", str(row.clients), "--messages", str(LMTP_MESSAGES)]

    def parse(self, proc):
        clients = int(proc.args[proc.args.index("--clients") + 1])
        return parse_key_values(proc, LMTP_MESSAGES * clients, "delivered")


DRIVERS = {}  # name -> driver with .command(server, row, users, seconds, seed, json_path)


def run_once(server, row, driver, users, seconds, seed, log):
    with tempfile.NamedTemporaryFile(suffix=".json", delete=False) as f:
        json_path = f.name
    cmd = driver.command(server, row, users, seconds, seed, json_path)
    cpu_before = proctree.cpu_seconds(server.pid)
    with proctree.RssSampler(server.pid) as rss:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=seconds * 10 + 120)
    cpu_after = proctree.cpu_seconds(server.pid)
    run = Run(exit_code=proc.returncode, cpu_seconds=cpu_after - cpu_before, peak_rss=rss.peak)
    try:
        if hasattr(driver, "parse"):
            data = driver.parse(proc)
        else:
            with open(json_path) as f:
                data = json.load(f)
        run.ops = int(data.get("ops", 0))
        run.ops_per_sec = float(data.get("ops_per_sec", 0.0))
        run.errors = int(data.get("errors", 0))
        run.violations = int(data.get("violations", 0))
        run.samples = list(data.get("violation_samples", []))[:5]
        run.commands = data.get("commands", {})
    except (OSError, ValueError) as e:
        run.errors = max(run.errors, 1)
        run.samples = [f"no JSON result ({e}); exit {proc.returncode}: {proc.stderr[-500:]}"]
    finally:
        try:
            os.unlink(json_path)
        except OSError:
            pass
    if proc.returncode == 2:
        run.samples.append(f"usage/connect failure: {proc.stderr.strip()[-500:]}")
    log.write(f"{row.key} {server.name} seed={seed} exit={proc.returncode} ops={run.ops} "
              f"ops/s={run.ops_per_sec:.1f} errors={run.errors} violations={run.violations} "
              f"cpu={run.cpu_seconds:.3f}s rss={run.peak_rss >> 10}KiB\n")
    if proc.stderr.strip():
        log.write("  stderr: " + proc.stderr.strip()[-2000:].replace("\n", "\n  ") + "\n")
    log.flush()
    return run


@dataclasses.dataclass
class RowResult:
    row: Row
    runs: dict  # server name -> [Run]

    def median_ops(self, name):
        rates = [r.ops_per_sec for r in self.runs.get(name, [])]
        return statistics.median(rates) if rates else None

    def cpu_per_1000(self, name):
        """Server CPU seconds per 1,000 operations over all rounds."""
        runs = self.runs.get(name, [])
        ops = sum(r.ops for r in runs)
        return 1000.0 * sum(r.cpu_seconds for r in runs) / ops if ops else None

    def peak_rss(self, name):
        runs = self.runs.get(name, [])
        return max(r.peak_rss for r in runs) if runs else None

    def errors(self, name):
        return sum(r.errors + r.violations for r in self.runs.get(name, []))

    def samples(self, name):
        return [s for r in self.runs.get(name, []) for s in r.samples][:5]


def select_rows(spec):
    if not spec:
        return list(ROWS)
    wanted = [w.strip() for w in spec.split(",") if w.strip()]
    out = [r for r in ROWS + OPTIONAL_ROWS
           if r.workload in wanted or r.key in wanted or r.name in wanted]
    if not out:
        sys.exit(f"compare: no row matches --rows {spec}")
    return out


def prepare(row, server, users, messages):
    if row.prep == "empty":
        servers.empty_folder(server, users, row.mailbox)
    elif row.prep == "reload":
        accounts = [(u, servers.PASSWORD) for u in servers.POP3_USERS]
        servers.reload_inboxes(server.ports["imap"], accounts, [messages] * len(accounts))
    elif row.prep == "clear":
        accounts = [(u, servers.PASSWORD) for u in servers.POP3_USERS]
        servers.reload_inboxes(server.ports["imap"], accounts, [[]] * len(accounts))


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bench", required=True, help="peregrine-bench binary")
    ap.add_argument("--peregrine", required=True, help="peregrine binary (Release)")
    ap.add_argument("--responder", required=True, help="imap-responder binary")
    ap.add_argument("--pop3load", help="pop3load binary (the POP3 rows)")
    ap.add_argument("--lmtpload", help="lmtpload binary (the LMTP rows; the Peregrine "
                    "binary must serve LMTP)")
    ap.add_argument("--work", default=os.path.join(HERE, "..", "build", "compare"))
    ap.add_argument("--out", default=os.path.join(HERE, "results"))
    ap.add_argument("--seconds", type=float, default=2.0, help="per run (default 2)")
    ap.add_argument("--rounds", type=int, default=3, help="rounds (default 3); median")
    ap.add_argument("--users", type=int, default=10, help="users bench1..N (default 10)")
    ap.add_argument("--messages", type=int, default=100, help="per folder (default 100)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--rows", default="", help="workloads or names, comma-separated")
    ap.add_argument("--servers", default="dovecot,peregrine,ceiling")
    ap.add_argument("--profile-seconds", type=float, default=2.0,
                    help="perf profile of Peregrine for each row short of target (0: none)")
    ap.add_argument("--date", default=datetime.date.today().isoformat())
    args = ap.parse_args()

    rows = select_rows(args.rows)
    work = os.path.abspath(args.work)
    os.makedirs(work, exist_ok=True)
    users = servers.user_names(args.users)
    started = time.monotonic()
    load_at_start = os.getloadavg()
    log = open(os.path.join(work, "compare.log"), "w")
    say = lambda text: (print(text, flush=True), log.write(text + "\n"), log.flush())  # noqa: E731

    # Data: the messages every folder with mail starts with, and the mbox
    # APPEND takes its messages from. Deterministic (gen_mail.py --seed).
    mail_dir = os.path.join(work, "mail")
    if not os.path.exists(os.path.join(mail_dir, f"{args.messages:06d}.eml")):
        subprocess.run([sys.executable, os.path.join(HERE, "gen_mail.py"), "--count",
                        str(args.messages), "--seed", str(args.seed), "--out", mail_dir],
                       check=True, stdout=subprocess.DEVNULL)
    messages = sorted(os.path.join(mail_dir, n) for n in os.listdir(mail_dir))[:args.messages]
    append_source = os.path.join(work, "append.mbox")
    subprocess.run([sys.executable, os.path.join(HERE, "gen_mail.py"), "--count", "200",
                    "--seed", str(args.seed + 1), "--format", "mbox", "--out", append_source],
                   check=True, stdout=subprocess.DEVNULL)
    servers.write_passwd(os.path.join(work, "users"), users + list(servers.POP3_USERS))

    wanted = args.servers.split(",")
    pop3 = bool(args.pop3load) and any(row.driver == "pop3" for row in rows)
    lmtp = bool(args.lmtpload) and any(row.driver == "lmtp" for row in rows)
    all_servers = []
    if "dovecot" in wanted:
        all_servers.append(servers.Dovecot(work, users, messages, PORT_BASE + 10,
                                           pop3=pop3, lmtp=lmtp))
    if "peregrine" in wanted:
        all_servers.append(servers.Peregrine(work, users, messages, PORT_BASE + 20,
                                             args.peregrine, pop3=pop3, lmtp=lmtp))
    if "ceiling" in wanted:
        all_servers.append(servers.Responder(work, mail_dir, PORT_BASE + 30, args.responder,
                                             args.messages))
    help_text = subprocess.run([args.bench, "--help"], capture_output=True, text=True)
    no_check = "--no-check" in help_text.stdout + help_text.stderr
    DRIVERS["imap"] = ImapDriver(args.bench, append_source, no_check)
    if args.pop3load:
        DRIVERS["pop3"] = Pop3Driver(args.pop3load, work,
                                     len(servers.POP3_USERS) * len(messages))
    elif any(row.driver == "pop3" for row in rows):
        say("compare: no --pop3load; the POP3 rows are skipped")
    if args.lmtpload:
        DRIVERS["lmtp"] = LmtpDriver(args.lmtpload, mail_dir)
    elif any(row.driver == "lmtp" for row in rows):
        say("compare: no --lmtpload; the LMTP rows are skipped")
    if not no_check:
        say("compare: peregrine-bench has no --no-check; the ceiling's violations are ignored")

    results = {row.key: RowResult(row, {}) for row in rows}
    try:
        for server in all_servers:
            server.start()
            if server.name != "ceiling":
                servers.warm(server, users)
        say(f"compare: servers up and warm after {time.monotonic() - started:.0f}s; "
            f"{len(rows)} rows x {len(all_servers)} servers x {args.rounds} rounds "
            f"x {args.seconds:g}s")
        for rnd in range(args.rounds):
            for i, row in enumerate(rows):
                driver = DRIVERS.get(row.driver)
                if driver is None:
                    continue
                # Alternate who goes first, by round and by row.
                shift = (rnd + i) % len(all_servers)
                order = all_servers[shift:] + all_servers[:shift]
                seed = args.seed * 1000 + i * 10 + rnd
                row_users = min(args.users, row.users or row.clients)
                for server in order:
                    if row.driver not in server.ports:
                        continue
                    prepare(row, server, users[:row_users], messages)
                    run = run_once(server, row, driver, row_users, args.seconds, seed, log)
                    results[row.key].runs.setdefault(server.name, []).append(run)
            say(f"compare: round {rnd + 1}/{args.rounds} done at "
                f"{time.monotonic() - started:.0f}s")
        say(compare_report.text_table(results.values()))

        profiles = {}
        peregrine = next((s for s in all_servers if s.name == "peregrine"), None)
        if args.profile_seconds > 0 and peregrine is not None:
            for res in results.values():
                verdict = compare_report.verdict(res)
                if verdict.met:
                    continue
                row = res.row
                prepare(row, peregrine, users[:min(args.users, row.users or row.clients)],
                        messages)
                profiles[row.key] = compare_report.perf_profile(
                    peregrine, DRIVERS[row.driver], row,
                    min(args.users, row.users or row.clients), args.profile_seconds,
                    args.seed, work)
            say(f"compare: {len(profiles)} profiles done at {time.monotonic() - started:.0f}s")
        meta = compare_report.machine(all_servers)
        meta.update(seconds=args.seconds, rounds=args.rounds, users=args.users,
                    messages=args.messages, seed=args.seed, no_check=no_check,
                    elapsed=time.monotonic() - started, load_at_start=load_at_start)
    finally:
        for server in all_servers:
            server.stop()
    paths = compare_report.write(args.out, args.date, results.values(), profiles, meta)
    with open(os.path.join(work, "compare-runs.json"), "w") as f:  # every run, for later study
        json.dump({key: {"row": dataclasses.asdict(res.row),
                         "runs": {name: [dataclasses.asdict(r) for r in runs]
                                  for name, runs in res.runs.items()}}
                   for key, res in results.items()}, f, indent=1)
    say("compare: wrote " + ", ".join(paths))
    failed = any(res.errors("peregrine") for res in results.values())
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
