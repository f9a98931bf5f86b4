#!/usr/bin/env python3
"""Cross-checks Peregrine's IMAP answers for a message corpus against Dovecot.

Starts a private Dovecot 2.3 on a free loopback port (own base_dir, state_dir,
log and instance name under a temporary directory; ssl = no; a passwd-file
user with a PLAIN password; maildir storage), APPENDs every corpus file, and
FETCHes for each message ENVELOPE, BODYSTRUCTURE, BODY, RFC822.SIZE, two
HEADER.FIELDS sections, HEADER, TEXT, and BODY[n] / BODY[n.MIME] for each part
number Dovecot's BODYSTRUCTURE has (at most 30), plus n.HEADER and n.TEXT for
message/rfc822 parts. Then runs `mime_dump --crlf --json FILE...` and
compares the answers item by item, byte for byte.

Prints one line per difference ("file item: dovecot=<...> peregrine=<...>")
and a summary. Exits 1 when a difference is not listed in the known-differences
file or a listed difference no longer occurs (a stale entry), 0 otherwise, and
2 when the check could not run (Dovecot missing or failing to start).

Items are named as printed: ENVELOPE/<field>, BODYSTRUCTURE/<part>/<field>
and BODY/<part>/<field> (parsed and compared field by field, so one known
difference does not hide another in the same item), <ITEM>/form (same value,
other string form), RFC822.SIZE, PARTS (part numbers only one side has) and
BODY[<section>]. Known differences: a JSON list of {"file": glob, "item":
glob, "reason": ..., "compliance": "docs/compliance.md#anchor"} where only *
and ? are special in globs; docs/compliance.md explains each, and the anchor
must be one of its headings.

With --dovecot-only, no mime_dump is needed: prints what Dovecot answered.
Python standard library only.
"""

from __future__ import annotations

import argparse
import fnmatch
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "common"))
from compliance_links import LinkChecker  # noqa: E402
from dovecot_server import CheckError, Dovecot  # noqa: E402
from imap_wire import Atom, Imap, ImapError, Parser, parse_fetch  # noqa: E402

HEADER_FIELDS = "HEADER.FIELDS (From To Cc Subject Date Message-ID Content-Type X-Missing)"
HEADER_FIELDS_NOT = "HEADER.FIELDS.NOT (Received DKIM-Signature)"
META_ITEMS = ("ENVELOPE", "BODYSTRUCTURE", "BODY", "RFC822.SIZE")
MAX_PARTS = 30
DUMP_TIMEOUT = 120.0
RUN_TIMEOUT = 180.0  # APPEND and FETCH of the whole corpus
USER, PASSWORD = "crosscheck", "crosscheck-pw"


# ---------------------------------------------------------------- line ends


def to_crlf(data: bytes) -> bytes:
    """Line ends as the store keeps them: every LF not after a CR becomes CRLF.

    A lone CR is left alone (it is not a line end), as mime_dump --crlf does.
    """
    return re.sub(rb"(?<!\r)\n", b"\r\n", data)


# ---------------------------------------------------------------- FETCH


# ---------------------------------------------------------------- structure


def is_multipart(body) -> bool:
    return isinstance(body, list) and bool(body) and isinstance(body[0], list)


def encapsulated(body):
    """The inner body of a message/rfc822 (or message/global) part, else None."""
    if (
        isinstance(body, list)
        and len(body) >= 10
        and isinstance(body[0], bytes)
        and body[0].lower() == b"message"
        and isinstance(body[7], list)
        and isinstance(body[8], list)
    ):
        return body[8]
    return None


def part_numbers(root) -> list[tuple[str, bool]]:
    """IMAP part numbers of a BODYSTRUCTURE, pre-order, at most MAX_PARTS, each
    with whether it is a message/rfc822 part (HEADER and TEXT apply to it)."""
    out: list[tuple[str, bool]] = []

    def children(body):
        out = []
        if is_multipart(body):
            for b in body:  # the subparts, then the subtype and extension data
                if not isinstance(b, list):
                    break
                out.append(b)
        return out

    def walk(body, number: str) -> None:
        if len(out) >= MAX_PARTS:
            return
        inner = encapsulated(body)
        if inner is not None:
            if is_multipart(inner):
                body = inner
            else:
                sub = f"{number}.1"
                out.append((sub, encapsulated(inner) is not None))
                walk(inner, sub)
                return
        for i, child in enumerate(children(body), 1):
            if len(out) >= MAX_PARTS:
                return
            sub = f"{number}.{i}" if number else str(i)
            out.append((sub, encapsulated(child) is not None))
            walk(child, sub)

    if is_multipart(root):
        walk(root, "")
    else:
        out.append(("1", encapsulated(root) is not None))
        walk(root, "1")
    return out[:MAX_PARTS]


