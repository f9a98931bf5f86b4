#!/usr/bin/env python3
"""Where one LMTP client's deliveries wait, from a perf trace of the server.

bench/lmtp-profile.sh MODE=timeline records, system-wide, the scheduler's
switches and wake-ups, the server's socket, sync, link and WAL-write system
calls and the block requests, while one client delivers; this reads
`perf script -F comm,pid,tid,cpu,time,event,trace` of it and prints, per
delivery (medians, p10/p90, means), the steps of the serial path:

  body read (network thread) -> task posted to the pool -> file fsync
  starts (sync thread) -> file fsync ends -> link -> commit's WAL write
  (strand) -> fdatasync -> 250 sent (network thread) -> next body read

or, for a server that settles files after the reply (no fsync before the
commit; the file renamed from tmp/ after it):

  body read -> posted -> commit's WAL write -> fdatasync -> rename into
  cur/ -> 250 sent -> next body read

and what the strand did between the post and the commit's write when it
was off its CPU: runnable but preempted, or asleep until the file's
thread, another server thread or an interrupt woke it. One client only
(the steps are matched in order); not part of CI.

    perf script -i WORK/timeline.N.data -F comm,pid,tid,cpu,time,event,trace \\
        | bench/lmtp_timeline.py SERVER_PID
"""
import collections
import re
import statistics
import sys

LINE = re.compile(r"^\s*(.*?)\s+(\d+)/(\d+)\s+\[(\d+)\]\s+([\d.]+):\s+(\S+):\s*(.*)$")


