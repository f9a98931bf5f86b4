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

Each server records the ports it serves per protocol, so rows for POP3 and
LMTP can be added when those load tools land (`Server.ports`).
Standard library only.
"""

import grp
import imaplib
import os
import pwd
import shutil
import signal
import socket
import subprocess
import time

HOST = "127.0.0.1"
PASSWORD = "bench-pw"
# Folders every user has. INBOX and Mix hold the generated messages; Append
# starts empty (and is emptied before every APPEND row); the rest make LIST
# look like a real account.
FOLDERS_WITH_MAIL = ("INBOX", "Mix")
EMPTY_FOLDERS = ("Append", "Archive", "Drafts", "Sent", "Trash", "Junk")


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

    def __init__(self, work, users, messages, port):
        super().__init__()
        self.dir = os.path.join(work, "dovecot")
        self.conf = os.path.join(self.dir, "dovecot.conf")
        self.log = os.path.join(self.dir, "dovecot.log")
        self.passwd = os.path.join(work, "users")
        self.ports = {"imap": port}
        shutil.rmtree(self.dir, ignore_errors=True)
        os.makedirs(os.path.join(self.dir, "state"))
        mail = os.path.join(self.dir, "mail")
        for user in users:
            fill_maildir(os.path.join(mail, user), messages)
        vmail = pwd.getpwnam("vmail")
        chown_tree(mail, vmail.pw_uid, vmail.pw_gid)
        self._write_conf(vmail, mail)

    def _write_conf(self, vmail, mail):
        group = grp.getgrgid(vmail.pw_gid).gr_name
        conf = f"""# Written by bench/compare.py. Debian's defaults except what a
# standalone loopback instance needs, mail_fsync = always and the
# high-performance login mode.
instance_name = peregrine-compare
base_dir = {self.dir}/run
state_dir = {self.dir}/state
log_path = {self.log}
listen = {HOST}
protocols = imap
ssl = no
disable_plaintext_auth = no
auth_mechanisms = plain login
first_valid_uid = {min(vmail.pw_uid, 500)}
mail_location = maildir:{mail}/%u
mail_fsync = always
mail_max_userip_connections = 1000
passdb {{
  driver = passwd-file
  args = scheme=SHA512-CRYPT username_format=%u {self.passwd}
}}
userdb {{
  driver = passwd-file
  args = username_format=%u {self.passwd}
  default_fields = uid={vmail.pw_name} gid={group} home={mail}/%u
}}
# Dovecot's documented high-performance login mode: imap-login processes
# are started ahead and each serves many connections, rather than one
# process forked per connection (the default, which here costs ~0.3 s of
# wall time per connection on a loaded 2-core machine).
service imap-login {{
  service_count = 0
  process_min_avail = {os.cpu_count() or 1}
  inet_listener imap {{
    port = {self.ports["imap"]}
  }}
  inet_listener imaps {{
    port = 0
  }}
}}
"""
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

    def __init__(self, work, users, messages, port, binary):
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
        shutil.rmtree(self.dir, ignore_errors=True)
        data = os.path.join(self.dir, "data")
        for user in users:
            fill_maildir(os.path.join(data, user, "Maildir"), messages)
        with open(self.conf, "w") as f:
            f.write(f"""# Written by bench/compare.py.
[server]
data_dir = "{data}"

[imap]
listen = ["{HOST}:{port}"]

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
