"""The results of bench/compare.py: verdicts, the table, the chart, profiles.

The target each row is held to (issue 6): Peregrine's throughput at least 2x
Dovecot's or at least 90% of the ceiling, whichever is lower; Peregrine's CPU
seconds per 1,000 operations at most half of Dovecot's; no errors or protocol
violations for Peregrine. A row short of it gets a `perf` profile summary of
Peregrine running that row.
"""

import dataclasses
import os
import platform
import re
import subprocess
import time


@dataclasses.dataclass
class Verdict:
    throughput_target: float | None
    throughput_met: bool
    cpu_met: bool
    errors_met: bool

    @property
    def met(self):
        return self.throughput_met and self.cpu_met and self.errors_met

    def shortfalls(self):
        out = []
        if not self.throughput_met:
            out.append("throughput")
        if not self.cpu_met:
            out.append("CPU")
        if not self.errors_met:
            out.append("errors")
        return out


def verdict(res):
    d, p, c = (res.median_ops(n) for n in ("dovecot", "peregrine", "ceiling"))
    candidates = [x for x in ((2 * d) if d else None, (0.9 * c) if c else None) if x]
    target = min(candidates) if candidates else None
    tp = p is not None and target is not None and p >= target
    dc, pc = res.cpu_per_1000("dovecot"), res.cpu_per_1000("peregrine")
    cpu = pc is not None and dc is not None and pc <= 0.5 * dc
    errors = p is not None and res.errors("peregrine") == 0
    return Verdict(target, tp, cpu, errors)


def _num(x, fmt="{:,.0f}"):
    return "—" if x is None else fmt.format(x)


def _mib(x):
    return "—" if x is None else f"{x / (1 << 20):,.1f}"


def table_rows(results):
    out = []
    for res in results:
        d, p, c = (res.median_ops(n) for n in ("dovecot", "peregrine", "ceiling"))
        v = verdict(res)
        out.append({
            "benchmark": res.row.name, "clients": res.row.clients,
            "dovecot": d, "peregrine": p, "ceiling": c,
            "ratio": p / d if p and d else None,
            "share": p / c if p and c else None,
            "cpu_d": res.cpu_per_1000("dovecot"), "cpu_p": res.cpu_per_1000("peregrine"),
            "rss_d": res.peak_rss("dovecot"), "rss_p": res.peak_rss("peregrine"),
            "err_d": res.errors("dovecot") if "dovecot" in res.runs else None,
            "err_p": res.errors("peregrine") if "peregrine" in res.runs else None,
            "verdict": v, "key": res.row.key,
        })
    return out


HEADER = ("| benchmark | clients | Dovecot ops/s | Peregrine ops/s | ratio | ceiling ops/s "
          "| share of ceiling | CPU s/1k ops Dovecot | CPU s/1k ops Peregrine "
          "| peak RSS MiB Dovecot | peak RSS MiB Peregrine | errors D / P | target |")


def markdown_table(results):
    lines = [HEADER, "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: "
             "| ---: | --- |"]
    for r in table_rows(results):
        v = r["verdict"]
        status = "met" if v.met else "**short: " + ", ".join(v.shortfalls()) + "**"
        lines.append(
            f"| {r['benchmark']} | {r['clients']} | {_num(r['dovecot'])} | {_num(r['peregrine'])} "
            f"| {_num(r['ratio'], '{:.2f}×')} | {_num(r['ceiling'])} "
            f"| {_num(None if r['share'] is None else 100 * r['share'], '{:.0f}%')} "
            f"| {_num(r['cpu_d'], '{:.3f}')} | {_num(r['cpu_p'], '{:.3f}')} "
            f"| {_mib(r['rss_d'])} | {_mib(r['rss_p'])} "
            f"| {_num(r['err_d'], '{:d}')} / {_num(r['err_p'], '{:d}')} | {status} |")
    return "\n".join(lines)


def text_table(results):
    lines = [f"{'benchmark':<22}{'cl':>3}{'Dovecot/s':>11}{'Peregrine/s':>12}{'ratio':>7}"
             f"{'ceiling/s':>11}{'share':>7}{'cpu D':>8}{'cpu P':>8}{'errD':>6}{'errP':>6}  target"]
    for r in table_rows(results):
        v = r["verdict"]
        lines.append(
            f"{r['benchmark'][:22]:<22}{r['clients']:>3}{_num(r['dovecot']):>11}"
            f"{_num(r['peregrine']):>12}{_num(r['ratio'], '{:.2f}'):>7}{_num(r['ceiling']):>11}"
            f"{_num(None if r['share'] is None else 100 * r['share'], '{:.0f}%'):>7}"
            f"{_num(r['cpu_d'], '{:.3f}'):>8}{_num(r['cpu_p'], '{:.3f}'):>8}"
            f"{_num(r['err_d'], '{:d}'):>6}{_num(r['err_p'], '{:d}'):>6}  "
            f"{'met' if v.met else 'short: ' + ', '.join(v.shortfalls())}")
    return "\n".join(lines)


