"""The three servers bench/compare.py measures, on the same users and mail.

  * Dovecot 2.3 (Debian's package), its own instance: base_dir, state_dir and
    log under WORK/dovecot, Maildir under WORK/dovecot/mail/USER, fsync
    always, passwd-file passdb/userdb.
  * Peregrine (Release build), data under WORK/peregrine/data.
  * imap-responder, the canned-response ceiling (bench/responder).

Both real servers read the same passwd-file (WORK/users: Dovecot's format,
SHA512-CRYPT from `doveadm pw`), and get the same message files dropped into
new/ of each Maildir folder before they start; each adopts them on first
access, which the warm-up pass (`warm`) triggers, so no row pays for it.

Each server records the ports it serves per protocol (`Server.ports`): IMAP
on its port, POP3 on the next one (Dovecot and Peregrine; the ceiling is
IMAP only). The POP3 rows use their own users (POP3_USERS), whose INBOX is
loaded over IMAP before each run (reload_inbox).
Standard library only.
"""

import concurrent.futures
import grp
import imaplib
import os
import pwd
import shutil
import signal
import socket
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests",
                                "common"))
# The one writer of Dovecot configuration (also used as servers.dovecot_conf
# by pop3_compare.py and tests/compare).
from dovecot_server import dovecot_conf  # noqa: E402

HOST = "127.0.0.1"
PASSWORD = "bench-pw"
# Folders every user has. INBOX and Mix hold the generated messages; Append
# starts empty (and is emptied before every APPEND row); the rest make LIST
# look like a real account.
FOLDERS_WITH_MAIL = ("INBOX", "Mix")
EMPTY_FOLDERS = ("Append", "Archive", "Drafts", "Sent", "Trash", "Junk")
# Users only the POP3 and LMTP rows touch: a download deletes what it reads,
# so their INBOX is loaded again before every POP3 run (reload_inbox), and
# emptied before every LMTP run; no IMAP row sees mail come and go. Their
# folders start empty.
POP3_USERS = tuple(f"pop{i}" for i in range(1, 6))


def user_names(count):
    return [f"bench{i}" for i in range(1, count + 1)]


