"""A small IMAP client for cross-checks: keeps every byte of the server's
responses, parses response values, and sends literals.

Shared by tests/mime/dovecot_crosscheck.py and tests/search/dovecot_diff.py.
Python standard library only.
"""

from __future__ import annotations

import re
import socket

IMAP_TIMEOUT = 15.0


class ImapError(Exception):
    pass


class Atom(bytes):
    """An IMAP atom or number (as opposed to a string)."""


class Parser:
    """Parses IMAP response data; remembers where each value was on the wire."""

    def __init__(self, data: bytes, pos: int = 0):
        self.data = data
        self.pos = pos

    def peek(self) -> int:
        if self.pos >= len(self.data):
            raise ImapError("response ends early")
        return self.data[self.pos]

    def skip_spaces(self) -> None:
        while self.pos < len(self.data) and self.data[self.pos] == 0x20:
            self.pos += 1

    def value(self, depth: int = 0):
        """One value: None (NIL), bytes (string), Atom, or list."""
        if depth > 200:
            raise ImapError("nesting too deep")
        c = self.peek()
        if c == 0x28:  # (
            self.pos += 1
            items = []
            while True:
                self.skip_spaces()
                if self.peek() == 0x29:  # )
                    self.pos += 1
                    return items
                items.append(self.value(depth + 1))
        if c == 0x22:  # "
            out = bytearray()
            self.pos += 1
            while True:
                c = self.peek()
                self.pos += 1
                if c == 0x5C:  # backslash
                    out.append(self.peek())
                    self.pos += 1
                elif c == 0x22:
                    return bytes(out)
                else:
                    out.append(c)
        if c == 0x7B or (c == 0x7E and self.data[self.pos + 1 : self.pos + 2] == b"{"):  # { or ~{
            m = re.compile(rb"~?\{(\d+)\+?\}\r\n").match(self.data, self.pos)
            if not m:
                raise ImapError(f"bad literal at {self.pos}")
            n = int(m.group(1))
            start = m.end()
            if start + n > len(self.data):
                raise ImapError("literal ends early")
            self.pos = start + n
            return self.data[start : start + n]
        start = self.pos
        while self.pos < len(self.data) and self.data[self.pos] not in b" ()\r\n":
            self.pos += 1
        if self.pos == start:
            raise ImapError(f"unexpected {chr(c)!r} at {start}")
        word = self.data[start : self.pos]
        return None if word.upper() == b"NIL" else Atom(word)

    def raw_value(self):
        """(value, the exact bytes it took on the wire)."""
        start = self.pos
        value = self.value()
        return value, self.data[start : self.pos]

    def fetch_item_name(self) -> str:
        """BODY[HEADER.FIELDS (FROM)]<0> and the like, as one upper-cased name."""
        start = self.pos
        while self.pos < len(self.data) and self.data[self.pos] not in b" ()[\r\n":
            self.pos += 1
        if self.pos < len(self.data) and self.data[self.pos] == 0x5B:  # [
            in_quote = False
            while True:
                c = self.peek()
                self.pos += 1
                if c == 0x22:
                    in_quote = not in_quote
                elif c == 0x5D and not in_quote:  # ]
                    break
            if self.pos < len(self.data) and self.data[self.pos] == 0x3C:  # <origin>
                end = self.data.find(b">", self.pos)
                if end < 0:
                    raise ImapError("bad origin")
                self.pos = end + 1
        if self.pos == start:
            raise ImapError(f"no fetch item name at {start}")
        return self.data[start : self.pos].decode("latin-1").upper()


def parse_fetch(response: bytes):
    """Parses "* n FETCH (...)"; returns {ITEM NAME: (value, raw bytes)} or None."""
    m = re.match(rb"\* (\d+) FETCH \(", response, re.IGNORECASE)
    if not m:
        return None
    p = Parser(response, m.end())
    items = {}
    while True:
        p.skip_spaces()
        if p.peek() == 0x29:
            return items
        name = p.fetch_item_name()
        if p.peek() != 0x20:
            raise ImapError(f"no space after {name}")
        p.pos += 1
        items[name] = p.raw_value()


class Literal(bytes):
    """A piece of a command sent as a synchronizing literal."""


