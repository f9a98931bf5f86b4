"""Generates SEARCH, SORT and THREAD commands from a seed.

Every search key of RFC 3501 §6.4.4 / RFC 9051 §6.4.4 (flags, keywords,
NEW/OLD/RECENT, dates, sizes, text keys, HEADER, UID and sequence sets,
NOT/OR/parentheses), with strings drawn from the messages' decoded text
(prefixes, infixes, other case, non-ASCII), CHARSET UTF-8 and US-ASCII; SORT
(RFC 5256) with every key and REVERSE; THREAD REFERENCES and ORDEREDSUBJECT.

A command is a list of pieces: str for plain command text, Literal for a
string that must go as a literal (8-bit). `leaves` lists each elementary key
of the search program as its own piece list, so a difference can be traced
to the key that causes it.

Python standard library only.
"""

from __future__ import annotations

import dataclasses
import datetime
import random
import re
import unicodedata

from diff_mailbox import KEYWORDS, MONTHS, MailItem

FLAG_KEYS = ("ALL", "ANSWERED", "DELETED", "DRAFT", "FLAGGED", "NEW", "OLD", "RECENT", "SEEN",
             "UNANSWERED", "UNDELETED", "UNDRAFT", "UNFLAGGED", "UNSEEN")
TEXT_KEYS = ("FROM", "TO", "CC", "BCC", "SUBJECT", "BODY", "TEXT")
DATE_KEYS = ("BEFORE", "ON", "SINCE", "SENTBEFORE", "SENTON", "SENTSINCE")
HEADER_FIELDS = ("Message-ID", "In-Reply-To", "References", "List-Id", "X-Mailer", "Content-Type",
                 "Received", "Subject", "From", "Date", "X-Missing-Field", "MIME-Version")
SORT_KEYS = ("ARRIVAL", "CC", "DATE", "FROM", "SIZE", "SUBJECT", "TO")
THREAD_ALGORITHMS = ("REFERENCES", "ORDEREDSUBJECT")
ABSENT = ("zqxjv", "qqqzz", "xylophonic")  # strings no message holds


class Literal(str):
    """A string argument sent as a literal (it holds 8-bit characters)."""


@dataclasses.dataclass
class Command:
    kind: str  # "search", "esearch" (SEARCH RETURN, RFC 4731), "sort" or "thread"
    uid: bool
    pieces: list  # str / Literal
    leaves: list  # each a list of str / Literal: one elementary key
    charset: str | None  # CHARSET of a SEARCH, the charset argument of SORT/THREAD
    detail: str = ""  # SORT criteria, THREAD algorithm, or the RETURN options
    plain: list | None = None  # esearch: the same search without RETURN

    def text(self) -> str:
        return "".join(self.pieces)


def imap_string(s: str) -> str:
    """A quoted string, or a Literal when it holds 8-bit characters."""
    if any(ord(c) > 126 or ord(c) < 32 for c in s):
        return Literal(s)
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'


def imap_date(d: datetime.date) -> str:
    return "%d-%s-%04d" % (d.day, MONTHS[d.month - 1], d.year)


