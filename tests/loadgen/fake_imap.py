"""A tiny in-memory IMAP server, correct or broken on purpose, for testing
peregrine-bench's checks (tests/loadgen/test_loadgen.py).

One mailbox (INBOX) shared by every connection; enough of RFC 3501 for the
generator's commands: LOGIN, LOGOUT, NOOP, CAPABILITY, SELECT, LIST, STATUS,
FETCH / UID FETCH, UID STORE, EXPUNGE, APPEND, SEARCH, IDLE. It sends no
updates of other sessions' changes, so it is correct for one client at a time.

Bugs (`bug=`), each one a kind of failure the generator must report:
- "exists": once a message was appended, every EXISTS is one short.
- "drop_flag": UID STORE +FLAGS drops the last flag it was given.
- "tagged_no": LIST answers NO.
- "wrong_tag": LIST answers with another tag too.
- "silent": LIST is never answered.
- "expunged_fetch": after EXPUNGE, FETCH 1:* still returns the expunged
  message (as message 1, under its old UID).
Standard library only.
"""

import re
import socket
import socketserver
import threading
import time

HOST = "127.0.0.1"


class Mailbox:
    def __init__(self):
        self.lock = threading.Lock()
        self.messages = []  # dicts: uid, flags (set), body (bytes)
        self.next_uid = 1
        self.ghosts = []
        self.appended = False  # expunged messages the "expunged_fetch" bug keeps returning

    def add(self, body, flags=()):
        self.messages.append({"uid": self.next_uid, "flags": set(flags), "body": body})
        self.next_uid += 1


ENVELOPE = b'("Mon, 30 Nov 2026 12:00:00 +0000" "s" NIL NIL NIL NIL NIL NIL NIL "<m@x>")'
BODYSTRUCTURE = b'("TEXT" "PLAIN" ("CHARSET" "US-ASCII") NIL NIL "7BIT" %d 1 NIL NIL NIL NIL)'


