"""Integration-test harness: runs the real `peregrine` server in a temp dir.

The binary comes from the PEREGRINE_BIN environment variable (ctest sets it)
or from the `binary` argument. Everything listens on 127.0.0.1 only, every
wait has a timeout and every loop a bound. Standard library only.
"""

import base64
import imaplib
import os
import poplib
import re
import shutil
import signal
import socket
import ssl
import subprocess
import sys
import tempfile
import time
import unittest

HOST = "127.0.0.1"
START_TIMEOUT = 30.0   # seconds until every listener has logged `event=listening`
STOP_TIMEOUT = 30.0    # seconds for a graceful SIGTERM stop
IO_TIMEOUT = 15.0      # socket timeout for every client

USERS = {"alice": "alice-secret", "bob": "bob-secret"}

LISTEN_RE = re.compile(r"event=listening\b.*\bproto=imap\b.*\baddr=(\S+).*\btls=(yes|no)")
POP3_LISTEN_RE = re.compile(r"event=listening\b.*\bproto=pop3\b.*\baddr=(\S+).*\btls=(yes|no)")
SANITIZER_RE = re.compile(r"ERROR: AddressSanitizer|runtime error:|ERROR: LeakSanitizer")


def binary_path(binary=None):
    path = binary or os.environ.get("PEREGRINE_BIN")
    if not path:
        raise unittest.SkipTest("PEREGRINE_BIN is not set")
    if not os.access(path, os.X_OK):
        raise RuntimeError(f"PEREGRINE_BIN={path} is not an executable")
    return os.path.abspath(path)


