#!/usr/bin/env python3
"""What reaching memory costs on this machine after a pause.

Not part of CI. Maps --mb of anonymous memory, fills it, then reads one
byte of every 4 KB page, back to back and after pauses, and prints the
CPU time of each pass (time.thread_time) per page. No I/O, no page
faults, no other process involved: if a pass after a pause costs more
than one back to back, the machine itself makes a program slower after it
has been idle (CPU caches and TLBs refilled, and on a paravirtualized
guest such as this one, PVM, its shadow page tables), and a benchmark that
times a query after another server's work measures that too.

  bench/search/page_touch.py [--mb 256] [--pauses 0,0,1,0,5,0,20,0,20,0,60,0]

Python standard library only (the loop's own cost, about 0.05 us a page,
is in every pass).
"""

from __future__ import annotations

import argparse
import mmap
import time


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--mb", type=int, default=256)
    ap.add_argument("--pauses", default="0,0,1,0,5,0,20,0,20,0,60,0")
    args = ap.parse_args()
    size = args.mb << 20
    m = mmap.mmap(-1, size)
    m.write(b"\1" * size)  # every page present before the passes
    pages = size // 4096
    total = 0
    for off in range(0, size, 4096):  # a first pass, not shown: the mapping settles
        total += m[off]
    for pause in (float(p) for p in args.pauses.split(",")):
        time.sleep(pause)
        t = time.thread_time()
        for off in range(0, size, 4096):
            total += m[off]
        us = (time.thread_time() - t) * 1e6
        print(f"after {pause:4.0f} s pause: {us / 1000:7.2f} ms for {pages} pages"
              f" = {us / pages:.3f} us a page", flush=True)
    return 0 if total else 1


if __name__ == "__main__":
    raise SystemExit(main())
