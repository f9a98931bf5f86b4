"""Hostile and malformed input: BAD/NO with text, the connection survives
where the RFC allows, the server keeps answering, nothing on disk changes."""

import os
import socket
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
from harness import ServerTestCase, append_ok, sample_message, status_of  # noqa: E402


def tree_snapshot(root):
    out = {}
    for d, _dirs, files in os.walk(root):
        for f in files:
            if f.startswith(("index.sqlite", "search.sqlite")):
                continue
            p = os.path.join(d, f)
            out[os.path.relpath(p, root)] = os.path.getsize(p)
    return out


class BadInputTest(ServerTestCase):
    server_kwargs = {"limits": {"max_line_bytes": 8192, "max_literal_bytes": 1048576}}

    def setUp(self):
        self.raw = self.server.raw()
        self.raw.login("alice", harness.USERS["alice"])
        self.raw.command("SELECT INBOX")

    def tearDown(self):
        self.raw.close()
        self.assertServerAlive()

    def reconnect(self):
        self.raw.close()
        self.raw = self.server.raw()
        self.raw.login("alice", harness.USERS["alice"])

    def expect(self, line, want=("BAD",)):
        tagged, lines = self.raw.command(line)
        self.assertIn(status_of(tagged), want, (line, lines))
        self.assertGreater(len(tagged.split(None, 2)), 2, f"no text: {tagged!r}")
        tagged, _ = self.raw.command("NOOP")
        self.assertEqual(status_of(tagged), "OK", f"connection unusable after {line!r}")

    def test_garbage(self):
        for line in ["", "   ", "A", "!!!! ####", "\x01\x02\x03", "NOOP extra args",
                     "FETCH", "SELECT", "LOGIN", "UID", "UID BOGUS 1", "STORE 1 FLAGS",
                     'SELECT "unterminated', "LIST (", "FETCH 1 (FLAGS) trailing",
                     "\xff\xfe utf8 junk"]:
            self.raw.send(b"G1 " + line.encode("latin-1") + b"\r\n")
            lines = self.raw.read_response("G1")
            self.assertIn(status_of(lines[-1]), ("BAD",), (line, lines))
        tagged, _ = self.raw.command("NOOP")
        self.assertEqual(status_of(tagged), "OK")

    def test_untagged_garbage_line(self):
        # An empty line may get "* BAD" or be ignored; the session goes on.
        self.raw.send(b"\r\n")
        tagged, lines = self.raw.command("NOOP")
        self.assertEqual(status_of(tagged), "OK", lines)

    def test_overlong_line(self):
        self.raw.send(b"L1 NOOP " + b"x" * 20000 + b"\r\n")
        lines = []
        for _ in range(5):
            line = self.raw.readline()
            lines.append(line)
            if b"BAD" in line or not line:
                break
        self.assertTrue(any(b"BAD" in l for l in lines), lines)
        if lines[-1]:  # the server may keep the connection: it must still work
            tagged, _ = self.raw.command("NOOP")
            self.assertEqual(status_of(tagged), "OK")

    def test_huge_and_negative_literals(self):
        before = tree_snapshot(self.server.data_dir)
        self.raw.send(b"H1 APPEND INBOX {99999999999}\r\n")
        line = self.raw.readline()
        self.assertRegex(line, rb"^(H1 BAD|\* BYE) ", line)
        if line.startswith(b"H1"):
            tagged, _ = self.raw.command("NOOP")
            self.assertEqual(status_of(tagged), "OK")
        else:
            self.reconnect()
        self.raw.send(b"H2 APPEND INBOX {2000000}\r\n")  # over max_literal_bytes
        line = self.raw.readline()
        self.assertRegex(line, rb"^(H2 (BAD|NO)|\* BYE) ", line)
        self.reconnect()
        # A non-synchronizing literal over the limit: the server answers and
        # closes, or reads and discards it. Either way it must not be stored.
        self.raw.send(b"H3 APPEND INBOX {2000000+}\r\n")
        try:
            line = self.raw.readline(timeout=5)
            self.assertRegex(line, rb"^(H3 (BAD|NO) |\* BYE |$)", line)
        except socket.timeout:
            pass
        self.reconnect()
        for lit in [b"{-1}", b"{-5+}", b"{1x}", b"{}", b"{18446744073709551617}"]:
            self.raw.send(b"N1 APPEND INBOX " + lit + b"\r\n")
            line = self.raw.readline()
            self.assertFalse(line.startswith(b"+"), (lit, line))
            self.assertIn(b"BAD", line, lit)
            self.assertGreater(len(line.split(None, 2)), 2, f"no text: {line!r}")
            if lit.endswith(b"+}"):
                # Unknown length of a non-synchronizing literal: the server may
                # have to close ("* BYE"), or go on.
                self.reconnect()
                continue
            tagged, _ = self.raw.command("NOOP")
            self.assertEqual(status_of(tagged), "OK", lit)
        self.assertEqual(tree_snapshot(self.server.data_dir), before)

    def test_bad_sequence_sets(self):
        imap = self.server.login("alice")
        append_ok(imap, "INBOX", sample_message("seq"))
        imap.logout()
        self.raw.command("SELECT INBOX")
        for seq in ["0", "0:1", "1:0", "a", "1,,2", "1:", ":1", "-1", "1:*:2", "4294967296",
                    "99999999999999999999", "1,", "*:*x"]:
            self.expect(f"FETCH {seq} (FLAGS)", ("BAD",))
            self.expect(f"UID FETCH {seq} (FLAGS)", ("BAD",))

    def test_invalid_mailbox_names(self):
        before = tree_snapshot(self.server.data_dir)
        for name in ['""', '"a/"/b"', '"a//b"', '"/abs"',
                     "&Jjo", '"' + "n" * 400 + '"', '"tab\\there"']:
            tagged, lines = self.raw.command(f"CREATE {name}")
            self.assertIn(status_of(tagged), ("BAD", "NO"), (name, lines))
        tagged, _ = self.raw.command('SELECT "../no-such-zz"')
        self.assertIn(status_of(tagged), ("BAD", "NO"))
        self.raw.send(b'C1 CREATE {5+}\r\na\x00b/c\r\n')
        lines = self.raw.read_response("C1")
        self.assertIn(status_of(lines[-1]), ("BAD", "NO"))
        self.assertEqual(tree_snapshot(self.server.data_dir), before)
        tagged, _ = self.raw.command("NOOP")
        self.assertEqual(status_of(tagged), "OK")

    def test_dot_dot_names_stay_inside_the_maildir(self):
        # "." and ".." levels are refused, and nothing appears outside the Maildir.
        top = sorted(os.listdir(self.server.dir))
        users = sorted(os.listdir(self.server.data_dir))
        for name in ['"../../escape"', '"../x"', '".."', '"a/../../b"']:
            tagged, lines = self.raw.command(f"CREATE {name}")
            self.assertEqual(status_of(tagged), "NO", (name, lines))
        self.assertEqual(sorted(os.listdir(self.server.dir)), top)
        self.assertEqual(sorted(os.listdir(self.server.data_dir)), users)
        self.assertFalse(os.path.exists(os.path.join(self.server.data_dir, "escape")))
        self.assertFalse(os.path.exists(os.path.join(self.server.data_dir, "alice", "x")))

    def test_wrong_state(self):
        self.raw.command("UNSELECT")
        for cmd in ["FETCH 1 FLAGS", "STORE 1 +FLAGS (\\Seen)", "EXPUNGE", "CLOSE", "CHECK",
                    "SEARCH ALL", "COPY 1 INBOX", "UID FETCH 1 FLAGS", "MOVE 1 INBOX",
                    "UNSELECT", 'LOGIN "alice" "x"', "AUTHENTICATE PLAIN", "STARTTLS"]:
            self.expect(cmd, ("BAD", "NO"))
        # Not authenticated; one connection each (a server may end a session
        # after several invalid commands).
        for cmd in ["SELECT INBOX", "FETCH 1 FLAGS", "CREATE x", "APPEND INBOX {1+}\r\nx",
                    "LOGOUTX"]:
            fresh = self.server.raw()
            try:
                tagged, lines = fresh.command(cmd)
                self.assertIn(status_of(tagged), ("BAD", "NO"), (cmd, lines))
            finally:
                fresh.close()

    def test_done_outside_idle_and_idle_garbage(self):
        self.expect("DONE", ("BAD",))
        self.raw.send(b"I1 IDLE\r\n")
        self.assertTrue(self.raw.readline().startswith(b"+"))
        self.raw.send(b"NOT DONE\r\n")
        lines = self.raw.read_response("I1")
        self.assertEqual(status_of(lines[-1]), "BAD", lines)
        tagged, _ = self.raw.command("NOOP")
        self.assertEqual(status_of(tagged), "OK")

    def test_abrupt_disconnects(self):
        for payload in [b"A1 APPEND INBOX {100}\r\n", b"A1 APPEND INBOX {100+}\r\nabc",
                        b"A1 LOGIN {5}\r\n", b"A1 IDLE\r\n", b"A1 FETCH 1:* (BODY[]"]:
            s = socket.create_connection((harness.HOST, self.server.port), timeout=5)
            s.recv(1000)
            s.sendall(b"L LOGIN alice " + harness.USERS["alice"].encode() + b"\r\n")
            s.recv(1000)
            s.sendall(payload)
            s.close()
        self.assertServerAlive()


if __name__ == "__main__":
    unittest.main()
