"""Session and authentication: CAPABILITY, NOOP, LOGOUT, LOGIN, AUTHENTICATE,
LOGINDISABLED, STARTTLS, implicit TLS, ID, ENABLE, NAMESPACE."""

import imaplib
import os
import ssl
import sys
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
from harness import ServerTestCase, b64, plain_auth_bytes, status_of  # noqa: E402


class SessionTest(ServerTestCase):
    server_kwargs = {"plaintext": "always", "tls": True}

    def test_greeting_and_capability(self):
        raw = self.server.raw()
        try:
            self.assertTrue(raw.greeting.startswith(b"* OK"), raw.greeting)
            tagged, lines = raw.command("CAPABILITY")
            self.assertEqual(status_of(tagged), "OK")
            caps = [l for l in lines if l.startswith(b"* CAPABILITY ")]
            self.assertEqual(len(caps), 1, lines)
            words = caps[0].split()[2:]
            for cap in [b"IMAP4rev1", b"LITERAL+", b"SASL-IR", b"ID", b"ENABLE", b"IDLE",
                        b"UIDPLUS", b"MOVE", b"UNSELECT", b"NAMESPACE", b"CHILDREN",
                        b"SPECIAL-USE", b"STARTTLS", b"AUTH=PLAIN"]:
                self.assertIn(cap, words)
            self.assertNotIn(b"LOGINDISABLED", words)
        finally:
            raw.close()

    def test_noop_and_logout(self):
        imap = self.server.connect()
        self.assertEqual(imap.noop()[0], "OK")
        typ, data = imap.logout()
        self.assertEqual(typ, "BYE")

    def test_logout_sends_bye_then_ok(self):
        raw = self.server.raw()
        tagged, lines = raw.command("LOGOUT")
        self.assertEqual(status_of(tagged), "OK")
        self.assertTrue(any(l.startswith(b"* BYE") for l in lines), lines)
        self.assertEqual(raw.readline(timeout=5), b"")  # the server closed
        raw.close()

    def test_login_ok_and_capability_after(self):
        imap = self.server.connect()
        typ, data = imap.login("alice", harness.USERS["alice"])
        self.assertEqual(typ, "OK")
        typ, data = imap.capability()
        self.assertEqual(typ, "OK")
        self.assertNotIn(b"STARTTLS", data[0].split())
        self.assertNotIn(b"AUTH=PLAIN", data[0].split())
        imap.logout()

    def test_login_wrong_password_is_no_and_connection_survives(self):
        imap = self.server.connect()
        with self.assertRaises(imaplib.IMAP4.error):
            imap.login("alice", "wrong")
        with self.assertRaises(imaplib.IMAP4.error):
            imap.login("nosuchuser", "x")
        self.assertEqual(imap.login("alice", harness.USERS["alice"])[0], "OK")
        imap.logout()

    def test_login_twice_is_bad(self):
        raw = self.server.raw()
        raw.login("alice", harness.USERS["alice"])
        tagged, _ = raw.command('LOGIN "alice" "{}"'.format(harness.USERS["alice"]))
        self.assertIn(status_of(tagged), ("BAD", "NO"))
        raw.command("LOGOUT")
        raw.close()

    def test_authenticate_plain_with_continuation(self):
        imap = self.server.connect()
        typ, _ = imap.authenticate("PLAIN",
                                   lambda _c: plain_auth_bytes("bob", harness.USERS["bob"]))
        self.assertEqual(typ, "OK")
        self.assertEqual(imap.select("INBOX")[0], "OK")
        imap.logout()

    def test_authenticate_plain_sasl_ir(self):
        raw = self.server.raw()
        ir = b64(plain_auth_bytes("alice", harness.USERS["alice"]))
        tagged, lines = raw.command(f"AUTHENTICATE PLAIN {ir}")
        self.assertEqual(status_of(tagged), "OK", lines)
        tagged, _ = raw.command("SELECT INBOX")
        self.assertEqual(status_of(tagged), "OK")
        raw.command("LOGOUT")
        raw.close()

    def test_authenticate_plain_bad_password_and_cancel(self):
        raw = self.server.raw()
        ir = b64(plain_auth_bytes("alice", "nope"))
        tagged, _ = raw.command(f"AUTHENTICATE PLAIN {ir}")
        self.assertEqual(status_of(tagged), "NO")
        # Cancel with "*" (RFC 3501 6.2.2): tagged BAD.
        raw.send(b"C1 AUTHENTICATE PLAIN\r\n")
        cont = raw.readline()
        self.assertTrue(cont.startswith(b"+"), cont)
        raw.send(b"*\r\n")
        lines = raw.read_response("C1")
        self.assertEqual(status_of(lines[-1]), "BAD", lines)
        # Not base64 at all.
        tagged, _ = raw.command("AUTHENTICATE PLAIN !!!notbase64!!!")
        self.assertIn(status_of(tagged), ("BAD", "NO"))
        # Unknown mechanism.
        tagged, _ = raw.command("AUTHENTICATE X-NOPE")
        self.assertIn(status_of(tagged), ("BAD", "NO"))
        raw.login("alice", harness.USERS["alice"])
        raw.close()

    def test_authenticate_login_mechanism(self):
        raw = self.server.raw()
        raw.send(b"A1 AUTHENTICATE LOGIN\r\n")
        for value in [b"bob", harness.USERS["bob"].encode()]:
            cont = raw.readline()
            self.assertTrue(cont.startswith(b"+"), cont)
            raw.send(b64(value).encode() + b"\r\n")
        lines = raw.read_response("A1")
        self.assertEqual(status_of(lines[-1]), "OK", lines)
        raw.close()

    def test_authenticated_commands_need_login(self):
        # One connection per command: a server may end a session after a few
        # invalid commands.
        for cmd in ["SELECT INBOX", "LIST \"\" *", "CREATE x", "STATUS INBOX (MESSAGES)",
                    "FETCH 1 FLAGS", "NAMESPACE", "ENABLE UTF8=ACCEPT"]:
            raw = self.server.raw()
            try:
                tagged, _ = raw.command(cmd)
                self.assertIn(status_of(tagged), ("BAD", "NO"), cmd)
                tagged, _ = raw.command("NOOP")
                self.assertEqual(status_of(tagged), "OK")
            finally:
                raw.close()

    def test_starttls(self):
        imap = self.server.connect()
        typ, _ = imap.starttls(ssl_context=harness.client_tls_context())
        self.assertEqual(typ, "OK")
        typ, data = imap.capability()
        self.assertNotIn(b"STARTTLS", data[0].split())
        self.assertEqual(imap.login("alice", harness.USERS["alice"])[0], "OK")
        self.assertEqual(imap.select("INBOX")[0], "OK")
        imap.logout()

    def test_starttls_twice_and_after_login_is_refused(self):
        raw = self.server.raw()
        raw.login("alice", harness.USERS["alice"])
        tagged, _ = raw.command("STARTTLS")
        self.assertIn(status_of(tagged), ("BAD", "NO"))
        tagged, _ = raw.command("NOOP")
        self.assertEqual(status_of(tagged), "OK")
        raw.close()

    def test_starttls_discards_pipelined_plaintext(self):
        # Command injection (CVE-2011-0411 style): bytes after STARTTLS in the
        # same packet must not be executed. Closing the connection is fine too.
        raw = self.server.raw()
        raw.send(b"S1 STARTTLS\r\nS2 NOOP\r\n")
        line = raw.readline()
        self.assertTrue(line.startswith(b"S1 OK"), line)
        self.assertNotIn(b"S2 ", raw.buf)
        ctx = harness.client_tls_context()
        try:
            tls = ctx.wrap_socket(raw.sock, server_hostname="localhost")
        except (ssl.SSLError, OSError):
            raw.close()
            return
        raw.sock, raw.buf = tls, b""
        tagged, lines = raw.command("NOOP", tag="S3")
        self.assertEqual(status_of(tagged), "OK")
        self.assertFalse(any(l.startswith(b"S2 ") for l in lines), lines)
        raw.close()

    def test_implicit_tls(self):
        imap = self.server.connect(tls=True)
        typ, data = imap.capability()
        self.assertNotIn(b"STARTTLS", data[0].split())
        self.assertEqual(imap.login("bob", harness.USERS["bob"])[0], "OK")
        self.assertEqual(imap.select("INBOX")[0], "OK")
        imap.logout()

    def test_id(self):
        imap = self.server.connect()
        typ, data = imap.xatom("ID", '("name" "it-test" "version" "1")')
        self.assertEqual(typ, "OK")
        ids = harness.untagged(imap, "ID")
        self.assertEqual(len(ids), 1, ids)
        self.assertTrue(ids[0].startswith(b"(") or ids[0] == b"NIL", ids)
        typ, _ = imap.xatom("ID", "NIL")
        self.assertEqual(typ, "OK")
        imap.logout()

    def test_enable(self):
        imap = self.server.login("alice")
        typ, data = imap.xatom("ENABLE", "X-NOT-A-THING")
        self.assertEqual(typ, "OK")
        # Nothing unknown may be reported as enabled.
        for line in harness.untagged(imap, "ENABLED"):
            self.assertNotIn(b"X-NOT-A-THING", line)
        imap.logout()

    def test_namespace(self):
        imap = self.server.login("alice")
        typ, data = imap.namespace()
        self.assertEqual(typ, "OK")
        self.assertRegex(data[0], rb'^\(\(""\s+"/"\)\)\s+(NIL|\(.*\))\s+(NIL|\(.*\))$')
        imap.logout()

    def test_unknown_command_is_bad(self):
        raw = self.server.raw()
        tagged, _ = raw.command("XYZZY foo")
        self.assertEqual(status_of(tagged), "BAD")
        self.assertGreater(len(tagged.split(None, 2)), 2, "BAD without text")
        tagged, _ = raw.command("NOOP")
        self.assertEqual(status_of(tagged), "OK")
        raw.close()