def part_sort_key(number: str):
    return [int(x) if x.isdigit() else 0 for x in number.split(".")]


# ---------------------------------------------------------------- Dovecot's answers


def dovecot_answers(dovecot: Dovecot, files: list[Path], verbose: bool):
    """{file name: {item: bytes or None}} and {file name: reason it was skipped}."""
    answers: dict[str, dict] = {}
    skipped: dict[str, str] = {}
    imap = Imap(dovecot.port)
    try:
        status, text, _ = imap.command(b'LOGIN "%s" "%s"' % (USER.encode(), PASSWORD.encode()))
        if status != "OK":
            raise CheckError(f"Dovecot LOGIN failed: {text!r}\n{dovecot.logs()}")
        status, text, _ = imap.command(b"SELECT INBOX")
        if status != "OK":
            raise CheckError(f"Dovecot SELECT failed: {text!r}")
        deadline = time.monotonic() + RUN_TIMEOUT
        uids: dict[str, int] = {}
        for path in files:
            if time.monotonic() > deadline:
                raise CheckError(f"APPEND did not finish in {RUN_TIMEOUT} s")
            data = to_crlf(path.read_bytes())
            status, text, _ = imap.command(b"APPEND INBOX", data)
            m = re.search(rb"\[APPENDUID \d+ (\d+)\]", text)
            if status != "OK" or not m:
                skipped[path.name] = f"APPEND {status}: {text.decode('latin-1').strip()}"
                continue
            uids[path.name] = int(m.group(1))
        imap.command(b"NOOP")
        for name, uid in uids.items():
            if time.monotonic() > deadline:
                raise CheckError(f"FETCH did not finish in {RUN_TIMEOUT} s")
            try:
                answers[name] = fetch_one(imap, uid)
            except ImapError as e:
                skipped[name] = f"FETCH: {e}"
            if verbose:
                print(f"fetched {name} (uid {uid})", file=sys.stderr)
    finally:
        imap.close()
    return answers, skipped


def fetch_items(imap: Imap, uid: int, items: bytes) -> dict:
    status, text, untagged = imap.command(b"UID FETCH %d (%s)" % (uid, items))
    if status != "OK":
        raise ImapError(f"{status} {text.decode('latin-1').strip()}")
    merged: dict = {}
    for resp in untagged:
        parsed = parse_fetch(resp)
        if parsed is None:
            continue
        u = parsed.get("UID")
        if u is not None and int(u[0]) != uid:
            continue
        merged.update(parsed)
    return merged


def section_value(items: dict, section: str):
    got = items.get(f"BODY[{section.upper()}]")
    if got is None:
        raise ImapError(f"no BODY[{section}] in the answer")
    value = got[0]
    if isinstance(value, Atom):
        raise ImapError(f"BODY[{section}] is an atom")
    return value  # bytes, or None for NIL


def fetch_one(imap: Imap, uid: int) -> dict:
    sections = [HEADER_FIELDS, HEADER_FIELDS_NOT, "HEADER", "TEXT"]
    items = fetch_items(
        imap,
        uid,
        b" ".join(
            [m.encode() for m in META_ITEMS] + [b"BODY.PEEK[%s]" % s.encode() for s in sections]
        ),
    )
    answer: dict = {}
    for item in META_ITEMS:
        if item not in items:
            raise ImapError(f"no {item} in the answer")
        answer[item] = items[item][1]
    for s in sections:
        answer[s] = section_value(items, s)
    numbers = part_numbers(items["BODYSTRUCTURE"][0])
    answer["parts"] = [n for n, _ in numbers]
    if numbers:
        wanted = []
        for n, is_message in numbers:
            wanted += [n, n + ".MIME"] + ([n + ".HEADER", n + ".TEXT"] if is_message else [])
        items = fetch_items(imap, uid, b" ".join(b"BODY.PEEK[%s]" % w.encode() for w in wanted))
        for w in wanted:
            answer[w] = section_value(items, w)
    return answer


