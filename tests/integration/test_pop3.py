"""POP3 over TCP with poplib and raw sockets: RETR byte-identical to IMAP
BODY[], exact dot-stuffing, UIDL stability (across sessions and restarts),
a 25 MB message, DELE+QUIT seen by an IMAP IDLE, [IN-USE], STLS and
implicit TLS, pipelining, and hostile input."""

import hashlib
import os
import poplib
import re
import socket
import sys
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
from harness import ServerTestCase, append_ok, sample_message  # noqa: E402

USERS = dict(harness.USERS)
USERS.update({f"p{i}": f"pw-{i}" for i in range(12)})

EDGE = (b"Subject: dots\r\n"
        b"\r\n"
        b".\r\n"
        b"..x\r\n"
        b". space\r\n"
        b"middle . dot\r\n"
        b".\r\n"
        b"last line without CRLF")
EDGE_WIRE = (b"Subject: dots\r\n"
             b"\r\n"
             b"..\r\n"
             b"...x\r\n"
             b".. space\r\n"
             b"middle . dot\r\n"
             b"..\r\n"
             b"last line without CRLF\r\n"
             b".\r\n")

MULTIPART = (
    b"From: Carol <carol@example.org>\r\n"
    b"Subject: parts\r\n"
    b"MIME-Version: 1.0\r\n"
    b'Content-Type: multipart/mixed; boundary="XX"\r\n'
    b"\r\n"
    b"--XX\r\n"
    b"Content-Type: text/plain\r\n"
    b"\r\n"
    b".starts with a dot\r\n"
    b"--XX\r\n"
    b"Content-Type: application/octet-stream\r\n"
    b"Content-Transfer-Encoding: base64\r\n"
    b"\r\n"
    b"AAECAwQF\r\n"
    b"--XX--\r\n")


def read_multiline(raw):
    """The lines of a multi-line response after its +OK line, up to and
    including the terminating '.CRLF', as the bytes on the wire."""
    out = b""
    for _ in range(10_000_000):
        line = raw.readline()
        if not line:
            raise EOFError("connection closed in a multi-line response")
        out += line
        if line == b".\r\n":
            return out
    raise AssertionError("too many lines")


def unstuff(wire):
    """The message a multi-line response carries (terminator removed)."""
    assert wire.endswith(b".\r\n"), wire[-20:]
    body = wire[:-3]
    lines = body.split(b"\r\n")
    return b"\r\n".join(l[1:] if l.startswith(b".") else l for l in lines)


def raw_command(raw, text):
    raw.send(text + "\r\n")
    return raw.readline()


def raw_login(raw, user, password):
    assert raw_command(raw, f"USER {user}").startswith(b"+OK")
    reply = raw_command(raw, f"PASS {password}")
    assert reply.startswith(b"+OK"), reply
    return reply


def imap_body(server, user, seq):
    imap = server.login(user, select="INBOX")
    try:
        typ, data = imap.fetch(str(seq), "(BODY.PEEK[])")
        assert typ == "OK", data
        return data[0][1]
    finally:
        imap.logout()


