"""peregrine-bench against real servers and against broken fakes.

- Dovecot 2.3 (a private instance on loopback): 10 clients in one mailbox
  with the default mix report 0 errors and 0 violations, so the checks are
  not false alarms under concurrency.
- Peregrine (the real binary): the same, 0 errors and 0 violations.
- tests/loadgen/fake_imap.py: a correct fake gives a clean run (so the fake is
  not what fails), and each deliberately broken one is reported.

Binaries come from PEREGRINE_BENCH_BIN and PEREGRINE_BIN (ctest sets them).
Standard library only; each run lasts a few seconds.
"""

import imaplib
import json
import os
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent / "integration"))
sys.path.insert(0, str(HERE.parent / "common"))

import fake_imap  # noqa: E402

RUN_SECONDS = 3
CLIENTS = 10
SEED_MESSAGES = 30
PASSWORD = "bench-pw"
GENERATOR_TIMEOUT = 60


def bench_binary():
    path = os.environ.get("PEREGRINE_BENCH_BIN")
    if not path:
        raise unittest.SkipTest("PEREGRINE_BENCH_BIN is not set")
    return path


def run_bench(port, *args, user_format="bench%d", users=1):
    """Runs the generator; returns (exit code, JSON results, output)."""
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "results.json")
        proc = subprocess.run(
            [bench_binary(), "--host", "127.0.0.1", "--port", str(port),
             "--user-format", user_format, "--users", str(users), "--password", PASSWORD,
             "--seed", "7", "--json", out, *args],
            capture_output=True, text=True, timeout=GENERATOR_TIMEOUT)
        results = None
        if os.path.exists(out):
            with open(out) as f:
                results = json.load(f)
        return proc.returncode, results, proc.stdout + proc.stderr


def seed_mailbox(port, user, count):
    imap = imaplib.IMAP4("127.0.0.1", port, timeout=15)
    try:
        imap.login(user, PASSWORD)
        for i in range(count):
            body = (f"From: seeder@example.org\r\nSubject: seed {i}\r\n"
                    f"Message-ID: <seed-{i}@example.org>\r\n\r\n"
                    f"meeting notes {i}\r\nfalcon budget review\r\n").encode()
            imap.append("INBOX", None, None, body)
    finally:
        imap.logout()


class MixCase:
    """The default mix with 10 clients in one mailbox must be clean."""

    def check_clean_mix(self, port):
        code, results, output = run_bench(
            port, "--clients", str(CLIENTS), "--workload", "mix", "--seconds", str(RUN_SECONDS))
        self.assertIsNotNone(results, output)
        self.assertEqual(results["errors"], 0, output)
        self.assertEqual(results["violations"], 0, output)
        self.assertEqual(code, 0, output)
        # Every command of the mix ran, so every check had something to check.
        for name in ("LOGIN", "LIST", "STATUS", "SELECT", "FETCH_META", "FETCH_BODY", "STORE",
                     "EXPUNGE", "APPEND", "SEARCH", "IDLE"):
            self.assertGreater(results["commands"].get(name, {}).get("count", 0), 0,
                               f"{name} never ran:\n{output}")
        self.assertGreater(results["ops_per_sec"], 0)


class DovecotTest(unittest.TestCase, MixCase):
    def setUp(self):
        import dovecot_server as dc
        try:
            dc.find_dovecot()
        except dc.CheckError as e:
            self.skipTest(str(e))
        self.tmp = tempfile.TemporaryDirectory(prefix="peregrine-bench-dovecot-")
        os.chmod(self.tmp.name, 0o755)  # Dovecot's unprivileged processes walk through it
        self.dovecot = BenchDovecot(dc, Path(self.tmp.name))
        self.addCleanup(self.tmp.cleanup)
        self.addCleanup(self.dovecot.stop)
        self.dovecot.start()

    def test_mix_ten_clients_one_mailbox(self):
        seed_mailbox(self.dovecot.port, "bench1", SEED_MESSAGES)
        self.check_clean_mix(self.dovecot.port)


def BenchDovecot(dc, workdir):
    """tests/common's private Dovecot with the bench users (its
    configuration already allows many connections per user)."""

    class Instance(dc.Dovecot):
        def write_config(self):
            conf = super().write_config()
            (self.dir / "passwd").write_text(
                "".join(f"bench{i}:{{PLAIN}}{PASSWORD}::::::\n" for i in range(1, 4)))
            return conf

    return Instance(workdir, "bench1", PASSWORD, name="loadgen")


