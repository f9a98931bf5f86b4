"""Checks that a known-differences entry points at a real section of the
compliance notes ("docs/compliance.md#anchor", anchors as GitHub makes them
from headings). Shared by the Dovecot cross-checks. Python standard library
only.
"""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


class LinkChecker:
    """Remembers each document's anchors once."""

    def __init__(self, root: Path = ROOT):
        self.root = root
        self.anchors: dict[str, set[str]] = {}

    def problem(self, link: str) -> str | None:
        """None when `link` names an existing document and heading, else what is wrong."""
        doc, _, anchor = link.partition("#")
        if doc not in self.anchors:
            path = self.root / doc
            if not path.is_file():
                return f"names {doc}, which does not exist"
            self.anchors[doc] = {
                re.sub(r"[^a-z0-9 _-]", "", line.lstrip("#").strip().lower()).replace(" ", "-")
                for line in path.read_text(encoding="utf-8").splitlines()
                if line.startswith("#")
            }
        if anchor and anchor not in self.anchors[doc]:
            return f"links to #{anchor}, not a heading of {doc}"
        return None