def free_port():
    """A port that was free a moment ago (the server rejects port 0)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind((HOST, 0))
        return s.getsockname()[1]


def make_self_signed_cert(directory):
    cert = os.path.join(directory, "cert.pem")
    key = os.path.join(directory, "key.pem")
    subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2",
         "-subj", "/CN=localhost", "-keyout", key, "-out", cert],
        check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=60)
    return cert, key


def client_tls_context():
    ctx = ssl.create_default_context()
    ctx.check_hostname = False
    ctx.verify_mode = ssl.CERT_NONE
    return ctx


class Server:
    """One peregrine server process on its own temp dir.

    plaintext: auth.plaintext; tls: also make a cert, set [tls] and an
    implicit-TLS listener; limits: [limits] keys; failure_delay_ms: (base, max);
    pop3: also a POP3 listener (and a POP3S one with tls); huge_pages: [server]
    huge_pages (unset: the default).
    """

    def __init__(self, binary=None, users=None, plaintext="always", tls=False,
                 limits=None, workers=None, keep_dir=False, failure_delay_ms=(0, 0),
                 pop3=False, huge_pages=None):
        self.binary = binary_path(binary)
        self.users = dict(USERS if users is None else users)
        self.plaintext = plaintext
        self.tls = tls
        self.limits = dict(limits or {})
        self.workers = workers
        self.huge_pages = huge_pages
        self.failure_delay_ms = failure_delay_ms
        self.keep_dir = keep_dir
        self.dir = tempfile.mkdtemp(prefix="peregrine-it-")
        self.data_dir = os.path.join(self.dir, "data")
        self.config = os.path.join(self.dir, "peregrine.toml")
        self.passwd = os.path.join(self.dir, "users")
        self.log_path = os.path.join(self.dir, "server.log")
        self.proc = None
        self.port = None
        self.tls_port = None
        self.pop3 = pop3
        self.pop3_port = None
        self.pop3_tls_port = None
        self.cert = self.key = None
        self.starts = 0
        if tls:
            self.cert, self.key = make_self_signed_cert(self.dir)

    # --- configuration -------------------------------------------------------

    def write_config(self):
        limits = {"max_connections_per_ip": 200}
        limits.update(self.limits)
        lines = [
            "[server]",
            f'data_dir = "{self.data_dir}"',
        ]
        if self.workers:
            lines.append(f"workers = {self.workers}")
        if self.huge_pages is not None:
            lines.append(f"huge_pages = {'true' if self.huge_pages else 'false'}")
        lines += ["", "[imap]", f'listen = ["{HOST}:{self.port}"]']
        if self.tls:
            lines.append(f'tls_listen = ["{HOST}:{self.tls_port}"]')
            lines += ["", "[tls]", f'cert = "{self.cert}"', f'key = "{self.key}"']
        if self.pop3:
            lines += ["", "[pop3]", f'listen = ["{HOST}:{self.pop3_port}"]']
            if self.tls:
                lines.append(f'tls_listen = ["{HOST}:{self.pop3_tls_port}"]')
        lines += ["", "[auth]", f'passwd_file = "{self.passwd}"',
                  f'plaintext = "{self.plaintext}"',
                  f"failure_delay_base_ms = {self.failure_delay_ms[0]}",
                  f"failure_delay_max_ms = {self.failure_delay_ms[1]}",
                  "", "[limits]"]
        lines += [f"{k} = {v}" for k, v in limits.items()]
        lines += ["", "[log]", 'level = "info"', ""]
        with open(self.config, "w") as f:
            f.write("\n".join(lines))

    def cli(self, *args, input_bytes=None, check=True, timeout=60):
        """Runs `peregrine <args> --config FILE`-style admin commands."""
        proc = subprocess.run([self.binary, *args], input=input_bytes, capture_output=True,
                              timeout=timeout)
        if check and proc.returncode != 0:
            raise AssertionError(
                f"peregrine {' '.join(args)} exited {proc.returncode}: "
                f"{proc.stderr.decode(errors='replace')}")
        return proc

    def add_users(self):
        for user, password in self.users.items():
            self.cli("user", "add", "--config", self.config, user, "--password", password)

    def deliver(self, user, message, mailbox=None):
        args = ["deliver", "--config", self.config, "-u", user]
        if mailbox:
            args += ["-m", mailbox]
        return self.cli(*args, input_bytes=message, check=False)

    # --- process control -----------------------------------------------------

    def start(self):
        """Starts (or restarts on the same dir); retries on a port clash."""
        last_error = None
        for _attempt in range(5):
            if self.port is None or last_error is not None:
                self.port = free_port()
                self.tls_port = free_port() if self.tls else None
                self.pop3_port = free_port() if self.pop3 else None
                self.pop3_tls_port = free_port() if self.pop3 and self.tls else None
                self.write_config()
            if self.starts == 0 and last_error is None:
                self.add_users()
            try:
                self._spawn_and_wait()
                self.starts += 1
                return self
            except PortClash as e:
                last_error = e
        raise AssertionError(f"could not start the server: {last_error}\n{self.log_tail()}")

    def _spawn_and_wait(self):
        log = open(self.log_path, "ab")
        log.write(f"--- start {self.starts + 1} ---\n".encode())
        log.flush()
        offset = log.tell()
        env = dict(os.environ)
        env.setdefault("ASAN_OPTIONS", "detect_leaks=1:abort_on_error=0")
        self.proc = subprocess.Popen([self.binary, "serve", "--config", self.config],
                                     stdin=subprocess.DEVNULL, stdout=log, stderr=log,
                                     cwd=self.dir, env=env)
        log.close()
        want = 2 if self.tls else 1
        deadline = time.monotonic() + START_TIMEOUT
        while time.monotonic() < deadline:
            with open(self.log_path, "rb") as f:
                f.seek(offset)
                text = f.read().decode(errors="replace")
            found = LISTEN_RE.findall(text)
            pop3_found = POP3_LISTEN_RE.findall(text)
            pop3_want = (2 if self.tls else 1) if self.pop3 else 0
            if len(found) >= want and len(pop3_found) >= pop3_want:
                return
            if self.proc.poll() is not None:
                if re.search(r"address already in use|EADDRINUSE|reason=listen", text, re.I):
                    raise PortClash(text.strip())
                raise AssertionError(
                    f"server exited {self.proc.returncode} during start-up:\n{self.log_tail()}")
            time.sleep(0.05)
        self.proc.kill()
        self.proc.wait(10)
        raise AssertionError(f"no `event=listening` line within {START_TIMEOUT}s:\n"
                             f"{self.log_tail()}")

    def stop(self, check=True):
        """SIGTERM, bounded wait; the exit status must be 0 (when check)."""
        if self.proc is None:
            return None
        proc, self.proc = self.proc, None
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
            try:
                proc.wait(STOP_TIMEOUT)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(10)
                if check:
                    raise AssertionError(f"no exit within {STOP_TIMEOUT}s of SIGTERM:\n"
                                         f"{self.log_tail()}")
        if check:
            if proc.returncode != 0:
                raise AssertionError(f"server exited {proc.returncode} after SIGTERM:\n"
                                     f"{self.log_tail()}")
            self.check_log_clean()
        return proc.returncode

    def kill9(self):
        if self.proc is None:
            return
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait(STOP_TIMEOUT)
        self.proc = None

    def restart(self):
        self.stop()
        return self.start()

    def alive(self):
        return self.proc is not None and self.proc.poll() is None

    def cleanup(self):
        try:
            if self.proc is not None:
                self.kill9()
        finally:
            if not self.keep_dir:
                shutil.rmtree(self.dir, ignore_errors=True)

    # --- logs ----------------------------------------------------------------

    def log_text(self):
        try:
            with open(self.log_path, "rb") as f:
                return f.read().decode(errors="replace")
        except OSError:
            return ""

    def log_tail(self, lines=80):
        text = self.log_text().splitlines()
        return "\n".join(["--- server log (tail) ---", *text[-lines:], "--- end ---"])

    def check_log_clean(self):
        m = SANITIZER_RE.search(self.log_text())
        if m:
            raise AssertionError(f"sanitizer report in the server log:\n{self.log_tail(200)}")

    # --- paths ---------------------------------------------------------------

    def maildir(self, user, mailbox=None):
        base = os.path.join(self.data_dir, user, "Maildir")
        if not mailbox or mailbox.upper() == "INBOX":
            return base
        levels = [p.replace("%", "%25").replace(".", "%2E") for p in mailbox.split("/")]
        return os.path.join(base, "." + ".".join(levels))

    def index_path(self, user):
        return os.path.join(self.data_dir, user, "index.sqlite")

    def search_path(self, user):
        """The file of the user's word index and vocabulary, beside index.sqlite."""
        return os.path.join(self.data_dir, user, "search.sqlite")

    # --- clients -------------------------------------------------------------

    def connect(self, tls=False):
        if tls:
            return imaplib.IMAP4_SSL(HOST, self.tls_port, ssl_context=client_tls_context(),
                                     timeout=IO_TIMEOUT)
        return imaplib.IMAP4(HOST, self.port, timeout=IO_TIMEOUT)

    def login(self, user="alice", select=None, tls=False):
        imap = self.connect(tls=tls)
        typ, _ = imap.login(user, self.users[user])
        assert typ == "OK", typ
        if select:
            typ, data = imap.select(select)
            assert typ == "OK", (typ, data)
        return imap

    def raw(self, tls=False):
        return RawClient(HOST, self.tls_port if tls else self.port, tls=tls)

    def pop3_connect(self, tls=False):
        if tls:
            return poplib.POP3_SSL(HOST, self.pop3_tls_port, context=client_tls_context(),
                                   timeout=IO_TIMEOUT)
        return poplib.POP3(HOST, self.pop3_port, timeout=IO_TIMEOUT)

    def pop3_login(self, user="alice", tls=False):
        pop = self.pop3_connect(tls=tls)
        pop.user(user)
        pop.pass_(self.users[user])
        return pop

    def pop3_raw(self, tls=False):
        """A RawClient on the POP3 port (its greeting is the +OK line)."""
        return RawClient(HOST, self.pop3_tls_port if tls else self.pop3_port, tls=tls)