# ---------------------------------------------------------------- Peregrine's answers


def json_bytes(value):
    """A mime_dump JSON string back to the bytes it stands for."""
    if value is None:
        return None
    return value.encode("utf-8", "surrogateescape")


def peregrine_answers(dump: str, files: list[Path]):
    """{file name: {item: bytes or None, "parts": [...]}} from mime_dump."""
    try:
        result = subprocess.run(
            [dump, "--crlf", "--json", *map(str, files)],
            capture_output=True,
            timeout=DUMP_TIMEOUT,
        )
    except FileNotFoundError:
        raise CheckError(f"mime_dump not found at {dump}") from None
    except subprocess.TimeoutExpired:
        raise CheckError(f"mime_dump did not finish in {DUMP_TIMEOUT} s") from None
    if result.returncode != 0:
        print(
            f"mime_dump exited with {result.returncode}:\n"
            f"{result.stderr.decode(errors='replace')[-3000:]}",
            file=sys.stderr,
        )
    answers: dict[str, dict] = {}
    for line in result.stdout.decode("utf-8", "surrogateescape").splitlines():
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
        except json.JSONDecodeError as e:
            print(f"mime_dump printed a line that is not JSON ({e}): {line[:200]}",
                  file=sys.stderr)
            continue
        answer: dict = {}
        for item in META_ITEMS:
            if item in obj:
                answer[item] = json_bytes(obj[item])
        sections = obj.get("sections") or {}
        for key, value in sections.items():
            answer[key] = json_bytes(value)
        answer["parts"] = sorted(
            (k for k in sections if re.fullmatch(r"\d+(\.\d+)*", k)), key=part_sort_key
        )
        answers[obj.get("file", "")] = answer
    return answers


# ---------------------------------------------------------------- comparing


def show(value: bytes | None) -> str:
    if value is None:
        return "NIL"
    out = []
    for b in value:
        if b == 0x0D:
            out.append("\\r")
        elif b == 0x0A:
            out.append("\\n")
        elif b == 0x09:
            out.append("\\t")
        elif b == 0x5C:
            out.append("\\\\")
        elif 0x20 <= b < 0x7F:
            out.append(chr(b))
        else:
            out.append(f"\\x{b:02x}")
    return "".join(out)


