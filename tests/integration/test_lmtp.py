"""LMTP (RFC 2033) against the real server with smtplib.LMTP and a raw
client: per-recipient replies, pipelining, large and dot-stuffed messages,
trace headers, the user@domain rule, IDLE seeing deliveries, bad input,
size limits, quota, the unix socket, and `peregrine deliver`."""

import os
import re
import smtplib
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
import lmtp_harness  # noqa: E402
from harness import sample_message  # noqa: E402

USERS = {"alice": "alice-secret", "bob": "bob-secret", "carol": "carol-secret",
         "carol@example.org": "carol-org-secret"}


class LmtpTestCase(harness.ServerTestCase):
    server_class = lmtp_harness.LmtpServer
    server_kwargs = {"users": USERS}

    def messages(self, user, criteria):
        """Full bytes of the INBOX messages of `user` matching a SEARCH."""
        imap = self.server.login(user, select="INBOX")
        try:
            typ, data = imap.search(None, criteria)
            self.assertEqual(typ, "OK")
            out = []
            for num in data[0].split():
                typ, fetched = imap.fetch(num, "(BODY.PEEK[])")
                self.assertEqual(typ, "OK")
                out.append(fetched[0][1])
            return out
        finally:
            imap.logout()

    def one_message(self, user, subject):
        found = self.messages(user, f'SUBJECT "{subject}"')
        self.assertEqual(len(found), 1, f"{user}: {subject}")
        return found[0]


class RecipientMemoryTest(LmtpTestCase):
    """A connection remembers the recipients it resolved and accepts them
    again at RCPT without a lookup; the delivery looks them up again, so a
    user removed from the passwd-file meanwhile gets 550 5.1.1 after DATA."""

    server_kwargs = {"users": {"alice": "alice-secret", "dave": "dave-secret",
                               "erin": "erin-secret"}}

    def remove_user(self, user):
        with open(self.server.passwd) as f:
            lines = [line for line in f if not line.startswith(user + ":")]
        tmp = self.server.passwd + ".new"
        with open(tmp, "w") as f:
            f.writelines(lines)
        os.replace(tmp, self.server.passwd)  # a new inode: the server re-reads it

    def transaction(self, raw, subject, rcpts):
        """MAIL, the RCPTs (their codes), and DATA when one was accepted
        (then the DATA replies as (code, last line))."""
        self.assertEqual(raw.command("MAIL FROM:<s@x>")[0], 250)
        codes = [raw.command(f"RCPT TO:<{r}>")[0] for r in rcpts]
        if 250 not in codes:
            raw.command("RSET")
            return codes, []
        self.assertEqual(raw.command("DATA")[0], 354)
        raw.send(sample_message(subject) + b".\r\n")
        replies = []
        for _ in range(codes.count(250)):
            code, lines = raw.reply()
            replies.append((code, lines[-1]))
        return codes, replies

    def test_removed_user_is_refused_after_data(self):
        raw = self.server.raw_lmtp()
        self.assertEqual(raw.command("LHLO x")[0], 250)
        codes, replies = self.transaction(raw, "memory-1", ["dave@example.com", "alice"])
        self.assertEqual(codes, [250, 250])
        self.assertEqual([c for c, _ in replies], [250, 250])
        self.remove_user("dave")
        # Remembered: accepted at RCPT, refused when its delivery looks again.
        codes, replies = self.transaction(raw, "memory-2", ["dave@example.com", "alice"])
        self.assertEqual(codes, [250, 250])
        self.assertEqual([c for c, _ in replies], [550, 250])
        self.assertIn(b"5.1.1", replies[0][1])
        self.assertIn(b"dave@example.com", replies[0][1])
        # The refusal made the connection forget dave: refused at RCPT now.
        codes, replies = self.transaction(raw, "memory-3", ["dave@example.com", "alice"])
        self.assertEqual(codes, [550, 250])
        self.assertEqual([c for c, _ in replies], [250])
        raw.command("QUIT")
        raw.close()
        for subject in ("memory-1", "memory-2", "memory-3"):
            self.assertEqual(len(self.messages("alice", f'SUBJECT "{subject}"')), 1, subject)

    def test_removed_user_is_refused_after_data_alone(self):
        # One recipient: the re-check's refusal comes after DATA and the
        # connection forgets the address before the next transaction.
        raw = self.server.raw_lmtp()
        self.assertEqual(raw.command("LHLO x")[0], 250)
        codes, replies = self.transaction(raw, "alone-1", ["erin@example.com"])
        self.assertEqual((codes, [c for c, _ in replies]), ([250], [250]))
        self.remove_user("erin")
        codes, replies = self.transaction(raw, "alone-2", ["erin@example.com"])
        self.assertEqual((codes, [c for c, _ in replies]), ([250], [550]))
        self.assertIn(b"5.1.1", replies[0][1])
        codes, replies = self.transaction(raw, "alone-3", ["erin@example.com"])
        self.assertEqual((codes, replies), ([550], []))
        raw.command("QUIT")
        raw.close()


