"""kill -9 during an LMTP flood: after a restart every message that got
250 is in INBOX exactly once, nothing else but the messages in flight at
the kill, and the index agrees with the files (as test_imap_crash does for
APPEND)."""

import os
import re
import sys
import threading
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import crash_check  # noqa: E402
import harness  # noqa: E402
import lmtp_harness  # noqa: E402
from harness import sample_message  # noqa: E402

CLIENTS = 3            # parallel LMTP connections
MAX_MESSAGES = 300     # per client and round, bounded
KILL_AFTER_OK = 40     # kill once this many deliveries got 250 in the round
ROUNDS = 2


class Flooder(threading.Thread):
    """One LMTP connection delivering to alice until the kill."""

    def __init__(self, server, round_no, client_no, counter):
        super().__init__(daemon=True)
        self.server = server
        self.tag = f"r{round_no}c{client_no}"
        self.counter = counter
        self.ok = []
        self.in_flight = None
        self.error = None

    def run(self):
        try:
            client = self.server.lmtp()
        except Exception as e:
            self.error = repr(e)
            self.counter.bump(0)
            return
        try:
            for i in range(MAX_MESSAGES):
                subject = f"flood-{self.tag}-{i:04d}"
                self.in_flight = subject
                body = f"payload {i}\r\n" + "x" * (i % 5 * 700) + "\r\n"
                refused = client.sendmail("s@example.net", ["alice@example.org"],
                                          sample_message(subject, body))
                if refused:
                    break
                self.ok.append(subject)  # sendmail returned: the 250 came
                self.in_flight = None
                self.counter.bump(1)
        except Exception:  # the kill: the connection drops mid-transaction
            pass
        finally:
            self.counter.bump(0)


class Counter:
    def __init__(self, target, clients):
        self.lock = threading.Lock()
        self.ok = 0
        self.finished = 0
        self.target = target
        self.clients = clients
        self.enough = threading.Event()

    def bump(self, n):
        with self.lock:
            if n:
                self.ok += n
            else:
                self.finished += 1
            if self.ok >= self.target or self.finished >= self.clients:
                self.enough.set()


class LmtpCrashTest(crash_check.CrashCase):
    def make_server(self):
        return lmtp_harness.LmtpServer()

    def test_kill9_during_lmtp_flood(self):
        all_ok, maybe = [], []
        for round_no in range(ROUNDS):
            counter = Counter(KILL_AFTER_OK, CLIENTS)
            flooders = [Flooder(self.server, round_no, c, counter) for c in range(CLIENTS)]
            for f in flooders:
                f.start()
            self.assertTrue(counter.enough.wait(180), "the flood made no progress")
            time.sleep(0.01 * round_no)
            self.server.kill9()
            for f in flooders:
                f.join(30)
                self.assertFalse(f.is_alive())
                self.assertIsNone(f.error)
                all_ok += f.ok
                if f.in_flight:
                    maybe.append(f.in_flight)
            self.assertGreaterEqual(sum(len(f.ok) for f in flooders), KILL_AFTER_OK)
            self.server.start()

        imap = self.server.login("alice", select="INBOX")
        typ, data = imap.fetch("1:*", "(UID BODY.PEEK[HEADER.FIELDS (SUBJECT)])")
        self.assertEqual(typ, "OK")
        subjects = [s.decode() for s in
                    re.findall(rb"Subject: (flood-\S+)", harness.flatten(data))]
        for s in all_ok:
            self.assertEqual(subjects.count(s), 1,
                             f"250'd message {s} present {subjects.count(s)} times")
        extras = set(subjects) - set(all_ok)
        self.assertTrue(extras <= set(maybe), f"unexpected messages {extras - set(maybe)}")
        for s in extras:
            self.assertEqual(subjects.count(s), 1)
        imap.logout()
        # Still accepting deliveries after the crash.
        client = self.server.lmtp()
        self.assertEqual(client.sendmail("s@x", ["alice"], sample_message("after crash")), {})
        client.quit()
        self.server.stop()

        self.check_index_matches_files("alice", len(subjects) + 1)


if __name__ == "__main__":
    unittest.main()