def main():
    server = int(sys.argv[1])
    events = []  # (time us, pid, tid, event, rest)
    for line in sys.stdin:
        m = LINE.match(line)
        if m:
            _, pid, tid, _, t, e, rest = m.groups()
            events.append((float(t) * 1e6, int(pid), int(tid), e, rest))
    srv = [x for x in events if x[1] == server]
    server_tids = {x[2] for x in srv}

    # On-CPU intervals of every thread, from the switches.
    runs = collections.defaultdict(list)  # tid -> [(start, end, state left in)]
    on_cpu = {}
    wakeups = collections.defaultdict(list)  # wakee tid -> [(time, waker tid)]
    for t, _, tid, e, rest in events:
        if e == "sched:sched_switch":
            m = re.search(r"prev_pid=(\d+) .*prev_state=(\S+) ==> .*next_pid=(\d+)", rest)
            prev, state, nxt = int(m.group(1)), m.group(2), int(m.group(3))
            if prev in on_cpu:
                runs[prev].append((on_cpu.pop(prev), t, state))
            on_cpu[nxt] = t
        elif e == "sched:sched_wakeup":
            wakee = int(re.search(r" pid=(\d+)", rest).group(1))
            wakeups[wakee].append((t, tid))

    net = next(tid for _, _, tid, e, _ in srv if e == "syscalls:sys_enter_sendto")
    steps = []
    last_read = None
    for t, _, tid, e, rest in srv:
        if tid == net and e == "syscalls:sys_exit_recvfrom" and not rest.startswith("0xfff"):
            last_read = t
        elif tid == net and e == "syscalls:sys_enter_futex" and " op: 0x00000081" in rest:
            if last_read is not None:
                steps.append(("post", t, last_read))
                last_read = None
        elif tid == net and e == "syscalls:sys_enter_sendto":
            steps.append(("send", t, tid))
        elif e in ("syscalls:sys_enter_pwrite64", "syscalls:sys_enter_fdatasync",
                   "syscalls:sys_exit_fdatasync", "syscalls:sys_enter_fsync",
                   "syscalls:sys_exit_fsync", "syscalls:sys_enter_linkat",
                   "syscalls:sys_enter_rename"):
            steps.append((e.split(":")[1], t, tid))

    deliveries = []
    cur = None
    for kind, t, extra in steps:
        if kind == "post" and cur is None:
            cur = {"read": extra, "post": t, "fsync": [], "fsync_end": []}
        elif cur is not None:
            if kind == "send":
                cur["send"] = t
                deliveries.append(cur)
                cur = None
            elif kind == "sys_enter_fsync":
                cur["fsync"].append(t)
                cur.setdefault("file_tid", extra)
            elif kind == "sys_exit_fsync":
                cur["fsync_end"].append(t)
            elif kind not in cur:
                cur[kind] = t
                if kind == "sys_enter_fdatasync":
                    cur["strand"] = extra
    full = [d for d in deliveries if len(d["fsync"]) >= 2 and len(d["fsync_end"]) >= 2
            and "sys_enter_linkat" in d and "sys_enter_pwrite64" in d
            and "sys_exit_fdatasync" in d and "strand" in d]
    # Settled after the reply: no fsync on the way, a rename after the commit.
    later = [d for d in deliveries if not d["fsync"] and "sys_enter_pwrite64" in d
             and "sys_exit_fdatasync" in d and "sys_enter_rename" in d and "strand" in d]

    def show(name, values):
        v = sorted(values)
        if not v:
            return
        n = len(v)
        print(f"  {name:34s} median {v[n // 2]:6.0f}  p10 {v[n // 10]:6.0f}  "
              f"p90 {v[9 * n // 10]:6.0f}  mean {statistics.mean(v):6.0f} us")

    print(f"deliveries: {len(deliveries)}, with every step: {len(full)}")
    order = [
        ("body read -> posted to the pool", lambda d: d["post"] - d["read"]),
        ("posted -> file fsync starts", lambda d: d["fsync"][0] - d["post"]),
        ("file fsync", lambda d: d["fsync_end"][0] - d["fsync"][0]),
        ("file fsync ends -> link", lambda d: d["sys_enter_linkat"] - d["fsync_end"][0]),
        ("link -> commit's WAL write", lambda d: d["sys_enter_pwrite64"] - d["sys_enter_linkat"]),
        ("WAL write -> fdatasync", lambda d: d["sys_enter_fdatasync"] - d["sys_enter_pwrite64"]),
        ("fdatasync", lambda d: d["sys_exit_fdatasync"] - d["sys_enter_fdatasync"]),
        ("cur/ fsync (beside the commit)", lambda d: d["fsync_end"][1] - d["fsync"][1]),
        ("fdatasync ends -> 250 sent", lambda d: d["send"] - d["sys_exit_fdatasync"]),
        ("body read -> 250 sent", lambda d: d["send"] - d["read"]),
    ]
    if later and len(later) > len(full):
        print(f"settled after the reply: {len(later)} deliveries")
        full = later
        for d in full:
            d["sys_enter_linkat"] = d["sys_enter_rename"]  # where the file gets its name
        order = [
            ("body read -> posted to the pool", lambda d: d["post"] - d["read"]),
            ("posted -> commit's WAL write", lambda d: d["sys_enter_pwrite64"] - d["post"]),
            ("WAL write -> fdatasync", lambda d: d["sys_enter_fdatasync"] - d["sys_enter_pwrite64"]),
            ("fdatasync", lambda d: d["sys_exit_fdatasync"] - d["sys_enter_fdatasync"]),
            ("fdatasync ends -> rename", lambda d: d["sys_enter_rename"] - d["sys_exit_fdatasync"]),
            ("rename -> 250 sent", lambda d: d["send"] - d["sys_enter_rename"]),
            ("body read -> 250 sent", lambda d: d["send"] - d["read"]),
        ]
    print("steps of one delivery:")
    for name, f in order:
        show(name, [f(d) for d in full])
    show("250 sent -> next body read",
         [deliveries[i + 1]["read"] - d["send"] for i, d in enumerate(deliveries[:-1])])
    show("one delivery (body read to the next)",
         [deliveries[i + 1]["read"] - d["read"] for i, d in enumerate(deliveries[:-1])])

    # The strand between the post and the commit's write, off its CPU.
    def running_at(tid, t):
        for a, b, _ in runs[tid]:
            if a <= t < b:
                return True
        return False

    asleep_at_link = [d for d in full if not running_at(d["strand"], d["sys_enter_linkat"])]
    back = []
    for d in asleep_at_link:
        starts = [a for a, _, _ in runs[d["strand"]] if a > d["sys_enter_linkat"]]
        if starts:
            back.append(min(starts) - d["sys_enter_linkat"])
    print(f"strand asleep when the file was linked: {len(asleep_at_link)} of {len(full)}")
    show("link -> strand on a CPU again", back)
    off = collections.Counter()
    count = collections.Counter()
    for d in full:
        s, a, b = d["strand"], d["post"], d["sys_enter_pwrite64"]
        spans = [r for r in runs[s] if r[1] > a and r[0] < b]
        for (_, left, state), (came, _, _) in zip(spans, spans[1:]):
            wakers = [w for t, w in wakeups[s] if left <= t <= came]
            if state.startswith("R"):
                why = "runnable, preempted"
            elif wakers and wakers[-1] == d.get("file_tid"):
                why = "asleep, woken by the file's thread"
            elif wakers and wakers[-1] in server_tids:
                why = "asleep, woken by another server thread"
            else:
                why = "asleep, woken from an interrupt or idle"
            off[why] += came - left
            count[why] += 1
    print("strand off its CPU between the post and the commit's write, per delivery:")
    for why, total in off.most_common():
        print(f"  {why:42s} {count[why] / len(full):5.2f} times  {total / len(full):6.0f} us")


if __name__ == "__main__":
    main()
