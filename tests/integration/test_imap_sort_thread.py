"""SORT, ESORT and THREAD over the wire with imaplib: RFC 5256's own
examples reproduced with real messages, and the UID forms."""

import email.utils
import os
import re
import sys
import unittest
from datetime import datetime, timedelta, timezone

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import ServerTestCase, append_ok, untagged  # noqa: E402

# Messages 166-208 of RFC 5256 §4. Their Date headers follow DATE_ORDER;
# subjects and references are chosen so that one mailbox gives both of the
# RFC's THREAD answers.
DATE_ORDER = [166, 167, 168, 169, 172, 170, 171, 173, 174, 175, 176, 178, 181, 180, 179,
              177, 183, 182, 188, 184, 185, 186, 187, 189, 190, 191, 192, 193, 194, 195,
              196, 197, 198, 199, 200, 202, 201, 203, 204, 205, 206, 207, 208]

ORDEREDSUBJECT = (
    b"(166)(167)(168)(169)(172)(170)(171)(173)(174 (175)(176)(178)(181)(180))(179)(177 "
    b"(183)(182)(188)(184)(185)(186)(187)(189))(190)(191)(192)(193)(194 195)(196 "
    b"(197)(198))(199)(200 202)(201)(203)(204)(205)(206 207)(208)")
REFERENCES = (
    b"(166)(167)(168)(169)(172)((170)(179))(171)(173)((174)(175)(176)(178)(181)(180))"
    b"((177)(183)(182)(188 (184)(189))(185 186)(187))(190)(191)(192)(193)((194)(195 196))"
    b"(197 198)(199)(200 202)(201)(203)(204)(205 206 207)(208)")


def mid(n):
    return f"<{n}@example.org>"


def rfc_message(seq):
    subject = f"Topic {seq}"
    refs = []
    if seq in (170, 179):
        refs = ["<gone-170@example.org>"]
    if seq in (174, 175, 176, 178, 180, 181):
        subject = "Meeting"
    if seq in range(177, 190) and seq not in (178, 179, 180, 181):
        subject = "Re: Budget"
        refs = ["<gone-177@example.org>"]
    if seq == 183:
        subject = "=?UTF-8?Q?=5Bteam=5D_Fwd=3A_budget?="
    if seq == 187:
        subject = "BUDGET (fwd)"
    if seq in (184, 189):
        refs = ["<gone-177@example.org>", mid(188)]
    if seq == 186:
        refs = ["<gone-177@example.org>", mid(185)]
    if seq in (194, 195):
        subject, refs = "Lunch", ["<gone-194@example.org>"]
    if seq in (196, 197):
        subject = "Re: Dinner"
    if seq == 196:
        refs = ["<gone-194@example.org>", mid(195)]
    if seq == 198:
        subject, refs = "Dinner", [mid(197)]
    if seq == 200:
        subject = "Party"
    if seq == 202:
        subject = "Re: party"
    if seq == 206:
        subject, refs = "Trip", [mid(205)]
    if seq == 207:
        subject, refs = "Re: Trip", [mid(205), mid(206)]
    sent = datetime(2000, 3, 5, 12, 0, tzinfo=timezone.utc) + timedelta(
        minutes=DATE_ORDER.index(seq))
    headers = (f"From: Sender {seq} <s{seq}@example.org>\r\n"
               f"Subject: {subject}\r\n"
               f"Date: {email.utils.format_datetime(sent)}\r\n"
               f"Message-ID: {mid(seq)}\r\n")
    if refs:
        headers += f"References: {' '.join(refs)}\r\n"
    return (headers + "\r\nbody\r\n").encode()


def filler(n):
    return (f"From: f@example.org\r\nSubject: filler {n}\r\n"
            f"Date: Wed, 1 Mar 2000 00:00:00 +0000\r\nMessage-ID: <f{n}@example.org>\r\n"
            f"\r\nbody\r\n").encode()


