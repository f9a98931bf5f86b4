"""LMTP on top of harness.Server: an [lmtp] TCP listener (and optionally a
unix socket), smtplib.LMTP clients, and a raw line client for what smtplib
won't send. Standard library only."""

import os
import re
import smtplib
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402

LMTP_LISTEN_RE = re.compile(r"event=listening\b.*\bproto=lmtp\b.*\baddr=(\S+)")


class LmtpServer(harness.Server):
    """harness.Server with LMTP. lmtp: extra [lmtp] keys (e.g. max_message_bytes);
    unix_socket: also listen on <dir>/lmtp.sock."""

    def __init__(self, lmtp=None, unix_socket=False, **kwargs):
        super().__init__(**kwargs)
        self.lmtp_keys = dict(lmtp or {})
        self.unix_socket = os.path.join(self.dir, "lmtp.sock") if unix_socket else None
        self.lmtp_port = None

    def write_config(self):
        super().write_config()
        self.lmtp_port = harness.free_port()
        lines = ["", "[lmtp]", f'listen = ["{harness.HOST}:{self.lmtp_port}"]']
        if self.unix_socket:
            lines.append(f'unix_socket = "{self.unix_socket}"')
        lines += [f"{k} = {v}" for k, v in self.lmtp_keys.items()]
        # [lmtp] goes before [limits]/[log] would also work; TOML allows any order.
        with open(self.config, "a") as f:
            f.write("\n".join(lines) + "\n")

    def _spawn_and_wait(self):
        offset = os.path.getsize(self.log_path) if os.path.exists(self.log_path) else 0
        super()._spawn_and_wait()
        want = 2 if self.unix_socket else 1
        deadline = time.monotonic() + harness.START_TIMEOUT
        while time.monotonic() < deadline:
            with open(self.log_path, "rb") as f:
                f.seek(offset)
                text = f.read().decode(errors="replace")
            if len(LMTP_LISTEN_RE.findall(text)) >= want:
                return
            time.sleep(0.05)
        raise AssertionError("no LMTP `event=listening` line:\n" + self.log_tail())

    def lmtp(self, unix=False):
        if unix:
            client = smtplib.LMTP(self.unix_socket, timeout=harness.IO_TIMEOUT)
        else:
            client = smtplib.LMTP(harness.HOST, self.lmtp_port, timeout=harness.IO_TIMEOUT)
        code, _ = client.ehlo("test.example")  # smtplib.LMTP sends LHLO
        assert code == 250, code
        return client

    def raw_lmtp(self):
        return RawLmtp(harness.HOST, self.lmtp_port)


class RawLmtp(harness.RawClient):
    """Line-level LMTP on harness.RawClient's socket and line reader: send
    bytes, read replies (a reply is its lines). `greeting` is the 220 line."""

    def reply(self):
        """(code, [lines]) of one possibly multi-line reply; (0, []) at EOF."""
        lines = []
        for _ in range(1000):
            line = self.readline()
            if not line:
                return 0, lines
            lines.append(line)
            if len(line) < 4 or line[3:4] != b"-":
                return int(line[:3]), lines
        raise AssertionError("reply too long")

    def code(self):
        return self.reply()[0]

    def command(self, text):
        self.send(text + "\r\n")
        return self.reply()


def data_replies(client, accepted):
    """smtplib reads one reply after DATA; LMTP sends one per accepted
    recipient (RFC 2033 §4.2). Reads the rest: [(code, text), ...]."""
    return [client.getreply() for _ in range(accepted - 1)]