class Generator:
    """Commands from a seed over one loaded mailbox."""

    def __init__(self, items: list[MailItem], seed: int):
        self.rng = random.Random(seed * 104729 + 3)
        self.items = [i for i in items if not i.expunge]
        self.count = len(self.items)
        # UIDs as both servers assign them: 1, 2, ... in APPEND order, with
        # the expunged ones missing afterwards.
        uid = 0
        self.uids = []
        for i in items:
            uid += 1
            if not i.expunge:
                self.uids.append(uid)
        self.max_uid = uid
        self.sizes = [len(i.data) for i in self.items]
        self.esearch = False
        self.display = False
        self.non_ascii = {
            source: [i for i in self.items if any(ord(c) > 127 for c in i.text.get(source, ""))]
            for source in ("subject", "from", "to", "cc", "body", "html", "filenames")}

    # -- strings ------------------------------------------------------------

    def fragment(self, text: str) -> str:
        """A piece of `text`: a whole word, a prefix, an infix or a suffix of
        one, two words, sometimes in other case."""
        rng = self.rng
        words = [w for w in re.findall(r"\w[\w.@'-]*", text) if len(w) >= 3]
        if not words:
            return rng.choice(ABSENT)
        i = rng.randrange(len(words))
        w = words[i]
        r = rng.random()
        if r < 0.25:
            s = w
        elif r < 0.45:
            s = w[: rng.randint(3, len(w))]
        elif r < 0.65:
            a = rng.randint(0, max(0, len(w) - 3))
            s = w[a : a + rng.randint(3, max(3, len(w) - a))]
        elif r < 0.8:
            s = w[rng.randint(0, len(w) - 3) :]
        else:
            # Two words with the space between them, as written.
            m = re.search(re.escape(w) + r"[ ]+\w+", text)
            s = m.group(0) if m else w
        r = rng.random()
        if r < 0.12:
            s = s.upper()
        elif r < 0.2:
            s = s.lower()
        r = rng.random()
        if r < 0.04 and " " in s:
            s = s.replace(" ", "  ", 1)  # a white-space run the text does not have
        elif r < 0.1 and any(ord(c) > 127 for c in s):
            # Accents taken off: "ecole" for "école" (not the same string).
            s = "".join(c for c in unicodedata.normalize("NFD", s)
                        if not unicodedata.combining(c))
        return s

    def text_needle(self, key: str) -> str:
        rng = self.rng
        if rng.random() < 0.06:
            return rng.choice(ABSENT)
        source = {"FROM": "from", "TO": "to", "CC": "cc", "BCC": "bcc", "SUBJECT": "subject",
                  "BODY": "body"}.get(key)
        if source is None:  # TEXT: anything
            source = rng.choice(("subject", "from", "to", "body", "body"))
        if source == "body" and rng.random() < 0.15:
            # HTML parts (markup and text) and attachment file names.
            source = rng.choice(("html", "filenames"))
        pool = self.non_ascii.get(source) if rng.random() < 0.5 else None
        item = rng.choice(pool or self.items)
        text = item.text.get(source, "")
        if not text:
            # Another message that has this field, if one is near.
            for other in rng.sample(self.items, min(20, self.count)):
                if other.text.get(source):
                    text = other.text[source]
                    break
        return self.fragment(text)

    def header_key(self) -> list:
        rng = self.rng
        field = rng.choice(HEADER_FIELDS)
        if rng.random() < 0.15:
            value = ""
        else:
            item = rng.choice(self.items)
            raw = item.header_values.get(field.lower(), "")
            decoded = item.text.get(field.lower())
            if decoded and rng.random() < 0.7:
                raw = decoded  # the decoded value (RFC 2047 words of Subject, From)
            value = self.fragment(raw) if raw else rng.choice(ABSENT)
        if rng.random() < 0.2:
            field = field.lower()
        return ["HEADER ", field, " ", imap_string(value)]

    # -- keys ---------------------------------------------------------------

    def sequence_set(self, top: int) -> str:
        rng = self.rng
        parts = []
        for _ in range(rng.randint(1, 3)):
            r = rng.random()
            a = rng.randint(1, max(1, top + 2))
            b = rng.randint(1, max(1, top + 2))
            if r < 0.3:
                parts.append(str(a))
            elif r < 0.7:
                parts.append("%d:%d" % (a, b))  # b < a is allowed (RFC 9051 §9 seq-range)
            elif r < 0.85:
                parts.append("%d:*" % a)
            else:
                parts.append("*")
        return ",".join(parts)

    def leaf(self) -> list:
        rng = self.rng
        r = rng.random()
        if r < 0.2:
            return [rng.choice(FLAG_KEYS)]
        if r < 0.28:
            k = rng.choice(KEYWORDS + ("NeverSet",))
            if rng.random() < 0.15:
                k = k.lower() if k != k.lower() else k.upper()
            return [rng.choice(("KEYWORD ", "UNKEYWORD ")) + k]
        if r < 0.6:
            key = rng.choice(TEXT_KEYS)
            return [key + " ", imap_string(self.text_needle(key))]
        if r < 0.68:
            return self.header_key()
        if r < 0.8:
            key = rng.choice(DATE_KEYS)
            item = rng.choice(self.items)
            day = item.sent_day if key.startswith("SENT") and item.sent_day else item.internal_day
            day += datetime.timedelta(days=rng.choice((-1, 0, 0, 0, 1)))
            return [key + " " + imap_date(day)]
        if r < 0.88:
            size = rng.choice(self.sizes) + rng.choice((-1, 0, 0, 1))
            return [rng.choice(("LARGER ", "SMALLER ")) + str(max(0, size))]
        if r < 0.94:
            return ["UID " + self.sequence_set(self.max_uid)]
        return [self.sequence_set(self.count)]

    def key(self, depth: int, leaves: list) -> list:
        """One search key: a leaf, or NOT/OR/parentheses around keys."""
        rng = self.rng
        r = rng.random() if depth < 3 else 1.0
        if r < 0.12:
            return ["NOT "] + self.key(depth + 1, leaves)
        if r < 0.24:
            return ["OR "] + self.key(depth + 1, leaves) + [" "] + self.key(depth + 1, leaves)
        if r < 0.3:
            inner = self.program(depth + 1, leaves)
            return ["("] + inner + [")"]
        leaf = self.leaf()
        leaves.append(leaf)
        return list(leaf)

    def program(self, depth: int, leaves: list, most: int = 3) -> list:
        out: list = []
        for i in range(self.rng.randint(1, most)):
            if i:
                out.append(" ")
            out += self.key(depth, leaves)
        return out

    # -- commands -----------------------------------------------------------

    def search(self) -> Command:
        rng = self.rng
        leaves: list = []
        prog = self.program(0, leaves)
        uid = rng.random() < 0.5
        eight_bit = any(isinstance(p, Literal) for p in prog)
        charset = None
        if eight_bit or rng.random() < 0.2:
            charset = "UTF-8" if eight_bit or rng.random() < 0.7 else "US-ASCII"
        head = ("UID " if uid else "") + "SEARCH "
        tail = f"CHARSET {charset} " if charset else ""
        if self.esearch and rng.random() < 0.15:
            # RFC 4731 result options; RETURN () means ALL.
            options = " ".join(rng.sample(("MIN", "MAX", "COUNT", "ALL"), rng.randint(0, 4)))
            return Command("esearch", uid, [head + f"RETURN ({options}) " + tail] + prog, leaves,
                           charset, options, plain=[head + tail] + prog)
        return Command("search", uid, [head + tail] + prog, leaves, charset)

    def sort(self) -> Command:
        rng = self.rng
        keys = rng.sample(SORT_KEYS + (("DISPLAYFROM", "DISPLAYTO") if self.display else ()),
                          rng.randint(1, 3))
        criteria = " ".join(("REVERSE " if rng.random() < 0.3 else "") + k for k in keys)
        leaves: list = []
        prog = ["ALL"] if rng.random() < 0.5 else self.program(0, leaves, most=2)
        uid = rng.random() < 0.5
        head = ("UID " if uid else "") + f"SORT ({criteria}) UTF-8 "
        return Command("sort", uid, [head] + prog, leaves, "UTF-8", criteria)

    def thread(self) -> Command:
        rng = self.rng
        algorithm = rng.choice(THREAD_ALGORITHMS)
        leaves: list = []
        prog = ["ALL"] if rng.random() < 0.6 else self.program(0, leaves, most=2)
        uid = rng.random() < 0.5
        head = ("UID " if uid else "") + f"THREAD {algorithm} UTF-8 "
        return Command("thread", uid, [head] + prog, leaves, "UTF-8", algorithm)

    def commands(self, n: int, kinds: tuple[str, ...]) -> list[Command]:
        """`n` commands of `kinds` (search, esearch, sort, display, thread); with all,
        about 60% SEARCH (15% of them with RETURN), 20% SORT, 20% THREAD."""
        weights = {"search": 3, "sort": 1, "thread": 1}
        self.esearch = "esearch" in kinds  # SEARCH RETURN (...) among the searches
        self.display = "display" in kinds  # SORT=DISPLAY keys (RFC 5957) among the SORT keys
        table = [k for k in kinds if k in weights for _ in range(weights[k])]
        make = {"search": self.search, "sort": self.sort, "thread": self.thread}
        return [make[self.rng.choice(table)]() for _ in range(n)]