class SortThreadTest(ServerTestCase):
    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        imap = cls.server.login()
        try:
            for name in ("rfc", "small"):
                assert imap.create(name)[0] == "OK"
            # 165 messages before 5-Mar-2000, so the RFC's messages are 166-208.
            for n in range(1, 166):
                append_ok(imap, "rfc", filler(n), date='"01-Mar-2000 00:00:00 +0000"')
            for seq in range(166, 209):
                append_ok(imap, "rfc", rfc_message(seq), date='"06-Mar-2000 00:00:00 +0000"')
            # RFC 5256's "SORT (SUBJECT REVERSE DATE) UTF-8 ALL" -> 5 3 4 1 2.
            small = [("Re: c", 2), ("c", 1), ("[list] b", 2), ("Fwd: B", 1), ("a (fwd)", 1)]
            for subject, day in small:
                msg = (f"From: x@example.org\r\nSubject: {subject}\r\n"
                       f"Date: {day} Jan 2001 00:00:00 +0000\r\n\r\nx\r\n").encode()
                append_ok(imap, "small", msg, date='"01-Jan-2001 00:00:00 +0000"')
        finally:
            imap.logout()

    def setUp(self):
        self.imap = self.server.login()

    def tearDown(self):
        self.imap.logout()

    def test_capabilities(self):
        caps = self.imap.capabilities
        for cap in ("SORT", "SORT=DISPLAY", "ESORT", "THREAD=ORDEREDSUBJECT",
                    "THREAD=REFERENCES"):
            self.assertIn(cap, caps)

    def test_rfc5256_thread_examples(self):
        self.imap.select("rfc", readonly=True)
        typ, data = self.imap.thread("ORDEREDSUBJECT", "UTF-8", "SINCE", "5-MAR-2000")
        self.assertEqual(typ, "OK")
        self.assertEqual(data, [ORDEREDSUBJECT])
        typ, data = self.imap.thread("REFERENCES", "UTF-8", "SINCE", "5-MAR-2000")
        self.assertEqual(typ, "OK")
        self.assertEqual(data, [REFERENCES])
        # "A284 THREAD ORDEREDSUBJECT US-ASCII TEXT "gewp"" -> "* THREAD".
        typ, data = self.imap.thread("ORDEREDSUBJECT", "US-ASCII", "TEXT", '"gewp"')
        self.assertEqual((typ, data), ("OK", [b""]))

    def test_uid_thread(self):
        # A copy whose first six messages are expunged: sequence numbers
        # 1-43 and UIDs 7-49 stand for the RFC's 166-208.
        self.imap.select("rfc")
        self.assertEqual(self.imap.create("copy")[0], "OK")
        self.assertEqual(self.imap.uid("COPY", "160:208", "copy")[0], "OK")
        self.imap.select("copy")
        self.assertEqual(self.imap.store("1:6", "+FLAGS", "(\\Deleted)")[0], "OK")
        self.assertEqual(self.imap.expunge()[0], "OK")

        def shifted(data, by):
            return re.sub(rb"\d+", lambda m: str(int(m.group()) + by).encode(), data[0])

        typ, data = self.imap.uid("THREAD", "REFERENCES", "UTF-8", "ALL")
        self.assertEqual(typ, "OK")
        self.assertEqual(shifted(data, 159), REFERENCES)
        typ, data = self.imap.thread("REFERENCES", "UTF-8", "ALL")
        self.assertEqual(shifted(data, 165), REFERENCES)
        typ, data = self.imap.uid("THREAD", "ORDEREDSUBJECT", "UTF-8", "ALL")
        self.assertEqual(shifted(data, 159), ORDEREDSUBJECT)
        typ, data = self.imap.uid("SORT", "(DATE)", "UTF-8", "ALL")
        self.assertEqual([int(n) + 159 for n in data[0].split()], DATE_ORDER)

    def test_sort_examples(self):
        self.imap.select("small", readonly=True)
        typ, data = self.imap.sort("(SUBJECT REVERSE DATE)", "UTF-8", "ALL")
        self.assertEqual((typ, data), ("OK", [b"5 3 4 1 2"]))
        typ, data = self.imap.sort("(SUBJECT)", "US-ASCII", "TEXT", '"not in mailbox"')
        self.assertEqual((typ, data), ("OK", [b""]))
        typ, data = self.imap.uid("SORT", "(REVERSE DATE)", "UTF-8", "ALL")
        self.assertEqual((typ, data), ("OK", [b"1 3 2 4 5"]))

    def test_esort(self):
        self.imap.select("small", readonly=True)
        typ, _ = self.imap._simple_command("SORT", "RETURN", "(MIN MAX COUNT ALL)",
                                           "(SUBJECT REVERSE DATE)", "UTF-8", "ALL")
        self.assertEqual(typ, "OK")
        [line] = untagged(self.imap, "ESEARCH")
        self.assertRegex(line, rb'^\(TAG "[A-Z0-9]+"\) MIN 5 MAX 2 COUNT 5 ALL 5,3:4,1:2$')

    def test_big_mailbox_sort_by_date(self):
        self.imap.select("rfc", readonly=True)
        typ, data = self.imap.sort("(DATE)", "UTF-8", "SINCE", "5-MAR-2000")
        self.assertEqual(typ, "OK")
        self.assertEqual([int(n) for n in data[0].split()], DATE_ORDER)
        typ, data = self.imap.sort("(REVERSE ARRIVAL)", "UTF-8", "ALL")
        self.assertEqual([int(n) for n in data[0].split()], list(range(166, 209)) +
                         list(range(1, 166)))


if __name__ == "__main__":
    unittest.main()
