"""A private Dovecot 2.3 on loopback for cross-checks (see
/work/shared/DOVECOT-REFERENCE.md for the facts behind its configuration).

Own base_dir, state_dir, log and instance name under a work directory;
ssl = no; one passwd-file user with a PLAIN password; maildir storage.
Shared by tests/mime/dovecot_crosscheck.py and tests/search/dovecot_diff.py.
Python standard library only.
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
        self.base_dir = workdir / "base"
        self.log_path = workdir / "dovecot.log"

    def write_config(self) -> Path:
        user, uid, gid = mail_user()
        mail = self.dir / "mail"
        mail.mkdir()
        os.chown(mail, uid, gid)
        passwd = self.dir / "passwd"
        passwd.write_text(f"{self.user}:{{PLAIN}}{self.password}::::::\n")
        (self.dir / "state").mkdir()
        non_root = ""
        if os.geteuid() != 0:
            non_root = f"""
default_internal_user = {user}
default_internal_group = {grp.getgrgid(gid).gr_name}
default_login_user = {user}
service imap-login {{
  chroot =
}}
service anvil {{
  chroot =
}}
"""
        conf = self.dir / "dovecot.conf"
        conf.write_text(
            f"""# Written by tests/common/dovecot_server.py for one run.
instance_name = peregrine-{self.name}-{os.getpid()}
base_dir = {self.base_dir}
state_dir = {self.dir / "state"}
log_path = {self.log_path}
info_log_path = {self.log_path}
listen = 127.0.0.1
protocols = imap
ssl = no
disable_plaintext_auth = no
auth_mechanisms = plain login
first_valid_uid = {min(uid, 1) if uid else 0}
mail_location = maildir:{mail}/%u
mail_save_crlf = yes
passdb {{
  driver = passwd-file
  args = scheme=PLAIN username_format=%u {passwd}
}}
userdb {{
  driver = passwd-file
  args = username_format=%u {passwd}
  default_fields = uid={uid} gid={gid} home={mail}/%u
}}
service imap-login {{
  inet_listener imap {{
    port = {self.port}
  }}
  inet_listener imaps {{
    port = 0
  }}
}}
{non_root}{self.extra_config}
"""
        )
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

