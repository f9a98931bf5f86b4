#!/usr/bin/env python3
"""Differential test of SEARCH, SORT and THREAD: Peregrine against Dovecot.

Generates a mailbox from a seed (tests/search/diff_mailbox.py: bench/gen_mail.py
messages with threads, charsets and attachments, plus hand-written edge cases),
loads the same messages with the same internal dates, flags and keywords into
a private Dovecot 2.3 on loopback (tests/common/dovecot_server.py) and into
the real Peregrine binary (tests/integration/harness.py), expunges the same
few on both (so UIDs and sequence numbers differ), appends the last tenth
after a first SELECT (so they are \\Recent), and checks that both hold the
same UIDs, flags and sizes. Then it runs generated SEARCH, SORT and THREAD
commands (tests/search/diff_commands.py) against both and compares:

  * SEARCH: the sets of numbers. Each message found by one server only is
    traced to the elementary key(s) of the program that the two servers
    judge differently on it (`UID SEARCH UID n <key>` on both).
  * SORT: the sets (traced as for SEARCH), then the order of the common
    messages: each pair adjacent in Dovecot's answer that Peregrine orders the
    other way is one difference.
  * THREAD: the trees, syntax normalized; each thread only one server forms
    is one difference.
  * A command one server refuses (NO/BAD) and the other answers.

Known differences: a JSON list (tests/search/known_differences.json) of
{"kind": search|esearch|order|thread|status, "key": regex on the elementary key (or
the SORT criteria, THREAD algorithm, or whole command), optional "found_by":
dovecot|peregrine (search), optional "message"/"message_not": regexes the
header of (one of) the message(s) must / must not match, optional
"internal_date": a regex the APPEND date-time of (one of) them matches,
optional "needle_in" / "needle_not_in": decoded-text fields (diff_mailbox.py)
of which one holds / none holds the key's string, optional "needle_fold" /
"needle_not_fold": case (default), simple, nfkd or spaces, "reason", "compliance": "docs/compliance.md#anchor",
optional "criteria_non_ascii" (order: a message of the pair has non-ASCII
text in a field the SORT criteria name), "probe": [search keys] or, for
order, [criteria, search keys]}. The probe runs as `UID SEARCH <keys>` (or
`UID SORT (<criteria>) UTF-8 <keys>`) after the generated commands, on every run, and must show a difference the entry
explains (else the entry is stale); it should aim at the edge messages, whose
text and dates do not depend on the seed. Prints each difference with its
entry or NEW. Exits 1 on a NEW difference or a stale entry, 0 otherwise, and
2 when the check could not run.

Profiles: ci (300 messages, 200 commands; the ctest), full (5,000 messages,
400 commands; by hand, results in docs/compliance.md), or custom sizes.
SORT and THREAD run only when Peregrine advertises them (--only to choose).
Python standard library only.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import signal
import sys
import tempfile
import time
import unicodedata
from collections import defaultdict
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "common"))
sys.path.insert(0, str(HERE.parent / "integration"))
sys.path.insert(0, str(HERE))
from diff_commands import Command, Generator, Literal  # noqa: E402
from diff_mailbox import MailItem, build  # noqa: E402
from compliance_links import LinkChecker  # noqa: E402
from dovecot_server import CheckError, Dovecot  # noqa: E402
import harness  # noqa: E402
from imap_wire import Atom, Imap, ImapError, Parser, parse_fetch  # noqa: E402
from imap_wire import Literal as WireLiteral  # noqa: E402

USER, PASSWORD = "searchdiff", "searchdiff-pw"
PROFILES = {
    "ci": {"messages": 300, "commands": 200, "seed": 1, "max_size": 16 * 1024},
    "full": {"messages": 5000, "commands": 400, "seed": 1, "max_size": 100 * 1024},
}
COMMAND_TIMEOUT = 120.0
# Search keys aimed at the edge messages that once showed a difference
# Peregrine has since fixed (docs/compliance.md, "Fixed differences"). They
# run on every run after the generated commands, like the probes of the known
# differences, so a regression shows up as a NEW difference.
FIXED_PROBES = [
    'TEXT "edge-part-id"',  # search-part-headers: a part's Content-ID is body text
    'CC "chloe"',  # search-casemap: "Chloé" decomposes, so "chloe" is in it
    'SUBJECT "ecole"',  # ... but "ecole" is not in "école" (the accent sits between)
    'BODY "strasse"',  # search-casemap: "ß" has no titlecase mapping, it is not "ss"
    'BODY "GRÜSSE"',  # ... and "SS" stays "SS"
]
MAX_PRINTED_PER_ENTRY = 3


# ---------------------------------------------------------------- servers


def login(port: int) -> Imap:
    imap = Imap(port, timeout=COMMAND_TIMEOUT)
    status, text, _ = imap.command(b'LOGIN "%s" "%s"' % (USER.encode(), PASSWORD.encode()))
    if status != "OK":
        raise CheckError(f"LOGIN on port {port} failed: {text!r}")
    return imap


def check(imap: Imap, command: bytes, what: str):
    status, text, untagged = imap.command(command)
    if status != "OK":
        raise CheckError(f"{what}: {command!r} answered {status} {text!r}")
    return untagged


def uid_set(uids: list[int]) -> bytes:
    return b",".join(b"%d" % u for u in uids)


def append(imap: Imap, items: list[MailItem]) -> None:
    """APPENDs in order, pipelined (the UIDs follow the order all the same)."""
    def flags(i: MailItem) -> bytes:
        # A late message gets \Deleted at once: setting it later would need a
        # SELECT, which would take its \Recent.
        return " ".join(i.flags + (["\\Deleted"] if i.late and i.deleted else [])).encode()

    commands = [(b'APPEND INBOX (%s) "%s"' % (flags(i), i.internal_date.encode()), i.data)
                for i in items]
    for status, text in imap.pipeline(commands):
        if status != "OK":
            raise CheckError(f"APPEND refused: {status} {text!r}")


def load(port: int, items: list[MailItem]) -> None:
    """APPENDs, expunges and flags exactly as the module docstring says."""
    imap = login(port)
    try:
        early = [i for i in items if not i.late]
        append(imap, early)
        check(imap, b"SELECT INBOX", "SELECT")
        gone = [n for n, i in enumerate(early, 1) if i.expunge]
        if gone:
            check(imap, b"UID STORE %s +FLAGS.SILENT (\\Deleted)" % uid_set(gone), "STORE")
            check(imap, b"EXPUNGE", "EXPUNGE")
        deleted = [n for n, i in enumerate(early, 1) if i.deleted and not i.expunge]
        if deleted:
            check(imap, b"UID STORE %s +FLAGS.SILENT (\\Deleted)" % uid_set(deleted), "STORE")
    finally:
        imap.close()
    imap = login(port)
    try:
        append(imap, [i for i in items if i.late])  # no SELECT: they stay \Recent
    finally:
        imap.close()


def mailbox_state(imap: Imap) -> dict[int, tuple]:
    """{uid: (seq, flags without \\Recent, \\Recent or not, size)}."""
    out = {}
    for resp in check(imap, b"FETCH 1:* (UID FLAGS RFC822.SIZE)", "FETCH"):
        items = parse_fetch(resp)
        if not items:
            continue
        seq = int(re.match(rb"\* (\d+)", resp).group(1))
        names = [bytes(f).decode().lower() for f in items["FLAGS"][0]]
        flags = frozenset(n for n in names if n != "\\recent")
        out[int(items["UID"][0])] = (seq, flags, "\\recent" in names,
                                     int(items["RFC822.SIZE"][0]))
    return out


def capabilities(imap: Imap) -> set[str]:
    caps: set[str] = set()
    for resp in check(imap, b"CAPABILITY", "CAPABILITY"):
        if resp.upper().startswith(b"* CAPABILITY "):
            caps.update(w.decode().upper() for w in resp.split()[2:])
    return caps


# ---------------------------------------------------------------- answers


def wire(pieces: list) -> list[bytes]:
    out = []
    for p in pieces:
        if isinstance(p, Literal):
            out.append(WireLiteral(p.encode("utf-8")))
        else:
            out.append(p.encode("utf-8"))
    return out


def parse_numbers(untagged: list[bytes], name: bytes) -> list[int] | None:
    found = None
    for resp in untagged:
        words = resp.split()
        if len(words) >= 2 and words[0] == b"*" and words[1].upper() == name:
            found = (found or []) + [int(w) for w in words[2:] if w.isdigit()]
    return found


def expand_set(text: str) -> list[int]:
    out: list[int] = []
    for part in text.split(","):
        a, _, b = part.partition(":")
        lo, hi = sorted((int(a), int(b or a)))
        out += range(lo, hi + 1)
    return sorted(set(out))


def parse_esearch(untagged: list[bytes]) -> dict | None:
    """`* ESEARCH (TAG "t") [UID] MIN n MAX n COUNT n ALL set` as a dict with
    ALL expanded (servers may write one set in different forms)."""
    for resp in untagged:
        if not resp.upper().startswith(b"* ESEARCH"):
            continue
        text = re.sub(r'^\* ESEARCH\s*(\(TAG "[^"]*"\))?', "", resp.decode("latin-1"),
                      flags=re.I).split()
        out: dict = {}
        i = 0
        while i < len(text):
            name = text[i].upper()
            if name == "UID":
                out["UID"] = True
                i += 1
                continue
            value = text[i + 1] if i + 1 < len(text) else ""
            out[name] = expand_set(value) if name == "ALL" else value
            i += 2
        return out
    return None


def thread_tree(items) -> tuple:
    """A thread-list as (id or None, (children...)): members chain down,
    nested lists hang under the last member; no members is a dummy."""
    members = [int(x) for x in items if isinstance(x, Atom)]
    nested = tuple(thread_tree(x) for x in items if isinstance(x, list))
    if not members:
        return (None, nested)
    node = (members[-1], nested)
    for m in reversed(members[:-1]):
        node = (m, (node,))
    return node


def parse_threads(untagged: list[bytes]) -> list[tuple] | None:
    for resp in untagged:
        if resp.upper().startswith(b"* THREAD"):
            p = Parser(resp, len(b"* THREAD"))
            threads = []
            while p.pos < len(resp):
                p.skip_spaces()
                if p.pos >= len(resp):
                    break
                v = p.value()
                if not isinstance(v, list):
                    raise ImapError(f"THREAD: not a list at {p.pos}")
                threads.append(thread_tree(v))
            return threads
    return None


def thread_ids(node) -> list[int]:
    out = [] if node[0] is None else [node[0]]
    for c in node[1]:
        out += thread_ids(c)
    return out


def show_thread(node) -> str:
    head = "-" if node[0] is None else str(node[0])
    if not node[1]:
        return head
    return head + "(" + " ".join(show_thread(c) for c in node[1]) + ")"


def run(imap: Imap, pieces: list):
    """(status, parsed answer or None, the tagged text)."""
    status, text, untagged = imap.command_parts(wire(pieces))
    return status, untagged, text


# ---------------------------------------------------------------- differences


def string_argument(piece) -> str | None:
    """The value of a quoted string or Literal piece, else None."""
    if isinstance(piece, Literal):
        return str(piece)
    m = re.search(r'"((?:[^"\\]|\\.)*)"$', piece)
    return re.sub(r"\\(.)", r"\1", m.group(1)) if m else None


class Difference:
    def __init__(self, index, command: Command, kind: str, key: str, uids: list[int],
                 found_by: str | None, note: str = "", needle: str | None = None):
        self.needle = needle  # the string argument of a text key, decoded
        self.index = index
        self.command = command
        self.kind = kind
        self.key = key
        self.uids = uids
        self.found_by = found_by
        self.note = note

    def line(self) -> str:
        who = f" found only by {self.found_by}" if self.found_by else ""
        if self.kind == "search" and self.found_by:
            who = f" matched by the key only on {self.found_by}"
        uids = ",".join(map(str, self.uids))
        note = f" [{self.note}]" if self.note else ""
        return (f"#{self.index} {self.command.text()!r}: {self.kind} <{self.key}> "
                f"uid {uids}{who}{note}")


def load_known(path: str | None) -> list[dict]:
    if not path:
        return []
    entries = json.loads(Path(path).read_text())
    if not isinstance(entries, list):
        raise CheckError(f"{path}: expected a JSON list")
    links = LinkChecker()
    for i, e in enumerate(entries):
        for field in ("kind", "key", "reason", "compliance"):
            if not isinstance(e.get(field), str):
                raise CheckError(f"{path}: entry {i} lacks a '{field}' string")
        if not isinstance(e.get("probe"), list) or not e["probe"]:
            raise CheckError(f"{path}: entry {i} lacks a 'probe' list of search keys")
        problem = links.problem(e["compliance"])
        if problem:
            raise CheckError(f"{path}: entry {i} {problem}")
    return entries


FOLDS = {
    "case": lambda t: t.casefold(),
    "nfkd": lambda t: unicodedata.normalize("NFKD", t.casefold()),
    "simple": lambda t: t.lower(),  # one code point to one: "ß" stays "ß"
    "spaces": lambda t: re.sub(r"\s+", " ", t.casefold()),
}


def needle_matches(e: dict, d: "Difference", items: dict[int, MailItem]) -> bool:
    """The entry's needle conditions: the key's string is in one of the
    "needle_in" fields once both are folded by "needle_fold" (default: case,
    i.e. full case folding), and in none of the "needle_not_in" fields folded
    by "needle_not_fold" (default: case)."""
    fold = FOLDS[e.get("needle_fold", "case")]
    not_fold = FOLDS[e.get("needle_not_fold", "case")]
    for u in d.uids:
        item = items.get(u)
        if item is None:
            continue
        if any(not_fold(d.needle) in not_fold(item.text.get(f, ""))
               for f in e.get("needle_not_in", [])):
            continue
        if not e.get("needle_in") or any(fold(d.needle) in fold(item.text.get(f, ""))
                                         for f in e["needle_in"]):
            return True
    return False


SORT_FIELDS = {"SUBJECT": "subject", "FROM": "from", "DISPLAYFROM": "from", "TO": "to",
               "DISPLAYTO": "to", "CC": "cc"}


def match_known(known: list[dict], d: Difference, items: dict[int, MailItem]) -> int | None:
    for i, e in enumerate(known):
        if e["kind"] != d.kind or not re.search(e["key"], d.key):
            continue
        if e.get("found_by") and e["found_by"] != d.found_by:
            continue
        texts = [items[u].header if u in items else "" for u in d.uids]
        dates = [items[u].internal_date if u in items else "" for u in d.uids]
        flags = re.M | re.I
        if e.get("internal_date") and not any(re.search(e["internal_date"], t) for t in dates):
            continue
        if e.get("message") and not any(re.search(e["message"], t, flags) for t in texts):
            continue
        if e.get("message_not") and any(re.search(e["message_not"], t, flags) for t in texts):
            continue
        if e.get("criteria_non_ascii"):
            fields = {SORT_FIELDS[k] for k in re.findall(r"[A-Z]+", d.key) if k in SORT_FIELDS}
            if not any(ord(c) > 127 for u in d.uids if u in items for f in fields
                       for c in items[u].text.get(f, "")):
                continue
        if e.get("needle_in") or e.get("needle_not_in"):
            if d.needle is None or not needle_matches(e, d, items):
                continue
        return i
    return None


# ---------------------------------------------------------------- comparing


class Runner:
    def __init__(self, dove: Imap, ours: Imap):
        self.sides = {"dovecot": dove, "peregrine": ours}
        self.seconds = {"dovecot": 0.0, "peregrine": 0.0}
        self.refused_by_both: list[str] = []

    def both(self, pieces: list):
        out = {}
        for name, imap in self.sides.items():
            t = time.monotonic()
            out[name] = run(imap, pieces)
            self.seconds[name] += time.monotonic() - t
        return out

    def trace(self, index: int, command: Command, only: dict[str, set[int]]) -> list[Difference]:
        """Each message one side found: the leaves the sides judge differently."""
        out = []
        pending = {u: side for side, uids in only.items() for u in uids}
        if not pending:
            return out
        uids = sorted(pending)
        charset = [f"CHARSET {command.charset} "] if command.charset else []
        blamed: dict[int, list[tuple]] = defaultdict(list)
        for leaf in command.leaves:
            probe = ["UID SEARCH "] + charset + ["UID " + ",".join(map(str, uids)) + " "] + leaf
            answers = {}
            for side, (status, untagged, text) in self.both(probe).items():
                answers[side] = (status, set(parse_numbers(untagged, b"SEARCH") or []))
            if answers["dovecot"][0] != answers["peregrine"][0]:
                continue  # reported on the command itself
            for u in uids:
                if (u in answers["dovecot"][1]) != (u in answers["peregrine"][1]):
                    # Who finds the message with this key alone (under a NOT,
                    # the other side finds it with the whole program).
                    blamed[u].append((leaf, "dovecot" if u in answers["dovecot"][1]
                                      else "peregrine"))
        for u in uids:
            for leaf, side in blamed.get(u) or [(["?"], None)]:
                out.append(Difference(index, command, "search", "".join(leaf), [u], side,
                                      needle=string_argument(leaf[-1]),
                                      note="" if side == pending[u] else
                                      f"the command's answer has it from {pending[u]}"))
        return out

    def compare(self, index: int, command: Command) -> list[Difference]:
        answers = self.both(command.pieces)
        dstatus, dun, dtext = answers["dovecot"]
        pstatus, pun, ptext = answers["peregrine"]
        if dstatus != pstatus:
            note = f"dovecot {dstatus} {dtext.decode('utf-8', 'replace')[:80]}; " \
                   f"peregrine {pstatus} {ptext.decode('utf-8', 'replace')[:80]}"
            return [Difference(index, command, "status", command.text(), [], None, note)]
        if dstatus != "OK":
            self.refused_by_both.append(f"#{index} {command.text()!r}: {dstatus} "
                                        f"{dtext.decode('utf-8', 'replace')[:100]}")
            return []
        if command.kind == "esearch":
            dres, pres = parse_esearch(dun), parse_esearch(pun)
            if dres == pres:
                return []
            # Trace through the same search without RETURN; if its answers
            # agree, the difference is in the ESEARCH response itself.
            plain = Command("search", command.uid, command.plain, command.leaves,
                            command.charset)
            diffs = self.compare(index, plain)
            return diffs or [Difference(index, command, "esearch", command.detail, [], None,
                                        f"dovecot {dres}; peregrine {pres}")]
        if command.kind == "thread":
            dthreads, pthreads = parse_threads(dun), parse_threads(pun)
        else:
            name = b"SEARCH" if command.kind == "search" else b"SORT"
            dthreads, pthreads = parse_numbers(dun, name), parse_numbers(pun, name)
        if dthreads is None or pthreads is None:
            missing = "dovecot" if dthreads is None else "peregrine"
            return [Difference(index, command, "status", command.text(), [], None,
                               f"no untagged {command.kind.upper()} from {missing}")]
        if command.kind == "thread":
            dset = {i for t in dthreads for i in thread_ids(t)}
            pset = {i for t in pthreads for i in thread_ids(t)}
            if dset != pset:
                # Other messages make other threads: trace the set only.
                only = {"dovecot": dset - pset, "peregrine": pset - dset}
                if not command.uid:
                    only = {k: set(self.seq_to_uid(v)) for k, v in only.items()}
                return self.trace(index, command, only)
            return self.compare_threads(index, command, dthreads, pthreads)
        dlist, plist = dthreads, pthreads
        diffs = []
        if set(dlist) != set(plist):
            only = {"dovecot": set(dlist) - set(plist), "peregrine": set(plist) - set(dlist)}
            if not command.uid:
                only = {k: set(self.seq_to_uid(v)) for k, v in only.items()}
            diffs += self.trace(index, command, only)
        if command.kind == "sort":
            common = set(dlist) & set(plist)
            dorder = [x for x in dlist if x in common]
            pos = {x: i for i, x in enumerate(x for x in plist if x in common)}
            for a, b in zip(dorder, dorder[1:]):
                if pos[a] > pos[b]:
                    pair = [a, b] if command.uid else self.seq_to_uid([a, b])
                    diffs.append(Difference(index, command, "order", command.detail, pair, None))
        return diffs

    def compare_threads(self, index: int, command: Command, dove: list, ours: list):
        diffs = []
        ours_set, dove_set = set(ours), set(dove)
        for side, threads, other in (("dovecot", dove, ours_set), ("peregrine", ours, dove_set)):
            for t in threads:
                if t not in other:
                    ids = thread_ids(t)
                    uids = ids if command.uid else self.seq_to_uid(ids)
                    diffs.append(Difference(index, command, "thread", command.detail, uids, side,
                                            show_thread(t)))
        if not diffs and dove != ours:
            diffs.append(Difference(index, command, "thread", command.detail,
                                    [], None, "same threads, other order"))
        return diffs

    def seq_to_uid(self, seqs) -> list[int]:
        return [self.uid_of_seq.get(s, -s) for s in sorted(seqs)]


# ---------------------------------------------------------------- main


def main() -> int:
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(3))
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--peregrine", default=os.environ.get("PEREGRINE_BIN"),
                    help="the peregrine binary (default: $PEREGRINE_BIN)")
    ap.add_argument("--profile", choices=sorted(PROFILES), default="ci")
    ap.add_argument("--messages", type=int, help="messages kept in the mailbox")
    ap.add_argument("--commands", type=int, help="commands to run")
    ap.add_argument("--seed", type=int)
    ap.add_argument("--only", default="auto",
                    help="comma list of search,esearch,sort,display,thread (default: what Peregrine "
                         "advertises)")
    ap.add_argument("--known", default=str(HERE / "known_differences.json"))
    ap.add_argument("--tmpdir", default="/dev/shm" if os.access("/dev/shm", os.W_OK) else None,
                    help="where both servers keep their files (default /dev/shm: durability "
                         "is not under test, and fsync there costs nothing)")
    ap.add_argument("--against-itself", action="store_true",
                    help="compare Dovecot with itself (a check of this script: every "
                         "difference it then reports is a fault of the comparison)")
    ap.add_argument("--probe", action="append", metavar="KEY",
                    help="run only `UID SEARCH KEY` (ASCII), traced; repeatable")
    ap.add_argument("--keep", action="store_true", help="keep both servers' files")
    ap.add_argument("--show-commands", action="store_true", help="print every command")
    args = ap.parse_args()

    profile = dict(PROFILES[args.profile])
    for name in ("messages", "commands", "seed"):
        if getattr(args, name) is not None and getattr(args, name) != profile[name]:
            profile[name] = getattr(args, name)
            args.profile = "custom"
    if not args.peregrine and not args.against_itself:
        print("dovecot_diff: no Peregrine binary (--peregrine or PEREGRINE_BIN)", file=sys.stderr)
        return 2
    try:
        known = load_known(args.known)
    except (CheckError, OSError, ValueError) as e:
        print(f"dovecot_diff: {e}", file=sys.stderr)
        return 2
    if args.against_itself:
        known = []  # nothing may differ

    started = time.monotonic()
    items = build(profile["messages"], profile["seed"], profile["max_size"])
    by_uid = dict(enumerate(items, 1))
    built = time.monotonic()

    if args.tmpdir:
        tempfile.tempdir = args.tmpdir  # both servers' files; harness.Server uses it too
    workdir = Path(tempfile.mkdtemp(prefix="peregrine-searchdiff-"))
    os.chmod(workdir, 0o755)  # Dovecot's unprivileged processes walk through it
    dovecot = ours_server = None
    diffs: list[Difference] = []
    probe_hits = [False] * len(known)
    ran = 0
    try:
        dovecot = Dovecot(workdir, USER, PASSWORD, name="searchdiff",
                          extra_config="mail_max_userip_connections = 100\nmail_fsync = never\n")
        dovecot.start()
        if not args.against_itself:
            ours_server = harness.Server(binary=args.peregrine, users={USER: PASSWORD},
                                         keep_dir=args.keep)
            ours_server.start()
        load(dovecot.port, items)
        load_split = time.monotonic()
        if ours_server is not None:
            load(ours_server.port, items)
        loaded = time.monotonic()
        load_seconds = {"dovecot": load_split - built, "peregrine": loaded - load_split}

        dove = login(dovecot.port)
        # Against itself: the same session twice (a second one would not see \Recent).
        ours = dove if ours_server is None else login(ours_server.port)
        try:
            dstate = check(dove, b"SELECT INBOX", "SELECT") and mailbox_state(dove)
            pstate = (dstate if ours is dove else
                      check(ours, b"SELECT INBOX", "SELECT") and mailbox_state(ours))
            setup = [f"uid {u}: dovecot={dstate.get(u)} peregrine={pstate.get(u)}"
                     for u in sorted(set(dstate) | set(pstate)) if dstate.get(u) != pstate.get(u)]
            if setup:
                print("\n".join(setup[:20]))
                raise CheckError(f"the two mailboxes differ after loading ({len(setup)} messages);"
                                 " the comparison would not be fair")
            caps = capabilities(ours)
            if args.only == "auto":
                kinds = ["search"]
                if "ESEARCH" in caps:
                    kinds.append("esearch")
                if "SORT" in caps:
                    kinds.append("sort")
                if "SORT=DISPLAY" in caps:
                    kinds.append("display")
                if {"THREAD=REFERENCES", "THREAD=ORDEREDSUBJECT"} <= caps:
                    kinds.append("thread")
                skipped = sorted({"search", "esearch", "sort", "display", "thread"} - set(kinds))
                if skipped:
                    print(f"dovecot_diff: Peregrine does not advertise {', '.join(skipped)}: "
                          f"not run")
            else:
                kinds = [k.strip() for k in args.only.split(",") if k.strip()]
                if not kinds or set(kinds) - {"search", "esearch", "sort", "display", "thread"}:
                    raise CheckError(f"--only {args.only}: expected search, esearch, sort, "
                                     "display, thread")
            gen = Generator(items, profile["seed"])
            commands = gen.commands(profile["commands"], tuple(kinds))
            if args.probe:
                # Only the given keys, each as one UID SEARCH (for a closer look).
                commands = [Command("search", True, ["UID SEARCH " + k], [[k]], None)
                            for k in args.probe]
            runner = Runner(dove, ours)
            runner.uid_of_seq = {seq: uid for uid, (seq, *_) in dstate.items()}
            for index, command in enumerate(commands, 1):
                if args.show_commands:
                    print(f"#{index} {command.text()}")
                diffs += runner.compare(index, command)
                ran += 1
            # Fixed differences must stay fixed.
            for i, key in enumerate(FIXED_PROBES):
                diffs += runner.compare(f"fixed{i}", Command("search", True,
                                                             ["UID SEARCH " + key], [[key]],
                                                             None))
            # Each known difference's own probe must still show it.
            for i, e in enumerate(known):
                if e["kind"] == "order":  # probe: [criteria, search keys...]
                    criteria, keys = e["probe"][0], " ".join(e["probe"][1:])
                    probe = Command("sort", True, [f"UID SORT ({criteria}) UTF-8 {keys}"],
                                    [[k] for k in e["probe"][1:]], "UTF-8", criteria)
                else:
                    leaves = [[k] for k in e["probe"]]
                    probe = Command("search", True, ["UID SEARCH " + " ".join(e["probe"])],
                                    leaves, None)
                found = runner.compare(f"probe{i}", probe)
                probe_hits[i] = any(match_known(known, d, by_uid) == i for d in found)
                diffs += found
        finally:
            dove.close()
            if ours is not dove:
                ours.close()
    except CheckError as e:
        print(f"dovecot_diff: {e}", file=sys.stderr)
        if dovecot is not None:
            print(dovecot.logs()[-2000:], file=sys.stderr)
        return 2
    except (ImapError, OSError) as e:
        print(f"dovecot_diff: talking to a server failed after {ran} commands: {e}",
              file=sys.stderr)
        if ours_server is not None:
            print(ours_server.log_tail(40), file=sys.stderr)
        return 2
    finally:
        if dovecot is not None:
            dovecot.stop()
        if ours_server is not None:
            try:
                ours_server.stop()
            except AssertionError as e:
                print(f"dovecot_diff: Peregrine did not stop cleanly: {e}", file=sys.stderr)
                diffs.append(None)
            ours_server.cleanup()
        if args.keep:
            print(f"dovecot_diff: Dovecot's files kept in {workdir}", file=sys.stderr)
        else:
            shutil.rmtree(workdir, ignore_errors=True)
    if None in diffs:
        return 1

    used = [0] * len(known)
    printed = [0] * len(known)
    new = 0
    for d in diffs:
        i = match_known(known, d, by_uid)
        if i is None:
            new += 1
            print(d.line() + " (NEW)")
            continue
        used[i] += 1
        printed[i] += 1
        if printed[i] <= MAX_PRINTED_PER_ENTRY:
            print(d.line() + f" (known: {known[i]['compliance']})")
    for i, e in enumerate(known):
        if used[i] > MAX_PRINTED_PER_ENTRY:
            print(f"... {used[i] - MAX_PRINTED_PER_ENTRY} more of {e['compliance']} "
                  f"({e['kind']} <{e['key']}>)")
    stale = [e for i, e in enumerate(known) if not probe_hits[i]]
    for e in stale:
        print(f"STALE known difference no longer occurs: {e['kind']} <{e['key']}> "
              f"({e['compliance']})")
    for line in runner.refused_by_both[:5]:
        print(f"refused by both: {line}")
    by_kind = defaultdict(int)
    for c in commands:
        by_kind[c.kind] += 1
    print(f"dovecot_diff: profile {args.profile}, seed {profile['seed']}, "
          f"{profile['messages']} messages, {ran} commands "
          f"({', '.join(f'{v} {k}' for k, v in sorted(by_kind.items()))}); "
          f"{len(runner.refused_by_both)} refused by both; "
          f"{len(diffs)} differences ({len(diffs) - new} known, {new} new), {len(stale)} stale; "
          f"build {built - started:.1f} s, load {loaded - built:.1f} s, "
          f"commands {time.monotonic() - loaded:.1f} s")
    print("dovecot_diff: seconds spent (load, commands): " + ", ".join(
        f"{side} {load_seconds[side]:.1f}, {runner.seconds[side]:.1f}" for side in runner.seconds))
    if new or stale:
        print("dovecot_diff: FAILED — fix the difference or list it in "
              "tests/search/known_differences.json with its docs/compliance.md section")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
