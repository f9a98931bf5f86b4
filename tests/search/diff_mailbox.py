"""The mailbox the SEARCH/SORT/THREAD differential test loads into both servers.

Messages come from bench/gen_mail.py (threads, charsets, attachments) plus a
few hand-written edge cases for SORT and THREAD (no Date, no Subject,
duplicate Message-IDs, a References loop, missing parents, "Re: Fwd:" and
"[list]" subjects). Each message gets flags, keywords and an internal date,
all drawn from the seed, and some messages are appended only to be expunged,
so UIDs and sequence numbers differ. The decoded text of each message is kept
to draw search strings from.

Python standard library only.
"""

from __future__ import annotations

import dataclasses
import datetime
import email
import email.header
import email.utils
import random
import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent.parent / "bench"))
from gen_mail import MailGenerator, Options  # noqa: E402

SYSTEM_FLAGS = (("\\Seen", 0.6), ("\\Answered", 0.15), ("\\Flagged", 0.1), ("\\Draft", 0.03))
DELETED_SHARE = 0.05
KEYWORDS = ("$Forwarded", "$Junk", "$NotJunk", "projectx", "Urgent")
KEYWORD_SHARE = 0.12
EXPUNGED_SHARE = 0.06  # messages appended and then expunged (UID gaps)
LATE_SHARE = 0.1  # appended after the others were seen (\Recent in the search session)
# Internal-date zones: most +0000; the rest put the local date on another day
# than the UTC one for some messages.
ZONES = ((0, 0.75), (-8 * 60, 0.07), (5 * 60 + 30, 0.06), (9 * 60, 0.06), (-3 * 60, 0.06))
MONTHS = ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec")


@dataclasses.dataclass
class MailItem:
    """One message as loaded: bytes (CRLF), flags, internal date, and what
    the search generator may draw strings from."""

    data: bytes
    flags: list[str]
    deleted: bool  # \Deleted is set after the expunge step
    internal_date: str  # RFC 3501 date-time
    internal_day: datetime.date  # the date as written in its own zone
    expunge: bool  # appended, then expunged
    late: bool  # appended after the first SELECT
    sent_day: datetime.date | None
    header: str  # the raw header block, latin-1
    text: dict[str, str]  # subject, from, to, cc, bcc, body, html, filenames,
    # embedded_headers, part_headers: decoded
    header_values: dict[str, str]  # lower-cased field name -> first raw value (unfolded)


