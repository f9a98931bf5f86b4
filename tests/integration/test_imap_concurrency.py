"""Two sessions on one mailbox: IDLE sees EXISTS/FETCH/EXPUNGE at once;
concurrent appenders end with exactly the right messages."""

import os
import re
import sys
import threading
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
from harness import ServerTestCase, append_ok, sample_message, status_of  # noqa: E402

WAIT = 10.0  # seconds for an IDLE notification to arrive


def read_until(raw, pattern, timeout=WAIT):
    """Reads lines until one matches `pattern`; returns (match, lines)."""
    deadline = time.monotonic() + timeout
    lines = []
    for _ in range(10000):
        left = deadline - time.monotonic()
        if left <= 0:
            break
        try:
            line = raw.readline(timeout=left)
        except OSError:
            break
        if not line:
            break
        lines.append(line)
        m = re.search(pattern, line)
        if m:
            return m, lines
    raise AssertionError(f"no line matching {pattern!r} within {timeout}s; got {lines!r}")


class IdleTest(ServerTestCase):
    def test_idle_sees_append_store_expunge(self):
        a = self.server.login("alice")
        box = self.fresh_mailbox(a)
        append_ok(a, box, sample_message("first"))
        a.select(box)

        b = self.server.raw()
        b.login("alice", harness.USERS["alice"])
        tagged, lines = b.command(f"SELECT {box}")
        self.assertIn(b"* 1 EXISTS", b"".join(lines))
        b.send(b"I1 IDLE\r\n")
        cont = b.readline()
        self.assertTrue(cont.startswith(b"+"), cont)

        append_ok(a, box, sample_message("second"))
        read_until(b, rb"^\* 2 EXISTS")

        a.store("1", "+FLAGS", "(\\Flagged)")
        m, _ = read_until(b, rb"^\* 1 FETCH \(.*FLAGS \(([^)]*)\)")
        self.assertIn(b"\\Flagged", m.group(1))

        a.store("1", "+FLAGS.SILENT", "(\\Deleted)")
        read_until(b, rb"^\* 1 FETCH")
        self.assertEqual(a.expunge()[0], "OK")
        read_until(b, rb"^\* 1 EXPUNGE")

        b.send(b"DONE\r\n")
        lines = b.read_response("I1")
        self.assertEqual(status_of(lines[-1]), "OK", lines)
        # B's sequence numbers now agree with A's.
        tagged, lines = b.command("FETCH 1:* (UID)")
        uids_b = re.findall(rb"UID (\d+)", b"".join(lines))
        typ, data = a.uid("SEARCH", "ALL")
        self.assertEqual([int(x) for x in uids_b], [int(x) for x in data[0].split()])
        self.assertEqual(len(uids_b), 1)
        b.close()
        a.logout()

    def test_no_expunge_during_fetch_but_at_noop(self):
        a = self.server.login("alice")
        box = self.fresh_mailbox(a)
        for i in range(3):
            append_ok(a, box, sample_message(f"m{i}"))
        a.select(box)
        b = self.server.raw()
        b.login("alice", harness.USERS["alice"])
        b.command(f"SELECT {box}")
        a.store("2", "+FLAGS.SILENT", "(\\Deleted)")
        a.expunge()
        # FETCH must not send EXPUNGE (RFC 3501 7.4.1); old numbers still valid.
        tagged, lines = b.command("FETCH 1:3 (UID)")
        text = b"".join(lines)
        self.assertNotRegex(text, rb"\* \d+ EXPUNGE")
        self.assertIn(status_of(tagged), ("OK", "NO"))
        tagged, lines = b.command("STORE 3 +FLAGS (\\Seen)")
        self.assertNotRegex(b"".join(lines), rb"\* \d+ EXPUNGE")
        tagged, lines = b.command("SEARCH ALL")
        self.assertNotRegex(b"".join(lines), rb"\* \d+ EXPUNGE")
        tagged, lines = b.command("NOOP")
        self.assertIn(b"* 2 EXPUNGE", b"".join(lines))
        tagged, lines = b.command("FETCH 1:* (UID)")
        self.assertEqual(b"".join(lines).count(b" FETCH "), 2)
        b.close()
        a.logout()

    def test_noop_reports_other_sessions_appends(self):
        a = self.server.login("alice")
        box = self.fresh_mailbox(a)
        b = self.server.login("alice", select=box)
        append_ok(a, box, sample_message("x"))
        b.noop()
        _t, data = b.response("EXISTS")
        self.assertIn(b"1", [d for d in data if d])
        a.logout()
        b.logout()


class ConcurrentAppendTest(ServerTestCase):
    def test_parallel_appenders(self):
        clients, per_client = 5, 20
        setup = self.server.login("bob")
        box = self.fresh_mailbox(setup)
        errors = []
        ok_subjects = []
        lock = threading.Lock()

        def worker(n):
            try:
                imap = self.server.login("bob")
                for i in range(per_client):
                    subj = f"c{n}-m{i}"
                    append_ok(imap, box, sample_message(subj))
                    with lock:
                        ok_subjects.append(subj)
                imap.logout()
            except Exception as e:  # reported below
                errors.append(repr(e))

        threads = [threading.Thread(target=worker, args=(n,)) for n in range(clients)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(120)
        self.assertFalse(any(t.is_alive() for t in threads), "appenders hung")
        self.assertEqual(errors, [])
        setup.select(box)
        typ, data = setup.fetch("1:*", "(UID BODY.PEEK[HEADER.FIELDS (SUBJECT)])")
        subjects = re.findall(rb"Subject: (\S+)", harness.flatten(data))
        self.assertEqual(sorted(s.decode() for s in subjects), sorted(ok_subjects))
        uids = [int(x) for x in setup.uid("SEARCH", "ALL")[1][0].split()]
        self.assertEqual(len(set(uids)), clients * per_client)
        self.assertEqual(uids, sorted(uids))
        setup.logout()


if __name__ == "__main__":
    unittest.main()