class TlsOnlyTest(ServerTestCase):
    """plaintext = "tls-only": LOGINDISABLED on plain connections."""
    server_kwargs = {"plaintext": "tls-only", "tls": True}

    def test_logindisabled_before_starttls(self):
        imap = self.server.connect()
        caps = imap.capabilities
        self.assertIn("LOGINDISABLED", caps)
        self.assertIn("STARTTLS", caps)
        self.assertNotIn("AUTH=PLAIN", caps)
        with self.assertRaises(imaplib.IMAP4.error):
            imap.login("alice", harness.USERS["alice"])
        typ, _ = imap.starttls(ssl_context=harness.client_tls_context())
        self.assertEqual(typ, "OK")
        self.assertNotIn("LOGINDISABLED", imap.capabilities)
        self.assertEqual(imap.login("alice", harness.USERS["alice"])[0], "OK")
        imap.logout()

    def test_authenticate_plain_refused_on_plain_connection(self):
        raw = self.server.raw()
        ir = b64(plain_auth_bytes("alice", harness.USERS["alice"]))
        tagged, _ = raw.command(f"AUTHENTICATE PLAIN {ir}")
        self.assertIn(status_of(tagged), ("BAD", "NO"))
        tagged, _ = raw.command("SELECT INBOX")
        self.assertIn(status_of(tagged), ("BAD", "NO"))
        raw.close()

    def test_implicit_tls_allows_login(self):
        imap = self.server.connect(tls=True)
        self.assertNotIn("LOGINDISABLED", imap.capabilities)
        self.assertEqual(imap.login("alice", harness.USERS["alice"])[0], "OK")
        imap.logout()


