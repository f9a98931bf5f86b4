"""A private Dovecot 2.3 on loopback, and the one place that writes a
Dovecot configuration (see /work/shared/DOVECOT-REFERENCE.md for the facts
behind it).

`dovecot_conf` writes the dovecot.conf of every Dovecot this project starts:
the cross-checks (tests/mime/dovecot_crosscheck.py, tests/search/dovecot_diff.py,
tests/loadgen) through `Dovecot` below, and the benchmarks (bench/compare.py,
bench/pop3_compare.py, bench/search/run.py, bench/lmtp-compare.sh). What
differs between them is a parameter, or the `extra` text a caller appends.

`Dovecot`: own base_dir, state_dir, log and instance name under a work
directory; ssl = no; one passwd-file user with a PLAIN password; maildir
storage. Python standard library only.
"""

from __future__ import annotations

import grp
import os
import pwd
import shutil
import signal
import socket
import subprocess
import time
from pathlib import Path

START_TIMEOUT = 10.0
STOP_TIMEOUT = 5.0


class CheckError(Exception):
    """The check could not run (exit 2)."""


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def find_dovecot() -> str:
    path = shutil.which("dovecot") or (
        "/usr/sbin/dovecot" if os.access("/usr/sbin/dovecot", os.X_OK) else None
    )
    if not path:
        raise CheckError(
            "dovecot is not installed (expected /usr/sbin/dovecot; scripts/deps.sh installs "
            "dovecot-core and dovecot-imapd)"
        )
    return path


def mail_user() -> tuple[str, int, int]:
    """The system user the mail files belong to: vmail as root (created if
    missing), else the user running the check."""
    if os.geteuid() != 0:
        pw = pwd.getpwuid(os.geteuid())
        return pw.pw_name, pw.pw_uid, pw.pw_gid
    try:
        pw = pwd.getpwnam("vmail")
    except KeyError:
        result = subprocess.run(
            ["useradd", "--system", "--user-group", "vmail"],
            capture_output=True,
            text=True,
            timeout=30,
        )
        try:
            pw = pwd.getpwnam("vmail")
        except KeyError:
            raise CheckError(f"cannot create the user vmail: {result.stderr.strip()}") from None
    return pw.pw_name, pw.pw_uid, pw.pw_gid


HOST = "127.0.0.1"


def dovecot_conf(*, header, instance, root, log, ports, passwd, scheme, uid, gid,
                 first_valid_uid, mail, fsync=None, prefork=False, run_as=None, extra=""):
    """A standalone loopback Dovecot 2.3 instance's dovecot.conf: Debian's
    defaults except base_dir/state_dir under `root` (root/run, root/state),
    ssl off and plaintext logins allowed, a passwd-file passdb and userdb
    (`scheme`: the passwords' default scheme; mail files owned by uid/gid),
    Maildir under `mail`/USER, and one listener per protocol in `ports`
    ({"imap": N, "pop3": M, "lmtp": L}; implicit-TLS listeners off).
    fsync: mail_fsync (None: Dovecot's default, optimized). prefork: the
    high-performance login mode. run_as: (user, group) when not run as root:
    Dovecot's internal and login users, and no chroot. `extra` is appended as
    it is."""
    listeners = {"imap": ("imap-login", "imap", "imaps"),
                 "pop3": ("pop3-login", "pop3", "pop3s"), "lmtp": ("lmtp", "lmtp", None)}
    lines = [f"# {header}", f"instance_name = {instance}", f"base_dir = {root}/run",
             f"state_dir = {root}/state", f"log_path = {log}", f"listen = {HOST}",
             "protocols = " + " ".join(ports), "ssl = no", "disable_plaintext_auth = no",
             "auth_mechanisms = plain login", f"first_valid_uid = {first_valid_uid}",
             f"mail_location = maildir:{mail}/%u", "mail_max_userip_connections = 1000"]
    if fsync:
        lines.append(f"mail_fsync = {fsync}")
    if "pop3" in ports:
        # UIDLs from UID and UIDVALIDITY, as Peregrine derives its own.
        lines.append("pop3_uidl_format = %08Xu%08Xv")
    if "lmtp" in ports:
        # RCPT TO:<user@domain> reaches the passwd-file user `user`.
        lines += ["auth_username_format = %Ln",
                  "protocol lmtp {\n  postmaster_address = postmaster@localhost\n}"]
    if run_as:
        user, group = run_as
        lines += [f"default_internal_user = {user}", f"default_internal_group = {group}",
                  f"default_login_user = {user}", "service anvil {\n  chroot =\n}"]
    lines.append(f"""passdb {{
  driver = passwd-file
  args = scheme={scheme} username_format=%u {passwd}
}}
userdb {{
  driver = passwd-file
  args = username_format=%u {passwd}
  default_fields = uid={uid} gid={gid} home={mail}/%u
}}""")
    for proto, port in ports.items():
        name, plain, tls = listeners[proto]
        service = [f"service {name} {{"]
        if run_as and tls:
            service.append("  chroot =")
        if prefork and tls:
            # Dovecot's documented high-performance login mode: login
            # processes are started ahead and each serves many connections,
            # rather than one process forked per connection (the default,
            # which here costs ~0.3 s of wall time per connection on a
            # loaded 2-core machine).
            service += ["  service_count = 0", f"  process_min_avail = {os.cpu_count() or 1}"]
        service += [f"  inet_listener {plain} {{", f"    port = {port}", "  }"]
        if tls:
            service += [f"  inet_listener {tls} {{", "    port = 0", "  }"]
        lines.append("\n".join(service + ["}"]))
    return "\n".join(lines) + "\n" + extra