def _cmd(args):
    try:
        return subprocess.run(args, capture_output=True, text=True, timeout=30).stdout.strip()
    except (OSError, subprocess.TimeoutExpired):
        return ""


def machine(all_servers):
    cpu = "?"
    with open("/proc/cpuinfo") as f:
        for line in f:
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    with open("/proc/meminfo") as f:
        mem_kib = int(f.readline().split()[1])
    return {
        "cpu": cpu, "cores": os.cpu_count(), "ram_gib": mem_kib / (1 << 20),
        "kernel": platform.release(), "os": _cmd(["sh", "-c", ". /etc/os-release; echo $PRETTY_NAME"]),
        "load": os.getloadavg(),
        "versions": [s.version() for s in all_servers],
        "compiler": _cmd(["sh", "-c", "g++ --version | head -1"]),
    }


def perf_profile(server, driver, row, users, seconds, seed, work):
    """A summary of where Peregrine's CPU goes while it runs `row`: perf's
    flat profile by symbol, and by library. Returns text (or why there is none)."""
    json_path = os.path.join(work, "profile.json")
    data = os.path.join(work, "perf.data")
    cmd = driver.command(server, row, users, seconds + 1.5, seed, json_path)
    load = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    time.sleep(0.5)
    rec = subprocess.run(["perf", "record", "-q", "-e", "cpu-clock", "-F", "999",
                          "-p", str(server.pid), "-o", data, "--", "sleep", str(seconds)],
                         capture_output=True, text=True)
    load.wait(timeout=seconds * 10 + 60)
    if rec.returncode != 0:
        return f"perf could not record here: {rec.stderr.strip()[-300:]}"
    report = []
    for sort, top in (("dso,symbol", 20), ("dso", 8)):
        rep = subprocess.run(["perf", "report", "-i", data, "--stdio", "--no-children", "-g",
                              "none", "--sort", sort, "--percent-limit", "1"],
                             capture_output=True, text=True)
        # Lines "  12.34%  dso  [.] symbol   -   -": highest first, without the
        # empty columns perf pads them with.
        lines = [re.sub(r"(\s+-)+$", "", ln.rstrip()) for ln in rep.stdout.splitlines()
                 if re.match(r"\s*\d+\.\d+%", ln)]
        lines.sort(key=lambda ln: -float(ln.split("%")[0]))
        if not lines:
            lines = [f"(perf report printed nothing: exit {rep.returncode}, "
                     f"{rep.stderr.strip()[-300:]})"]
        report.append(f"by {sort}:\n" + "\n".join(lines[:top]))
    return "\n\n".join(report)