class PortClash(Exception):
    pass


class RawClient:
    """A line-level IMAP client on a plain socket, for what imaplib won't send."""

    def __init__(self, host, port, tls=False, timeout=IO_TIMEOUT):
        sock = socket.create_connection((host, port), timeout=timeout)
        if tls:
            sock = client_tls_context().wrap_socket(sock, server_hostname="localhost")
        self.sock = sock
        self.buf = b""
        self.counter = 0
        self.greeting = self.readline()

    def close(self):
        try:
            self.sock.close()
        except OSError:
            pass

    def send(self, data):
        if isinstance(data, str):
            data = data.encode()
        self.sock.sendall(data)

    def readline(self, timeout=None):
        """One line with its CRLF; b'' at EOF. Raises socket.timeout."""
        if timeout is not None:
            self.sock.settimeout(timeout)
        try:
            for _ in range(1 << 20):
                i = self.buf.find(b"\r\n")
                if i >= 0:
                    line, self.buf = self.buf[:i + 2], self.buf[i + 2:]
                    return line
                chunk = self.sock.recv(65536)
                if not chunk:
                    line, self.buf = self.buf, b""
                    return line
                self.buf += chunk
            raise AssertionError("line too long")
        finally:
            if timeout is not None:
                self.sock.settimeout(IO_TIMEOUT)

    def read_exact(self, n):
        for _ in range(1 << 20):
            if len(self.buf) >= n:
                break
            chunk = self.sock.recv(65536)
            if not chunk:
                raise EOFError("connection closed")
            self.buf += chunk
        data, self.buf = self.buf[:n], self.buf[n:]
        return data

    def read_response(self, tag, max_lines=100000):
        """Lines up to and including the tagged one; literals are inlined."""
        lines = []
        for _ in range(max_lines):
            line = self.readline()
            if not line:
                raise EOFError(f"connection closed; got so far: {lines!r}")
            m = re.search(rb"\{(\d+)\}\r\n$", line)
            while m:
                line += self.read_exact(int(m.group(1)))
                rest = self.readline()
                line += rest
                m = re.search(rb"\{(\d+)\}\r\n$", rest)
            lines.append(line)
            if line.startswith(tag.encode() + b" "):
                return lines
        raise AssertionError("too many lines")

    def next_tag(self):
        self.counter += 1
        return f"R{self.counter:04d}"

    def command(self, text, tag=None):
        """Sends `<tag> <text>\\r\\n`; returns (tagged line, all lines)."""
        tag = tag or self.next_tag()
        if isinstance(text, str):
            text = text.encode()
        self.send(tag.encode() + b" " + text + b"\r\n")
        lines = self.read_response(tag)
        return lines[-1], lines

    def login(self, user, password):
        tagged, lines = self.command(f'LOGIN "{user}" "{password}"')
        assert tagged.split()[1] == b"OK", lines
        return lines