class Dovecot:
    """A private Dovecot instance; stop() always ends it."""

    def __init__(self, workdir: Path, user: str, password: str, name: str = "crosscheck",
                 extra_config: str = ""):
        """`name` goes into the instance name; `extra_config` is appended to
        the configuration as it is."""
        self.user = user
        self.password = password
        self.name = name
        self.extra_config = extra_config
        self.binary = find_dovecot()
        self.dir = workdir
        self.port = free_port()
        self.proc: subprocess.Popen | None = None
        self.base_dir = workdir / "run"  # dovecot_conf's base_dir
        self.log_path = workdir / "dovecot.log"

    def write_config(self) -> Path:
        user, uid, gid = mail_user()
        mail = self.dir / "mail"
        mail.mkdir()
        os.chown(mail, uid, gid)
        passwd = self.dir / "passwd"
        passwd.write_text(f"{self.user}:{{PLAIN}}{self.password}::::::\n")
        (self.dir / "state").mkdir()
        run_as = None
        if os.geteuid() != 0:
            run_as = (user, grp.getgrgid(gid).gr_name)
        conf = self.dir / "dovecot.conf"
        conf.write_text(dovecot_conf(
            header="Written by tests/common/dovecot_server.py for one run.",
            instance=f"peregrine-{self.name}-{os.getpid()}", root=self.dir, log=self.log_path,
            ports={"imap": self.port}, passwd=passwd, scheme="PLAIN", uid=uid, gid=gid,
            first_valid_uid=min(uid, 1) if uid else 0, mail=mail, run_as=run_as,
            # Messages saved over IMAP keep CRLF line ends in their files,
            # as Peregrine stores them.
            extra="mail_save_crlf = yes\n" + self.extra_config))
        return conf

    def start(self) -> None:
        conf = self.write_config()
        check = subprocess.run(
            [self.binary, "-c", str(conf), "-n"], capture_output=True, text=True, timeout=20
        )
        if check.returncode != 0:
            raise CheckError(f"Dovecot rejects its config: {check.stderr.strip()}")
        out = open(self.dir / "dovecot.out", "wb")
        self.proc = subprocess.Popen(
            [self.binary, "-F", "-c", str(conf)],
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        out.close()
        deadline = time.monotonic() + START_TIMEOUT
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise CheckError(f"Dovecot exited at start:\n{self.logs()}")
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=1).close()
                return
            except OSError:
                time.sleep(0.1)
        raise CheckError(f"Dovecot did not listen on port {self.port} in {START_TIMEOUT} s:\n"
                         f"{self.logs()}")

    def logs(self) -> str:
        text = ""
        for p in (self.dir / "dovecot.out", self.log_path):
            if p.exists():
                text += p.read_text(errors="replace")
        return text[-4000:]

    def stop(self) -> None:
        if self.proc is None or self.proc.poll() is not None:
            return
        pid = self.proc.pid
        try:
            pid = int((self.base_dir / "master.pid").read_text().strip())
        except (OSError, ValueError):
            pass
        for pid_to_signal in {pid, self.proc.pid}:
            try:
                os.kill(pid_to_signal, signal.SIGTERM)
            except ProcessLookupError:
                pass
        try:
            self.proc.wait(timeout=STOP_TIMEOUT)
        except subprocess.TimeoutExpired:
            # The master did not stop: end the process group it leads (we made it).
            try:
                os.killpg(self.proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            self.proc.wait(timeout=STOP_TIMEOUT)