class LimitsTest(ServerTestCase):
    server_kwargs = {"limits": {"max_connections_per_ip": 3}, "failure_delay_ms": (300, 1200)}

    def admitted(self):
        """A connection the server admitted. A connection of the previous
        test may hold a slot for a moment after its client closed it (the
        server notices the close, then ends the session), so a refusal is
        tried again for up to five seconds."""
        for _ in range(50):
            try:
                raw = self.server.raw()
                if raw.greeting.startswith(b"* OK"):
                    return raw
                raw.close()
            except OSError:
                pass
            time.sleep(0.1)
        self.fail("connection slots were not released")

    def test_per_ip_connection_limit(self):
        held = [self.admitted() for _ in range(3)]
        try:
            extra = None
            try:
                extra = harness.RawClient(harness.HOST, self.server.port, timeout=5)
                refused = extra.greeting.startswith(b"* BYE") or extra.greeting == b""
            except (ConnectionError, OSError):
                refused = True
            self.assertTrue(refused, extra.greeting if extra else None)
            if extra:
                extra.close()
        finally:
            for raw in held:
                raw.close()
        # Slots are given back when connections close.
        self.admitted().close()

    def test_failed_logins_are_delayed_with_back_off(self):
        raw = self.server.raw()
        took = []
        for _ in range(3):
            start = time.monotonic()
            tagged, _ = raw.command('LOGIN "alice" "wrong"')
            took.append(time.monotonic() - start)
            self.assertEqual(status_of(tagged), "NO")
        self.assertGreaterEqual(took[0], 0.25, took)
        self.assertGreater(took[1], took[0] * 1.5, took)
        raw.close()


