"""kill -9 in the middle of a loop of APPENDs: after a restart every APPEND
that got OK is there exactly once, and the index agrees with the files."""

import os
import re
import sys
import threading
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import crash_check  # noqa: E402
import harness  # noqa: E402
from harness import sample_message  # noqa: E402

MAX_APPENDS = 400      # per round, bounded
KILL_AFTER_OK = 25     # kill once this many APPENDs got OK in the round
ROUNDS = 2


class Appender(threading.Thread):
    def __init__(self, server, round_no):
        super().__init__(daemon=True)
        self.server = server
        self.round_no = round_no
        self.ok = []
        self.in_flight = None
        self.error = None
        self.enough = threading.Event()

    def run(self):
        try:
            imap = self.server.login("alice")
        except Exception as e:
            self.error = repr(e)
            self.enough.set()
            return
        try:
            for i in range(MAX_APPENDS):
                subject = f"crash-r{self.round_no}-{i:04d}"
                self.in_flight = subject
                body = f"payload {i}\r\n" + "x" * (i % 7 * 500) + "\r\n"
                typ, _data = imap.append("INBOX", None, None, sample_message(subject, body))
                if typ != "OK":
                    break
                self.ok.append(subject)
                self.in_flight = None
                if len(self.ok) >= KILL_AFTER_OK:
                    self.enough.set()
        except Exception:  # the kill: the connection drops mid-command
            try:
                imap.shutdown()
            except Exception:
                pass
        finally:
            self.enough.set()


class CrashTest(crash_check.CrashCase):
    def test_kill9_during_appends(self):
        all_ok, maybe = [], []
        for round_no in range(ROUNDS):
            appender = Appender(self.server, round_no)
            appender.start()
            self.assertTrue(appender.enough.wait(120), "appender made no progress")
            self.assertIsNone(appender.error)
            time.sleep(0.01 * round_no)  # kill at a slightly different point
            self.server.kill9()
            appender.join(30)
            self.assertFalse(appender.is_alive())
            all_ok += appender.ok
            if appender.in_flight:
                maybe.append(appender.in_flight)
            self.assertGreaterEqual(len(appender.ok), KILL_AFTER_OK)
            self.server.start()

        imap = self.server.login("alice", select="INBOX")
        typ, data = imap.fetch("1:*", "(UID RFC822.SIZE BODY.PEEK[HEADER.FIELDS (SUBJECT)])")
        self.assertEqual(typ, "OK")
        subjects = [s.decode() for s in
                    re.findall(rb"Subject: (crash-\S+)", harness.flatten(data))]
        for s in all_ok:
            self.assertEqual(subjects.count(s), 1, f"OK'd APPEND {s} present "
                                                   f"{subjects.count(s)} times")
        extras = set(subjects) - set(all_ok)
        self.assertTrue(extras <= set(maybe), f"unexpected messages {extras - set(maybe)}")
        for s in extras:
            self.assertEqual(subjects.count(s), 1)
        # Still writable after the crash.
        harness.append_ok(imap, "INBOX", sample_message("after crash"))
        imap.logout()
        self.server.stop()

        self.check_index_matches_files("alice", len(subjects) + 1)


if __name__ == "__main__":
    unittest.main()