def wait_port(port, proc=None, timeout=30.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc is not None and proc.poll() is not None:
            raise RuntimeError(f"server exited {proc.returncode} during start-up")
        try:
            with socket.create_connection((HOST, port), timeout=1.0) as s:
                if s.recv(64).startswith(b"* OK"):
                    return
        except OSError:
            pass
        time.sleep(0.1)
    raise RuntimeError(f"nothing answers on {HOST}:{port} after {timeout}s")


def write_passwd(path, users):
    """One SHA512-CRYPT hash per user (its own salt), in passwd-file lines."""
    lines = []
    for user in users:
        hashed = subprocess.run(["doveadm", "pw", "-s", "SHA512-CRYPT", "-p", PASSWORD],
                                check=True, capture_output=True, text=True).stdout.strip()
        lines.append(f"{user}:{hashed}::::::\n")
    with open(path, "w") as f:
        f.writelines(lines)
    os.chmod(path, 0o644)


def fill_maildir(root, messages, dot_prefix=True):
    """Maildir++ at root: INBOX in root, folders in root/.NAME; mail into new/."""
    for folder in FOLDERS_WITH_MAIL + EMPTY_FOLDERS:
        path = root if folder == "INBOX" else os.path.join(root, "." + folder)
        for sub in ("cur", "new", "tmp"):
            os.makedirs(os.path.join(path, sub), exist_ok=True)
        if folder != "INBOX":
            open(os.path.join(path, "maildirfolder"), "w").close()
        if folder in FOLDERS_WITH_MAIL:
            for i, src in enumerate(messages):
                # Unique names in the usual time.unique.host form, in order.
                name = f"{1000000000 + i}.M{i}P1.bench"
                shutil.copyfile(src, os.path.join(path, "new", name))


def chown_tree(path, uid, gid):
    for dirpath, dirnames, filenames in os.walk(path):
        os.chown(dirpath, uid, gid)
        for name in dirnames + filenames:
            os.chown(os.path.join(dirpath, name), uid, gid)


class Server:
    """A started server: name, root pid (for proctree), ports per protocol."""

    name = "?"

    def __init__(self):
        self.ports = {}
        self.proc = None

    @property
    def pid(self):
        return self.proc.pid

    def stop(self):
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(10)
        self.proc = None

    def version(self):
        return ""


class Dovecot(Server):
    name = "dovecot"

    def __init__(self, work, users, messages, port, pop3=False, lmtp=False):
        super().__init__()
        self.dir = os.path.join(work, "dovecot")
        self.conf = os.path.join(self.dir, "dovecot.conf")
        self.log = os.path.join(self.dir, "dovecot.log")
        self.passwd = os.path.join(work, "users")
        # POP3 and LMTP only when rows use them: their listeners (and
        # Dovecot's pre-started pop3-login processes) would otherwise count
        # in the IMAP rows' memory.
        self.ports = {"imap": port}
        if pop3:
            self.ports["pop3"] = port + 1
        if lmtp:
            self.ports["lmtp"] = port + 2
        shutil.rmtree(self.dir, ignore_errors=True)
        os.makedirs(os.path.join(self.dir, "state"))
        mail = os.path.join(self.dir, "mail")
        for user in users:
            fill_maildir(os.path.join(mail, user), messages)
        for user in POP3_USERS:
            fill_maildir(os.path.join(mail, user), [])
        vmail = pwd.getpwnam("vmail")
        chown_tree(mail, vmail.pw_uid, vmail.pw_gid)
        self._write_conf(vmail, mail)

    def _write_conf(self, vmail, mail):
        conf = dovecot_conf(
            header="Written by bench/compare.py.", instance="peregrine-compare", root=self.dir,
            log=self.log, ports=self.ports, passwd=self.passwd, scheme="SHA512-CRYPT",
            uid=vmail.pw_name, gid=grp.getgrgid(vmail.pw_gid).gr_name,
            first_valid_uid=min(vmail.pw_uid, 500), mail=mail, fsync="always", prefork=True)
        with open(self.conf, "w") as f:
            f.write(conf)
        subprocess.run(["doveconf", "-c", self.conf, "-n"], check=True,
                       stdout=subprocess.DEVNULL)

    def start(self):
        # -F: stay in the foreground, so proc.pid is the master and the root
        # of every process Dovecot forks.
        self.proc = subprocess.Popen(["dovecot", "-F", "-c", self.conf],
                                     stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                     stderr=open(self.log + ".stderr", "ab"))
        wait_port(self.ports["imap"], self.proc)
        return self

    def version(self):
        out = subprocess.run(["dovecot", "--version"], capture_output=True, text=True)
        return "Dovecot " + out.stdout.strip()


class Peregrine(Server):
    name = "peregrine"

    def __init__(self, work, users, messages, port, binary, pop3=False, lmtp=False):
        super().__init__()
        self.binary = binary
        # The tree the binary was built from (compare.sh builds just before).
        out = subprocess.run(["git", "describe", "--always", "--dirty"], capture_output=True,
                             text=True, cwd=os.path.dirname(os.path.abspath(__file__)))
        self.commit = out.stdout.strip() or "?"
        self.dir = os.path.join(work, "peregrine")
        self.conf = os.path.join(self.dir, "peregrine.toml")
        self.log = os.path.join(self.dir, "peregrine.log")
        self.ports = {"imap": port}
        # [pop3], [lmtp] only on request (as Dovecot's); a binary without
        # LMTP rejects the section.
        extra = ""
        if pop3:
            self.ports["pop3"] = port + 1
            extra += f'\n[pop3]\nlisten = ["{HOST}:{port + 1}"]\n'
        if lmtp:
            self.ports["lmtp"] = port + 2
            extra += f'\n[lmtp]\nlisten = ["{HOST}:{port + 2}"]\n'
        shutil.rmtree(self.dir, ignore_errors=True)
        data = os.path.join(self.dir, "data")
        for user in users:
            fill_maildir(os.path.join(data, user, "Maildir"), messages)
        for user in POP3_USERS:
            fill_maildir(os.path.join(data, user, "Maildir"), [])
        with open(self.conf, "w") as f:
            f.write(f"""# Written by bench/compare.py.
[server]
data_dir = "{data}"

[imap]
listen = ["{HOST}:{port}"]

{extra}
[auth]
passwd_file = "{os.path.join(work, 'users')}"
plaintext = "always"

[limits]
max_connections_per_ip = 100000
""")

    def start(self):
        self.proc = subprocess.Popen([self.binary, "serve", "--config", self.conf],
                                     stdin=subprocess.DEVNULL, stdout=open(self.log, "ab"),
                                     stderr=subprocess.STDOUT)
        wait_port(self.ports["imap"], self.proc)
        return self

    def version(self):
        return "Peregrine " + self.commit


class Responder(Server):
    name = "ceiling"

    def __init__(self, work, messages_dir, port, binary, count):
        super().__init__()
        self.binary = binary
        self.messages_dir = messages_dir
        self.count = count
        self.log = os.path.join(work, "responder.log")
        self.ports = {"imap": port}

    def start(self):
        self.proc = subprocess.Popen(
            [self.binary, "--port", str(self.ports["imap"]), "--count", str(self.count),
             "--messages", self.messages_dir],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=open(self.log, "ab"))
        wait_port(self.ports["imap"], self.proc)
        return self

    def version(self):
        return "imap-responder (bench/responder)"


def imap_login(server, user):
    imap = imaplib.IMAP4(HOST, server.ports["imap"], timeout=120)
    imap.login(user, PASSWORD)
    return imap


def warm(server, users):
    """Opens every folder once and reads its metadata: the server adopts the
    files dropped into new/ and builds its index and cache before any row."""
    for user in users:
        imap = imap_login(server, user)
        for folder in FOLDERS_WITH_MAIL + EMPTY_FOLDERS:
            typ, data = imap.select(folder)
            if typ != "OK":
                raise RuntimeError(f"{server.name}: SELECT {folder} as {user}: {data}")
            if int(data[0]) > 0:
                imap.fetch("1:*", "(UID FLAGS INTERNALDATE RFC822.SIZE ENVELOPE BODYSTRUCTURE)")
        imap.logout()


def count_messages(server, user, folder):
    imap = imap_login(server, user)
    typ, data = imap.select(folder, readonly=True)
    imap.logout()
    return int(data[0]) if typ == "OK" else -1


def empty_folder(server, users, folder):
    """DELETE and CREATE `folder` for every user (APPEND rows start empty)."""
    for user in users:
        imap = imap_login(server, user)
        imap.delete(folder)
        typ, data = imap.create(folder)
        if typ != "OK":
            raise RuntimeError(f"{server.name}: CREATE {folder} as {user}: {data}")
        imap.logout()


def reload_inbox(port, user, password, files):
    """Empties `user`'s INBOX (STORE \\Deleted, EXPUNGE) and APPENDs `files`
    to it over IMAP, so a POP3 download finds the same mail every run."""
    imap = imaplib.IMAP4(HOST, port, timeout=120)
    try:
        imap.login(user, password)
        typ, data = imap.select("INBOX")
        if typ == "OK" and int(data[0]) > 0:
            imap.store("1:*", "+FLAGS.SILENT", "(\\Deleted)")
            imap.expunge()
        imap.close()
        for path in files:
            with open(path, "rb") as f:
                typ, data = imap.append("INBOX", None, None, f.read())
            if typ != "OK":
                raise RuntimeError(f"APPEND {path} as {user}: {typ} {data}")
    finally:
        imap.logout()


def reload_inboxes(port, accounts, files_per_user):
    """reload_inbox for every (user, password) in `accounts` at once, user i
    getting files_per_user[i]. Returns the seconds it took."""
    start = time.monotonic()
    with concurrent.futures.ThreadPoolExecutor(len(accounts)) as pool:
        futures = [pool.submit(reload_inbox, port, user, password, files)
                   for (user, password), files in zip(accounts, files_per_user)]
        for fut in futures:
            fut.result()
    return time.monotonic() - start