class ServerLifecycleTest(unittest.TestCase):
    def test_sigterm_exits_zero_and_restart_keeps_mail(self):
        server = harness.Server()
        try:
            server.start()
            imap = server.login("alice")
            harness.append_ok(imap, "INBOX", harness.sample_message("keep me"))
            imap.logout()
            server.restart()
            imap = server.login("alice", select="INBOX")
            typ, data = imap.search(None, "SUBJECT", '"keep me"')
            self.assertEqual(len(data[0].split()), 1)
            imap.logout()
            server.stop()
        finally:
            server.cleanup()

    def test_user_commands_edit_the_passwd_file_live(self):
        server = harness.Server()
        try:
            server.start()
            listed = server.cli("user", "list", "--config", server.config).stdout.decode()
            self.assertEqual(sorted(listed.split()), ["alice", "bob"])
            with open(server.passwd) as f:
                self.assertRegex(f.read(), r"(?m)^alice:\{SHA512-CRYPT\}\$6\$")
            proc = server.cli("user", "add", "--config", server.config, "alice",
                              "--password", "x", check=False)
            self.assertEqual(proc.returncode, 65)  # EX_DATAERR: exists
            server.cli("user", "passwd", "--config", server.config, "alice", "--password",
                       "new-secret")
            server.cli("user", "add", "--config", server.config, "carol", "--password", "c")
            imap = server.connect()  # the running server re-reads the file
            with self.assertRaises(imaplib.IMAP4.error):
                imap.login("alice", harness.USERS["alice"])
            self.assertEqual(imap.login("alice", "new-secret")[0], "OK")
            imap.logout()
            imap = server.connect()
            self.assertEqual(imap.login("carol", "c")[0], "OK")
            imap.logout()
            server.cli("user", "del", "--config", server.config, "bob")
            imap = server.connect()
            with self.assertRaises(imaplib.IMAP4.error):
                imap.login("bob", harness.USERS["bob"])
            imap.logout()
            proc = server.cli("user", "del", "--config", server.config, "bob", check=False)
            self.assertEqual(proc.returncode, 67)  # EX_NOUSER
            server.stop()
        finally:
            server.cleanup()

    def test_bad_config_stops_startup_naming_the_key(self):
        server = harness.Server()
        try:
            server.port = harness.free_port()
            server.write_config()
            with open(server.config, "a") as f:
                f.write("\n[server2]\nbogus = 1\n")
            proc = server.cli("serve", "--config", server.config, check=False, timeout=30)
            self.assertNotEqual(proc.returncode, 0)
            self.assertIn(b"server2", proc.stderr)
        finally:
            server.cleanup()


if __name__ == "__main__":
    unittest.main()
