#!/usr/bin/env python3
"""Generates realistic email messages for Peregrine's benchmarks.

The mix is meant to look like a real mailbox, not a parser torture test:

  * sizes from 1 KB to 100 KB (by default) with a long tail: most messages
    are a few KB, attachments make up the tail;
  * ~60% text only (text/plain, or multipart/alternative with an HTML part),
    ~35% with attachments (base64 PDF-, PNG- and DOCX-like payloads, inline
    images under multipart/related, forwarded message/rfc822), ~5% other
    machine-written mail (delivery reports, calendar invitations, signed
    mail);
  * threads: about 40% of messages reply to an earlier one, with
    In-Reply-To, References and a "Re:" subject;
  * charsets utf-8, iso-8859-1, windows-1252, koi8-r and iso-2022-jp, with
    RFC 2047 encoded subjects and display names, RFC 2231 file names,
    quoted-printable and base64 bodies;
  * mailing-list headers (List-Id, List-Unsubscribe, ...), Received chains of
    2-6 hops, DKIM signatures and Authentication-Results, folded long lines.

Output is fully determined by --seed and the options (no clock, no hash
order), so two runs give byte-identical files.

Usage:
  gen_mail.py --count 2000 --out DIR                  # DIR/000001.eml ...
  gen_mail.py --count 2000 --format mbox --out FILE   # one mbox (mboxrd quoting)
  gen_mail.py --count 10 --crlf --out DIR             # CRLF line ends

As a library (later benchmarks reuse it):
  from gen_mail import MailGenerator, Options
  for msg in MailGenerator(Options(seed=7)).messages(100):
      msg.data       # bytes of the message
      msg.message_id, msg.kind, msg.thread  # metadata for load generators
"""

from __future__ import annotations

import argparse
import base64
import dataclasses
import datetime
import math
import os
import quopri
import random
import sys
from typing import Iterator

# ---------------------------------------------------------------------------
# Vocabulary. Small, fixed lists keep the output deterministic and the text
# plausible enough for search benchmarks (real words, real scripts).

ENGLISH = (
    "the of and to in is that for it as was with be by on not he this are or his from at "
    "which but have an they you were her she there been one all we their has would when if "
    "so no will more can out about up said what some time could them into only other new "
    "meeting project report budget review schedule customer release server update deadline "
    "invoice contract attached please thanks regards draft proposal feedback quarter team "
    "office call agenda notes issue ticket deploy migration database backup storage network "
    "design document version change request approval travel expenses holiday conference"
).split()

FRENCH = (
    "le la les de des du et à un une est pour que qui dans ce il pas plus par sur se avec "
    "réunion été déjà très prévu équipe problème après même ça où être voilà août début "
    "fenêtre élève façon reçu noël garçon hôtel côté âge cœur naïf"
).split()

GERMAN = (
    "der die das und ist nicht ein zu mit auf für sich auch noch wie über nach bei aus "
    "Grüße schön Größe Straße Bücher Mädchen für Ärger Übersicht Öffnungszeiten müssen "
    "können würde gemäß Bestätigung Rückmeldung Änderung"
).split()

RUSSIAN = (
    "и в не на я что он с как а то все она так его но да ты к у же вы за бы по только "
    "встреча проект отчёт бюджет сервер письмо спасибо привет вопрос ответ срочно договор "
    "документ неделя сегодня завтра вчера пожалуйста коллеги"
).split()

JAPANESE = (
    "会議 資料 予定 確認 お願い します 本日 明日 報告 担当 件 について ありがとう ござい "
    "ます よろしく 添付 ファイル 送付 修正 対応 連絡 開発 サーバー 更新 時間 場所"
).split()

EUROPEAN = FRENCH + GERMAN