def status_of(tagged_line):
    """b'A1 OK [X] text' -> 'OK'."""
    parts = tagged_line.split(None, 2)
    return parts[1].decode() if len(parts) > 1 else ""


def sample_message(subject="Hello", body="Just a test.\r\n", sender="alice@example.org",
                   to="bob@example.org", extra_headers="", msgid=None):
    # Fixed width, so two messages with the same subject and body have the
    # same size (tests compare sizes of separately built copies).
    msgid = msgid or f"<{abs(hash((subject, body, time.time_ns()))) % 10**18:018d}@example.org>"
    text = (f"From: Alice <{sender}>\r\n"
            f"To: Bob <{to}>\r\n"
            f"Subject: {subject}\r\n"
            f"Date: Mon, 7 Feb 1994 21:52:25 -0800\r\n"
            f"Message-ID: {msgid}\r\n"
            f"{extra_headers}"
            f"MIME-Version: 1.0\r\n"
            f"Content-Type: text/plain; charset=us-ascii\r\n"
            f"\r\n{body}")
    return text.encode()


def append_ok(imap, mailbox, message, flags=None, date=None):
    typ, data = imap.append(mailbox, flags, date, message)
    assert typ == "OK", (typ, data)
    m = re.search(rb"\[APPENDUID (\d+) (\d+)\]", data[0] or b"")
    return int(m.group(2)) if m else None


def plain_auth_bytes(user, password, authzid=""):
    return f"{authzid}\0{user}\0{password}".encode()


def b64(data):
    return base64.b64encode(data).decode()


def untagged(imap, name):
    """Pops imaplib's stored untagged responses named `name`."""
    _typ, data = imap.response(name)
    return [d for d in (data or []) if d is not None]


class ServerTestCase(unittest.TestCase):
    """One server per test class; the server log is shown when a test fails."""

    server_class = None  # Server when None; a subclass adds protocols (lmtp_harness)
    server_kwargs = {}
    server = None

    @classmethod
    def setUpClass(cls):
        cls.server = (cls.server_class or Server)(**cls.server_kwargs)
        try:
            cls.server.start()
        except BaseException:
            sys.stderr.write(cls.server.log_tail() + "\n")
            cls.server.cleanup()
            raise

    @classmethod
    def tearDownClass(cls):
        server, cls.server = cls.server, None
        if server is None:
            return
        try:
            server.stop()
        finally:
            server.cleanup()

    def run(self, result=None):
        result = result or self.defaultTestResult()
        before = len(result.failures) + len(result.errors)
        out = super().run(result)
        if len(result.failures) + len(result.errors) > before and self.server is not None:
            sys.stderr.write(f"\n{self.id()} failed; {self.server.log_tail(60)}\n")
        return out

    def assertServerAlive(self):
        self.assertTrue(self.server.alive(), "server died:\n" + self.server.log_tail())
        imap = self.server.connect()
        try:
            self.assertEqual(imap.noop()[0], "OK")
        finally:
            imap.logout()

    def fresh_mailbox(self, imap, name=None):
        """Creates a uniquely named mailbox and returns its name."""
        name = name or f"T{time.time_ns() % 10**12}"
        typ, data = imap.create(name)
        self.assertEqual(typ, "OK", data)
        return name


def typ_of(fn, *args):
    """imaplib raises on BAD; this returns 'OK' / 'NO' / 'BAD' instead."""
    try:
        return fn(*args)[0]
    except imaplib.IMAP4.abort:
        raise
    except imaplib.IMAP4.error as e:
        if "BAD" in str(e):
            return "BAD"
        if " NO " in f" {e} ":
            return "NO"
        raise


def flatten(data):
    """imaplib FETCH data (bytes and (head, literal) tuples) -> one bytes."""
    out = b""
    for item in data or []:
        if item is None:
            continue
        if isinstance(item, tuple):
            out += item[0] + item[1]
        else:
            out += item
    return out


def fetch_count(data):
    """How many FETCH responses are in imaplib FETCH/STORE data."""
    n = 0
    for item in data or []:
        head = item[0] if isinstance(item, tuple) else item
        if head and re.match(rb"^\d+ \(", head):
            n += 1
    return n
