"""SEARCH over the full-text index with imaplib: substring keys, ESEARCH,
SEARCHRES, and the index's upkeep (peregrine index stats|rebuild, rebuilt
when damaged, in step with the messages after a kill -9)."""

import base64
import os
import sqlite3
import sys
import threading
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import ServerTestCase, append_ok, sample_message  # noqa: E402

RICH = (
    b"From: =?UTF-8?Q?=C3=89COLE?= Admin <admin@ecole.example>\r\n"
    b"To: Parents <parents@example.org>\r\n"
    b"Subject: =?UTF-8?Q?Perfor?= =?UTF-8?Q?mance_notes?=\r\n"
    b"X-Campaign: spring-2024\r\n"
    b"MIME-Version: 1.0\r\n"
    b"Content-Type: multipart/mixed; boundary=b\r\n\r\n"
    b"--b\r\nContent-Type: text/plain; charset=utf-8\r\n"
    b"Content-Transfer-Encoding: quoted-printable\r\n\r\n"
    b"Bienvenue =C3=A0 l'=C3=A9cole, supercali=\r\nfragilistic.\r\n"
    b"--b\r\nContent-Type: text/plain; charset=utf-8\r\n"
    b"Content-Transfer-Encoding: base64\r\n\r\n"
    b"SGlkZGVuIHRyZWFzdXJlIG1hcA==\r\n"
    b"--b\r\nContent-Type: application/pdf; name=\"report-q3.pdf\"\r\n"
    b"Content-Transfer-Encoding: base64\r\n\r\nJVBERi0=\r\n--b--\r\n")


def numbers(data):
    return [int(n) for n in (data[0] or b"").split()]


class SearchTest(ServerTestCase):
    def setUp(self):
        self.imap = self.server.login("alice")
        self.box = self.fresh_mailbox(self.imap)
        append_ok(self.imap, self.box, sample_message("Lunch", "Meet at noon.\r\n"))
        append_ok(self.imap, self.box, RICH)
        append_ok(self.imap, self.box, sample_message("Other", "Performing arts.\r\n",
                                                      sender="bob@example.org"))
        typ, _ = self.imap.select(self.box)
        self.assertEqual(typ, "OK")

    def tearDown(self):
        self.imap.logout()

    def search(self, *criteria, charset=None):
        typ, data = self.imap.search(charset, *criteria)
        self.assertEqual(typ, "OK", data)
        return numbers(data)

    def test_substrings(self):
        self.assertEqual(self.search("SUBJECT", "perf"), [2])                # prefix
        self.assertEqual(self.search("SUBJECT", "formance"), [2])            # across encoded words
        self.assertEqual(self.search("BODY", "perform"), [3])                # infix, case
        self.assertEqual(self.search("TEXT", "perform"), [2, 3])
        self.assertEqual(self.search("BODY", "califragil"), [2])             # QP soft break
        self.assertEqual(self.search("BODY", '"treasure ma"'), [2])          # base64 body
        self.assertEqual(self.search("BODY", "SGlkZGVu"), [])
        self.assertEqual(self.search("BODY", "report-q3"), [2])              # attachment name
        self.assertEqual(self.search("FROM", "bob@"), [3])
        self.assertEqual(self.search("HEADER", "X-Campaign", "spring"), [2])
        self.assertEqual(self.search("HEADER", "X-Campaign", '""'), [2])
        self.assertEqual(self.search("OR", "FROM", "bob", "SUBJECT", "lunch"), [1, 3])
        self.assertEqual(self.search("NOT", "BODY", "noon"), [2, 3])
        # Non-ASCII case folding, as a literal in UTF-8.
        self.imap.literal = "école".encode()
        self.assertEqual(self.search("FROM", charset="UTF-8"), [2])
        self.imap.literal = "ÉCOLE".encode()
        self.assertEqual(self.search("BODY", charset="UTF-8"), [2])
        typ, data = self.imap.uid("SEARCH", "BODY", "perform")
        self.assertEqual(typ, "OK")
        self.assertEqual(len(numbers(data)), 1)

    def test_japanese_text(self):
        # CJK text has no spaces; the index keeps its bigrams. A body in
        # ISO-2022-JP, searched in UTF-8: a match anywhere in a sentence,
        # across the 。 between two, and none for the same characters in
        # another order.
        body = "本日の会議資料を確認します。明日はよろしく。".encode("iso2022_jp")
        message = (b"From: Tanaka <tanaka@example.jp>\r\nTo: alice@example.com\r\n"
                   b"Subject: =?UTF-8?B?" + base64.b64encode("会議".encode()) +
                   b"?=\r\nMIME-Version: 1.0\r\n"
                   b"Content-Type: text/plain; charset=iso-2022-jp\r\n"
                   b"Content-Transfer-Encoding: 7bit\r\n\r\n" + body + b"\r\n")
        append_ok(self.imap, self.box, message)
        self.imap.select(self.box)
        for needle, want in (("会議資料", [4]), ("資", [4]), ("議資", [4]),
                             ("確認します。明日", [4]), ("資料会議", []), ("会議です", [])):
            with self.subTest(needle=needle):
                self.imap.literal = needle.encode()
                self.assertEqual(self.search("BODY", charset="UTF-8"), want)
        self.imap.literal = "会議".encode()
        self.assertEqual(self.search("SUBJECT", charset="UTF-8"), [4])
        self.imap.literal = "会議".encode()
        self.assertEqual(self.search("TEXT", charset="UTF-8"), [4])

    def test_bad_charset(self):
        raw = self.server.raw()
        raw.login("alice", self.server.users["alice"])
        raw.command(f'SELECT "{self.box}"')
        tagged, _ = raw.command("SEARCH CHARSET X-BOGUS BODY a")
        self.assertIn(b"NO [BADCHARSET", tagged)
        raw.close()

    def test_capability_esearch_and_searchres(self):
        typ, data = self.imap.capability()
        caps = data[0].split()
        self.assertIn(b"ESEARCH", caps)
        self.assertIn(b"SEARCHRES", caps)
        raw = self.server.raw()
        raw.login("alice", self.server.users["alice"])
        raw.command(f'SELECT "{self.box}"')
        tagged, lines = raw.command("SEARCH RETURN (MIN MAX COUNT ALL) TEXT perform", tag="e1")
        self.assertEqual(lines[0].rstrip(), b'* ESEARCH (TAG "e1") MIN 2 MAX 3 COUNT 2 ALL 2:3')
        tagged, lines = raw.command("SEARCH RETURN (SAVE) BODY perform")
        self.assertEqual(len(lines), 1, lines)  # SAVE alone: only the tagged OK
        tagged, lines = raw.command("FETCH $ (FLAGS)")
        self.assertTrue(lines[0].startswith(b"* 3 FETCH"), lines)
        self.assertEqual(len(lines), 2, lines)
        tagged, lines = raw.command("UID SEARCH RETURN (COUNT) OR $ SUBJECT lunch", tag="e2")
        self.assertEqual(lines[0].rstrip(), b'* ESEARCH (TAG "e2") UID COUNT 2')
        raw.close()