FIRST_NAMES = (
    "James Mary Robert Patricia John Jennifer Michael Linda David Elizabeth William Barbara "
    "Richard Susan Joseph Jessica Thomas Sarah Charles Karen Daniel Nancy Matthew Lisa"
).split()
LAST_NAMES = (
    "Smith Johnson Williams Brown Jones Garcia Miller Davis Rodriguez Martinez Hernandez "
    "Lopez Gonzalez Wilson Anderson Thomas Taylor Moore Jackson Martin Lee Thompson White"
).split()
# Names that need encoding, per charset.
LOCAL_NAMES = {
    "iso-8859-1": ["François Dupré", "Hélène Müller", "Jürgen Größ", "Zoë Brontë", "José Núñez"],
    "windows-1252": ["Renée O’Brien", "Søren Kierkegård", "Chloé “CJ” Dubois", "Łukasz Nowak"],
    "koi8-r": ["Иван Петров", "Анна Смирнова", "Сергей Иванов", "Ольга Кузнецова"],
    "iso-2022-jp": ["山田 太郎", "佐藤 花子", "鈴木 一郎", "高橋 直子"],
    "utf-8": ["Zoë Ångström", "Дмитрий Соколов", "田中 美咲", "Łukasz Żółć", "Αλέξης Παππάς"],
}
DOMAINS = (
    "example.com example.org example.net mail.example.com corp.example.org lists.example.net "
    "mx.example.io news.example.co.uk example.de example.fr example.ru example.jp"
).split()
MAILERS = (
    "Mozilla Thunderbird 115.5.0",
    "Microsoft Outlook 16.0",
    "Apple Mail (2.3774.300.61.1.2)",
    "Mutt/2.2.12 (2023-09-09)",
    "Roundcube Webmail/1.6.5",
    "Evolution 3.50.2",
)
LISTS = ("dev", "announce", "users", "security", "general", "ops", "sales-team")

# Charset -> (share of messages, vocabulary, body transfer encodings).
CHARSETS = (
    ("utf-8", 0.55, None, ("quoted-printable", "base64", "8bit")),
    ("iso-8859-1", 0.15, EUROPEAN, ("quoted-printable", "8bit")),
    ("windows-1252", 0.12, EUROPEAN, ("quoted-printable",)),
    ("koi8-r", 0.10, RUSSIAN, ("8bit", "base64")),
    ("iso-2022-jp", 0.08, JAPANESE, ("7bit",)),
)

KB = 1024


@dataclasses.dataclass
class Options:
    seed: int = 1
    min_size: int = 1 * KB
    max_size: int = 100 * KB
    # Multiplies every kind's median size (the POP3 benchmark's seeds
    # average about 110 KB a message: --size-scale 5 --max-size 4000000).
    size_scale: float = 1.0
    crlf: bool = False
    # Share of messages that answer an earlier one.
    reply_rate: float = 0.4
    # The first message's date; later ones follow at random intervals.
    start: datetime.datetime = datetime.datetime(2024, 1, 8, 9, 0, 0, tzinfo=datetime.timezone.utc)


@dataclasses.dataclass
class Message:
    data: bytes
    message_id: str
    kind: str  # plain, alternative, attachment, report, calendar, signed
    thread: int  # thread number; messages of one thread share it
    date: datetime.datetime


@dataclasses.dataclass
class _Thread:
    number: int
    subject: str
    charset: str
    ids: list