def excerpt(a: str, b: str, width: int) -> tuple[str, str]:
    """Both values, or a window of each around where they first differ."""
    if len(a) <= width and len(b) <= width:
        return a, b
    i = 0
    while i < min(len(a), len(b)) and a[i] == b[i]:
        i += 1
    start = max(0, i - width // 4)

    def cut(s: str) -> str:
        piece = s[start : start + width]
        return ("…" if start else "") + piece + ("…" if start + width < len(s) else "")

    at = f"@{start} " if start else ""
    return at + cut(a), at + cut(b)


def canonical(value):
    """A parsed value with atoms told apart from strings (7 vs "7")."""
    if isinstance(value, list):
        return [canonical(v) for v in value]
    if isinstance(value, Atom):
        return ("atom", bytes(value))
    return value


def parsed(raw: bytes | None):
    """The value `raw` holds, for telling a difference of form (quoted vs
    literal) from one of value; None when it does not parse."""
    if raw is None:
        return None
    try:
        p = Parser(raw)
        v = p.value()
        return canonical(v) if p.pos == len(raw) else None
    except (ImapError, IndexError):
        return None


ENVELOPE_FIELDS = ("date", "subject", "from", "sender", "reply-to", "to", "cc", "bcc",
                   "in-reply-to", "message-id")
SINGLE_FIELDS = ("type", "subtype", "params", "id", "description", "encoding", "size")
SINGLE_EXT_FIELDS = ("md5", "disposition", "language", "location")
MULTI_EXT_FIELDS = ("params", "disposition", "language", "location")
ABSENT = ("absent",)


def render(value) -> bytes:
    """A parsed (canonical) value written back in IMAP syntax, for display."""
    if value is None:
        return b"NIL"
    if value is ABSENT:
        return b"(absent)"
    if isinstance(value, tuple):
        return value[1]
    if isinstance(value, list):
        return b"(" + b" ".join(render(v) for v in value) + b")"
    return b'"' + value.replace(b"\\", b"\\\\").replace(b'"', b'\\"') + b'"'


def body_kind(body) -> str:
    if is_multipart(body):
        return "multipart"
    if not isinstance(body, list) or len(body) < 7:
        return "malformed"
    if encapsulated(body) is not None:
        return "message"
    if (isinstance(body[0], bytes) and body[0].lower() == b"text" and len(body) >= 8
            and isinstance(body[7], tuple)):
        return "text"
    return "basic"


def split_single(body, kind: str) -> dict:
    fields = dict(zip(SINGLE_FIELDS, body[:7]))
    rest = body[7:]
    if kind == "text":
        fields["lines"], rest = rest[0], rest[1:]
    elif kind == "message":
        fields["envelope"], fields["body"], rest = rest[0], rest[1], rest[2:]
        if rest:
            fields["lines"], rest = rest[0], rest[1:]
    fields.update(zip(SINGLE_EXT_FIELDS, rest))
    if len(rest) > len(SINGLE_EXT_FIELDS):
        fields["extension"] = rest[len(SINGLE_EXT_FIELDS):]
    return fields


def split_multipart(body) -> tuple[list, dict]:
    children = []
    for b in body:
        if not isinstance(b, list):
            break
        children.append(b)
    rest = body[len(children):]
    fields = {"subtype": rest[0] if rest else ABSENT}
    fields.update(zip(MULTI_EXT_FIELDS, rest[1:]))
    if len(rest) > 1 + len(MULTI_EXT_FIELDS):
        fields["extension"] = rest[1 + len(MULTI_EXT_FIELDS):]
    return children, fields


def envelope_diffs(prefix: str, d, o, out: list) -> None:
    if not (isinstance(d, list) and isinstance(o, list) and len(d) == len(o) == 10):
        if d != o:
            out.append((prefix, render(d), render(o), "malformed envelope"))
        return
    for name, a, b in zip(ENVELOPE_FIELDS, d, o):
        if a != b:
            out.append((f"{prefix}/{name}", render(a), render(b), ""))


def field_diffs(loc: str, fd: dict, fo: dict, out: list) -> None:
    for name in list(fd) + [n for n in fo if n not in fd]:
        if name in ("body", "envelope"):
            continue
        a, b = fd.get(name, ABSENT), fo.get(name, ABSENT)
        if a != b:
            out.append((f"{loc}/{name}", render(a), render(b), ""))


def structure_diffs(prefix: str, number: str, d, o, out: list, label: str | None = None) -> None:
    """Field-by-field differences of two BODY/BODYSTRUCTURE values, each named
    PREFIX/<part number>/<field> (the root multipart's fields: PREFIX/<field>;
    the multipart inside a message/rfc822 part N: PREFIX/N.TEXT/<field>)."""
    label = number if label is None else label
    loc = f"{prefix}/{label}" if label else prefix
    kd, ko = body_kind(d), body_kind(o)
    if kd != ko or kd == "malformed":
        if d != o:
            out.append((f"{loc}/kind", render(d), render(o), f"{kd} vs {ko}"))
        return
    if kd == "multipart":
        cd, fd = split_multipart(d)
        co, fo = split_multipart(o)
        if len(cd) != len(co):
            out.append((f"{loc}/parts", b"%d" % len(cd), b"%d" % len(co), "number of subparts"))
        for i, (a, b) in enumerate(zip(cd, co), 1):
            structure_diffs(prefix, f"{number}.{i}" if number else str(i), a, b, out)
        field_diffs(loc, fd, fo, out)
        return
    fd, fo = split_single(d, kd), split_single(o, ko)
    field_diffs(loc, fd, fo, out)
    if kd == "message":
        envelope_diffs(f"{loc}/envelope", fd["envelope"], fo["envelope"], out)
        inner_d, inner_o = fd["body"], fo["body"]
        if is_multipart(inner_d) and is_multipart(inner_o):
            structure_diffs(prefix, number, inner_d, inner_o, out, label=f"{number}.TEXT")
        else:
            structure_diffs(prefix, f"{number}.1", inner_d, inner_o, out)


def compare(name: str, dove: dict, ours: dict | None):
    """[(item, dovecot value, peregrine value, note)] for one file."""
    if ours is None:
        return [("mime_dump", b"(answers)", None, "mime_dump printed nothing for this file")]
    diffs = []
    for item in META_ITEMS:
        d, o = dove.get(item), ours.get(item)
        if d == o:
            continue
        if o is None:
            diffs.append((item, d, None, "missing from mime_dump"))
            continue
        pd, po = (None, None) if item == "RFC822.SIZE" else (parsed(d), parsed(o))
        if pd is None or po is None:
            diffs.append((item, d, o, "" if item == "RFC822.SIZE" else "does not parse"))
        elif pd == po:
            diffs.append((f"{item}/form", d, o, "same value, different string form"))
        else:
            sub: list = []
            if item == "ENVELOPE":
                envelope_diffs(item, pd, po, sub)
            else:
                structure_diffs(item, "" if is_multipart(pd) else "1", pd, po, sub)
            diffs += sub or [(item, d, o, "")]
    d_parts, o_parts = dove["parts"], ours["parts"]
    if d_parts != o_parts and not (
        len(d_parts) == MAX_PARTS and o_parts[: len(d_parts)] == d_parts
    ):
        only_d = [p for p in d_parts if p not in o_parts]
        only_o = [p for p in o_parts if p not in d_parts and len(d_parts) < MAX_PARTS]
        if only_d or only_o:
            diffs.append(
                ("PARTS", ",".join(d_parts).encode(), ",".join(o_parts).encode(),
                 f"only Dovecot: {','.join(only_d) or '-'}; only Peregrine: "
                 f"{','.join(only_o) or '-'}")
            )
    keys = [HEADER_FIELDS, HEADER_FIELDS_NOT, "HEADER", "TEXT"]
    for p in d_parts:
        keys += [p, p + ".MIME", p + ".HEADER", p + ".TEXT"]
    for key in keys:
        if key in dove and key in ours and dove[key] != ours[key]:
            diffs.append((f"BODY[{key}]", dove[key], ours[key], ""))
    return diffs


def glob_match(text: str, pattern: str) -> bool:
    """Glob where only * and ? are special (item names contain [ and ])."""
    regex = re.escape(pattern).replace(r"\*", ".*").replace(r"\?", ".")
    return re.fullmatch(regex, text, re.DOTALL) is not None


def load_known(path: str | None) -> list[dict]:
    if not path or not os.path.exists(path):
        return []
    with open(path, encoding="utf-8") as f:
        known = json.load(f)
    if not isinstance(known, list):
        raise CheckError(f"{path}: expected a JSON list")
    for i, entry in enumerate(known):
        for field in ("file", "item", "reason", "compliance"):
            if not isinstance(entry.get(field), str) or not entry[field]:
                raise CheckError(f"{path}: entry {i} lacks a '{field}' string")
    # Every entry must point at an existing section of the compliance notes.
    links = LinkChecker()
    for i, entry in enumerate(known):
        problem = links.problem(entry["compliance"])
        if problem:
            raise CheckError(f"{path}: entry {i} {problem}")
    return known


def match_known(known: list[dict], name: str, item: str) -> int | None:
    for i, entry in enumerate(known):
        if glob_match(name, entry["file"]) and glob_match(item, entry["item"]):
            return i
    return None


def save_as_dump_json(answers: dict, path: str) -> None:
    """Dovecot's answers in mime_dump's JSON form (to diff offline)."""

    def text(value):
        return None if value is None else value.decode("utf-8", "surrogateescape")

    with open(path, "w", encoding="ascii") as f:
        for name in sorted(answers):
            answer = answers[name]
            obj = {"file": name}
            obj.update({item: text(answer[item]) for item in META_ITEMS})
            obj["sections"] = {k: text(v) for k, v in answer.items()
                               if k not in META_ITEMS and k != "parts"}
            f.write(json.dumps(obj, ensure_ascii=True) + "\n")


def print_dovecot_only(answers: dict, width: int) -> None:
    for name in sorted(answers):
        print(f"== {name}")
        for key, value in answers[name].items():
            if key == "parts":
                print(f"  PARTS: {','.join(value)}")
                continue
            text = show(value)
            if width and len(text) > width:
                text = text[:width] + f"… ({len(value)} bytes)"
            print(f"  {key}: {text}")


# ---------------------------------------------------------------- main


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--dump", help="path to the mime_dump binary")
    ap.add_argument("--corpus", default=str(Path(__file__).parent / "corpus"))
    ap.add_argument("--known", help="known_differences.json")
    ap.add_argument("--only", default="*.eml", help="glob of corpus file names to check")
    ap.add_argument("--dovecot-only", action="store_true",
                    help="print Dovecot's answers; do not run mime_dump")
    ap.add_argument("--width", type=int, default=160,
                    help="longest value shown per difference (0: no limit)")
    ap.add_argument("--keep", action="store_true", help="keep Dovecot's temp dir")
    ap.add_argument("--save-dovecot", metavar="FILE",
                    help="write Dovecot's answers to FILE as mime_dump --json lines")
    ap.add_argument("-v", "--verbose", action="store_true")
    args = ap.parse_args()

    started = time.monotonic()
    files = sorted(p for p in Path(args.corpus).glob("*") if fnmatch.fnmatchcase(p.name, args.only)
                   and p.is_file())
    if not files:
        print(f"crosscheck: no corpus files matching {args.only} in {args.corpus}",
              file=sys.stderr)
        return 2
    if not args.dovecot_only and not args.dump:
        ap.error("--dump is required unless --dovecot-only")
    if not args.dovecot_only and not os.access(args.dump, os.X_OK):
        print(f"crosscheck: mime_dump not found at {args.dump} (build the mime_dump target)",
              file=sys.stderr)
        return 2

    signal.signal(signal.SIGTERM, lambda *_: sys.exit(3))
    workdir = Path(tempfile.mkdtemp(prefix="peregrine-dovecot-"))
    os.chmod(workdir, 0o755)  # Dovecot's unprivileged processes walk through it
    dovecot = None
    try:
        known = load_known(args.known)
        dovecot = Dovecot(workdir, USER, PASSWORD, name="crosscheck")
        dovecot.start()
        dove, skipped = dovecot_answers(dovecot, files, args.verbose)
    except CheckError as e:
        print(f"crosscheck: {e}", file=sys.stderr)
        return 2
    except (ImapError, OSError) as e:
        print(f"crosscheck: talking to Dovecot failed: {e}", file=sys.stderr)
        if dovecot is not None:
            print(dovecot.logs(), file=sys.stderr)
        return 2
    finally:
        if dovecot is not None:
            dovecot.stop()
        if args.keep:
            print(f"crosscheck: Dovecot's files kept in {workdir}", file=sys.stderr)
        else:
            shutil.rmtree(workdir, ignore_errors=True)

    if args.save_dovecot:
        save_as_dump_json(dove, args.save_dovecot)
    for name, reason in sorted(skipped.items()):
        print(f"{name}: skipped, Dovecot refused it: {reason}")
    if args.dovecot_only:
        print_dovecot_only(dove, args.width)
        print(f"crosscheck: {len(files)} files, {len(dove)} answered by Dovecot, "
              f"{len(skipped)} refused, {time.monotonic() - started:.1f} s")
        return 0

    try:
        ours = peregrine_answers(args.dump, [f for f in files if f.name in dove])
    except CheckError as e:
        print(f"crosscheck: {e}", file=sys.stderr)
        return 2

    used = [0] * len(known)
    new = known_count = compared = 0
    for name in sorted(dove):
        diffs = compare(name, dove[name], ours.get(name))
        compared += 1
        for item, d, o, note in diffs:
            i = match_known(known, name, item)
            if i is None:
                new += 1
                tag = "NEW"
            else:
                used[i] += 1
                known_count += 1
                tag = f"known: {known[i]['compliance']}"
            dv, ov = excerpt(show(d), show(o), args.width) if args.width else (show(d), show(o))
            print(f"{name} {item}: dovecot=<{dv}> peregrine=<{ov}>"
                  + (f" [{note}]" if note else "") + f" ({tag})")

    # A narrowed run (--only) cannot tell whether an entry is stale.
    checked = {f.name for f in files if f.name in dove} if args.only == "*.eml" else set()
    stale = []
    for i, entry in enumerate(known):
        applies = any(glob_match(n, entry["file"]) for n in checked)
        if applies and used[i] == 0:
            stale.append(entry)
            print(f"STALE known difference no longer occurs: file={entry['file']} "
                  f"item={entry['item']} ({entry['compliance']})")

    print(f"crosscheck: {len(files)} files, {compared} compared, {len(skipped)} refused by "
          f"Dovecot; {known_count + new} differences ({known_count} known, {new} new), "
          f"{len(stale)} stale known entries, {time.monotonic() - started:.1f} s")
    if new or stale:
        print("crosscheck: FAILED — fix the difference or list it in known_differences.json "
              "with its docs/compliance.md section")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
