"""CPU time and resident memory of a server's whole process tree, from /proc.

Dovecot forks a process per login (imap-login, imap, auth workers); Peregrine
and the responder are one process each. What a server costs is the sum over
the tree under its root process:

  * CPU: utime + stime of every live process in the tree, plus the root's
    cutime + cstime, which hold the time of the children it has already
    reaped (a Dovecot imap process that ran a whole session and exited counts
    there). Live processes' own cutime/cstime are added too, for trees that
    reap grandchildren. The difference between two readings is the CPU the
    tree spent between them.
  * RSS: the sum of the tree's resident set sizes, sampled by RssSampler on a
    thread; its peak over a run is reported. Shared pages (the binary, libc)
    are counted once per process, as the kernel reports them.

Standard library only; Linux only.
"""

import os
import threading

CLOCK_TICKS = os.sysconf("SC_CLK_TCK")
PAGE_SIZE = os.sysconf("SC_PAGE_SIZE")


def _read_stat(pid):
    """(ppid, ticks_self, ticks_children, rss_bytes) or None if the process is gone."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            data = f.read()
    except OSError:
        return None
    # The command name is in parentheses and may hold spaces: split after it.
    fields = data[data.rfind(b")") + 2:].split()
    # fields[0] is field 3 (state) of proc(5): ppid 4, utime 14, stime 15,
    # cutime 16, cstime 17, rss 24.
    ppid = int(fields[1])
    own = int(fields[11]) + int(fields[12])
    children = int(fields[13]) + int(fields[14])
    rss = int(fields[21]) * PAGE_SIZE
    return ppid, own, children, rss


def _all_stats():
    stats = {}
    for name in os.listdir("/proc"):
        if name.isdigit():
            s = _read_stat(int(name))
            if s is not None:
                stats[int(name)] = s
    return stats


def tree(root):
    """{pid: stat} of root and all its descendants (root first if alive)."""
    stats = _all_stats()
    if root not in stats:
        return {}
    kids = {}
    for pid, s in stats.items():
        kids.setdefault(s[0], []).append(pid)
    out = {}
    todo = [root]
    while todo:
        pid = todo.pop()
        if pid in out or pid not in stats:
            continue
        out[pid] = stats[pid]
        todo.extend(kids.get(pid, ()))
    return out


def cpu_seconds(root):
    """CPU seconds the tree has used so far (see the module comment)."""
    ticks = 0
    for _pid, (_ppid, own, children, _rss) in tree(root).items():
        ticks += own + children
    return ticks / CLOCK_TICKS


def rss_bytes(root):
    return sum(s[3] for s in tree(root).values())


def process_count(root):
    return len(tree(root))


class RssSampler:
    """Samples the tree's summed RSS every `interval` seconds; .peak after stop()."""

    def __init__(self, root, interval=0.1):
        self.root = root
        self.interval = interval
        self.peak = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self):
        while True:
            self.peak = max(self.peak, rss_bytes(self.root))
            if self._stop.wait(self.interval):
                break

    def __enter__(self):
        self._thread.start()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        self._thread.join()
        self.peak = max(self.peak, rss_bytes(self.root))
        return False
