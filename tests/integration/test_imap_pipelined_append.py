"""Pipelined APPENDs: many LITERAL+ APPENDs sent in one write (the server
frames the later ones while the earlier ones run, and analyses their
messages ahead), then every reply, the stored bytes and SEARCH checked; and
STARTTLS after pipelined input still drops what came in plaintext."""

import base64
import os
import re
import socket
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
from harness import RawClient, ServerTestCase, status_of  # noqa: E402

COUNT = 50


def varied_message(i):
    """Message i: shapes and sizes vary with i; each holds the word
    uniqNNN, the even ones have "evensubj" in their subject."""
    subject = f"pipelined {i}" + (" evensubj" if i % 2 == 0 else "")
    word = f"uniq{i:03d}"
    shape = i % 5
    if shape == 0:
        return (f"From: Alice <alice@example.org>\r\nSubject: {subject}\r\n"
                f"Message-ID: <p{i}@example.org>\r\n\r\nPlain body with {word}.\r\n").encode()
    if shape == 1:  # bare LF line ends: stored as CRLF
        return (f"From: bob@example.org\nSubject: {subject}\n\nLF body {word}\n"
                + "more text\n" * (i * 40)).encode()
    if shape == 2:  # multipart with a base64 part holding the word
        encoded = base64.b64encode(f"attached {word} text".encode()).decode()
        return (f"From: carol@example.org\r\nSubject: {subject}\r\nMIME-Version: 1.0\r\n"
                f"Content-Type: multipart/mixed; boundary=b{i}\r\n\r\n--b{i}\r\n"
                f"Content-Type: text/plain; charset=utf-8\r\n\r\ncaf\u00e9 part\r\n--b{i}\r\n"
                f"Content-Type: text/plain\r\nContent-Transfer-Encoding: base64\r\n\r\n"
                f"{encoded}\r\n--b{i}--\r\n").encode()
    if shape == 3:  # large, quoted-printable
        return (f"From: dave@example.org\r\nSubject: {subject}\r\nMIME-Version: 1.0\r\n"
                f"Content-Type: text/plain; charset=utf-8\r\n"
                f"Content-Transfer-Encoding: quoted-printable\r\n\r\n"
                f"{word} =C3=A9t=C3=A9\r\n" + "filler line of text\r\n" * 4000).encode()
    return (f"From: =?UTF-8?Q?=C3=89ric?= <eric@example.org>\r\n"
            f"Subject: =?UTF-8?Q?{subject.replace(' ', '_')}?=\r\n\r\n{word}\r\n").encode()


def crlf(data):
    return re.sub(rb"(?<!\r)\n", b"\r\n", data)


class PipelinedAppendTest(ServerTestCase):
    server_kwargs = {"plaintext": "always", "tls": True}

    def test_fifty_pipelined_appends(self):
        raw = self.server.raw()
        try:
            raw.login("alice", harness.USERS["alice"])
            tagged, _ = raw.command("CREATE Piped")
            self.assertEqual(status_of(tagged), "OK")
            messages = [varied_message(i) for i in range(COUNT)]
            wire = b"".join(b"P%03d APPEND Piped {%d+}\r\n%s\r\n" % (i, len(m), m)
                            for i, m in enumerate(messages))
            raw.send(wire + b"N NOOP\r\n")
            uidvalidity = None
            for i in range(COUNT):
                lines = raw.read_response(f"P{i:03d}")
                self.assertEqual(len(lines), 1, lines)  # nothing else: not selected
                m = re.match(rb"P%03d OK \[APPENDUID (\d+) (\d+)\]" % i, lines[-1])
                self.assertIsNotNone(m, lines)
                uidvalidity = uidvalidity or m.group(1)
                self.assertEqual(m.group(1), uidvalidity)
                self.assertEqual(int(m.group(2)), i + 1)
            self.assertEqual(status_of(raw.read_response("N")[-1]), "OK")

            tagged, lines = raw.command("SELECT Piped")
            self.assertIn(b"* %d EXISTS\r\n" % COUNT, lines)
            tagged, lines = raw.command("UID FETCH 1:* (BODY.PEEK[])")
            self.assertEqual(status_of(tagged), "OK")
            bodies = {}
            for line in lines[:-1]:
                m = re.match(rb"\* \d+ FETCH \(UID (\d+) BODY\[\] \{(\d+)\}\r\n", line)
                self.assertIsNotNone(m, line[:80])
                start = m.end()
                bodies[int(m.group(1))] = line[start:start + int(m.group(2))]
            self.assertEqual(sorted(bodies), list(range(1, COUNT + 1)))
            for i, message in enumerate(messages):
                self.assertEqual(bodies[i + 1], crlf(message), i)

            def search(criteria):
                tagged, lines = raw.command(f"UID SEARCH {criteria}")
                self.assertEqual(status_of(tagged), "OK", lines)
                found = [l for l in lines if l.startswith(b"* SEARCH")]
                return sorted(int(x) for x in found[0].split()[2:])

            for i in (0, 1, 2, 3, 4, 17, 38, 49):
                self.assertEqual(search(f"TEXT uniq{i:03d}"), [i + 1], i)
            self.assertEqual(search("SUBJECT evensubj"), list(range(1, COUNT + 1, 2)))
            self.assertEqual(search("BODY niq04"), list(range(41, 51)))
            self.assertEqual(search("FROM ric"), list(range(5, COUNT + 1, 5)))
            raw.command("LOGOUT")
        finally:
            raw.close()

    def test_starttls_after_pipelined_appends_drops_the_plaintext(self):
        # Before login an APPEND is refused, but the server still frames past
        # it; STARTTLS stops that, and what came after it in plaintext is
        # never run, over TLS or otherwise.
        sock = socket.create_connection((harness.HOST, self.server.port), timeout=10)
        try:
            reader = sock.makefile("rb")
            self.assertTrue(reader.readline().startswith(b"* OK"))
            sock.sendall(b"A1 APPEND INBOX {5+}\r\nhello\r\nA2 APPEND INBOX {3+}\r\nbye\r\n"
                         b"T STARTTLS\r\nX1 NOOP\r\n")
            got = [reader.readline() for _ in range(3)]
            self.assertIn(status_of(got[0]), ("BAD", "NO"), got)
            self.assertTrue(got[0].startswith(b"A1 "), got)
            self.assertTrue(got[1].startswith(b"A2 "), got)
            self.assertTrue(got[2].startswith(b"T OK"), got)
            tls = harness.client_tls_context().wrap_socket(sock, server_hostname="localhost")
            tls.sendall(b"X2 NOOP\r\n")
            line = b""
            while not line.endswith(b"\r\n"):
                chunk = tls.recv(1)
                self.assertTrue(chunk, line)
                line += chunk
            self.assertTrue(line.startswith(b"X2 OK"), line)  # not X1
            tls.close()
        finally:
            sock.close()


if __name__ == "__main__":
    unittest.main()
