"""What the kill -9 tests (test_imap_crash, test_lmtp_crash) share: a test
case that owns one server and shows its log on failure, and the check that
after the crashes the index and the Maildir files agree."""

import os
import shutil
import sqlite3
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402


def index_copy(server, user, directory):
    """Copies the index (+ WAL) so the check never touches the original."""
    for suffix in ("", "-wal", "-shm"):
        src = server.index_path(user) + suffix
        if os.path.exists(src):
            shutil.copy(src, os.path.join(directory, "index.sqlite" + suffix))
    return sqlite3.connect(os.path.join(directory, "index.sqlite"))


class CrashCase(unittest.TestCase):
    """One server per test (make_server), stopped and removed afterwards."""

    def make_server(self):
        return harness.Server()

    def setUp(self):
        self.server = self.make_server()
        self.server.start()

    def tearDown(self):
        try:
            self.server.stop(check=False)
        finally:
            self.server.cleanup()

    def run(self, result=None):
        result = result or self.defaultTestResult()
        before = len(result.failures) + len(result.errors)
        out = super().run(result)
        if len(result.failures) + len(result.errors) > before:
            sys.stderr.write(self.server.log_tail(100) + "\n")
        return out

    def check_index_matches_files(self, user, expected_messages):
        """With the server stopped: INBOX's index rows and cur/ files agree
        one to one, new/ is empty, the index passes integrity_check, UIDs
        are unique and below UIDNEXT, sizes match, and there are
        `expected_messages` rows."""
        maildir = self.server.maildir(user)
        cur = sorted(os.listdir(os.path.join(maildir, "cur")))
        self.assertEqual(os.listdir(os.path.join(maildir, "new")), [])
        with tempfile.TemporaryDirectory() as tmp:
            db = index_copy(self.server, user, tmp)
            try:
                (box_id, uidnext), = db.execute(
                    "SELECT id, uidnext FROM mailboxes WHERE name = 'INBOX'").fetchall()
                rows = db.execute("SELECT uid, file_name, size FROM messages "
                                  "WHERE mailbox_id = ? ORDER BY uid", (box_id,)).fetchall()
                self.assertEqual(db.execute("PRAGMA integrity_check").fetchone()[0], "ok")
            finally:
                db.close()
        self.assertEqual(sorted(r[1] for r in rows), cur, "index rows and cur/ files differ")
        self.assertEqual(len(rows), expected_messages)
        uids = [r[0] for r in rows]
        self.assertEqual(len(set(uids)), len(uids))
        self.assertGreater(uidnext, max(uids))
        for _uid, name, size in rows:
            self.assertEqual(os.path.getsize(os.path.join(maildir, "cur", name)), size, name)
