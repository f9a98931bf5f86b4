"""The pieces of bench/compare.sh that its figures rest on.

- The ceiling (bench/responder): peregrine-bench runs every workload against
  it without an error (with --no-check: canned answers are not a consistent
  mailbox), so each row has a ceiling figure. Malformed or oversized input
  is answered, not crashed on.
- The POP3/LMTP drivers' result parsing: a download or delivery that moved
  fewer messages than were there, or a tool that failed, is an error; and
  the one Dovecot configuration both Dovecot benchmarks write has a
  listener per protocol asked for.
- bench/proctree.py: the CPU of a process tree includes children that ran
  and exited during the measurement (Dovecot's per-login processes), and
  RSS sums over the live processes.

Binaries come from PEREGRINE_BENCH_BIN and PEREGRINE_RESPONDER_BIN (ctest
sets them). Standard library only.
"""

import json
import os
import socket
import subprocess
import sys
import tempfile
import time
import unittest
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent.parent / "bench"))
sys.path.insert(0, str(HERE.parent / "integration"))

import compare  # noqa: E402
import compare_servers  # noqa: E402
import harness  # noqa: E402
import proctree  # noqa: E402

WORKLOADS = ("login", "list", "status", "select", "fetch_meta", "fetch_body", "store",
             "expunge", "append", "search", "idle", "mix")


def binary(var):
    path = os.environ.get(var)
    if not path:
        raise unittest.SkipTest(f"{var} is not set")
    return path


class ResponderTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.bench = binary("PEREGRINE_BENCH_BIN")
        cls.dir = tempfile.TemporaryDirectory(prefix="compare-test-")
        cls.mbox = os.path.join(cls.dir.name, "source.mbox")
        with open(cls.mbox, "wb") as f:
            for i in range(3):
                f.write(b"From bench@example.org Mon Feb  7 21:52:25 1994\n" +
                        harness.sample_message(subject=f"m{i}").replace(b"\r\n", b"\n") + b"\n")
        for _ in range(5):
            cls.port = harness.free_port()
            cls.proc = subprocess.Popen(
                [binary("PEREGRINE_RESPONDER_BIN"), "--port", str(cls.port), "--count", "20"],
                stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
            if cls._wait_ready():
                return
            cls.proc.kill()
            cls.proc.wait(10)
        raise RuntimeError("imap-responder did not start")

    @classmethod
    def _wait_ready(cls):
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and cls.proc.poll() is None:
            try:
                with socket.create_connection((harness.HOST, cls.port), timeout=2) as s:
                    return s.recv(100).startswith(b"* OK")
            except OSError:
                time.sleep(0.05)
        return False

    @classmethod
    def tearDownClass(cls):
        cls.proc.kill()
        cls.proc.wait(10)
        cls.dir.cleanup()

    def run_bench(self, workload):
        out = os.path.join(self.dir.name, f"{workload}.json")
        proc = subprocess.run(
            [self.bench, "--port", str(self.port), "--users", "2", "--password", "x",
             "--clients", "2", "--ops", "200", "--seed", "3", "--workload", workload,
             "--append-source", self.mbox, "--idle-ms", "1", "--no-check", "--json", out,
             "--quiet"], capture_output=True, text=True, timeout=60)
        with open(out) as f:
            return proc.returncode, json.load(f), proc.stderr

    def test_every_workload_runs_without_errors(self):
        for workload in WORKLOADS:
            with self.subTest(workload=workload):
                code, result, stderr = self.run_bench(workload)
                self.assertEqual(code, 0, stderr)
                self.assertEqual(result["errors"], 0, result)
                self.assertGreaterEqual(result["ops"], 200, result)

    def test_hostile_input_is_answered(self):
        client = harness.RawClient(harness.HOST, self.port)
        tagged, _ = client.command("FROB")
        self.assertEqual(harness.status_of(tagged), "BAD")
        # A literal is skipped whole (its bytes are not taken for commands).
        client.send(b"a1 APPEND INBOX {12+}\r\na2 LOGOUT\r\n\r\n")
        lines = client.read_response("a1")
        self.assertEqual(harness.status_of(lines[-1]), "OK")
        # A line over 64 KiB closes the connection with a BYE.
        client.send(b"a3 NOOP " + b"x" * (70 * 1024))
        self.assertTrue(client.readline().startswith(b"* BYE"))
        client.close()
        self.assertIsNone(self.proc.poll(), "the responder died")


BURN = "import time\nt = time.process_time()\nwhile time.process_time() - t < {s}: pass\n"


class DriverParseTest(unittest.TestCase):
    @staticmethod
    def done(stdout, code=0):
        return subprocess.CompletedProcess(["/x/pop3load", "--clients", "5"], code, stdout, "")

    def test_complete_run(self):
        got = compare.parse_key_values(
            self.done("pop3load clients=5 users=5 messages=500 bytes=9 seconds=2.5 "
                      "msgs_per_s=200.0 mb_per_s=1.0 errors=0\n"), 500, "downloaded")
        self.assertEqual((got["ops"], got["ops_per_sec"], got["errors"]), (500, 200.0, 0))

    def test_short_count_and_failures_are_errors(self):
        short = compare.parse_key_values(
            self.done("messages=499 msgs_per_s=199.6 errors=0"), 500, "downloaded")
        self.assertEqual(short["errors"], 1)
        self.assertIn("pop3load downloaded 499 of 500", short["violation_samples"][0])
        failed = compare.parse_key_values(
            self.done("messages=500 msgs_per_s=10 errors=2", code=1), 500, "downloaded")
        self.assertEqual(failed["errors"], 3)
        nothing = compare.parse_key_values(self.done("", code=2), 500, "downloaded")
        self.assertEqual((nothing["ops"], nothing["errors"]), (0, 2))

    def test_dovecot_conf_listeners(self):
        conf = compare_servers.dovecot_conf(
            header="t", instance="t", root="/r", log="/r/log", ports={"imap": 1, "pop3": 2},
            passwd="/r/pw", scheme="PLAIN", uid=1, gid=1, first_valid_uid=1, mail="/m",
            prefork=True)
        self.assertIn("protocols = imap pop3\n", conf)
        self.assertIn("service pop3-login {\n  service_count = 0", conf)
        self.assertIn("inet_listener pop3 {\n    port = 2\n", conf)
        self.assertNotIn("lmtp", conf)
        self.assertNotIn("mail_fsync", conf)
        lmtp = compare_servers.dovecot_conf(
            header="t", instance="t", root="/r", log="/r/log", ports={"imap": 1, "lmtp": 3},
            passwd="/r/pw", scheme="PLAIN", uid=1, gid=1, first_valid_uid=1, mail="/m",
            fsync="always")
        self.assertIn("service lmtp {\n  inet_listener lmtp {\n    port = 3\n  }\n}", lmtp)
        self.assertIn("mail_fsync = always\n", lmtp)
        self.assertEqual(conf.count("{"), conf.count("}"))


class ProcTreeTest(unittest.TestCase):
    def test_cpu_includes_reaped_children_and_rss_sums_the_tree(self):
        # A parent that, when told, starts a child burning 0.3 s of CPU, waits for it (so
        # the child is reaped into the parent's cutime), then starts a second
        # child that stays alive, and sleeps.
        parent_code = (
            "import subprocess, sys, time\n"
            "sys.stdin.readline()\n"
            f"subprocess.run([sys.executable, '-c', {BURN.format(s=0.3)!r}])\n"
            "live = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(30)'])\n"
            "print('ready', flush=True)\n"
            "time.sleep(30)\n")
        parent = subprocess.Popen([sys.executable, "-c", parent_code], stdin=subprocess.PIPE,
                                  stdout=subprocess.PIPE)
        self.addCleanup(parent.stdout.close)
        self.addCleanup(parent.stdin.close)
        try:
            before = proctree.cpu_seconds(parent.pid)
            parent.stdin.write(b"go\n")
            parent.stdin.flush()
            self.assertEqual(parent.stdout.readline().strip(), b"ready")
            after = proctree.cpu_seconds(parent.pid)
            # The child's 0.3 s is in the delta although the child is gone.
            self.assertGreaterEqual(after - before, 0.3 * 0.9)
            self.assertEqual(proctree.process_count(parent.pid), 2)
            # RSS counts the live child too (a Python process: megabytes).
            own = proctree.tree(parent.pid)[parent.pid][3]
            self.assertGreater(own, 0)
            self.assertGreater(proctree.rss_bytes(parent.pid), own + (1 << 20))
        finally:
            for pid in proctree.tree(parent.pid):
                if pid != parent.pid:
                    os.kill(pid, 9)
            parent.kill()
            parent.wait(10)

    def test_gone_process(self):
        proc = subprocess.Popen([sys.executable, "-c", "pass"])
        proc.wait(10)
        self.assertEqual(proctree.cpu_seconds(proc.pid), 0)
        self.assertEqual(proctree.rss_bytes(proc.pid), 0)


if __name__ == "__main__":
    unittest.main()
