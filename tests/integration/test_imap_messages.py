"""Messages: APPEND (flags, date, LITERAL+), SELECT/EXAMINE, FETCH, STORE,
COPY/MOVE, EXPUNGE/UID EXPUNGE/CLOSE/UNSELECT, SEARCH, CHECK, UID forms."""

import os
import re
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
from harness import ServerTestCase, append_ok, flatten, sample_message, status_of  # noqa: E402

MULTIPART = (
    b"From: Carol <carol@example.org>\r\n"
    b"To: Dave <dave@example.org>, Erin <erin@example.org>\r\n"
    b"Cc: frank@example.org\r\n"
    b"Subject: Multipart =?utf-8?q?caf=C3=A9?=\r\n"
    b"Date: Tue, 8 Feb 1994 10:00:00 +0100\r\n"
    b"Message-ID: <multi-1@example.org>\r\n"
    b"In-Reply-To: <parent@example.org>\r\n"
    b"MIME-Version: 1.0\r\n"
    b'Content-Type: multipart/mixed; boundary="XX"\r\n'
    b"\r\n"
    b"preamble\r\n"
    b"--XX\r\n"
    b"Content-Type: text/plain; charset=utf-8\r\n"
    b"\r\n"
    b"First part body.\r\n"
    b"--XX\r\n"
    b"Content-Type: application/octet-stream; name=\"a.bin\"\r\n"
    b"Content-Transfer-Encoding: base64\r\n"
    b"Content-Disposition: attachment; filename=\"a.bin\"\r\n"
    b"\r\n"
    b"AAECAwQF\r\n"
    b"--XX--\r\n")


def expand(seqset):
    """b'1:3,5' -> [1, 2, 3, 5]."""
    out = []
    for part in seqset.decode().split(","):
        lo, _, hi = part.partition(":")
        lo, hi = int(lo), int(hi or lo)
        out += list(range(min(lo, hi), max(lo, hi) + 1))
    return out


def apply_expunges(uids, expunge_data):
    """Applies untagged EXPUNGE sequence numbers, in order, to a UID list."""
    uids = list(uids)
    for n in expunge_data or []:
        if n:
            del uids[int(n) - 1]
    return uids