def _imap_date_time(when: datetime.datetime, zone_minutes: int) -> tuple[str, datetime.date]:
    local = when.astimezone(datetime.timezone(datetime.timedelta(minutes=zone_minutes)))
    sign = "+" if zone_minutes >= 0 else "-"
    z = abs(zone_minutes)
    text = "%2d-%s-%04d %02d:%02d:%02d %s%02d%02d" % (
        local.day, MONTHS[local.month - 1], local.year, local.hour, local.minute, local.second,
        sign, z // 60, z % 60)
    return text, local.date()


def _pick_weighted(rng: random.Random, table):
    r = rng.random()
    for value, share in table:
        if r < share:
            return value
        r -= share
    return table[0][0]


def edge_messages(start: datetime.datetime) -> list[tuple[bytes, datetime.datetime, str | None]]:
    """Hand-written messages for the cases generated mail seldom has: (bytes,
    arrival, internal date-time when it is fixed). Known differences use some
    of them in their probe commands, so keep their text and dates."""
    def msg(headers: list[str], body: str = "Edge case body text.") -> bytes:
        return ("\r\n".join(headers) + "\r\n\r\n" + body + "\r\n").encode("utf-8")

    d = lambda hours: start + datetime.timedelta(hours=hours)  # noqa: E731
    out = [
        # No Date: SENT* keys and SORT DATE fall back (RFC 5256 §2.2 for SORT).
        msg(["From: Nodate Sender <nodate@example.org>", "To: team@example.com",
             "Subject: Edge without a date", "Message-ID: <edge.nodate@example.org>"]),
        # No Subject; To is an empty group.
        msg(["From: quiet@example.org", "Date: Tue, 9 Jan 2024 10:00:00 +0000",
             "To: undisclosed-recipients:;",
             "Message-ID: <edge.nosubject@example.org>"]),
        # Base-subject rules of RFC 5256 §2.1.
        msg(["From: Lister <list@example.net>", "To: team@example.com",
             "Subject: [dev] Re: Fwd: RE:  Edge   base subject (fwd)",
             "Date: Tue, 9 Jan 2024 11:00:00 +0100", "Message-ID: <edge.base1@example.net>"]),
        msg(["From: Other <other@example.net>", "To: team@example.com",
             "Subject: Edge base subject", "Date: Tue, 9 Jan 2024 11:30:00 -0500",
             "Message-ID: <edge.base2@example.net>"]),
        msg(["From: Other <other@example.net>", "To: team@example.com",
             "Subject: [Fwd: Edge base subject]", "Date: Wed, 10 Jan 2024 08:00:00 +0000",
             "Message-ID: <edge.base3@example.net>", "In-Reply-To: <edge.base2@example.net>"]),
        # Duplicate Message-ID.
        msg(["From: Dup One <dup@example.org>", "To: team@example.com", "Subject: Edge duplicate id",
             "Date: Wed, 10 Jan 2024 09:00:00 +0000", "Message-ID: <edge.dup@example.org>"]),
        msg(["From: Dup Two <dup@example.org>", "To: team@example.com",
             "Subject: Re: Edge duplicate id", "Date: Wed, 10 Jan 2024 09:05:00 +0000",
             "Message-ID: <edge.dup@example.org>"]),
        # A reply whose parent is missing, and a References loop.
        msg(["From: Orphan <orphan@example.org>", "To: team@example.com",
             "Subject: Re: Edge lost parent", "Date: Wed, 10 Jan 2024 10:00:00 +0000",
             "Message-ID: <edge.orphan@example.org>",
             "References: <edge.missing1@example.org> <edge.missing2@example.org>"]),
        msg(["From: Loop A <loop@example.org>", "To: team@example.com", "Subject: Edge loop",
             "Date: Wed, 10 Jan 2024 11:00:00 +0000", "Message-ID: <edge.loopa@example.org>",
             "References: <edge.loopb@example.org>"]),
        msg(["From: Loop B <loop@example.org>", "To: team@example.com", "Subject: Re: Edge loop",
             "Date: Wed, 10 Jan 2024 11:10:00 +0000", "Message-ID: <edge.loopb@example.org>",
             "References: <edge.loopa@example.org>"]),
        # Same Date as another message (SORT ties), encoded From and Cc.
        msg(["From: =?utf-8?q?=C3=89cole_Fran=C3=A7aise?= <ecole@example.fr>",
             "To: =?utf-8?b?w4lDT0xF?= <ecole2@example.fr>",
             "Cc: =?utf-8?q?Zed_Chlo=C3=A9?= <zed@example.org>",
             "Subject: =?utf-8?q?=C3=89COLE_et_=C3=A9cole?=",
             "Date: Wed, 10 Jan 2024 09:00:00 +0000", "Message-ID: <edge.ecole@example.fr>",
             "MIME-Version: 1.0", "Content-Type: text/plain; charset=utf-8",
             "Content-Transfer-Encoding: 8bit"],
            "La rentrée à l'école est prévue. Straße und GRÜSSE."),
        # An attachment's file name and an attached message's header.
        msg(["From: Attacher <attacher@example.org>", "To: team@example.com",
             "Subject: Edge attachments", "Date: Thu, 11 Jan 2024 12:00:00 +0000",
             "Message-ID: <edge.attach@example.org>", "MIME-Version: 1.0",
             'Content-Type: multipart/mixed; boundary="edge-b"'],
            "--edge-b\r\nContent-Type: text/plain; charset=us-ascii\r\n\r\n"
            "See the attached figures and the forwarded note.\r\n"
            "--edge-b\r\nContent-Type: application/pdf; name=\"edge-quarterly-figures.pdf\"\r\n"
            "Content-Disposition: attachment; filename=\"edge-quarterly-figures.pdf\"\r\n"
            "Content-ID: <edge-part-id@example.org>\r\n"
            "Content-Transfer-Encoding: base64\r\n\r\nJVBERi0xLjcKJeLjz9MK\r\n"
            "--edge-b\r\nContent-Type: message/rfc822\r\n\r\n"
            "From: Inner Person <inner.person@example.org>\r\nTo: team@example.com\r\n"
            "Subject: Edge inner subject\r\nDate: Wed, 10 Jan 2024 12:00:00 +0000\r\n\r\n"
            "The inner body text.\r\n--edge-b--"),
    ]
    # HTML only: markup and text.
    out.append(("\r\n".join([
        "From: Webmail <webmail@example.org>", "To: team@example.com",
        "Subject: Edge html only", "Date: Thu, 11 Jan 2024 13:00:00 +0000",
        "Message-ID: <edge.html@example.org>", "MIME-Version: 1.0",
        "Content-Type: text/html; charset=utf-8", "",
        '<html><body><p style="color:darkred">Edge html paragraph.</p></body></html>', ""])
    ).encode())
    fixed = [(m, d(i), None) for i, m in enumerate(out)]
    # Date and internal date near midnight in a far zone: the date as written
    # is the 11th, in UTC it is the 12th.
    late = msg(["From: Late <late@example.org>", "To: team@example.com",
                "Subject: Edge late night", "Date: Thu, 11 Jan 2024 23:30:00 -0800",
                "Message-ID: <edge.late@example.org>"])
    fixed.append((late, d(len(out)), "11-Jan-2024 23:30:00 -0800"))
    return fixed


def _header_text(raw) -> str:
    if raw is None:
        return ""
    try:
        return str(email.header.make_header(email.header.decode_header(str(raw))))
    except (LookupError, ValueError, UnicodeError):
        return str(raw)


def _decoded(data: bytes) -> tuple[dict[str, str], dict[str, str]]:
    # compat32 and by-hand decoding: the email package's default policy takes
    # ~25 ms a message here, too slow for 5,000.
    msg = email.message_from_bytes(data)
    text = {name: _header_text(msg.get(name)) for name in ("subject", "from", "to", "cc", "bcc")}
    bodies, html, names, embedded, part_headers = [], [], [], [], []
    for part in msg.walk():
        if part is not msg:
            part_headers += [f"{k}: {_header_text(v)}" for k, v in part.items()]
        if part.get_content_type() == "message/rfc822" and part.is_multipart():
            inner = part.get_payload(0)
            embedded += [f"{k}: {_header_text(v)}" for k, v in inner.items()]
        name = part.get_filename()
        if name:
            names.append(_header_text(name))
            continue
        if part.get_content_type() not in ("text/plain", "text/html"):
            continue
        payload = part.get_payload(decode=True) or b""
        charset = part.get_content_charset() or "utf-8"  # 8-bit without a label: UTF-8
        if charset == "us-ascii":
            charset = "utf-8"
        try:
            decoded = payload.decode(charset, errors="replace")
        except LookupError:
            decoded = payload.decode("latin-1")
        (bodies if part.get_content_type() == "text/plain" else html).append(decoded)
    text["html"] = "\n".join(html)  # markup and all
    text["filenames"] = " ".join(names)
    text["embedded_headers"] = "\n".join(embedded)  # of attached messages
    text["part_headers"] = "\n".join(part_headers)  # of every part below the top
    text["body"] = "\n".join(bodies)
    raw_header = data.split(b"\r\n\r\n", 1)[0].decode("latin-1")
    values: dict[str, str] = {}
    for m in re.finditer(r"^([!-9;-~]+):[ \t]*([^\r\n]*(?:\r\n[ \t][^\r\n]*)*)", raw_header,
                         re.M):
        values.setdefault(m.group(1).lower(), re.sub(r"\r\n", "", m.group(2)))
    return text, values


def _sent_day(values: dict[str, str]) -> datetime.date | None:
    raw = values.get("date")
    if not raw:
        return None
    try:
        return email.utils.parsedate_to_datetime(raw).date()
    except (TypeError, ValueError):
        return None


def build(count: int, seed: int, max_size: int) -> list[MailItem]:
    """`count` messages that stay in the mailbox, plus the ones expunged, in
    the order they are appended."""
    rng = random.Random(seed * 7919 + 17)
    gen = MailGenerator(Options(seed=seed, crlf=True, max_size=max_size))
    edges = edge_messages(gen.opt.start)
    edge_at = {int((i + 1) * count / (len(edges) + 1)): e for i, e in enumerate(edges)}
    items: list[MailItem] = []
    kept = 0
    while kept < count:
        expunge = rng.random() < EXPUNGED_SHARE
        fixed_date = None
        if not expunge and kept in edge_at:
            data, _, fixed_date = edge_at.pop(kept)
            when = gen.now
        else:
            m = gen.next_message()
            data, when = m.data, m.date
        # Arrival a little after the Date header (some before: clocks differ).
        when = when + datetime.timedelta(seconds=rng.randint(-300, 3 * 3600))
        zone = _pick_weighted(rng, ZONES)
        date_text, day = _imap_date_time(when, zone)
        if fixed_date:
            date_text = fixed_date
            day = datetime.datetime.strptime(fixed_date[:11].strip(), "%d-%b-%Y").date()
        flags = [f for f, share in SYSTEM_FLAGS if rng.random() < share]
        flags += [k for k in KEYWORDS if rng.random() < KEYWORD_SHARE]
        text, values = _decoded(data)
        items.append(MailItem(
            data=data, flags=flags, deleted=rng.random() < DELETED_SHARE,
            internal_date=date_text, internal_day=day, expunge=expunge,
            late=kept >= count * (1 - LATE_SHARE) and not expunge,
            sent_day=_sent_day(values), header=data.split(b"\r\n\r\n", 1)[0].decode("latin-1"),
            text=text, header_values=values))
        if not expunge:
            kept += 1
    # APPEND order, so UID n is items[n - 1].
    return [i for i in items if not i.late] + [i for i in items if i.late]
