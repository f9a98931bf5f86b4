"""Mailboxes: CREATE, DELETE, RENAME, SUBSCRIBE, UNSUBSCRIBE, LIST, LSUB,
CHILDREN, \\Noselect, SPECIAL-USE, modified UTF-7 names, STATUS."""

import imaplib
import os
import re
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
from harness import ServerTestCase, append_ok, sample_message  # noqa: E402

LIST_RE = re.compile(rb'^\(([^)]*)\) (NIL|"(?:[^"\\]|\\.)*") (.+)$')


def parse_list(data):
    """imaplib LIST data -> {name: set(attributes)}; delimiter must be "/"."""
    out = {}
    for item in data:
        if not item:
            continue
        if isinstance(item, tuple):  # name sent as a literal
            head, name = item
            m = LIST_RE.match(head.rstrip() + b" X")
            attrs = m.group(1)
        else:
            m = LIST_RE.match(item)
            assert m, item
            attrs, name = m.group(1), m.group(3)
            assert m.group(2) == b'"/"', item
            if name.startswith(b'"'):
                name = re.sub(rb'\\(.)', rb'\1', name[1:-1])
        out[name.decode()] = {a.decode().lower() for a in attrs.split()}
    return out


class MailboxTest(ServerTestCase):
    def setUp(self):
        self.imap = self.server.login("alice")

    def tearDown(self):
        try:
            self.imap.logout()
        except Exception:
            pass

    def list(self, ref, pattern):
        typ, data = self.imap.list(ref, pattern)
        self.assertEqual(typ, "OK", data)
        return parse_list(data)

    def test_new_user_has_special_use_mailboxes(self):
        boxes = self.list('""', "*")
        self.assertIn("INBOX", boxes)
        for name, attr in [("Drafts", "\\drafts"), ("Sent", "\\sent"), ("Trash", "\\trash"),
                           ("Junk", "\\junk"), ("Archive", "\\archive")]:
            self.assertIn(name, boxes)
            self.assertIn(attr, boxes[name], (name, boxes[name]))
        self.assertNotIn("\\sent", boxes["INBOX"])

    def test_list_empty_pattern_gives_delimiter(self):
        typ, data = self.imap.list('""', '""')
        self.assertEqual(typ, "OK")
        self.assertEqual(len(data), 1, data)
        self.assertRegex(data[0], rb'^\(\\Noselect\) "/" ""$')

    def test_create_hierarchy_children_and_percent(self):
        self.assertEqual(self.imap.create("Proj/A/B")[0], "OK")
        self.assertEqual(self.imap.create("Proj/C")[0], "OK")
        boxes = self.list('""', "Proj*")
        self.assertEqual(set(boxes), {"Proj", "Proj/A", "Proj/A/B", "Proj/C"})
        self.assertIn("\\haschildren", boxes["Proj"])
        self.assertIn("\\haschildren", boxes["Proj/A"])
        self.assertIn("\\hasnochildren", boxes["Proj/A/B"])
        self.assertIn("\\hasnochildren", boxes["Proj/C"])
        # % does not match the delimiter.
        self.assertEqual(set(self.list('""', "Proj/%")), {"Proj/A", "Proj/C"})
        self.assertEqual(set(self.list('""', "Pro%")), {"Proj"})
        # The reference is prefixed.
        self.assertEqual(set(self.list("Proj/", "%")), {"Proj/A", "Proj/C"})
        # Creating an existing name is NO; a trailing delimiter is allowed.
        self.assertEqual(self.imap.create("Proj/C")[0], "NO")
        self.assertEqual(self.imap.create("Trail/")[0], "OK")
        self.assertIn("Trail", self.list('""', "Trail"))

    def test_create_inbox_is_no_and_inbox_case_insensitive(self):
        self.assertEqual(self.imap.create("INBOX")[0], "NO")
        self.assertEqual(self.imap.create("inbox")[0], "NO")
        typ, _ = self.imap.select("iNbOx")
        self.assertEqual(typ, "OK")

    def test_delete(self):
        self.assertEqual(self.imap.create("Gone")[0], "OK")
        append_ok(self.imap, "Gone", sample_message("x"))
        self.assertEqual(self.imap.delete("Gone")[0], "OK")
        self.assertNotIn("Gone", self.list('""', "*"))
        self.assertEqual(self.imap.delete("Gone")[0], "NO")
        self.assertEqual(self.imap.delete("INBOX")[0], "NO")
        self.assertFalse(os.path.exists(self.server.maildir("alice", "Gone")))

    def test_delete_parent_leaves_noselect(self):
        self.assertEqual(self.imap.create("Par")[0], "OK")
        self.assertEqual(self.imap.create("Par/Kid")[0], "OK")
        self.assertEqual(self.imap.delete("Par")[0], "OK")
        boxes = self.list('""', "Par*")
        self.assertIn("Par/Kid", boxes)
        self.assertIn("Par", boxes)
        self.assertIn("\\noselect", boxes["Par"])
        self.assertIn("\\haschildren", boxes["Par"])
        self.assertEqual(self.imap.select("Par")[0], "NO")
        self.assertEqual(self.imap.delete("Par/Kid")[0], "OK")
        self.assertNotIn("Par", self.list('""', "*"))

    def test_parent_created_implicitly_lists_noselect(self):
        # Parent dirs are not created in Maildir++: a bare "Impl" has no folder.
        self.assertEqual(self.imap.create("Impl/Leaf")[0], "OK")
        boxes = self.list('""', "Impl*")
        self.assertIn("Impl/Leaf", boxes)
        if "Impl" in boxes and "\\noselect" in boxes["Impl"]:
            self.assertEqual(self.imap.select("Impl")[0], "NO")
            # CREATE of a \Noselect parent makes it selectable.
            self.assertEqual(self.imap.create("Impl")[0], "OK")
            self.assertEqual(self.imap.select("Impl")[0], "OK")

    def test_rename_with_hierarchy(self):
        self.assertEqual(self.imap.create("Old/Sub")[0], "OK")
        self.assertEqual(self.imap.create("Old")[0] in ("OK", "NO"), True)
        append_ok(self.imap, "Old/Sub", sample_message("in sub"))
        self.assertEqual(self.imap.rename("Old", "New")[0], "OK")
        boxes = self.list('""', "*")
        self.assertNotIn("Old", boxes)
        self.assertNotIn("Old/Sub", boxes)
        self.assertIn("New", boxes)
        self.assertIn("New/Sub", boxes)
        typ, data = self.imap.status("New/Sub", "(MESSAGES)")
        self.assertRegex(data[0], rb"MESSAGES 1")
        self.assertEqual(self.imap.rename("Nope", "X")[0], "NO")
        self.assertEqual(self.imap.rename("New", "Sent")[0], "NO")  # target exists

    def test_rename_inbox_moves_messages_and_keeps_inbox(self):
        imap = self.server.login("bob")
        try:
            append_ok(imap, "INBOX", sample_message("one"))
            append_ok(imap, "INBOX", sample_message("two"))
            self.assertEqual(imap.create("INBOX/Child")[0], "OK")
            self.assertEqual(imap.rename("INBOX", "OldInbox")[0], "OK")
            typ, data = imap.status("OldInbox", "(MESSAGES)")
            self.assertRegex(data[0], rb"MESSAGES 2")
            typ, data = imap.status("INBOX", "(MESSAGES)")
            self.assertRegex(data[0], rb"MESSAGES 0")
            boxes = parse_list(imap.list('""', "*")[1])
            # RFC 3501: inferiors of INBOX are not renamed.
            self.assertIn("INBOX/Child", boxes)
            self.assertNotIn("OldInbox/Child", boxes)
        finally:
            imap.logout()

    def test_subscribe_lsub(self):
        self.assertEqual(self.imap.create("Sub1/Deep")[0], "OK")
        self.assertEqual(self.imap.subscribe("Sub1/Deep")[0], "OK")
        typ, data = self.imap.lsub('""', "*")
        self.assertIn("Sub1/Deep", parse_list(data))
        # LSUB with % shows the unsubscribed parent as \Noselect (RFC 3501 6.3.9).
        typ, data = self.imap.lsub('""', "Sub1")
        self.assertEqual(typ, "OK")
        typ, data = self.imap.lsub('""', "%")
        lsub = parse_list(data)
        self.assertIn("Sub1", lsub)
        self.assertIn("\\noselect", lsub["Sub1"])
        self.assertEqual(self.imap.unsubscribe("Sub1/Deep")[0], "OK")
        typ, data = self.imap.lsub('""', "*")
        self.assertNotIn("Sub1/Deep", parse_list(data))
        # Subscribing a name that does not exist is allowed or NO, never BAD.
        self.assertIn(self.imap.subscribe("NoSuchBox")[0], ("OK", "NO"))

    def test_modified_utf7_names(self):
        name = "&ZeVnLIqe-"  # 日本語
        self.assertEqual(self.imap.create(name)[0], "OK")
        self.assertIn(name, self.list('""', "*"))
        self.assertEqual(self.imap.create("Caf&AOk-/Cr&AOg-me")[0], "OK")
        self.assertIn("Caf&AOk-/Cr&AOg-me", self.list('""', "*"))
        self.assertEqual(self.imap.create('"A&-B"')[0], "OK")  # "A&B"
        self.assertIn("A&-B", self.list('""', "*"))
        # Not valid modified UTF-7: raw 8-bit, unterminated shift, '&' alone.
        for bad in ["&Jjo", "&AGE-", '"a&b"', "&U,BTFw-x&"]:
            self.assertIn(harness.typ_of(self.imap.create, bad), ("NO", "BAD"), bad)
        self.assertEqual(self.imap.select(name)[0], "OK")

    def test_status(self):
        name = self.fresh_mailbox(self.imap)
        append_ok(self.imap, name, sample_message("a"), flags="(\\Seen)")
        append_ok(self.imap, name, sample_message("b"))
        typ, data = self.imap.status(name, "(MESSAGES RECENT UIDNEXT UIDVALIDITY UNSEEN)")
        self.assertEqual(typ, "OK")
        line = data[0]
        self.assertRegex(line, rb"MESSAGES 2\b")
        self.assertRegex(line, rb"UNSEEN 1\b")
        self.assertRegex(line, rb"UIDNEXT 3\b")
        self.assertRegex(line, rb"UIDVALIDITY [1-9]\d*")
        self.assertRegex(line, rb"RECENT \d+")
        self.assertEqual(self.imap.status("NoSuch", "(MESSAGES)")[0], "NO")
        self.assertEqual(harness.typ_of(self.imap.status, name, "(BOGUS)"), "BAD")

    def test_uidvalidity_changes_on_recreate(self):
        name = self.fresh_mailbox(self.imap)
        v1 = re.search(rb"UIDVALIDITY (\d+)", self.imap.status(name, "(UIDVALIDITY)")[1][0])
        self.assertEqual(self.imap.delete(name)[0], "OK")
        self.assertEqual(self.imap.create(name)[0], "OK")
        v2 = re.search(rb"UIDVALIDITY (\d+)", self.imap.status(name, "(UIDVALIDITY)")[1][0])
        self.assertNotEqual(v1.group(1), v2.group(1))

    def test_delete_selected_mailbox(self):
        name = self.fresh_mailbox(self.imap)
        self.assertEqual(self.imap.select(name)[0], "OK")
        try:
            typ, _ = self.imap.delete(name)
            self.assertIn(typ, ("OK", "NO"))
            self.assertEqual(self.imap.noop()[0], "OK")
        except imaplib.IMAP4.abort:  # BYE: allowed (Dovecot does it)
            self.imap = self.server.login("alice")
        self.assertAlmostEqual(0, 0)

    def test_maildir_layout_on_disk(self):
        self.assertEqual(self.imap.create("Disk/v1.2")[0], "OK")
        path = self.server.maildir("alice", "Disk/v1.2")
        self.assertTrue(path.endswith(".Disk.v1%2E2"), path)
        for sub in ("cur", "new", "tmp"):
            self.assertTrue(os.path.isdir(os.path.join(path, sub)), sub)
        self.assertTrue(os.path.exists(os.path.join(path, "maildirfolder")))


if __name__ == "__main__":
    unittest.main()
