"""The server process: it runs itself again with glibc's malloc tuned
([server] huge_pages, base/malloc_tuning.h), keeping its PID, logs the
tunables it then runs with, and serves as before; with huge_pages = false it
runs as started."""

import os
import re
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import ServerTestCase  # noqa: E402

TUNABLES = ("glibc.malloc.hugetlb=1", "glibc.malloc.arena_max=1")


def tunables_logged(server):
    """The GLIBC_TUNABLES value the server logged at start, or None."""
    with open(server.log_path, errors="replace") as f:
        found = re.findall(r"event=malloc_tuned glibc_tunables=\"?([^\"\s]+)", f.read())
    return found[-1] if found else None


def command_line_of(pid):
    with open(f"/proc/{pid}/cmdline", "rb") as f:
        return f.read().split(b"\0")[:-1]


class TunedMallocTest(ServerTestCase):
    server_kwargs = {}  # huge_pages at its default

    def test_runs_again_with_the_tunables_and_serves(self):
        self.assertEqual(sorted(tunables_logged(self.server).split(":")), sorted(TUNABLES))
        # The program that answers is the one started (same PID), running
        # the same binary with the same arguments: exec replaced it in place.
        pid = self.server.proc.pid
        self.assertEqual(os.path.realpath(f"/proc/{pid}/exe"),
                         os.path.realpath(self.server.binary))
        self.assertEqual(command_line_of(pid)[1:],
                         [b"serve", b"--config", self.server.config.encode()])
        imap = self.server.login(select="INBOX")
        try:
            typ, _ = imap.append("INBOX", None, None, b"Subject: tuned\r\n\r\nbody\r\n")
            self.assertEqual(typ, "OK")
            typ, data = imap.search(None, "SUBJECT", "tuned")
            self.assertEqual((typ, data), ("OK", [b"1"]))
        finally:
            imap.logout()


class UntunedMallocTest(ServerTestCase):
    server_kwargs = {"huge_pages": False}

    def test_runs_as_started(self):
        self.assertIsNone(tunables_logged(self.server))
        imap = self.server.login()
        imap.logout()


class OperatorTunablesTest(ServerTestCase):
    """A value the environment already gives one of the tunables wins."""

    server_kwargs = {}

    @classmethod
    def setUpClass(cls):
        saved = os.environ.get("GLIBC_TUNABLES")
        os.environ["GLIBC_TUNABLES"] = "glibc.malloc.arena_max=4"
        try:
            super().setUpClass()
        finally:
            if saved is None:
                del os.environ["GLIBC_TUNABLES"]
            else:
                os.environ["GLIBC_TUNABLES"] = saved

    def test_keeps_the_operators_value(self):
        self.assertEqual(tunables_logged(self.server),
                         "glibc.malloc.arena_max=4:glibc.malloc.hugetlb=1")


if __name__ == "__main__":
    unittest.main()