class MessagesTest(ServerTestCase):
    def setUp(self):
        self.imap = self.server.login("alice")
        self.box = self.fresh_mailbox(self.imap)

    def tearDown(self):
        try:
            self.imap.logout()
        except Exception:
            pass

    def fill(self, count=3):
        uids = []
        for i in range(count):
            uids.append(append_ok(self.imap, self.box, sample_message(f"msg {i}", f"body {i}\r\n")))
        self.assertEqual(self.imap.select(self.box)[0], "OK")
        return uids

    def fetch(self, seq, items, uid=False):
        if uid:
            typ, data = self.imap.uid("FETCH", seq, items)
        else:
            typ, data = self.imap.fetch(seq, items)
        self.assertEqual(typ, "OK", data)
        return flatten(data)

    # --- APPEND --------------------------------------------------------------

    def test_append_flags_date_and_appenduid(self):
        typ, data = self.imap.append(self.box, "(\\Flagged $Work)",
                                     '"01-Jan-2020 10:20:30 +0200"', sample_message("dated"))
        self.assertEqual(typ, "OK")
        m = re.search(rb"\[APPENDUID (\d+) (\d+)\]", data[0])
        self.assertTrue(m, data)
        uid = int(m.group(2))
        self.assertEqual(self.imap.select(self.box)[0], "OK")
        out = self.fetch(str(uid), "(FLAGS INTERNALDATE)", uid=True)
        self.assertIn(b"\\Flagged", out)
        self.assertIn(b"$Work", out)
        self.assertIn(b'INTERNALDATE "01-Jan-2020 10:20:30 +0200"', out)
        _typ, data = self.imap.response("PERMANENTFLAGS")

    def test_append_to_missing_mailbox_is_trycreate(self):
        typ, data = self.imap.append("NoSuchBox", None, None, sample_message())
        self.assertEqual(typ, "NO")
        self.assertIn(b"[TRYCREATE]", data[0])

    def test_append_bad_date_and_flags(self):
        self.assertEqual(harness.typ_of(self.imap.append, self.box, None,
                                        '"99-Foo-2020 10:20:30 +0200"', sample_message()), "BAD")
        self.assertIn(harness.typ_of(self.imap.append, self.box, "(\\Bogus)", None,
                                     sample_message()), ("BAD", "NO"))
        self.assertEqual(self.imap.status(self.box, "(MESSAGES)")[1][0].count(b"MESSAGES 0"), 1)

    def test_append_literal_plus_and_sync_literal_raw(self):
        raw = self.server.raw()
        raw.login("alice", harness.USERS["alice"])
        msg = sample_message("literal plus")
        raw.send(f"L1 APPEND {self.box} (\\Seen) {{{len(msg)}+}}\r\n".encode() + msg + b"\r\n")
        lines = raw.read_response("L1")
        self.assertEqual(status_of(lines[-1]), "OK", lines)
        self.assertFalse(any(l.startswith(b"+") for l in lines), lines)
        # Synchronizing literal: wait for the continuation.
        msg2 = sample_message("sync literal")
        raw.send(f"L2 APPEND {self.box} {{{len(msg2)}}}\r\n".encode())
        cont = raw.readline()
        self.assertTrue(cont.startswith(b"+"), cont)
        raw.send(msg2 + b"\r\n")
        lines = raw.read_response("L2")
        self.assertEqual(status_of(lines[-1]), "OK", lines)
        # Bare-LF message is stored with CRLF: RFC822.SIZE matches what FETCH sends.
        lf = b"Subject: lf only\nFrom: a@b\n\nline one\nline two\n"
        raw.send(f"L3 APPEND {self.box} {{{len(lf)}+}}\r\n".encode() + lf + b"\r\n")
        self.assertEqual(status_of(raw.read_response("L3")[-1]), "OK")
        raw.command(f"SELECT {self.box}")
        tagged, lines = raw.command("FETCH 3 (RFC822.SIZE BODY.PEEK[])")
        text = b"".join(lines)
        size = int(re.search(rb"RFC822\.SIZE (\d+)", text).group(1))
        self.assertEqual(size, len(lf.replace(b"\n", b"\r\n")))
        self.assertIn(b"line one\r\nline two\r\n", text)
        raw.command("LOGOUT")
        raw.close()

    # --- SELECT / EXAMINE ----------------------------------------------------

    def test_select_responses(self):
        self.fill(2)
        raw = self.server.raw()
        raw.login("alice", harness.USERS["alice"])
        tagged, lines = raw.command(f"SELECT {self.box}")
        text = b"".join(lines)
        self.assertIn(b"* 2 EXISTS", text)
        self.assertRegex(text, rb"\* \d+ RECENT")
        self.assertRegex(text, rb"\* FLAGS \(")
        self.assertRegex(text, rb"\* OK \[PERMANENTFLAGS \(.*\\\*\)")
        self.assertRegex(text, rb"\* OK \[UIDVALIDITY \d+\]")
        self.assertRegex(text, rb"\* OK \[UIDNEXT 3\]")
        self.assertRegex(tagged, rb"OK \[READ-WRITE\]")
        tagged, lines = raw.command(f"EXAMINE {self.box}")
        self.assertRegex(tagged, rb"OK \[READ-ONLY\]")
        tagged, lines = raw.command("STORE 1 +FLAGS (\\Flagged)")
        self.assertIn(status_of(tagged), ("NO", "OK"))  # NO expected; OK if nothing changed
        tagged, lines = raw.command("FETCH 1 (FLAGS)")
        self.assertNotIn(b"\\Flagged", b"".join(lines))
        tagged, _ = raw.command("SELECT NoSuchBox")
        self.assertEqual(status_of(tagged), "NO")
        tagged, _ = raw.command("FETCH 1 FLAGS")  # failed SELECT deselects
        self.assertEqual(status_of(tagged), "BAD")
        raw.close()

    def test_examine_does_not_set_seen(self):
        self.fill(1)
        self.imap.select(self.box, readonly=True)
        self.fetch("1", "(BODY[TEXT])")
        self.imap.select(self.box)
        self.assertNotIn(b"\\Seen", self.fetch("1", "(FLAGS)"))

    # --- FETCH ---------------------------------------------------------------

    def test_fetch_items(self):
        uids = self.fill(2)
        out = self.fetch("1:2", "(UID FLAGS INTERNALDATE RFC822.SIZE ENVELOPE)")
        self.assertIn(f"UID {uids[0]}".encode(), out)
        self.assertRegex(out, rb'INTERNALDATE "\d\d-[A-Z][a-z]{2}-\d{4} \d\d:\d\d:\d\d [+-]\d{4}"')
        self.assertIn(b'"Mon, 7 Feb 1994 21:52:25 -0800" "msg 0"', out)
        self.assertIn(b'(("Alice" NIL "alice" "example.org"))', out)
        for macro, must in [("ALL", b"ENVELOPE"), ("FAST", b"RFC822.SIZE"),
                            ("FULL", b"BODY (")]:
            self.assertIn(must, self.fetch("1", macro), macro)

    def test_fetch_body_sections_and_partial(self):
        append_ok(self.imap, self.box, MULTIPART)
        self.imap.select(self.box)
        out = self.fetch("1", "(BODY.PEEK[1])")
        self.assertIn(b"First part body.", out)
        out = self.fetch("1", "(BODY.PEEK[2])")
        self.assertIn(b"AAECAwQF", out)
        out = self.fetch("1", "(BODY.PEEK[2.MIME])")
        self.assertIn(b"Content-Disposition: attachment", out)
        out = self.fetch("1", "(BODY.PEEK[HEADER.FIELDS (Subject Cc)])")
        self.assertIn(b"Cc: frank@example.org", out)
        self.assertNotIn(b"To:", out)
        out = self.fetch("1", "(BODY.PEEK[HEADER.FIELDS.NOT (Subject)])")
        self.assertNotIn(b"Subject:", out)
        self.assertIn(b"Message-ID:", out)
        out = self.fetch("1", "(BODY.PEEK[HEADER])")
        self.assertTrue(out.rstrip(b")").endswith(b"\r\n\r\n"), out[-20:])
        out = self.fetch("1", "(BODY.PEEK[]<0.10>)")
        self.assertRegex(out, rb'BODY\[\]<0> (\{10\}|")')
        self.assertIn(MULTIPART[:10], out)
        out = self.fetch("1", "(BODY.PEEK[TEXT]<2.5>)")
        self.assertRegex(out, rb'BODY\[TEXT\]<2> (\{5\}|")')
        body = MULTIPART.split(b"\r\n\r\n", 1)[1]
        self.assertIn(body[2:7], out)
        out = self.fetch("1", f"(BODY.PEEK[]<{len(MULTIPART) + 10}.5>)")
        self.assertRegex(out, rb'BODY\[\]<\d+> (""|\{0\})')
        out = self.fetch("1", "(BODY.PEEK[9])")  # missing part: empty
        self.assertRegex(out, rb'BODY\[9\] (""|\{0\}|NIL)')

    def test_bodystructure(self):
        append_ok(self.imap, self.box, MULTIPART)
        self.imap.select(self.box)
        out = self.fetch("1", "(BODYSTRUCTURE)")
        self.assertRegex(
            out, rb'(?i)\(\("text" "plain" \("charset" "utf-8"\) NIL NIL "7bit" 1[68] [01]')
        self.assertRegex(
            out, rb'(?i)"application" "octet-stream" \("name" "a\.bin"\) NIL NIL "base64" (8|10)')
        self.assertRegex(out, rb'(?i)"mixed" \("boundary" "XX"\)')
        self.assertRegex(out, rb'(?i)\("attachment" \("filename" "a\.bin"\)\)')
        out = self.fetch("1", "(BODY)")
        self.assertNotRegex(out, rb'(?i)"boundary"')  # BODY has no extension data

    def test_envelope_multipart(self):
        append_ok(self.imap, self.box, MULTIPART)
        self.imap.select(self.box)
        out = self.fetch("1", "(ENVELOPE)")
        self.assertIn(b'"Multipart =?utf-8?q?caf=C3=A9?="', out)
        self.assertIn(b'(("Dave" NIL "dave" "example.org")("Erin" NIL "erin" "example.org"))', out)
        self.assertIn(b'"<parent@example.org>" "<multi-1@example.org>"', out)

    def test_peek_vs_body_sets_seen(self):
        self.fill(2)
        out = self.fetch("1", "(BODY.PEEK[])")
        self.assertNotIn(b"\\Seen", self.fetch("1", "(FLAGS)"))
        out = self.fetch("1", "(BODY[])")
        self.assertIn(b"\\Seen", out)  # the FLAGS change is reported with the fetch
        self.assertIn(b"\\Seen", self.fetch("1", "(FLAGS)"))
        self.fetch("2", "(RFC822.HEADER)")
        self.assertNotIn(b"\\Seen", self.fetch("2", "(FLAGS)"))
        out = self.fetch("2", "(RFC822.TEXT)")
        self.assertIn(b"body 1", out)
        self.assertIn(b"\\Seen", self.fetch("2", "(FLAGS)"))

    def test_rfc822_items(self):
        self.fill(1)
        msg = sample_message("msg 0", "body 0\r\n")
        out = self.fetch("1", "(RFC822.SIZE RFC822.HEADER)")
        self.assertIn(b"Subject: msg 0", out)
        self.assertNotIn(b"body 0", out)
        out = self.fetch("1", "(RFC822)")
        self.assertIn(b"RFC822 {", out)
        self.assertIn(b"body 0", out)
        out = self.fetch("1", "(RFC822.SIZE)")
        m = re.search(rb"RFC822\.SIZE (\d+)", out)
        self.assertEqual(int(m.group(1)), len(msg))

    def test_fetch_bad_items(self):
        self.fill(1)
        for items in ["(BOGUS)", "(BODY[HEADER.FIELDS])", "(BODY[1.2.X])", "(BODY[]<1>)",
                      "()", "(FLAGS"]:
            self.assertEqual(harness.typ_of(self.imap.fetch, "1", items), "BAD", items)
        # A sequence number beyond EXISTS is BAD (RFC 3501 §9 seq-number).
        self.assertIn(harness.typ_of(self.imap.fetch, "99", "(FLAGS)"), ("BAD", "NO"))
        # UID FETCH of a missing UID is OK with no data.
        typ, data = self.imap.uid("FETCH", "9999", "(FLAGS)")
        self.assertEqual(typ, "OK")
        self.assertEqual([d for d in data if d], [])

    # --- STORE ---------------------------------------------------------------

    def test_store_variants_and_keywords(self):
        self.fill(3)
        typ, data = self.imap.store("1:2", "+FLAGS", "(\\Flagged $Label1)")
        self.assertEqual(typ, "OK")
        flat = flatten(data)
        self.assertEqual(harness.fetch_count(data), 2, data)
        self.assertIn(b"$Label1", flat)
        typ, data = self.imap.store("1", "-FLAGS", "(\\Flagged)")
        self.assertNotIn(b"\\Flagged", flatten(data))
        self.assertIn(b"$Label1", flatten(data))
        typ, data = self.imap.store("2", "FLAGS", "(\\Answered)")
        self.assertNotIn(b"$Label1", flatten(data))
        self.assertIn(b"\\Answered", flatten(data))
        typ, data = self.imap.store("3", "+FLAGS.SILENT", "(\\Draft)")
        self.assertEqual(typ, "OK")
        self.assertEqual([d for d in data if d], [], data)
        self.assertIn(b"\\Draft", self.fetch("3", "(FLAGS)"))
        typ, data = self.imap.uid("STORE", "1:*", "FLAGS.SILENT", "()")
        self.assertEqual(typ, "OK")
        self.assertNotIn(b"\\", self.fetch("1:3", "(FLAGS)").replace(b"\\Recent", b""))
        # New keyword appears in FLAGS / PERMANENTFLAGS at the next SELECT.
        self.imap.store("1", "+FLAGS", "(NewKey)")
        self.imap.select(self.box)
        _t, flags = self.imap.response("FLAGS")
        self.assertIn(b"NewKey", flags[-1])
        # Flags land in the file name (Maildir info).
        self.imap.store("1", "FLAGS", "(\\Seen \\Flagged)")
        cur = os.path.join(self.server.maildir("alice", self.box), "cur")
        names = os.listdir(cur)
        self.assertTrue(any(n.endswith(":2,FS") for n in names), names)
        # Bad flag names and \Recent are rejected.
        self.assertIn(harness.typ_of(self.imap.store, "1", "+FLAGS", "(\\Bogus)"),
                      ("BAD", "NO"))
        # \Recent cannot be set by a client: refused, or accepted with no effect.
        before = self.fetch("2", "(FLAGS)")
        if harness.typ_of(self.imap.store, "2", "+FLAGS.SILENT", "(\\Recent)") == "OK":
            self.assertEqual(self.fetch("2", "(FLAGS)"), before)
        self.assertEqual(harness.typ_of(self.imap.store, "1", "XFLAGS", "(\\Seen)"), "BAD")

    # --- COPY / MOVE ---------------------------------------------------------

    def test_copy_and_copyuid(self):
        uids = self.fill(3)
        dest = self.fresh_mailbox(self.imap)
        self.imap.store("2", "+FLAGS", "(\\Flagged kw1)")
        typ, data = self.imap.copy("2:3", dest)
        self.assertEqual(typ, "OK")
        m = re.search(rb"\[COPYUID (\d+) (\S+) (\S+)\]", data[0])
        self.assertTrue(m, data)
        self.assertEqual(expand(m.group(2)), [uids[1], uids[2]])
        self.assertEqual(expand(m.group(3)), [1, 2])
        typ, data = self.imap.status(dest, "(MESSAGES)")
        self.assertIn(b"MESSAGES 2", data[0])
        typ, data = self.imap.copy("1", "NoSuchBox")
        self.assertEqual(typ, "NO")
        self.assertIn(b"TRYCREATE", data[0])
        typ, data = self.imap.uid("COPY", f"{uids[0]}", dest)
        self.assertEqual(typ, "OK")
        self.imap.select(dest)
        out = self.fetch("1", "(FLAGS)")
        self.assertIn(b"\\Flagged", out)
        self.assertIn(b"kw1", out)
        self.assertEqual(self.imap.store("1", "+FLAGS", "(\\Deleted)")[0], "OK")
        self.assertEqual(self.imap.expunge()[0], "OK")
        # The copy in the source is untouched.
        self.imap.select(self.box)
        self.assertIn(b"msg 1", self.fetch("2", "(BODY.PEEK[HEADER.FIELDS (SUBJECT)])"))

    def test_move(self):
        uids = self.fill(3)
        dest = self.fresh_mailbox(self.imap)
        raw = self.server.raw()
        raw.login("alice", harness.USERS["alice"])
        raw.command(f"SELECT {self.box}")
        tagged, lines = raw.command(f"MOVE 1 {dest}")
        self.assertEqual(status_of(tagged), "OK", lines)
        text = b"".join(lines)
        self.assertRegex(text, rb"\* OK \[COPYUID \d+ %d 1\]" % uids[0])
        self.assertIn(b"* 1 EXPUNGE", text)
        tagged, lines = raw.command(f"UID MOVE {uids[2]} {dest}")
        self.assertEqual(status_of(tagged), "OK", lines)
        self.assertIn(b"* 2 EXPUNGE", b"".join(lines))
        tagged, lines = raw.command("FETCH 1:* (UID)")
        self.assertEqual(b"".join(lines).count(b"FETCH"), 1)
        tagged, _ = raw.command("MOVE 1 NoSuchBox")
        self.assertEqual(status_of(tagged), "NO")
        raw.close()
        typ, data = self.imap.status(dest, "(MESSAGES)")
        self.assertIn(b"MESSAGES 2", data[0])

    # --- EXPUNGE / CLOSE / UNSELECT ------------------------------------------

    def test_expunge_and_uid_expunge(self):
        uids = self.fill(5)
        self.imap.store("1:4", "+FLAGS.SILENT", "(\\Deleted)")
        typ, data = self.imap.uid("EXPUNGE", f"{uids[1]}:{uids[2]}")
        self.assertEqual(typ, "OK")
        _t, data = self.imap.response("EXPUNGE")
        left = apply_expunges(list(uids), data)
        self.assertEqual(left, [uids[0], uids[3], uids[4]])
        typ, data = self.imap.expunge()
        self.assertEqual(apply_expunges(left, data), [uids[4]])
        typ, data = self.imap.uid("SEARCH", "ALL")
        self.assertEqual([int(x) for x in data[0].split()], [uids[4]])

    def test_close_expunges_silently_and_unselect_does_not(self):
        self.fill(2)
        self.imap.store("1", "+FLAGS.SILENT", "(\\Deleted)")
        typ, _ = self.imap.unselect()
        self.assertEqual(typ, "OK")
        self.assertIn(b"MESSAGES 2", self.imap.status(self.box, "(MESSAGES)")[1][0])
        self.imap.select(self.box)
        typ, data = self.imap.close()
        self.assertEqual(typ, "OK")
        self.assertIn(b"MESSAGES 1", self.imap.status(self.box, "(MESSAGES)")[1][0])
        # CLOSE on a read-only selection expunges nothing.
        self.imap.select(self.box)
        self.imap.store("1", "+FLAGS.SILENT", "(\\Deleted)")
        self.imap.select(self.box, readonly=True)
        self.imap.close()
        self.assertIn(b"MESSAGES 1", self.imap.status(self.box, "(MESSAGES)")[1][0])

    def test_check(self):
        self.fill(1)
        self.assertEqual(self.imap.check()[0], "OK")

    # --- SEARCH --------------------------------------------------------------

    def test_search_keys(self):
        msgs = [
            ("apple pie", "Recipe body with cinnamon\r\n", "alice@example.org"),
            ("banana split", "Dessert body\r\n", "bob@example.org"),
            ("cherry tart", "Another cinnamon thing\r\n", "carol@example.org"),
            ("durian", "x" * 3000 + "\r\n", "dave@example.org"),
        ]
        dates = ['"01-Jan-2020 00:00:00 +0000"', '"15-Jun-2021 12:00:00 +0000"',
                 '"20-Dec-2022 12:00:00 +0000"', '"05-Mar-2023 12:00:00 +0000"']
        for (subj, body, frm), date in zip(msgs, dates):
            self.imap.append(self.box, None, date, sample_message(subj, body, sender=frm))
        self.imap.select(self.box)
        self.imap.store("1", "+FLAGS", "(\\Seen \\Flagged)")
        self.imap.store("2", "+FLAGS", "(\\Answered $Hot)")
        self.imap.store("3", "+FLAGS", "(\\Deleted \\Draft)")

        def s(*criteria):
            typ, data = self.imap.search(None, *criteria)
            self.assertEqual(typ, "OK", criteria)
            return [int(x) for x in data[0].split()]

        self.assertEqual(s("ALL"), [1, 2, 3, 4])
        self.assertEqual(s("SEEN"), [1])
        self.assertEqual(s("UNSEEN"), [2, 3, 4])
        self.assertEqual(s("FLAGGED"), [1])
        self.assertEqual(s("UNFLAGGED"), [2, 3, 4])
        self.assertEqual(s("ANSWERED"), [2])
        self.assertEqual(s("UNANSWERED"), [1, 3, 4])
        self.assertEqual(s("DELETED"), [3])
        self.assertEqual(s("UNDELETED"), [1, 2, 4])
        self.assertEqual(s("DRAFT"), [3])
        self.assertEqual(s("UNDRAFT"), [1, 2, 4])
        self.assertEqual(s("KEYWORD", "$Hot"), [2])
        self.assertEqual(s("UNKEYWORD", "$Hot"), [1, 3, 4])
        self.assertEqual(s("SUBJECT", "banana"), [2])
        self.assertEqual(s("SUBJECT", "BANANA"), [2])  # case-insensitive
        self.assertEqual(s("FROM", "carol"), [3])
        self.assertEqual(s("TO", "bob@example.org"), [1, 2, 3, 4])
        self.assertEqual(s("BODY", "cinnamon"), [1, 3])
        self.assertEqual(s("TEXT", "Dessert"), [2])
        self.assertEqual(s("TEXT", "banana"), [2])  # TEXT includes the header
        self.assertEqual(s("HEADER", "Subject", "tart"), [3])
        self.assertEqual(s("HEADER", "Message-ID", '""'), [1, 2, 3, 4])
        self.assertEqual(s("LARGER", "2000"), [4])
        self.assertEqual(s("SMALLER", "2000"), [1, 2, 3])
        self.assertEqual(s("BEFORE", "1-Jan-2021"), [1])
        self.assertEqual(s("ON", "15-Jun-2021"), [2])
        self.assertEqual(s("SINCE", "20-Dec-2022"), [3, 4])
        self.assertEqual(s("SENTON", "7-Feb-1994"), [1, 2, 3, 4])
        self.assertEqual(s("SENTBEFORE", "7-Feb-1994"), [])
        self.assertEqual(s("SENTSINCE", "8-Feb-1994"), [])
        self.assertEqual(s("NOT", "SEEN"), [2, 3, 4])
        self.assertEqual(s("OR", "SEEN", "DRAFT"), [1, 3])
        self.assertEqual(s("(OR SEEN ANSWERED)", "UNDELETED"), [1, 2])
        self.assertEqual(s("2:3"), [2, 3])
        self.assertEqual(s("*"), [4])
        self.assertEqual(s("1,4", "SEEN"), [1])
        self.assertEqual(s("NEW"), s("RECENT", "UNSEEN"))
        self.assertEqual(s("OLD"), s("NOT", "RECENT"))
        self.assertEqual(s("CHARSET", "UTF-8", "SUBJECT", "cherry"), [3])
        typ, data = self.imap.uid("SEARCH", "UID", "1:2")
        self.assertEqual([int(x) for x in data[0].split()], [1, 2])
        typ, data = self.imap.uid("SEARCH", "SUBJECT", "durian")
        self.assertEqual([int(x) for x in data[0].split()], [4])
        self.assertEqual(s("UID", "3:*"), [3, 4])
        self.assertEqual(harness.typ_of(self.imap.search, None, "BOGUSKEY"), "BAD")
        self.assertEqual(harness.typ_of(self.imap.search, None, "BEFORE", "notadate"), "BAD")
        typ, data = self.imap.search("X-UNKNOWN-CHARSET", "SUBJECT", "x")
        self.assertEqual(typ, "NO")
        self.assertIn(b"BADCHARSET", data[0])

    def test_search_utf8(self):
        append_ok(self.imap, self.box, MULTIPART)
        self.imap.select(self.box)
        raw = self.server.raw()
        raw.login("alice", harness.USERS["alice"])
        raw.command(f"EXAMINE {self.box}")
        word = "café".encode()
        raw.send(b"U1 SEARCH CHARSET UTF-8 SUBJECT {%d+}\r\n" % len(word) + word + b"\r\n")
        lines = raw.read_response("U1")
        self.assertIn(b"* SEARCH 1", b"".join(lines), lines)
        raw.close()

    # --- sequence sets -------------------------------------------------------

    def test_sequence_sets(self):
        uids = self.fill(5)
        for seq, want in [("1", 1), ("1:3", 3), ("3:1", 3), ("*", 1), ("2:*", 4), ("*:4", 2),
                          ("1,3,5", 3), ("1:2,4:*", 4)]:
            typ, data = self.imap.fetch(seq, "(UID)")
            self.assertEqual(harness.fetch_count(data), want, seq)
        out = self.fetch(f"{uids[4] + 100}:*", "(UID)", uid=True)
        self.assertEqual(out.count(b"(UID"), 1)  # n:* includes the last UID
        self.assertIn(f"UID {uids[4]}".encode(), out)


if __name__ == "__main__":
    unittest.main()