class IndexUpkeepTest(ServerTestCase):
    def stats(self):
        out = self.server.cli("index", "stats", "--config", self.server.config, "alice")
        fields = dict(line.split(": ", 1) for line in out.stdout.decode().splitlines())
        return fields

    def test_damaged_index_is_rebuilt_and_rebuild_command(self):
        imap = self.server.login("alice")
        box = self.fresh_mailbox(imap)
        for i in range(5):
            append_ok(imap, box, sample_message(f"note {i}", f"unique{i}word here\r\n"))
        imap.logout()
        self.server.stop()
        db = sqlite3.connect(self.server.search_path("alice"))
        db.execute("UPDATE search_fts_data SET block = x'ffffffff'")
        db.commit()
        db.close()
        self.server.start()
        imap = self.server.login("alice", select=box)
        typ, data = imap.search(None, "BODY", "unique3wor")
        self.assertEqual(numbers(data), [4])
        imap.logout()
        fields = self.stats()
        self.assertEqual(fields["messages"], fields["indexed"])
        out = self.server.cli("index", "rebuild", "--config", self.server.config, "alice")
        self.assertIn(b"indexed: ", out.stdout)
        fields = self.stats()
        self.assertEqual(fields["messages"], fields["indexed"])
        self.assertGreater(int(fields["index_bytes"]), 0)
        unknown = self.server.cli("index", "stats", "--config", self.server.config, "nobody",
                                  check=False)
        self.assertNotEqual(unknown.returncode, 0)

    def test_kill_during_appends_keeps_index_in_step(self):
        imap = self.server.login("alice")
        box = self.fresh_mailbox(imap)
        stop = threading.Event()

        def append_forever():
            try:
                i = 0
                while not stop.is_set():
                    imap.append(box, None, None, sample_message(f"k{i}", "killme text\r\n"))
                    i += 1
            except Exception:
                pass  # the server was killed under us

        t = threading.Thread(target=append_forever)
        t.start()
        time.sleep(1.5)
        self.server.kill9()
        stop.set()
        t.join(timeout=30)
        self.server.start()
        fields = self.stats()
        self.assertGreater(int(fields["messages"]), 0)
        self.assertEqual(fields["messages"], fields["indexed"])
        # The word index holds every record but those still waiting for
        # their batch (fewer than a batch's 32: the open leaves them), and
        # the deleted ones not yet purged.
        db = sqlite3.connect(self.server.index_path("alice"))
        db.execute("ATTACH ? AS search", (self.server.search_path("alice"),))
        docs = db.execute("SELECT count(*) FROM search_fts_docsize").fetchone()[0]
        waiting = db.execute("SELECT count(*) FROM search_docs WHERE id > "
                             "(SELECT upto FROM search_docs_indexed)").fetchone()[0]
        purged_later = db.execute(
            "SELECT count(*) FROM search_purge WHERE id <= (SELECT upto FROM "
            "search_docs_indexed) AND id NOT IN (SELECT id FROM search_purged)").fetchone()[0]
        db.close()
        self.assertLess(waiting, 32)
        self.assertEqual(docs, int(fields["indexed"]) - waiting + purged_later)


if __name__ == "__main__":
    unittest.main()