class PeregrineTest(unittest.TestCase, MixCase):
    def setUp(self):
        import harness
        users = {f"bench{i}": PASSWORD for i in range(1, 4)}
        try:
            self.server = harness.Server(users=users)
        except unittest.SkipTest:
            raise
        self.addCleanup(self.server.stop)
        self.server.start()

    def test_mix_ten_clients_one_mailbox(self):
        seed_mailbox(self.server.port, "bench1", SEED_MESSAGES)
        self.check_clean_mix(self.server.port)


class PeregrineTlsTest(unittest.TestCase):
    """--tls: the same checks over Peregrine's implicit-TLS listener."""

    def test_tls_mix(self):
        import harness
        server = harness.Server(users={"bench1": PASSWORD}, tls=True)
        self.addCleanup(server.stop)
        server.start()
        seed_mailbox(server.port, "bench1", 10)
        code, results, output = run_bench(
            server.tls_port, "--tls", "--clients", "3", "--workload", "mix", "--ops", "150")
        self.assertEqual((results["errors"], results["violations"]), (0, 0), output)
        self.assertEqual(code, 0, output)
        self.assertEqual(results["ops"], 150)
        # Plaintext IMAP on the TLS port fails to start: usage/connect exit.
        code, _results, output = run_bench(
            server.tls_port, "--workload", "list", "--ops", "1", "--timeout", "2")
        self.assertEqual(code, 2, output)


class FakeServerTest(unittest.TestCase):
    """One client against the in-memory fake (it sends no cross-session updates)."""

    def run_fake(self, bug, *args):
        with fake_imap.FakeImapServer(bug=bug) as server:
            return run_bench(server.port, "--clients", "1", *args)

    def test_correct_fake_is_clean(self):
        code, results, output = self.run_fake(None, "--workload", "mix", "--ops", "400")
        self.assertEqual((results["errors"], results["violations"]), (0, 0), output)
        self.assertEqual(code, 0, output)
        self.assertEqual(results["ops"], 400)

    def assert_violation(self, results, output, needle):
        self.assertGreater(results["violations"], 0, output)
        self.assertTrue(any(needle in v for v in results["violation_samples"]),
                        f"no violation mentions {needle!r}:\n{output}")

    def test_exists_not_raised_after_append(self):
        code, results, output = self.run_fake(
            "exists", "--mix", "append=1,fetch_meta=1", "--ops", "40")
        self.assertEqual(code, 1, output)
        self.assert_violation(results, output, "but only")

    def test_store_drops_a_flag(self):
        code, results, output = self.run_fake("drop_flag", "--workload", "store", "--ops", "60")
        self.assertEqual(code, 1, output)
        self.assert_violation(results, output, "left FLAGS")

    def test_tagged_no_where_ok_was_due(self):
        code, results, output = self.run_fake("tagged_no", "--workload", "list", "--ops", "20")
        self.assertEqual(code, 1, output)
        self.assertEqual(results["commands"]["LIST"]["errors"], 20, output)
        self.assertEqual(results["errors"], 20, output)

    def test_unexpected_tagged_reply(self):
        code, results, output = self.run_fake("wrong_tag", "--workload", "list", "--ops", "5")
        self.assertEqual(code, 1, output)
        self.assert_violation(results, output, "unexpected tagged reply zz9")

    def test_expunged_message_still_returned(self):
        code, results, output = self.run_fake(
            "expunged_fetch", "--mix", "expunge=1,fetch_meta=1", "--ops", "40")
        self.assertEqual(code, 1, output)
        self.assert_violation(results, output, "which was expunged")

    def test_missing_tagged_reply(self):
        code, results, output = self.run_fake(
            "silent", "--workload", "list", "--ops", "3", "--timeout", "1")
        self.assertEqual(code, 1, output)
        self.assertGreater(results["errors"], 0, output)
        self.assertTrue(any("no response from the server" in e for e in results["error_samples"]),
                        output)

    def test_connect_failure_exits_2(self):
        code, _results, output = run_bench(1, "--workload", "list", "--ops", "1")
        self.assertEqual(code, 2, output)


if __name__ == "__main__":
    unittest.main()