class DeliveryTest(LmtpTestCase):
    def test_delivery_adds_trace_headers(self):
        client = self.server.lmtp()
        refused = client.sendmail("sender@example.net", ["alice@any.example"],
                                  sample_message("trace"))
        self.assertEqual(refused, {})
        client.quit()
        stored = self.one_message("alice", "trace")
        self.assertTrue(stored.startswith(b"Return-Path: <sender@example.net>\r\n"
                                          b"Delivered-To: alice@any.example\r\n"), stored[:200])

    def test_null_sender_and_bare_user(self):
        client = self.server.lmtp()
        client.sendmail("", ["bob"], sample_message("bounce"))
        client.quit()
        stored = self.one_message("bob", "bounce")
        self.assertTrue(stored.startswith(b"Return-Path: <>\r\nDelivered-To: bob\r\n"))

    def test_multi_recipient_with_one_unknown(self):
        client = self.server.lmtp()
        refused = client.sendmail("s@example.net",
                                  ["alice@example.com", "nobody@example.com", "bob@example.com"],
                                  sample_message("multi"))
        self.assertEqual(list(refused), ["nobody@example.com"])
        self.assertEqual(refused["nobody@example.com"][0], 550)
        self.assertIn(b"5.1.1", refused["nobody@example.com"][1])
        # The first DATA reply was read by sendmail; one more for bob.
        rest = lmtp_harness.data_replies(client, 2)
        self.assertEqual([code for code, _ in rest], [250])
        self.assertIn(b"bob@example.com", rest[0][1])
        client.quit()
        self.assertIn(b"Delivered-To: alice@example.com\r\n", self.one_message("alice", "multi"))
        self.assertIn(b"Delivered-To: bob@example.com\r\n", self.one_message("bob", "multi"))

    def test_one_user_named_twice_and_many_users(self):
        # Two recipients of one user (stored twice, each with its own
        # Delivered-To) and two other users in one transaction: the users'
        # deliveries run side by side, the replies still come in RCPT order.
        raw = self.server.raw_lmtp()
        raw.send("LHLO twice.example\r\nMAIL FROM:<s@x>\r\nRCPT TO:<alice@one.example>\r\n"
                 "RCPT TO:<bob>\r\nRCPT TO:<alice@two.example>\r\nRCPT TO:<carol>\r\n"
                 "DATA\r\n")
        self.assertEqual(raw.reply()[0], 250)
        self.assertEqual([raw.code() for _ in range(6)], [250, 250, 250, 250, 250, 354])
        raw.send(sample_message("twice") + b".\r\n")
        replies = [raw.reply() for _ in range(4)]
        self.assertEqual([code for code, _ in replies], [250, 250, 250, 250])
        for (_, text), who in zip(replies, [b"alice@one.example", b"bob", b"alice@two.example",
                                            b"carol"]):
            self.assertIn(b"<" + who + b">", b"".join(text))
        raw.send("QUIT\r\n")
        self.assertEqual(raw.code(), 221)
        raw.close()
        stored = self.messages("alice", 'SUBJECT "twice"')
        self.assertEqual(len(stored), 2)
        self.assertEqual(sorted(m.split(b"\r\n")[1] for m in stored),
                         [b"Delivered-To: alice@one.example", b"Delivered-To: alice@two.example"])
        self.assertEqual(len(self.messages("bob", 'SUBJECT "twice"')), 1)
        self.assertEqual(len(self.messages("carol", 'SUBJECT "twice"')), 1)

    def test_concurrent_connections_to_one_user(self):
        # Deliveries to one user from several connections at once share
        # batches on the user's strand; each still gets its own 250 and is
        # stored exactly once, under its own UID.
        import threading
        errors = []

        def flood(n):
            try:
                client = self.server.lmtp()
                for i in range(8):
                    refused = client.sendmail("s@example.net", ["alice"],
                                              sample_message(f"group-{n}-{i}"))
                    if refused:
                        errors.append(refused)
                client.quit()
            except Exception as e:  # reported below
                errors.append(repr(e))

        threads = [threading.Thread(target=flood, args=(n,)) for n in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        self.assertEqual(errors, [])
        imap = self.server.login("alice", select="INBOX")
        try:
            typ, data = imap.uid("SEARCH", None, 'SUBJECT "group-"')
            self.assertEqual(typ, "OK")
            uids = data[0].split()
            self.assertEqual(len(uids), 32)
            self.assertEqual(len(set(uids)), 32)
            typ, fetched = imap.uid("FETCH", b",".join(uids).decode(),
                                    "(BODY.PEEK[HEADER.FIELDS (SUBJECT)])")
            self.assertEqual(typ, "OK")
            subjects = sorted(part[1].strip() for part in fetched if isinstance(part, tuple))
            self.assertEqual(subjects, sorted(f"Subject: group-{n}-{i}".encode()
                                              for n in range(4) for i in range(8)))
        finally:
            imap.logout()

    def test_full_address_entry_wins(self):
        client = self.server.lmtp()
        client.sendmail("s@x", ["carol@example.org"], sample_message("org-carol"))
        client.sendmail("s@x", ["carol@example.net"], sample_message("net-carol"))
        client.quit()
        self.assertEqual(len(self.messages("carol@example.org", 'SUBJECT "org-carol"')), 1)
        self.assertEqual(len(self.messages("carol@example.org", 'SUBJECT "net-carol"')), 0)
        self.assertEqual(len(self.messages("carol", 'SUBJECT "net-carol"')), 1)
        self.assertEqual(len(self.messages("carol", 'SUBJECT "org-carol"')), 0)

    def test_dot_stuffing_edge_cases(self):
        body = "first\r\n.\r\n..x\r\n.\r\n...\r\nlast line without CRLF"
        client = self.server.lmtp()
        client.sendmail("s@x", ["alice"], sample_message("dots", body))
        client.quit()
        stored = self.one_message("alice", "dots")
        self.assertTrue(stored.endswith(b"\r\n\r\nfirst\r\n.\r\n..x\r\n.\r\n...\r\n"
                                        b"last line without CRLF\r\n"), stored[-120:])

    def test_bare_lf_is_stored_as_crlf(self):
        raw = self.server.raw_lmtp()
        for line in ("LHLO x", "MAIL FROM:<s@x>", "RCPT TO:<alice>"):
            self.assertEqual(raw.command(line)[0], 250, line)
        self.assertEqual(raw.command("DATA")[0], 354)
        raw.send(b"Subject: barelf\nX-A: 1\n\nline one\n..dotted\nline three\n.\n")
        self.assertEqual(raw.code(), 250)
        raw.command("QUIT")
        raw.close()
        stored = self.one_message("alice", "barelf")
        self.assertTrue(stored.endswith(b"Subject: barelf\r\nX-A: 1\r\n\r\nline one\r\n"
                                        b".dotted\r\nline three\r\n"), stored)

    def test_pipelined_transactions(self):
        raw = self.server.raw_lmtp()
        raw.send("LHLO pipe.example\r\nMAIL FROM:<s@x> BODY=8BITMIME\r\nRCPT TO:<alice>\r\n"
                 "RCPT TO:<nobody>\r\nRCPT TO:<bob@b.example>\r\nDATA\r\n")
        code, lines = raw.reply()
        self.assertEqual(code, 250)
        caps = b"".join(lines)
        for cap in (b"PIPELINING", b"ENHANCEDSTATUSCODES", b"8BITMIME", b"SMTPUTF8", b"SIZE "):
            self.assertIn(cap, caps)
        self.assertEqual([raw.code() for _ in range(5)], [250, 250, 550, 250, 354])
        # The message, its end, and a whole second transaction in one write.
        raw.send(sample_message("pipe-1") + b".\r\nRSET\r\nNOOP\r\nMAIL FROM:<>\r\n"
                 b"RCPT TO:<bob>\r\nDATA\r\n")
        self.assertEqual([raw.code() for _ in range(7)], [250, 250, 250, 250, 250, 250, 354])
        raw.send(sample_message("pipe-2") + b".\r\nQUIT\r\n")
        self.assertEqual([raw.code(), raw.code()], [250, 221])
        raw.close()
        self.assertEqual(len(self.messages("alice", 'SUBJECT "pipe-1"')), 1)
        self.assertEqual(len(self.messages("bob", 'SUBJECT "pipe-1"')), 1)
        self.assertEqual(len(self.messages("bob", 'SUBJECT "pipe-2"')), 1)

    def test_25_mb_message(self):
        line = ("0123456789" * 7 + "\r\n").encode()
        body = line * (25 * 1024 * 1024 // len(line))
        message = sample_message("big-25mb", "") + body
        client = self.server.lmtp()
        self.assertEqual(client.sendmail("s@x", ["alice"], message), {})
        client.quit()
        imap = self.server.login("alice", select="INBOX")
        typ, data = imap.search(None, 'SUBJECT "big-25mb"')
        num = data[0].split()[0]
        typ, data = imap.fetch(num, "(RFC822.SIZE)")
        size = int(re.search(rb"RFC822.SIZE (\d+)", data[0]).group(1))
        headers = b"Return-Path: <s@x>\r\nDelivered-To: alice\r\n"
        self.assertEqual(size, len(headers) + len(message))
        typ, data = imap.fetch(num, "(BODY.PEEK[TEXT]<26214000.400>)")
        self.assertEqual(typ, "OK")
        imap.logout()

    def test_smtputf8_address(self):
        raw = self.server.raw_lmtp()
        raw.command("LHLO x")
        self.assertEqual(raw.command("MAIL FROM:<j\u00f6rg@example.org>")[0], 553)
        self.assertEqual(raw.command("MAIL FROM:<j\u00f6rg@example.org> SMTPUTF8")[0], 250)
        self.assertEqual(raw.command("RCPT TO:<alice@b\u00fccher.example>")[0], 250)
        self.assertEqual(raw.command("DATA")[0], 354)
        raw.send(sample_message("utf8-sender") + b".\r\n")
        self.assertEqual(raw.code(), 250)
        raw.close()
        stored = self.one_message("alice", "utf8-sender")
        self.assertTrue(stored.startswith("Return-Path: <j\u00f6rg@example.org>\r\n".encode()))

    def test_idle_sees_the_delivery(self):
        imap = self.server.raw()
        imap.login("bob", USERS["bob"])
        tagged, _ = imap.command("SELECT INBOX")
        self.assertEqual(harness.status_of(tagged), "OK")
        imap.send(b"I1 IDLE\r\n")
        self.assertTrue(imap.readline().startswith(b"+"))
        client = self.server.lmtp()
        client.sendmail("s@x", ["bob"], sample_message("idle-wakeup"))
        client.quit()
        line = imap.readline(timeout=10)
        self.assertRegex(line, rb"^\* \d+ EXISTS\r\n$")
        imap.send(b"DONE\r\n")
        lines = imap.read_response("I1")
        self.assertEqual(harness.status_of(lines[-1]), "OK")
        imap.close()


class BadInputTest(LmtpTestCase):
    def test_out_of_state_commands(self):
        raw = self.server.raw_lmtp()
        self.assertTrue(raw.greeting.startswith(b"220 "))
        self.assertEqual(raw.command("MAIL FROM:<a@b>")[0], 503)  # before LHLO
        self.assertEqual(raw.command("HELO x")[0], 500)
        self.assertEqual(raw.command("EHLO x")[0], 500)
        self.assertEqual(raw.command("LHLO x")[0], 250)
        self.assertEqual(raw.command("RCPT TO:<alice>")[0], 503)  # before MAIL
        self.assertEqual(raw.command("DATA")[0], 503)
        self.assertEqual(raw.command("MAIL FROM:<a@b>")[0], 250)
        self.assertEqual(raw.command("MAIL FROM:<a@b>")[0], 503)  # nested
        self.assertEqual(raw.command("DATA")[0], 503)  # no recipient yet
        self.assertEqual(raw.command("RCPT TO:<nobody>")[0], 550)
        self.assertEqual(raw.command("DATA")[0], 503)  # still none accepted
        self.assertEqual(raw.command("RSET")[0], 250)
        self.assertEqual(raw.command("RCPT TO:<alice>")[0], 503)  # RSET ended it
        self.assertEqual(raw.command("VRFY alice")[0], 252)
        self.assertEqual(raw.command("QUIT")[0], 221)
        raw.close()

    def test_garbage_and_bad_syntax(self):
        raw = self.server.raw_lmtp()
        raw.command("LHLO x")
        self.assertEqual(raw.command("\x00\xff\x01garbage")[0], 500)
        self.assertEqual(raw.command("MAIL FROM:alice")[0], 501)
        self.assertEqual(raw.command("MAIL FROM:<a@b> FOO=BAR")[0], 555)
        self.assertEqual(raw.command("MAIL FROM:<a@b> SIZE=abc")[0], 555)
        self.assertEqual(raw.command("MAIL FROM:<a@b>")[0], 250)
        self.assertEqual(raw.command("RCPT TO:<>")[0], 501)
        self.assertEqual(raw.command("RCPT TO:<a b>")[0], 501)
        self.assertEqual(raw.command("NOOP")[0], 250)
        raw.close()
        self.assertServerAlive()

    def test_overlong_line(self):
        raw = self.server.raw_lmtp()
        raw.command("LHLO x")
        code, lines = raw.command("NOOP " + "x" * 100000)
        self.assertEqual(code, 500)
        self.assertIn(b"5.5.2", lines[0])
        self.assertEqual(raw.command("NOOP")[0], 250)  # the session goes on
        raw.close()

    def test_too_many_errors_close(self):
        raw = self.server.raw_lmtp()
        codes = [raw.command("BOGUS")[0] for _ in range(20)]
        self.assertEqual(codes[:19], [500] * 19)
        self.assertEqual(codes[19], 500)
        self.assertEqual(raw.code(), 421)
        self.assertEqual(raw.reply(), (0, []))  # closed
        raw.close()

    def test_size_declared_too_big(self):
        raw = self.server.raw_lmtp()
        _, lines = raw.command("LHLO x")
        size = int(re.search(rb"SIZE (\d+)", b"".join(lines)).group(1))
        self.assertEqual(raw.command(f"MAIL FROM:<a@b> SIZE={size + 1}")[0], 552)
        self.assertEqual(raw.command(f"MAIL FROM:<a@b> SIZE={size}")[0], 250)
        raw.close()


class LimitsTest(LmtpTestCase):
    server_kwargs = {"users": USERS, "lmtp": {"max_message_bytes": 300000},
                     "limits": {"quota_bytes": 200000}, "unix_socket": True}

    def test_oversize_message_is_read_and_refused(self):
        raw = self.server.raw_lmtp()
        raw.command("LHLO x")
        raw.command("MAIL FROM:<s@x>")
        raw.command("RCPT TO:<bob>")
        raw.command("RCPT TO:<carol>")
        self.assertEqual(raw.command("DATA")[0], 354)
        raw.send(sample_message("too-big", "y" * 400000 + "\r\n") + b".\r\n")
        self.assertEqual([raw.reply()[1][0][:9] for _ in range(2)], [b"552 5.3.4"] * 2)
        self.assertEqual(raw.command("NOOP")[0], 250)  # in step after the refusal
        raw.close()
        self.assertEqual(self.messages("bob", 'SUBJECT "too-big"'), [])

    def test_quota(self):
        client = self.server.lmtp()
        # Larger than the whole quota: permanent.
        with self.assertRaises(smtplib.SMTPDataError) as caught:
            client.sendmail("s@x", ["alice"], sample_message("q-huge", "z" * 250000))
        self.assertEqual(caught.exception.smtp_code, 552)
        self.assertIn(b"5.2.2", caught.exception.smtp_error)
        self.assertEqual(client.sendmail("s@x", ["alice"], sample_message("q-1", "z" * 120000)),
                         {})
        # Does not fit now, may later: temporary.
        with self.assertRaises(smtplib.SMTPDataError) as caught:
            client.sendmail("s@x", ["alice"], sample_message("q-2", "z" * 120000))
        self.assertEqual(caught.exception.smtp_code, 452)
        self.assertIn(b"4.2.2", caught.exception.smtp_error)
        # Pushed over by IMAP (not limited): the next RCPT is refused as full.
        imap = self.server.login("alice")
        harness.append_ok(imap, "INBOX", sample_message("q-imap", "z" * 120000))
        imap.logout()
        client.rset()
        client.mail("s@x")
        code, text = client.rcpt("alice")
        self.assertEqual(code, 452)
        self.assertIn(b"4.2.2", text)
        client.quit()

    def test_unix_socket(self):
        client = self.server.lmtp(unix=True)
        self.assertEqual(client.sendmail("s@x", ["carol"], sample_message("via-unix")), {})
        client.quit()
        self.assertEqual(len(self.messages("carol", 'SUBJECT "via-unix"')), 1)


class DeliverCommandTest(LmtpTestCase):
    def test_exit_codes_and_headers(self):
        msg = b"From sender@example.net Mon Nov 30 10:00:00 2026\n" + sample_message("via-deliver")
        proc = self.server.cli("deliver", "--config", self.server.config, "-u", "bob@any.example",
                               "-f", "sender@example.net", "-a", "bob@any.example",
                               input_bytes=msg, check=False)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        stored = self.one_message("bob", "via-deliver")
        self.assertTrue(stored.startswith(b"Return-Path: <sender@example.net>\r\n"
                                          b"Delivered-To: bob@any.example\r\nFrom: "), stored[:150])
        # Without -f and -a no trace headers (the MTA may have added its own).
        proc = self.server.deliver("carol@example.net", sample_message("plain-deliver"))
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertTrue(self.one_message("carol", "plain-deliver").startswith(b"From: "))
        self.assertEqual(self.server.deliver("nobody", sample_message("x")).returncode, 67)
        self.assertEqual(self.server.deliver("bob", b"").returncode, 65)  # EX_DATAERR


if __name__ == "__main__":
    unittest.main()