class Pop3Test(ServerTestCase):
    server_kwargs = {"pop3": True, "users": USERS}

    def deliver(self, user, *messages):
        imap = self.server.login(user)
        try:
            for m in messages:
                append_ok(imap, "INBOX", m)
        finally:
            imap.logout()

    def test_retr_is_byte_identical_to_imap_body(self):
        messages = [sample_message(subject=f"m{i}", body=f"line {i}\r\n.dot\r\n") for i in range(3)]
        messages += [MULTIPART, EDGE]
        self.deliver("p0", *messages)
        raw = self.server.pop3_raw()
        try:
            self.assertTrue(raw.greeting.startswith(b"+OK"))
            raw_login(raw, "p0", USERS["p0"])
            self.assertEqual(raw_command(raw, "STAT"),
                             f"+OK 5 {sum(len(m) for m in messages)}\r\n".encode())
            for n in range(1, 6):
                stored = imap_body(self.server, "p0", n)
                reply = raw_command(raw, f"RETR {n}")
                self.assertEqual(reply, f"+OK {len(stored)} octets\r\n".encode())
                got = unstuff(read_multiline(raw))
                # A last line without CRLF gets one before the terminator.
                expected = stored if stored.endswith(b"\r\n") else stored + b"\r\n"
                self.assertEqual(got, expected)
                self.assertEqual(got[:len(stored)], stored)
                self.assertEqual(raw_command(raw, f"LIST {n}"), f"+OK {n} {len(stored)}\r\n".encode())
        finally:
            raw.close()
        # poplib agrees too.
        pop = self.server.pop3_login("p0")
        try:
            _resp, lines, _octets = pop.retr(1)
            self.assertEqual(b"\r\n".join(lines) + b"\r\n", messages[0])
        finally:
            pop.quit()

    def test_dot_stuffing_on_the_wire(self):
        self.deliver("p1", EDGE)
        raw = self.server.pop3_raw()
        try:
            raw_login(raw, "p1", USERS["p1"])
            self.assertEqual(raw_command(raw, "RETR 1"), f"+OK {len(EDGE)} octets\r\n".encode())
            self.assertEqual(read_multiline(raw), EDGE_WIRE)
            self.assertEqual(raw_command(raw, "TOP 1 2"), b"+OK Top of message follows\r\n")
            self.assertEqual(read_multiline(raw), b"Subject: dots\r\n\r\n..\r\n...x\r\n.\r\n")
            self.assertEqual(raw_command(raw, "TOP 1 0"), b"+OK Top of message follows\r\n")
            self.assertEqual(read_multiline(raw), b"Subject: dots\r\n\r\n.\r\n")
        finally:
            raw.close()

    def test_uidl_is_stable_across_sessions_and_restart(self):
        self.deliver("p2", *[sample_message(subject=f"u{i}") for i in range(4)])
        pop = self.server.pop3_login("p2")
        first = pop.uidl()[1]
        self.assertEqual(len(first), 4)
        ids = [line.split()[1] for line in first]
        self.assertEqual(len(set(ids)), 4)
        for uid in ids:
            self.assertRegex(uid, rb"^[\x21-\x7e]{1,70}$")
        pop.dele(2)
        pop.quit()
        pop = self.server.pop3_login("p2")
        second = [line.split()[1] for line in pop.uidl()[1]]
        self.assertEqual(second, [ids[0], ids[2], ids[3]])
        self.assertEqual(pop.uidl(3).split()[2], ids[3])
        pop.quit()
        self.server.restart()
        pop = self.server.pop3_login("p2")
        try:
            self.assertEqual([line.split()[1] for line in pop.uidl()[1]], second)
        finally:
            pop.quit()

    def test_large_message(self):
        # 25 MB, with lines that need stuffing, and no final CRLF.
        block = b"".join(b".%07d abcdefghijklmnopqrstuvwxyz0123456789 padding padding padding\r\n" % i
                         for i in range(1000))
        body = b"Subject: big\r\n\r\n" + block * (25 * 1024 * 1024 // len(block) + 1)
        body += b".last"
        proc = self.server.deliver("p3", body)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        raw = self.server.pop3_raw()
        try:
            raw_login(raw, "p3", USERS["p3"])
            self.assertEqual(raw_command(raw, "LIST 1"), f"+OK 1 {len(body)}\r\n".encode())
            raw.send("RETR 1\r\n")
            self.assertEqual(raw.readline(), f"+OK {len(body)} octets\r\n".encode())
            digest = hashlib.sha256()
            received = 0
            for _ in range(10_000_000):
                line = raw.readline()
                self.assertTrue(line, "connection closed mid-message")
                received += len(line)
                if line == b".\r\n":
                    break
                digest.update(line[1:] if line.startswith(b".") else line)
            expected = hashlib.sha256(body + b"\r\n").hexdigest()
            self.assertEqual(digest.hexdigest(), expected)
            # Every line of the body started with "." and was stuffed once.
            self.assertEqual(received, len(body) + 2 + body.count(b"\r\n.") + 3)
            self.assertEqual(raw_command(raw, "QUIT")[:3], b"+OK")
        finally:
            raw.close()

    def test_dele_quit_is_seen_by_imap_idle(self):
        self.deliver("p4", sample_message(subject="keep"), sample_message(subject="gone"))
        idle = self.server.raw()
        try:
            idle.login("p4", USERS["p4"])
            tagged, _ = idle.command("SELECT INBOX")
            self.assertIn(b"OK", tagged)
            idle.send(b"I1 IDLE\r\n")
            self.assertTrue(idle.readline().startswith(b"+"))
            pop = self.server.pop3_login("p4")
            self.assertTrue(pop.dele(2).startswith(b"+OK"))
            self.assertTrue(pop.quit().startswith(b"+OK"))
            seen = []
            for _ in range(20):
                line = idle.readline(timeout=harness.IO_TIMEOUT)
                seen.append(line)
                if re.match(rb"^\* 2 EXPUNGE\r\n$", line):
                    break
            self.assertIn(b"* 2 EXPUNGE\r\n", seen)
            idle.send(b"DONE\r\n")
            self.assertIn(b"OK", idle.read_response("I1")[-1])
            tagged, lines = idle.command("FETCH 1:* (BODY.PEEK[HEADER.FIELDS (SUBJECT)])")
            self.assertIn(b"keep", b"".join(lines))
            self.assertNotIn(b"gone", b"".join(lines))
        finally:
            idle.close()

    def test_quit_removes_the_files_after_its_reply(self):
        # QUIT answers once the expunge has committed; the files go after
        # it. A login right after sees none of the messages again (the scan
        # adopts no file whose removal is pending), and once the server has
        # stopped, cur/ holds only the kept message's file.
        count = 24  # more than one removal thread's share
        self.deliver("p11", *[sample_message(subject=f"q{i}") for i in range(count)],
                     sample_message(subject="kept"))
        pop = self.server.pop3_login("p11")
        for n in range(1, count + 1):
            self.assertTrue(pop.dele(n).startswith(b"+OK"))
        self.assertTrue(pop.quit().startswith(b"+OK"))
        pop = self.server.pop3_login("p11")
        try:
            self.assertEqual(pop.stat()[0], 1)
            self.assertIn(b"kept", b"\r\n".join(pop.retr(1)[1]))
        finally:
            pop.quit()
        self.server.restart()
        cur = os.path.join(self.server.maildir("p11"), "cur")
        self.assertEqual(len(os.listdir(cur)), 1, os.listdir(cur))
        pop = self.server.pop3_login("p11")
        try:
            self.assertEqual(pop.stat()[0], 1)
        finally:
            pop.quit()

    def test_second_session_gets_in_use(self):
        first = self.server.pop3_login("p5")
        try:
            second = self.server.pop3_connect()
            try:
                second.user("p5")
                with self.assertRaises(poplib.error_proto) as caught:
                    second.pass_(USERS["p5"])
                self.assertTrue(caught.exception.args[0].startswith(b"-ERR [IN-USE]"),
                                caught.exception.args)
            finally:
                second.quit()
        finally:
            first.quit()
        again = self.server.pop3_login("p5")
        again.quit()

    def test_dropped_connection_keeps_messages(self):
        self.deliver("p6", sample_message(subject="stays"))
        pop = self.server.pop3_login("p6")
        pop.dele(1)
        pop.close()  # no QUIT: no UPDATE state
        pop = None
        for _ in range(100):
            # The lock goes once the server noticed the close.
            attempt = self.server.pop3_connect()
            try:
                attempt.user("p6")
                attempt.pass_(USERS["p6"])
                pop = attempt
                break
            except poplib.error_proto as e:
                self.assertIn(b"[IN-USE]", e.args[0])
                attempt.close()
                time.sleep(0.05)
        self.assertIsNotNone(pop, "the maildrop stayed locked")
        try:
            self.assertEqual(pop.stat()[0], 1)
        finally:
            pop.quit()

    def test_pipelined_commands(self):
        self.deliver("p7", sample_message(subject="one"), EDGE)
        raw = self.server.pop3_raw()
        try:
            self.assertIn(b"PIPELINING", raw_command(raw, "CAPA") + read_multiline(raw))
            raw.send(f"USER p7\r\nPASS {USERS['p7']}\r\nSTAT\r\nRETR 2\r\nLIST\r\nDELE 1\r\n"
                     "UIDL 2\r\nNOOP\r\nRSET\r\nQUIT\r\n".encode())
            self.assertTrue(raw.readline().startswith(b"+OK"))
            self.assertTrue(raw.readline().startswith(b"+OK Logged in"))
            self.assertTrue(raw.readline().startswith(b"+OK 2 "))
            self.assertTrue(raw.readline().startswith(b"+OK"))
            self.assertEqual(read_multiline(raw), EDGE_WIRE)
            self.assertTrue(raw.readline().startswith(b"+OK 2 messages"))
            self.assertEqual(len(read_multiline(raw).split(b"\r\n")), 4)
            self.assertEqual(raw.readline(), b"+OK Message 1 deleted\r\n")
            self.assertTrue(raw.readline().startswith(b"+OK 2 "))
            self.assertTrue(raw.readline().startswith(b"+OK"))
            self.assertTrue(raw.readline().startswith(b"+OK Maildrop has 2 messages"))
            self.assertTrue(raw.readline().startswith(b"+OK"))
            self.assertEqual(raw.readline(), b"")  # closed after QUIT
        finally:
            raw.close()

    def test_bad_input(self):
        raw = self.server.pop3_raw()
        try:
            for line in ["", "garbage", "\x00\x01\x02", "STAT", "RETR 1", "LIST", "DELE 1",
                         "TOP 1 1", "UIDL", "NOOP", "RSET", "PASS x", "USER", "RETR -1",
                         "LIST 99999999999999999999"]:
                reply = raw_command(raw, line)
                self.assertTrue(reply.startswith(b"-ERR "), (line, reply))
                self.assertLess(len(reply), 200)
            # An over-long line: one -ERR, then the session goes on.
            raw.send(b"USER " + b"x" * 200_000 + b"\r\n")
            self.assertTrue(raw.readline().startswith(b"-ERR"))
            self.assertTrue(raw_command(raw, "USER " + "y" * 300).startswith(b"-ERR"))
            raw.send(bytes(b for b in range(256) if b not in b"\r\n") * 4 + b"\r\n")
            self.assertTrue(raw.readline().startswith(b"-ERR"))
            raw_login(raw, "p8", USERS["p8"])
            for line in ["USER p8", "PASS x", "STLS", "AUTH PLAIN", "RETR 1", "RETR 0", "DELE 5",
                         "TOP 1", "LIST 1 2", "STAT x", "FOO"]:
                reply = raw_command(raw, line)
                self.assertTrue(reply.startswith(b"-ERR "), (line, reply))
            self.assertEqual(raw_command(raw, "STAT"), b"+OK 0 0\r\n")
        finally:
            raw.close()
        self.assertTrue(self.server.alive())

    def test_auth_plain_and_wrong_password(self):
        raw = self.server.pop3_raw()
        try:
            token = harness.b64(harness.plain_auth_bytes("p9", USERS["p9"]))
            self.assertTrue(raw_command(raw, "AUTH PLAIN " + token).startswith(b"+OK Logged in"))
        finally:
            raw.close()
        raw = self.server.pop3_raw()
        try:
            self.assertEqual(raw_command(raw, "AUTH PLAIN"), b"+ \r\n")
            reply = raw_command(raw, harness.b64(harness.plain_auth_bytes("p10", "wrong")))
            self.assertTrue(reply.startswith(b"-ERR [AUTH]"), reply)
            raw_command(raw, "USER p10")
            self.assertTrue(raw_command(raw, "PASS wrong").startswith(b"-ERR [AUTH]"))
        finally:
            raw.close()


class Pop3TlsTest(ServerTestCase):
    server_kwargs = {"pop3": True, "tls": True, "plaintext": "tls-only"}

    def test_stls(self):
        pop = self.server.pop3_connect()
        try:
            caps = pop.capa()
            self.assertIn("STLS", caps)
            self.assertNotIn("USER", caps)
            with self.assertRaises(poplib.error_proto):
                pop.user("alice")
            pop.stls(context=harness.client_tls_context())
            caps = pop.capa()
            self.assertNotIn("STLS", caps)
            self.assertIn("USER", caps)
            pop.user("alice")
            pop.pass_(self.server.users["alice"])
            self.assertEqual(pop.stat(), (0, 0))
        finally:
            pop.quit()

    def test_stls_drops_plaintext_sent_after_it(self):
        raw = self.server.pop3_raw()
        try:
            # "STAT" arrives in plaintext right behind STLS (CVE-2011-0411):
            # it must be dropped, not answered inside TLS.
            raw.send(b"STLS\r\nSTAT\r\n")
            self.assertTrue(raw.readline().startswith(b"+OK Begin TLS"))
            self.assertEqual(raw.buf, b"")
            raw.sock = harness.client_tls_context().wrap_socket(raw.sock,
                                                                server_hostname="localhost")
            # The first answer inside TLS is CAPA's, not "-ERR" for the STAT.
            raw.send(b"CAPA\r\n")
            self.assertEqual(raw.readline(), b"+OK Capability list follows\r\n")
            caps = read_multiline(raw)
            self.assertIn(b"USER\r\n", caps)
            self.assertNotIn(b"STLS\r\n", caps)
        finally:
            raw.close()
        self.assertTrue(self.server.alive())

    def test_implicit_tls(self):
        pop = self.server.pop3_connect(tls=True)
        try:
            pop.user("alice")
            pop.pass_(self.server.users["alice"])
            self.assertEqual(pop.stat(), (0, 0))
        finally:
            pop.quit()


if __name__ == "__main__":
    unittest.main()