class Handler(socketserver.StreamRequestHandler):
    timeout = 30

    def send(self, data):
        self.wfile.write(data)
        self.wfile.flush()

    def handle(self):
        server = self.server
        box = server.mailbox
        self.selected = False
        self.exists = 0
        self.send(b"* OK [CAPABILITY IMAP4rev1 IDLE UIDPLUS] fake ready\r\n")
        while True:
            line = self.rfile.readline(100000)
            if not line:
                return
            m = re.match(rb"(\S+) (.*?)\r?\n$", line, re.S)
            if not m:
                self.send(b"* BAD what\r\n")
                continue
            tag, rest = m.group(1), m.group(2)
            words = rest.split(b" ")
            cmd = words[0].upper()
            if cmd == b"UID":
                cmd = b"UID " + words[1].upper()
                args = words[2:]
            else:
                args = words[1:]
            with box.lock:
                if self.dispatch(box, tag, cmd, args, rest) == "logout":
                    return

    def count_update(self, box):
        """EXISTS when the mailbox grew since this session last heard."""
        n = len(box.messages)
        if self.server.bug == "exists" and box.appended:
            n -= 1
        if self.selected and n > self.exists:
            self.exists = n
            return b"* %d EXISTS\r\n" % n
        return b""

    def fetch_line(self, seq, msg, items):
        parts = []
        if b"UID" in items:
            parts.append(b"UID %d" % msg["uid"])
        if b"FLAGS" in items:
            parts.append(b"FLAGS (" + b" ".join(sorted(msg["flags"])) + b")")
        if b"ENVELOPE" in items:
            parts.append(b"ENVELOPE " + ENVELOPE)
        if b"INTERNALDATE" in items:
            parts.append(b'INTERNALDATE "30-Nov-2026 12:00:00 +0000"')
        if b"BODYSTRUCTURE" in items:
            parts.append(b"BODYSTRUCTURE " + BODYSTRUCTURE % len(msg["body"]))
        if b"BODY.PEEK[]" in items:
            parts.append(b"BODY[] {%d}\r\n" % len(msg["body"]) + msg["body"])
        return b"* %d FETCH (" % seq + b" ".join(parts) + b")\r\n"

    def dispatch(self, box, tag, cmd, args, rest):
        bug = self.server.bug
        ok = tag + b" OK done\r\n"
        if cmd == b"LOGIN":
            self.send(ok)
        elif cmd == b"LOGOUT":
            self.send(b"* BYE bye\r\n" + ok)
            return "logout"
        elif cmd in (b"NOOP", b"CAPABILITY"):
            self.send(self.count_update(box) + ok)
        elif cmd == b"SELECT":
            self.selected = True
            self.exists = len(box.messages)
            self.send(b"* FLAGS (\\Answered \\Flagged \\Deleted \\Seen \\Draft)\r\n"
                      b"* %d EXISTS\r\n* 0 RECENT\r\n"
                      b"* OK [UIDNEXT %d] next\r\n* OK [UIDVALIDITY 1] v\r\n"
                      % (self.exists, box.next_uid) + tag + b" OK [READ-WRITE] selected\r\n")
        elif cmd == b"LIST":
            if bug == "tagged_no":
                self.send(tag + b" NO [SERVERBUG] list failed\r\n")
            elif bug == "silent":
                pass
            elif bug == "wrong_tag":
                self.send(b'* LIST () "/" INBOX\r\nzz9 OK stray\r\n' + ok)
            else:
                self.send(b'* LIST (\\HasNoChildren) "/" INBOX\r\n' + ok)
        elif cmd == b"STATUS":
            unseen = sum(1 for m in box.messages if b"\\Seen" not in m["flags"])
            self.send(b'* STATUS "INBOX" (MESSAGES %d UNSEEN %d RECENT 0)\r\n'
                      % (len(box.messages), unseen) + ok)
        elif cmd in (b"FETCH", b"UID FETCH"):
            self.fetch(box, tag, cmd, args, rest)
        elif cmd == b"UID STORE":
            uid = int(args[0])
            sign = args[1][:1]
            names = re.search(rb"\((.*)\)", rest).group(1).split(b" ")
            out = self.count_update(box)
            for seq, msg in enumerate(box.messages, 1):
                if msg["uid"] == uid:
                    if sign == b"+":
                        if bug == "drop_flag" and names:
                            names = names[:-1]
                        msg["flags"].update(names)
                    else:
                        msg["flags"].difference_update(names)
                    out += self.fetch_line(seq, msg, [b"UID", b"FLAGS"])
            self.send(out + ok)
        elif cmd == b"EXPUNGE":
            out = b""
            seq = 1
            for msg in list(box.messages):
                if b"\\Deleted" in msg["flags"]:
                    box.messages.remove(msg)
                    if bug == "expunged_fetch":
                        box.ghosts.append(msg)
                    out += b"* %d EXPUNGE\r\n" % seq
                else:
                    seq += 1
            self.exists = len(box.messages)
            self.send(out + ok)
        elif cmd == b"APPEND":
            n = int(re.search(rb"\{(\d+)\}$", rest).group(1))
            self.send(b"+ go\r\n")
            body = self.rfile.read(n)
            self.rfile.readline()
            box.add(body)
            box.appended = True
            self.send(self.count_update(box) + tag + b" OK [APPENDUID 1 %d] appended\r\n" % (box.next_uid - 1))
        elif cmd == b"SEARCH":
            word = rest.split(b" ")[-1].strip(b'"')
            hits = [b"%d" % i for i, m in enumerate(box.messages, 1) if word in m["body"]]
            self.send(b"* SEARCH" + b"".join(b" " + h for h in hits) + b"\r\n" + ok)
        elif cmd == b"IDLE":
            self.send(b"+ idling\r\n")
            self.rfile.readline()
            self.send(self.count_update(box) + ok)
        else:
            self.send(tag + b" BAD unknown command\r\n")
        return None

    def fetch(self, box, tag, cmd, args, rest):
        items = re.findall(rb"[A-Z.]+\[?\]?", rest.split(b" ", 2 if cmd == b"FETCH" else 3)[-1])
        out = self.count_update(box)
        messages = list(box.messages)
        if cmd == b"FETCH":
            msgs = [(1, g) for g in box.ghosts if messages] + list(enumerate(messages, 1))
        else:
            wanted = args[0]
            msgs = [(i, m) for i, m in enumerate(messages, 1)
                    if wanted == b"1:*" or m["uid"] == int(wanted)]
        for seq, msg in msgs:
            out += self.fetch_line(seq, msg, items)
        self.send(out + tag + b" OK fetched\r\n")


class FakeImapServer(socketserver.ThreadingTCPServer):
    daemon_threads = True
    allow_reuse_address = True

    def __init__(self, bug=None, messages=10):
        super().__init__((HOST, 0), Handler)
        self.bug = bug
        self.mailbox = Mailbox()
        for i in range(messages):
            self.mailbox.add(b"Subject: fake %d\r\n\r\nmeeting report %d\r\n" % (i, i))
        self.thread = threading.Thread(target=self.serve_forever, daemon=True)

    @property
    def port(self):
        return self.server_address[1]

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.shutdown()
        self.server_close()