def chart(path, results):
    """A PNG bar chart: Peregrine / Dovecot per row (log scale, 2x marked),
    and Peregrine's share of the ceiling (90% marked). False without matplotlib."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return False
    rows = table_rows(results)
    labels = [f"{r['benchmark']} ({r['clients']})" for r in rows]
    ratio = [r["ratio"] or 0 for r in rows]
    share = [100 * (r["share"] or 0) for r in rows]
    fig, (top, bottom) = plt.subplots(2, 1, figsize=(12, 8), sharex=True)
    x = range(len(rows))
    top.bar(x, ratio, color=["#2a7" if r >= 2 else "#d62" for r in ratio])
    top.axhline(1, color="#555", linewidth=0.8)
    top.axhline(2, color="#2a7", linestyle="--", linewidth=0.8, label="2× Dovecot")
    top.set_yscale("log")
    top.set_ylabel("Peregrine / Dovecot (ops/s)")
    top.legend(loc="upper right")
    for i, r in enumerate(ratio):
        if r:
            top.text(i, r, f"{r:.2f}×", ha="center", va="bottom", fontsize=8)
    bottom.bar(x, share, color=["#2a7" if s >= 90 else "#48c" for s in share])
    bottom.axhline(90, color="#2a7", linestyle="--", linewidth=0.8, label="90% of ceiling")
    bottom.set_ylim(0, max([105.0] + [s * 1.1 for s in share]))
    bottom.set_ylabel("Peregrine, % of ceiling")
    bottom.legend(loc="upper right")
    bottom.set_xticks(list(x))
    bottom.set_xticklabels(labels, rotation=35, ha="right", fontsize=8)
    fig.suptitle("Peregrine vs Dovecot (median of rounds), bench/compare.sh")
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return True


def write(out_dir, date, results, profiles, meta):
    results = list(results)
    os.makedirs(out_dir, exist_ok=True)
    md_path = os.path.join(out_dir, f"{date}-compare.md")
    png_path = os.path.join(out_dir, f"{date}-compare.png")
    have_chart = chart(png_path, results)
    rows = table_rows(results)
    short = [r for r in rows if not r["verdict"].met]
    load = ", ".join(f"{x:.1f}" for x in meta["load"])
    load_start = ", ".join(f"{x:.1f}" for x in meta["load_at_start"])
    lines = [
        f"# Peregrine vs Dovecot, {date}",
        "",
        "Written by `bench/compare.sh` (docs/benchmarks.md says what each row means). "
        "Median of rounds; ratio = Peregrine / Dovecot; share = Peregrine / the ceiling "
        "(the canned-response responder, `bench/responder`); CPU = server CPU seconds "
        "(user + system, summed over the server's whole process tree) per 1,000 operations "
        "over all rounds; peak RSS = the largest sum over the tree seen during any run.",
        "",
        "## Machine",
        "",
        f"- CPU: {meta['cpu']}, {meta['cores']} cores; RAM {meta['ram_gib']:.1f} GiB",
        f"- Kernel {meta['kernel']}; {meta['os']}; {meta['compiler']}",
        f"- Servers: {'; '.join(meta['versions'])}",
        f"- Load average (1, 5, 15 min) at the start: {load_start}; at the end: {load} "
        "(the machine is shared with other work; the load generator runs on the same "
        "cores as the server)",
        f"- Settings: {meta['rounds']} rounds × {meta['seconds']:g} s per run, "
        f"{meta['users']} users, {meta['messages']} messages per folder, seed {meta['seed']}; "
        f"whole run {meta['elapsed']:.0f} s",
        "- peregrine-bench " + ("checks state for Dovecot and Peregrine and runs with "
                               "`--no-check` against the ceiling" if meta["no_check"] else
                               "has no `--no-check`: the ceiling's violations are ignored"),
        "",
        "## Results",
        "",
        markdown_table(results),
        "",
    ]
    if have_chart:
        lines += [f"![ratios]({os.path.basename(png_path)})", ""]
    lines += ["### Spread of the rounds", "",
              "ops/s of each round, lowest to highest: how far to trust a median on this "
              "machine.", "",
              "| benchmark | clients | Dovecot | Peregrine | ceiling |",
              "| --- | ---: | --- | --- | --- |"]
    for res in results:
        spread = []
        for name in ("dovecot", "peregrine", "ceiling"):
            rates = sorted(r.ops_per_sec for r in res.runs.get(name, []))
            spread.append(" / ".join(f"{x:,.0f}" for x in rates) or "—")
        lines.append(f"| {res.row.name} | {res.row.clients} | " + " | ".join(spread) + " |")
    lines.append("")
    lines += ["## Against the target", "",
              "Target per row: throughput ≥ min(2× Dovecot, 90% of the ceiling); CPU per "
              "1,000 ops ≤ half of Dovecot's; 0 errors and violations for Peregrine "
              "(the `mix, one mailbox` row is 10 clients in one mailbox).", ""]
    if not short:
        lines += ["Every row meets the target.", ""]
    else:
        lines += [f"{len(short)} of {len(rows)} rows fall short:", ""]
        for r in short:
            v = r["verdict"]
            parts = []
            if not v.throughput_met:
                parts.append(f"throughput {_num(r['peregrine'])} ops/s, target "
                             f"{_num(v.throughput_target)}")
            if not v.cpu_met:
                parts.append(f"CPU {_num(r['cpu_p'], '{:.3f}')} s/1k ops, target ≤ "
                             f"{_num(None if r['cpu_d'] is None else r['cpu_d'] / 2, '{:.3f}')}")
            if not v.errors_met:
                parts.append(f"{_num(r['err_p'], '{:d}')} errors/violations")
            lines.append(f"- **{r['benchmark']}, {r['clients']} clients**: " + "; ".join(parts))
        lines.append("")
    errors = [res for res in results if res.errors("peregrine") or res.errors("dovecot")]
    if errors:
        lines += ["## Errors and violations (samples)", ""]
        for res in errors:
            for name in ("dovecot", "peregrine"):
                if res.errors(name):
                    lines.append(f"- {res.row.key}, {name}: {res.errors(name)}")
                    lines += [f"  - `{str(s)[:300]}`" for s in res.samples(name)]
        lines.append("")
    if profiles:
        lines += ["## Where Peregrine's time goes in the rows that fall short", "",
                  "`perf record -e cpu-clock -F 999` on the Peregrine process (all its threads) "
                  "while the row runs again: self time by symbol, then by library "
                  "(`[kernel.kallsyms]` is time in the kernel: system calls, network, fsync; "
                  "`pvm_irq_enable` is the virtual machine's interrupt handling in it).", ""]
        for key, text in profiles.items():
            lines += [f"### {key.replace('/', ', ')} clients", "", "```", text, "```", ""]
    with open(md_path, "w") as f:
        f.write("\n".join(lines))
    return [md_path] + ([png_path] if have_chart else [])
