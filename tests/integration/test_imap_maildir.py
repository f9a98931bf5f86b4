"""Maildir interplay: files other programs drop into new/ or cur/, or rename,
are picked up at the next sync point with new UIDs; `peregrine deliver`."""

import os
import re
import socket
import sys
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import ServerTestCase, append_ok, flatten, sample_message  # noqa: E402

_counter = [0]


def drop(directory, data, info=None):
    """Writes a message the Maildir way: tmp/ then rename into `directory`."""
    _counter[0] += 1
    base = f"{int(time.time())}.M{_counter[0]}P{os.getpid()}.{socket.gethostname()}"
    maildir = os.path.dirname(directory)
    tmp = os.path.join(maildir, "tmp", base)
    with open(tmp, "wb") as f:
        f.write(data)
    name = base + (f":2,{info}" if info is not None else "")
    os.rename(tmp, os.path.join(directory, name))
    return name


class MaildirDropInTest(ServerTestCase):
    def uids(self, imap):
        typ, data = imap.uid("SEARCH", "ALL")
        return [int(x) for x in data[0].split()]

    def test_file_dropped_into_new_gets_new_uid(self):
        imap = self.server.login("alice", select="INBOX")
        append_ok(imap, "INBOX", sample_message("appended"))
        imap.noop()
        before = self.uids(imap)
        maildir = self.server.maildir("alice")
        drop(os.path.join(maildir, "new"), sample_message("dropped in new"))
        imap.noop()
        _t, exists = imap.response("EXISTS")
        self.assertIn(str(len(before) + 1).encode(), [e for e in exists if e])
        after = self.uids(imap)
        self.assertEqual(len(after), len(before) + 1)
        new_uid = after[-1]
        self.assertGreater(new_uid, max(before))
        typ, data = imap.uid("FETCH", str(new_uid), "(FLAGS BODY.PEEK[HEADER.FIELDS (SUBJECT)])")
        out = flatten(data)
        self.assertIn(b"dropped in new", out)
        self.assertIn(b"\\Recent", out)  # new/ means recent
        imap.logout()
        # A fresh session (SELECT is a sync point too) sees the same UID.
        imap2 = self.server.login("alice", select="INBOX")
        self.assertIn(new_uid, self.uids(imap2))
        imap2.logout()
        self.assertEqual(os.listdir(os.path.join(maildir, "new")), [])

    def test_file_dropped_into_cur_with_flags_and_lf(self):
        imap = self.server.login("bob")
        box = self.fresh_mailbox(imap)
        imap.select(box)
        path = self.server.maildir("bob", box)
        lf_msg = b"From: x@example.org\nSubject: lf drop\n\nbody line\n"
        drop(os.path.join(path, "cur"), lf_msg, info="FS")
        imap.noop()
        typ, data = imap.fetch("1", "(FLAGS RFC822.SIZE BODY.PEEK[])")
        out = flatten(data)
        self.assertIn(b"\\Seen", out)
        self.assertIn(b"\\Flagged", out)
        size = int(re.search(rb"RFC822\.SIZE (\d+)", out).group(1))
        self.assertEqual(size, len(lf_msg.replace(b"\n", b"\r\n")))
        self.assertIn(b"body line\r\n", out)
        imap.logout()

    def test_flags_changed_by_rename_are_seen(self):
        imap = self.server.login("bob")
        box = self.fresh_mailbox(imap)
        append_ok(imap, box, sample_message("to flag"))
        imap.select(box)
        cur = os.path.join(self.server.maildir("bob", box), "cur")
        names = os.listdir(cur)
        self.assertEqual(len(names), 1, names)
        base = names[0].split(":2,")[0]
        os.rename(os.path.join(cur, names[0]), os.path.join(cur, base + ":2,RS"))
        imap.noop()
        typ, data = imap.fetch("1", "(FLAGS)")
        out = flatten(data)
        self.assertIn(b"\\Seen", out)
        self.assertIn(b"\\Answered", out)
        # A file removed by another program is an expunge at the next sync point.
        os.unlink(os.path.join(cur, base + ":2,RS"))
        imap.noop()
        _t, data = imap.response("EXPUNGE")
        self.assertIn(b"1", [d for d in data if d])
        imap.logout()

    def test_deliver_command(self):
        proc = self.server.deliver("alice", sample_message("delivered"))
        self.assertEqual(proc.returncode, 0, proc.stderr)
        imap = self.server.login("alice", select="INBOX")
        typ, data = imap.search(None, "SUBJECT", "delivered")
        self.assertEqual(len(data[0].split()), 1)
        imap.logout()
        proc = self.server.deliver("alice", sample_message("to sent"), mailbox="Sent")
        self.assertEqual(proc.returncode, 0, proc.stderr)
        imap = self.server.login("alice")
        self.assertIn(b"MESSAGES 1", imap.status("Sent", "(MESSAGES)")[1][0])
        imap.logout()
        proc = self.server.deliver("nosuchuser", sample_message("x"))
        self.assertEqual(proc.returncode, 67, proc.stderr)  # EX_NOUSER


if __name__ == "__main__":
    unittest.main()