class Imap:
    """A small IMAP client that keeps every byte of the server's responses."""

    def __init__(self, port: int, timeout: float = IMAP_TIMEOUT):
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=timeout)
        self.buf = bytearray()
        self.tag_count = 0
        greeting = self.read_response()
        if not greeting.startswith(b"* OK"):
            raise ImapError(f"greeting: {greeting!r}")

    def close(self) -> None:
        try:
            self.command(b"LOGOUT")
        except (OSError, ImapError):
            pass
        self.sock.close()

    def _fill(self) -> None:
        data = self.sock.recv(1 << 16)
        if not data:
            raise ImapError("server closed the connection")
        self.buf += data

    def _read_line(self) -> bytes:
        start = 0
        while True:
            i = self.buf.find(b"\r\n", start)
            if i >= 0:
                line = bytes(self.buf[: i + 2])
                del self.buf[: i + 2]
                return line
            start = max(0, len(self.buf) - 1)
            self._fill()

    def _read_exact(self, n: int) -> bytes:
        while len(self.buf) < n:
            self._fill()
        out = bytes(self.buf[:n])
        del self.buf[:n]
        return out

    def read_response(self) -> bytes:
        """One response, literals included, without the final CRLF."""
        pieces = []
        while True:
            line = self._read_line()
            pieces.append(line)
            m = re.search(rb"\{(\d+)\+?\}\r\n$", line)
            if not m:
                break
            pieces.append(self._read_exact(int(m.group(1))))
        return b"".join(pieces)[:-2]

    def command(self, text: bytes, literal: bytes | None = None):
        """Runs one command; returns (status, tagged text, untagged responses).

        With `literal`, it follows `text` (after a space) as a synchronizing
        literal, as APPEND sends a message."""
        return self.command_parts([text] if literal is None else [text + b" ", Literal(literal)])

    def command_parts(self, parts: list[bytes]):
        """Runs one command made of pieces: plain bytes are sent as they are,
        a Literal as `{n}` CRLF, then (after the server's continuation) its
        bytes. Returns (status, tagged text, untagged responses); a tagged
        answer instead of a continuation ends the command there."""
        self.tag_count += 1
        tag = b"x%04d" % self.tag_count
        untagged: list[bytes] = []
        pending = tag + b" "
        for piece in parts:
            if not isinstance(piece, Literal):
                pending += piece
                continue
            self.sock.sendall(pending + b"{%d}\r\n" % len(piece))
            while True:
                resp = self.read_response()
                if resp.startswith(b"+"):
                    break
                if resp.startswith(tag + b" "):
                    return self._tagged(tag, resp, untagged)
                untagged.append(resp)
            pending = bytes(piece)
        self.sock.sendall(pending + b"\r\n")
        while True:
            resp = self.read_response()
            if resp.startswith(tag + b" "):
                return self._tagged(tag, resp, untagged)
            untagged.append(resp)

    def pipeline(self, commands: list[tuple[bytes, bytes]], batch: int = 64) -> list[tuple]:
        """Runs (text, literal) commands, `batch` at a time without waiting,
        each literal sent as a non-synchronizing one (`{n+}`, RFC 7888: the
        server must announce LITERAL+). Returns (status, tagged text) for each;
        untagged responses are dropped."""
        results: list[tuple] = []
        for start in range(0, len(commands), batch):
            tags = []
            out = bytearray()
            for text, literal in commands[start : start + batch]:
                self.tag_count += 1
                tag = b"x%04d" % self.tag_count
                tags.append(tag)
                out += tag + b" " + text + b" {%d+}\r\n" % len(literal) + literal + b"\r\n"
            self.sock.sendall(out)
            answers = {}
            while len(answers) < len(tags):
                resp = self.read_response()
                tag = resp.split(b" ", 1)[0]
                if tag in tags:
                    status, _, rest = resp[len(tag) + 1 :].partition(b" ")
                    answers[tag] = (status.upper().decode(), rest)
            results += [answers[t] for t in tags]
        return results

    @staticmethod
    def _tagged(tag: bytes, resp: bytes, untagged: list[bytes]):
        status, _, rest = resp[len(tag) + 1 :].partition(b" ")
        return status.upper().decode(), rest, untagged