class MailGenerator:
    """Produces messages one at a time; see the module docstring."""

    def __init__(self, options: Options | None = None):
        self.opt = options or Options()
        self.rng = random.Random(self.opt.seed)
        self.now = self.opt.start
        self.threads: list[_Thread] = []
        self.counter = 0
        self.boundary_counter = 0

    # -- public ------------------------------------------------------------

    def messages(self, count: int) -> Iterator[Message]:
        for _ in range(count):
            yield self.next_message()

    def next_message(self) -> Message:
        rng = self.rng
        self.counter += 1
        self.now += datetime.timedelta(seconds=int(rng.expovariate(1 / 1800)) + 1)

        kind = self._pick_kind()
        target = self._pick_size(kind)
        charset, vocabulary, encodings = self._pick_charset()

        thread = None
        if self.threads and rng.random() < self.opt.reply_rate:
            # Recent threads are likelier to get an answer.
            index = len(self.threads) - 1 - min(int(rng.expovariate(1 / 8)), len(self.threads) - 1)
            thread = self.threads[index]
            charset = thread.charset
            vocabulary, encodings = self._charset_info(charset)
            subject = "Re: " + thread.subject
        else:
            subject = self._subject(vocabulary)
            thread = _Thread(len(self.threads) + 1, subject, charset, [])
            self.threads.append(thread)

        sender_domain = rng.choice(DOMAINS)
        message_id = "<%s.%06d.%x@%s>" % (
            self.now.strftime("%Y%m%d%H%M%S"),
            self.counter,
            rng.getrandbits(40),
            sender_domain,
        )

        header = self._header(kind, charset, subject, message_id, thread, sender_domain)
        header_size = sum(len(line) + 1 for line in header)
        body_lines, content_header = self._body(kind, charset, vocabulary, encodings,
                                                max(target - header_size, 200))
        lines = header + content_header + [""] + body_lines
        eol = "\r\n" if self.opt.crlf else "\n"
        data = (eol.join(lines) + eol).encode("latin-1")

        thread.ids.append(message_id)
        return Message(data, message_id, kind, thread.number, self.now)

    # -- choices -----------------------------------------------------------

    def _pick_kind(self) -> str:
        r = self.rng.random()
        if r < 0.30:
            return "plain"
        if r < 0.60:
            return "alternative"
        if r < 0.95:
            return "attachment"
        return self.rng.choice(("report", "calendar", "signed"))

    def _pick_size(self, kind: str) -> int:
        # Log-normal: median a few KB for text, tens of KB with attachments;
        # the tail is cut at max_size.
        median = {"plain": 2.5 * KB, "alternative": 9 * KB, "attachment": 38 * KB}.get(kind, 6 * KB)
        size = int(median * self.opt.size_scale * math.exp(self.rng.gauss(0, 0.8)))
        return max(self.opt.min_size, min(self.opt.max_size, size))

    def _pick_charset(self):
        r = self.rng.random()
        for name, share, vocabulary, encodings in CHARSETS:
            if r < share:
                return name, vocabulary or self._utf8_vocabulary(), encodings
            r -= share
        name, _, vocabulary, encodings = CHARSETS[0]
        return name, self._utf8_vocabulary(), encodings

    def _charset_info(self, charset: str):
        for name, _, vocabulary, encodings in CHARSETS:
            if name == charset:
                return vocabulary or self._utf8_vocabulary(), encodings
        raise ValueError(charset)

    def _utf8_vocabulary(self):
        # Mostly English; some messages in other languages, as in real UTF-8 mail.
        r = self.rng.random()
        if r < 0.7:
            return ENGLISH
        return self.rng.choice((EUROPEAN, RUSSIAN, JAPANESE))

    # -- text --------------------------------------------------------------

    def _words(self, vocabulary, n: int) -> str:
        joiner = "" if vocabulary is JAPANESE else " "
        return joiner.join(self.rng.choice(vocabulary) for _ in range(n))

    def _sentence(self, vocabulary) -> str:
        s = self._words(vocabulary, self.rng.randint(4, 16))
        return s[:1].upper() + s[1:] + ("。" if vocabulary is JAPANESE else ".")

    def _paragraphs(self, vocabulary, size: int) -> list[str]:
        """Text of about `size` characters as wrapped lines, with blank lines
        between paragraphs, a greeting and a signature."""
        rng = self.rng
        if vocabulary is RUSSIAN:
            greetings = ("Привет,", "Коллеги,")
        elif vocabulary is JAPANESE:
            greetings = ("お疲れ様です。",)
        elif vocabulary is EUROPEAN:
            greetings = ("Bonjour,", "Hallo zusammen,")
        else:
            greetings = ("Hi,", "Hello all,", "Dear team,")
        lines = [rng.choice(greetings), ""]
        total = 0
        while total < size:
            para = " ".join(self._sentence(vocabulary) for _ in range(rng.randint(1, 6)))
            width = 36 if vocabulary is JAPANESE else 72
            for line in _wrap(para, width):
                lines.append(line)
                total += len(line.encode("utf-8")) + 1
            lines.append("")
            if rng.random() < 0.15:
                # A quoted earlier message.
                for line in _wrap(self._sentence(vocabulary) + " " + self._sentence(vocabulary), 70):
                    lines.append("> " + line)
                lines.append("")
        lines += ["-- ", self._person_name(), rng.choice(("Engineering", "Sales", "Operations")),
                  "+1 555 %04d" % rng.randint(0, 9999)]
        return lines

    def _subject(self, vocabulary) -> str:
        rng = self.rng
        s = self._words(vocabulary, rng.randint(2, 8))
        prefix = rng.choice(("", "", "", "[Action required] ", "FW: ", "Update: ", "Q%d " % rng.randint(1, 4)))
        return prefix + s[:1].upper() + s[1:]

    def _person_name(self) -> str:
        return "%s %s" % (self.rng.choice(FIRST_NAMES), self.rng.choice(LAST_NAMES))

    def _address(self, charset: str, domain: str | None = None) -> str:
        rng = self.rng
        domain = domain or rng.choice(DOMAINS)
        r = rng.random()
        if r < 0.2:
            name = rng.choice(LOCAL_NAMES[charset])
            local = "user%d" % rng.randint(1, 999)
            return "%s <%s@%s>" % (_encode_word(name, charset, rng.random() < 0.5), local, domain)
        first, last = rng.choice(FIRST_NAMES), rng.choice(LAST_NAMES)
        local = rng.choice(("%s.%s", "%s%s", "%s_%s")) % (first.lower(), last.lower())
        if r < 0.75:
            name = "%s %s" % (first, last)
            if rng.random() < 0.3:
                name = '"%s, %s"' % (last, first)
            return "%s <%s@%s>" % (name, local, domain)
        return "%s@%s" % (local, domain)

    # -- header ------------------------------------------------------------

    def _header(self, kind, charset, subject, message_id, thread, sender_domain) -> list[str]:
        rng = self.rng
        date = self.now
        lines = ["Return-Path: <bounce-%d@%s>" % (rng.randint(1, 99999), sender_domain),
                 "Delivered-To: rcpt@example.net"]
        # Received chain: the newest hop first, each a little earlier.
        hops = rng.randint(2, 6)
        when = date + datetime.timedelta(seconds=hops * 2)
        hosts = ["mx%d.%s" % (i, rng.choice(DOMAINS)) for i in range(hops)]
        for i in range(hops):
            by = "mail.example.net" if i == 0 else hosts[i - 1]
            frm = hosts[i]
            lines += _fold(
                "Received: from %s (%s [%d.%d.%d.%d]) by %s (Postfix) with %s id %s for "
                "<rcpt@example.net>; %s" % (
                    frm, frm, 192, 0, 2, rng.randint(1, 254), by,
                    rng.choice(("ESMTPS", "ESMTP", "LMTP", "ESMTPSA")),
                    "%X" % rng.getrandbits(44), _rfc5322_date(when)))
            when -= datetime.timedelta(seconds=rng.randint(0, 3))
        if rng.random() < 0.7:
            lines += _fold("DKIM-Signature: v=1; a=rsa-sha256; c=relaxed/relaxed; d=%s; s=s1; "
                           "h=from:to:subject:date:message-id; bh=%s; b=%s" % (
                               sender_domain, _b64(rng.randbytes(32)), _b64(rng.randbytes(256))))
            lines += _fold("Authentication-Results: mail.example.net; dkim=pass header.d=%s; "
                           "spf=pass smtp.mailfrom=%s; dmarc=pass" % (sender_domain, sender_domain))
        from_address = self._address(charset, sender_domain)
        lines.append("From: " + from_address)
        recipients = [self._address(charset) for _ in range(max(1, int(rng.expovariate(1 / 1.5))))]
        if rng.random() < 0.03:
            lines.append("To: undisclosed-recipients:;")
        else:
            lines += _fold("To: " + ", ".join(recipients))
        if rng.random() < 0.3:
            lines += _fold("Cc: " + ", ".join(self._address(charset) for _ in range(rng.randint(1, 4))))
        lines += _fold("Subject: " + _encode_header_text(subject, charset, rng))
        lines.append("Date: " + _rfc5322_date(date))
        lines.append("Message-ID: " + message_id)
        if thread.ids:
            lines.append("In-Reply-To: " + thread.ids[-1])
            lines += _fold("References: " + " ".join(thread.ids[-20:]))
        if rng.random() < 0.25:
            name = rng.choice(LISTS)
            lines += [
                "List-Id: %s <%s.lists.example.net>" % (name.title(), name),
                "List-Unsubscribe: <mailto:%s-leave@lists.example.net>, "
                "<https://lists.example.net/unsub/%s>" % (name, name),
                "List-Post: <mailto:%s@lists.example.net>" % name,
                "List-Archive: <https://lists.example.net/archive/%s>" % name,
                "Precedence: list",
            ]
        if rng.random() < 0.8:
            lines.append(rng.choice(("User-Agent: ", "X-Mailer: ")) + rng.choice(MAILERS))
        lines.append("MIME-Version: 1.0")
        return lines

    # -- bodies ------------------------------------------------------------

    def _boundary(self) -> str:
        self.boundary_counter += 1
        return "----=_Part_%d_%d.%d" % (self.boundary_counter, self.rng.getrandbits(30), self.counter)

    def _text_part(self, subtype, charset, vocabulary, encodings, size):
        """Lines of a text part: its MIME header, a blank line, its body."""
        rng = self.rng
        encoding = rng.choice(encodings)
        # `size` is the encoded size wanted: quoted-printable Cyrillic is
        # three times its UTF-8, base64 a third more. Generate, measure, and
        # generate once more at the corrected length when far off.
        for attempt in range(2):
            text_lines = self._paragraphs(vocabulary, size)
            if subtype == "html":
                text = _html(text_lines)
            else:
                text = "\n".join(text_lines) + "\n"
            raw = text.encode(_codec(charset), errors="replace")
            part_encoding = encoding
            if all(b < 128 for b in raw) and encoding != "base64":
                part_encoding = "7bit"
            body = _transfer_encode(raw, part_encoding)
            encoded_size = sum(len(line) + 1 for line in body)
            if attempt == 1 or encoded_size <= size * 1.1:
                break
            size = max(100, size * size // encoded_size)
        encoding = part_encoding
        params = "; charset=%s" % (charset if rng.random() < 0.7 else '"%s"' % charset)
        if subtype == "plain" and rng.random() < 0.2:
            params += "; format=flowed"
        header = ["Content-Type: text/%s%s" % (subtype, params),
                  "Content-Transfer-Encoding: %s" % encoding]
        return header, body

    def _attachment(self, size, charset, inline_image=False):
        rng = self.rng
        kind = "png" if inline_image else rng.choice(("pdf", "pdf", "png", "docx", "xlsx", "zip"))
        payload = _binary_payload(kind, max(200, size * 3 // 4), rng)
        mime = {
            "pdf": "application/pdf",
            "png": "image/png",
            "docx": "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
            "xlsx": "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
            "zip": "application/zip",
        }[kind]
        stem = rng.choice(("report", "invoice_2024", "scan0042", "photo", "Angebot-Größe", "отчёт",
                           "資料", "Q3 figures", "minutes"))
        filename = "%s.%s" % (stem, kind)
        header = []
        if all(ord(c) < 128 for c in filename):
            header.append('Content-Type: %s; name="%s"' % (mime, filename))
            disposition = 'filename="%s"' % filename
        elif rng.random() < 0.5:
            # RFC 2231, as Thunderbird writes it.
            encoded = _rfc2231_quote(filename)
            header.append("Content-Type: %s; name*=utf-8''%s" % (mime, encoded))
            disposition = "filename*=utf-8''%s" % encoded
        else:
            # RFC 2047 in a quoted parameter, as Outlook and Gmail write it.
            word = _encode_word(filename, "utf-8", True)
            header.append('Content-Type: %s; name="%s"' % (mime, word))
            disposition = 'filename="%s"' % word
        header.append("Content-Transfer-Encoding: base64")
        if inline_image:
            header.append("Content-ID: <img%d.%x@example.com>" % (self.counter, rng.getrandbits(32)))
            header.append("Content-Disposition: inline; " + disposition)
        else:
            header += _fold("Content-Disposition: attachment; %s; size=%d" % (disposition, len(payload)))
        return header, _transfer_encode(payload, "base64")

    def _multipart(self, subtype, parts, extra_params=""):
        """Content-Type header lines and body lines of a multipart holding
        `parts`, each (header lines, body lines)."""
        boundary = self._boundary()
        header = _fold('Content-Type: multipart/%s; boundary="%s"%s' % (subtype, boundary, extra_params))
        body = []
        if self.rng.random() < 0.5:
            body += ["This is a multi-part message in MIME format.", ""]
        for part_header, part_body in parts:
            body.append("--" + boundary)
            body += part_header + [""] + part_body
        body.append("--%s--" % boundary)
        return header, body

    def _alternative(self, charset, vocabulary, encodings, size):
        plain = self._text_part("plain", charset, vocabulary, encodings, size // 3)
        html = self._text_part("html", charset, vocabulary, encodings, size // 3)
        return self._multipart("alternative", [plain, html])

    def _body(self, kind, charset, vocabulary, encodings, size):
        """(body lines, top-level Content-* header lines)."""
        rng = self.rng
        if kind == "plain":
            header, body = self._text_part("plain", charset, vocabulary, encodings, size)
            return body, header
        if kind == "alternative":
            header, body = self._alternative(charset, vocabulary, encodings, size)
            return body, header
        if kind == "attachment":
            text_size = min(size // 4, 4 * KB) + 300
            left = max(size - text_size, 400)
            if rng.random() < 0.5:
                text = self._alternative(charset, vocabulary, encodings, text_size)
                if rng.random() < 0.3:
                    # An inline logo: multipart/related around the alternative.
                    image = self._attachment(min(left // 3, 12 * KB), charset, inline_image=True)
                    left -= min(left // 3, 12 * KB)
                    text = self._multipart("related", [text, image], '; type="multipart/alternative"')
            else:
                text = self._text_part("plain", charset, vocabulary, encodings, text_size)
            parts = [text]
            count = 1 + min(int(rng.expovariate(1 / 0.7)), 4)
            for i in range(count):
                share = left // (count - i) if i < count - 1 else left
                left -= share
                if rng.random() < 0.08:
                    parts.append(self._forwarded(charset, vocabulary, encodings, share))
                else:
                    parts.append(self._attachment(share, charset))
            header, body = self._multipart("mixed", parts)
            return body, header
        if kind == "report":
            return self._report(charset, vocabulary, encodings)
        if kind == "calendar":
            text = self._text_part("plain", charset, vocabulary, encodings, size // 2)
            ics = (["Content-Type: text/calendar; charset=utf-8; method=REQUEST",
                    "Content-Transfer-Encoding: 7bit"], _ics(self.now, rng))
            header, body = self._multipart("alternative", [text, ics])
            return body, header
        # signed
        text = self._text_part("plain", charset, vocabulary, encodings, size)
        signature = (['Content-Type: application/pgp-signature; name="signature.asc"',
                      "Content-Description: OpenPGP digital signature",
                      'Content-Disposition: attachment; filename="signature.asc"'],
                     ["-----BEGIN PGP SIGNATURE-----", ""] +
                     _b64_lines(rng.randbytes(566)) + ["=%s" % _b64(rng.randbytes(3)),
                                                       "-----END PGP SIGNATURE-----"])
        header, body = self._multipart("signed", [text, signature],
                                       '; micalg=pgp-sha256; protocol="application/pgp-signature"')
        return body, header

    def _forwarded(self, charset, vocabulary, encodings, size):
        rng = self.rng
        inner_header = [
            "From: " + self._address(charset),
            "To: " + self._address(charset),
            "Subject: " + _encode_header_text(self._subject(vocabulary), charset, rng),
            "Date: " + _rfc5322_date(self.now - datetime.timedelta(days=rng.randint(1, 30))),
            "Message-ID: <fwd.%x@%s>" % (rng.getrandbits(48), rng.choice(DOMAINS)),
            "MIME-Version: 1.0",
        ]
        content_header, body = self._text_part("plain", charset, vocabulary, encodings, max(size - 600, 300))
        header = ["Content-Type: message/rfc822", "Content-Disposition: attachment"]
        return header, inner_header + content_header + [""] + body

    def _report(self, charset, vocabulary, encodings):
        rng = self.rng
        text = self._text_part("plain", "utf-8", ENGLISH, ("7bit",), 600)
        status = (["Content-Type: message/delivery-status"],
                  ["Reporting-MTA: dns; mail.example.net", "", "Final-Recipient: rfc822; "
                   "nobody@example.org", "Action: failed", "Status: 5.1.1",
                   "Diagnostic-Code: smtp; 550 5.1.1 user unknown", ""])
        original = (["Content-Type: text/rfc822-headers"],
                    ["From: " + self._address(charset), "To: nobody@example.org",
                     "Subject: " + _encode_header_text(self._subject(vocabulary), charset, rng),
                     "Message-ID: <orig.%x@example.net>" % rng.getrandbits(40), ""])
        header, body = self._multipart("report", [text, status, original],
                                       "; report-type=delivery-status")
        return body, header


# ---------------------------------------------------------------------------
# Encoding helpers. Everything is built as str holding only code points
# below 256 (bytes decoded as latin-1), so 8-bit bodies pass through intact.


def _codec(charset: str) -> str:
    return {"windows-1252": "cp1252", "iso-2022-jp": "iso2022_jp"}.get(charset, charset)


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


def _b64_lines(data: bytes) -> list[str]:
    text = _b64(data)
    return [text[i:i + 76] for i in range(0, len(text), 76)]


def _transfer_encode(raw: bytes, encoding: str) -> list[str]:
    if encoding == "base64":
        return _b64_lines(raw)
    if encoding == "quoted-printable":
        text = quopri.encodestring(raw).decode("ascii")
        return text.split("\n")[:-1] if text.endswith("\n") else text.split("\n")
    # 7bit/8bit: the bytes as they are (latin-1 round-trips every byte).
    text = raw.decode("latin-1")
    return text.split("\n")[:-1] if text.endswith("\n") else text.split("\n")


def _encode_word(text: str, charset: str, use_b: bool) -> str:
    """`text` as RFC 2047 encoded words (split so each stays under 75 chars),
    or as is when it is ASCII."""
    if all(ord(c) < 128 for c in text):
        return text
    codec = _codec(charset)
    words = []
    chunk = ""
    for c in text:
        candidate = chunk + c
        if len(candidate.encode(codec, errors="replace")) > (36 if use_b else 20) and chunk:
            words.append(chunk)
            chunk = c
        else:
            chunk = candidate
    if chunk:
        words.append(chunk)
    out = []
    for w in words:
        raw = w.encode(codec, errors="replace")
        if use_b:
            out.append("=?%s?B?%s?=" % (charset, _b64(raw)))
        else:
            q = "".join("_" if b == 0x20 else chr(b) if b < 128 and (chr(b).isalnum() or chr(b) in "!*+-/")
                        else "=%02X" % b for b in raw)
            out.append("=?%s?Q?%s?=" % (charset, q))
    return " ".join(out)


def _encode_header_text(text: str, charset: str, rng: random.Random) -> str:
    return _encode_word(text, charset, charset in ("iso-2022-jp", "koi8-r") or rng.random() < 0.5)


def _rfc2231_quote(text: str) -> str:
    safe = set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_.!~")
    return "".join(chr(b) if chr(b) in safe else "%%%02X" % b for b in text.encode("utf-8"))


def _fold(line: str, width: int = 78) -> list[str]:
    """Folds a header line at spaces so lines stay under `width` where
    possible (RFC 5322 §2.2.3); returns the physical lines."""
    if len(line) <= width:
        return [line]
    out = []
    current = ""
    for token in line.split(" "):
        if current and len(current) + 1 + len(token) > width:
            out.append(current)
            current = "\t" + token if out else token
        else:
            current = current + " " + token if current else token
    out.append(current)
    # Very long tokens (base64 in DKIM b=) are split by force.
    result = []
    for physical in out:
        while len(physical) > 998:
            result.append(physical[:990])
            physical = "\t" + physical[990:]
        result.append(physical)
    return result


def _wrap(text: str, width: int) -> list[str]:
    lines, current = [], ""
    for word in text.split(" "):
        if current and len(current) + 1 + len(word) > width:
            lines.append(current)
            current = word
        else:
            current = current + " " + word if current else word
    if current:
        lines.append(current)
    return lines


def _html(lines: list[str]) -> str:
    out = ["<!DOCTYPE html>", "<html><head><meta http-equiv=\"Content-Type\" content=\"text/html\">",
           "<style>p{margin:0;font-family:Calibri,sans-serif}</style></head>", "<body>"]
    para = []
    for line in lines + [""]:
        if line:
            para.append(line.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;"))
        elif para:
            out.append("<p>" + "<br>\n".join(para) + "</p>")
            para = []
    out.append("</body></html>")
    return "\n".join(out) + "\n"


def _rfc5322_date(when: datetime.datetime) -> str:
    days = ("Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun")
    months = ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec")
    return "%s, %d %s %d %02d:%02d:%02d +0000" % (
        days[when.weekday()], when.day, months[when.month - 1], when.year,
        when.hour, when.minute, when.second)


def _binary_payload(kind: str, size: int, rng: random.Random) -> bytes:
    """Bytes that start like a real file of `kind`; the rest is random (as
    compressed streams are)."""
    head = {
        "pdf": b"%PDF-1.7\n%\xe2\xe3\xcf\xd3\n1 0 obj\n<< /Type /Catalog /Pages 2 0 R >>\nendobj\n"
               b"3 0 obj\n<< /Length 4096 /Filter /FlateDecode >>\nstream\n",
        "png": b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x01\x00\x00\x00\x00\xc8\x08\x06\x00\x00\x00"
               b"\x00\x00\x00\x00\x00\x00\x00\x00IDAT",
        "docx": b"PK\x03\x04\x14\x00\x06\x00\x08\x00\x00\x00!\x00[Content_Types].xml",
        "xlsx": b"PK\x03\x04\x14\x00\x06\x00\x08\x00\x00\x00!\x00xl/workbook.xml",
        "zip": b"PK\x03\x04\x14\x00\x00\x00\x08\x00",
    }[kind]
    return head + rng.randbytes(max(0, size - len(head)))


def _ics(now: datetime.datetime, rng: random.Random) -> list[str]:
    start = now + datetime.timedelta(days=rng.randint(1, 14))
    stamp = "%Y%m%dT%H%M%SZ"
    return ["BEGIN:VCALENDAR", "PRODID:-//Example//Calendar 1.0//EN", "VERSION:2.0", "METHOD:REQUEST",
            "BEGIN:VEVENT", "DTSTART:" + start.strftime(stamp),
            "DTEND:" + (start + datetime.timedelta(hours=1)).strftime(stamp),
            "DTSTAMP:" + now.strftime(stamp), "UID:%x@example.com" % rng.getrandbits(64),
            "SUMMARY:Weekly sync", "LOCATION:Room 4", "END:VEVENT", "END:VCALENDAR"]


# ---------------------------------------------------------------------------
# Output


def write_dir(messages: Iterator[Message], out: str) -> int:
    os.makedirs(out, exist_ok=True)
    n = 0
    for n, msg in enumerate(messages, 1):
        with open(os.path.join(out, "%06d.eml" % n), "wb") as f:
            f.write(msg.data)
    return n


def write_mbox(messages: Iterator[Message], out: str) -> int:
    """mboxrd: a "From " line per message, body lines matching ">*From " get
    one more '>'. Line ends stay as generated."""
    n = 0
    with open(out, "wb") as f:
        for n, msg in enumerate(messages, 1):
            eol = b"\r\n" if msg.data.endswith(b"\r\n") else b"\n"
            f.write(b"From MAILER-DAEMON " + msg.date.strftime("%a %b %d %H:%M:%S %Y").encode() + eol)
            for line in msg.data.split(eol)[:-1]:
                if line.lstrip(b">").startswith(b"From "):
                    line = b">" + line
                f.write(line + eol)
            f.write(eol)
    return n


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter,
                                epilog="See the module docstring for the message mix.")
    p.add_argument("--count", type=int, default=2000, help="messages to generate (default 2000)")
    p.add_argument("--seed", type=int, default=1, help="random seed (default 1)")
    p.add_argument("--format", choices=("dir", "mbox"), default="dir",
                   help="dir: one NNNNNN.eml file per message; mbox: one mboxrd file")
    p.add_argument("--out", required=True, help="output directory (dir) or file (mbox)")
    p.add_argument("--crlf", action="store_true", help="CRLF line ends (default LF, as on disk)")
    p.add_argument("--min-size", type=int, default=1 * KB, help="smallest target size in bytes")
    p.add_argument("--max-size", type=int, default=100 * KB, help="largest target size in bytes")
    p.add_argument("--size-scale", type=float, default=1.0,
                   help="multiplies the median size of every kind (default 1)")
    p.add_argument("--reply-rate", type=float, default=0.4, help="share of replies (default 0.4)")
    p.add_argument("--stats", action="store_true", help="print the size and kind mix to stderr")
    args = p.parse_args(argv)

    gen = MailGenerator(Options(seed=args.seed, min_size=args.min_size, max_size=args.max_size,
                                size_scale=args.size_scale,
                                crlf=args.crlf, reply_rate=args.reply_rate))
    sizes, kinds = [], {}

    def tracked():
        for msg in gen.messages(args.count):
            sizes.append(len(msg.data))
            kinds[msg.kind] = kinds.get(msg.kind, 0) + 1
            yield msg

    n = (write_dir if args.format == "dir" else write_mbox)(tracked(), args.out)
    if args.stats and sizes:
        s = sorted(sizes)
        q = lambda f: s[min(len(s) - 1, int(f * len(s)))]
        print("%d messages, %.1f MB: min %d, p25 %d, median %d, p75 %d, p90 %d, p99 %d, max %d bytes"
              % (n, sum(s) / 1e6, s[0], q(.25), q(.5), q(.75), q(.9), q(.99), s[-1]), file=sys.stderr)
        print("kinds: " + ", ".join("%s %d" % (k, v) for k, v in sorted(kinds.items())), file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
