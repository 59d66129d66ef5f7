#!/usr/bin/env python3
"""Turns one `make bench` run into Documentation/benchmarks.md and its plot.

    report.py RUNDIR DOCDIR

RUNDIR holds host.txt and micro.tsv from scripts/bench.sh, and in RUNDIR/vm
(vm-run's output folder) what scripts/bench/in-vm.sh wrote: runs.tsv, raw/,
machine.txt. The page and the plot
(benchmarks.svg, drawn by gnuplot) go to DOCDIR.
"""
import os
import re
import statistics
import subprocess
import sys

BW_TESTS = ("ib_send_bw", "ib_write_bw", "ib_read_bw")
LAT_TESTS = ("ib_send_lat", "ib_write_lat", "ib_read_lat")
# tests/progs/sroce_post_rate: 64 B WRITE message rate (Mpps) by posting interface.
POST_TESTS = ("post_rate_post", "post_rate_wr", "post_rate_family")
# tests/progs/sroce_mp_rate: 64 B SEND receive rate (Mpps) and receive WRs
# posted per packet, ordinary receives against multi-packet ones (Example B).
MP_TESTS = ("mp_rate_plain", "mp_rate_mp")
# tests/progs/sroce_bench_column: one matrix column (BYTES = ROWS * 8) by way,
# in columns per second.
COLUMN_TESTS = ("column_mw", "column_sge", "column_pack")
COLUMN_ROWS = (64, 4096)
# tests/progs/sroce_integrity under netem loss (in-vm.sh's loss_run): the
# client's seconds for the same 40 operations, by loss percentage.
LOSS_PCTS = (0, 1, 3, 10)
LOSS_TESTS = tuple(f"loss_{p}" for p in LOSS_PCTS)



def add_intf_section(add, path):
    """The provider's posting and polling cost per interface (intf.tsv of
    scripts/bench/intf.sh): instructions and ns per WR or completion, and
    how the families compare with the cheaper of the other two."""
    rows = {}
    for line in open(path):
        f = line.rstrip("\n").split("\t")
        if len(f) < 5 or f[0] == "name":
            continue
        rows[f[0]] = (float(f[2]), float(f[3]), f[4])
    add("## Posting and polling through the provider's three interfaces (host)")
    add("")
    add("`build/host/bench_intf` (tests/host/provider/bench_intf.c, `make bench-intf`): the provider's")
    add("code on rings in one process, the kernel's side played between the measured calls, no")
    add("doorbell needed (the SQ poller's mode). Instructions per WR or completion are callgrind's")
    add("count of each case's function alone (exact, the figure to compare); ns are the best of")
    add("5 timed runs on the build machine (noisy when it is busy). Locked tables throughout,")
    add("as `ibv_post_send` and `ibv_poll_cq` lock too.")
    add("")
    add("| operation | `ibv_post_send` / `ibv_poll_cq` | `ibv_wr_*` / `ibv_cq_ex` | family | family vs the cheaper other |")
    add("|---|---:|---:|---:|---:|")
    groups = [
        ("64 B SEND, one WR per call", "post_send", "wr_send", "family_send"),
        ("64 B RDMA WRITE, one WR per call", "post_write", "wr_write", "family_write"),
        ("64 B SEND, 16 per publication", "post_send_burst", "wr_send_burst", "family_send_burst"),
        ("poll, one completion per call", "poll_cq", "cq_ex", "formatted"),
        ("poll, 16 completions per call", "poll_cq_burst", "cq_ex_burst", "formatted_burst"),
    ]
    for what, a, b, c in groups:
        if not all(k in rows for k in (a, b, c)):
            continue
        cell = lambda k: f"{rows[k][1]:.0f} instr, {rows[k][0]:.0f} ns"
        best = min(rows[a][1], rows[b][1])
        add(f"| {what} | {cell(a)} | {cell(b)} | {cell(c)} | {rows[c][1] / best:.2f}x |")
    add("")
    add("The families' checks were made at query time, and each function is specialised for its opcode,")
    add("mode and format: no branch on send flags, opcode, QP type or the CQ's format. Polling one")
    add("completion per call is dominated by the lock and the ring's bookkeeping, which all three pay;")
    add("the ring lock is inline (`sroce_spinlock`), so a formatted poll calls nothing and saves no")
    add("registers; the single-threaded tables (`SROCEDV_INTF_FLAG_SINGLE_THREADED`) drop the lock.")
    add("rdma_rxe's provider has no host build against a simulated kernel; the VM section \"Instructions")
    add("per WR in the VM\" counts both providers under the same program, in user space.")
    add("")


def read_profile(vm, drv, test, size):
    """One profile of scripts/bench/in-vm.sh: ([(pct, symbol)], {cpu: pct},
    {cpu: NET_RX softirqs during the run}), or None."""
    base = os.path.join(vm, "profile", f"{drv}.{test}.{size}")
    if not os.path.exists(base + ".sym"):
        return None
    syms = []
    for line in open(base + ".sym"):
        m = re.match(r"^\s+([\d.]+)%\s+\[(.)\]\s+(.*?)\s*$", line)
        if m:
            syms.append((float(m.group(1)), m.group(3) + ("" if m.group(2) == "k" else f" [{m.group(2)}]")))
    cpus = {}
    if os.path.exists(base + ".cpu"):
        for line in open(base + ".cpu"):
            m = re.match(r"^\s+([\d.]+)%\s+(\d+)", line)
            if m:
                cpus[int(m.group(2))] = float(m.group(1))
    rx = {}
    try:
        def net_rx(path):
            for line in open(path):
                if line.strip().startswith("NET_RX:"):
                    return [int(x) for x in line.split()[1:]]
            return []
        before, after = net_rx(base + ".softirqs.before"), net_rx(base + ".softirqs.after")
        rx = {i: a - b for i, (a, b) in enumerate(zip(after, before))}
    except OSError:
        pass
    irqoff = []
    if os.path.exists(base + ".irqoff"):
        for line in open(base + ".irqoff"):
            f = line.split()
            if len(f) == 2 and f[0].isdigit():
                irqoff.append((int(f[0]), f[1]))
    return syms, cpus, rx, irqoff


def demangle(names):
    """C++ names of sroce's core, as kallsyms gives them, made readable."""
    try:
        out = subprocess.run(["c++filt", "-p"], input="\n".join(names), capture_output=True, text=True,
                             check=True).stdout.split("\n")
        return {n: (out[i] if i < len(out) and out[i] else n) for i, n in enumerate(names)}
    except (OSError, subprocess.CalledProcessError):
        return {n: n for n in names}


def add_profile_section(add, vm):
    cases = [("ib_write_bw", 65536, "64 KiB ib_write_bw"), ("ib_send_bw", 64, "64 B ib_send_bw")]
    profs = {(d, t, sz): read_profile(vm, d, t, sz) for d in ("sroce", "rxe") for t, sz, _ in cases}
    if not any(profs.values()):
        return
    names = sorted({n for p in profs.values() if p for n in [x[1] for x in p[0]] + [x[1] for x in p[3]]})
    dm = demangle(names)
    profs = {k: (p and ([(v, dm[n]) for v, n in p[0]], p[1], p[2], [(c, dm[n]) for c, n in p[3]])) for k, p in profs.items()}
    add("## Where the time goes (perf in the guest)")
    add("")
    add("One run of each case per driver under `perf record -a -g -e cpu-clock` (TCG has no PMU: samples")
    add("of both vCPUs at 499 Hz), self time by symbol, the top of each; then each vCPU's share of the")
    add("samples and the NET_RX softirqs each vCPU ran during the run (`/proc/softirqs`). The server")
    add("is pinned to CPU 0, the client to CPU 1. Without a PMU, perf samples from a timer interrupt:")
    add("time spent with interrupts off is charged to the point where they come back on")
    add("(`_raw_spin_unlock_irqrestore` and the like), so each driver's line below also names the")
    add("functions under that point, whose sections those were.")
    add("")
    for t, sz, title in cases:
        a, b = profs[("sroce", t, sz)], profs[("rxe", t, sz)]
        if not a and not b:
            continue
        add(f"### {title}")
        add("")
        add("| sroce | % | rxe | % |")
        add("|---|---:|---|---:|")
        sa, sb = (a[0] if a else []), (b[0] if b else [])
        for i in range(min(12, max(len(sa), len(sb)))):
            ca = (f"`{sa[i][1]}`", f"{sa[i][0]:.1f}") if i < len(sa) else ("", "")
            cb = (f"`{sb[i][1]}`", f"{sb[i][0]:.1f}") if i < len(sb) else ("", "")
            add(f"| {ca[0]} | {ca[1]} | {cb[0]} | {cb[1]} |")
        add("")
        for d, p in (("sroce", a), ("rxe", b)):
            if not p:
                continue
            cpus = ", ".join(f"CPU {c} {v:.0f}%" for c, v in sorted(p[1].items()))
            rx = ", ".join(f"CPU {c} {n}" for c, n in sorted(p[2].items()))
            add(f"- {d}: samples {cpus or '?'}; NET_RX softirqs {rx or '?'}.")
            if p[3]:
                total = sum(n for n, _ in p[3])
                top = ", ".join(f"`{sym}` {100 * n / total:.0f}%" for n, sym in p[3][:6])
                add(f"  Interrupts-off time (the frame under the re-enable point): {top}.")
        add("")


def add_qp_churn_section(add, vm):
    path = os.path.join(vm, "qp_churn.tsv")
    if not os.path.exists(path):
        return
    rows = [line.rstrip("\n").split("\t") for line in open(path) if line.strip()]
    add("### 10,000 QPs created and destroyed by one process")
    add("")
    add("`tests/progs/sroce_qp_churn.c`: one PD and CQ, 10,000 RC QPs with the smallest queues")
    add("created, taken to INIT, destroyed; then the device's QPs as `rdma res` lists them (the")
    add("kernel's QP1 stays). Each run:")
    add("")
    add("| driver | created | create | to INIT | destroy | QPs left | exit |")
    add("|---|---:|---:|---:|---:|---:|---:|")
    for f in rows:
        if len(f) < 8:
            f = f + [""] * (8 - len(f))
        drv, run, made, cs, ins, ds, left, rc = f[:8]
        sec = lambda v: f"{float(v):.1f} s" if v else "-"
        add(f"| {drv} | {made or '-'} | {sec(cs)} | {sec(ins)} | {sec(ds)} | {left} | {rc} |")
    add("")

def add_post_ir_section(add, vm):
    """in-vm.sh's post_ir: user-space instructions per WR of sroce_post_rate
    under callgrind in the VM, sroce's provider and rxe's."""
    path = os.path.join(vm, "ir.tsv")
    if not os.path.exists(path):
        return
    rows = {}
    for line in open(path):
        f = line.rstrip("\n").split("\t")
        if len(f) >= 3:
            rows[(f[0], f[1])] = float(f[2])
    add("### Instructions per WR in the VM: sroce's provider and rxe's")
    add("")
    add("`tests/progs/sroce_post_rate.c` under callgrind in the guest: 64 B RDMA WRITEs, 16 per")
    add("call (one `ibv_post_send` chain, one `ibv_wr_start`..`ibv_wr_complete`, or 16")
    add("`write_pending` and one `flush`), every 16th signalled. The figure is the user-space")
    add("instructions under the program's `post_batch`, divided by the WRs. The kernel is not")
    add("counted: each of rxe's calls ends in a `write()` system call (its doorbell), sroce's SQ")
    add("poller needs none. Polling is compared on the host (above): in the VM the count would")
    add("mostly be empty polls while sroce's poller works, which rxe, done inside the system call,")
    add("never makes.")
    add("")
    add("| interface | sroce | rxe |")
    add("|---|---:|---:|")
    names = (("post", "`ibv_post_send`"), ("wr", "`ibv_wr_*`"), ("family", "families (`write_pending` + `flush`)"))
    for mode, what in names:
        s_, r_ = rows.get(("sroce", mode)), rows.get(("rxe", mode))
        if s_ is None and r_ is None:
            continue
        cell = lambda v: f"{v:.0f}" if v is not None else "-"
        add(f"| {what} | {cell(s_)} | {cell(r_)} |")
    add("")


def parse_loss(path):
    """sroce_integrity's "ok: N ops in S s" and the counters line in-vm.sh
    appends for sroce: {"secs": S, "probes": n, "timeouts": n, "resent": n},
    or None when the run did not pass."""
    try:
        text = open(path, errors="replace").read()
    except OSError:
        return None
    m = re.search(r"^ok: \d+ ops in ([0-9.]+) s, 0 error", text, re.M)
    if not m:
        return None
    out = {"secs": float(m.group(1)), "probes": None, "timeouts": None, "resent": None}
    m = re.search(r"tail_probes (\d+), retrans_timeouts (\d+), retrans_pkts (\d+)", text)
    if m:
        out["probes"], out["timeouts"], out["resent"] = (int(x) for x in m.groups())
    return out


def parse_mp_posts(path):
    """sroce_mp_rate's receive WRs posted per received packet (its
    "recv_posts P packets N posts_per_packet X" line), or None."""
    try:
        text = open(path, errors="replace").read()
    except OSError:
        return None
    m = re.search(r"^recv_posts (\d+) packets (\d+) ", text, re.M)
    return int(m.group(1)) / int(m.group(2)) if m and int(m.group(2)) else None


def add_mp_rate_section(add, stat, fails, mp_posts):
    """sroce_mp_rate: the receive rate and the receive posts per packet,
    ordinary receives (sroce, rxe) against multi-packet ones (sroce)."""
    cases = (("sroce", "mp_rate_plain"), ("sroce", "mp_rate_mp"), ("rxe", "mp_rate_plain"))
    got = {c: stat((c[0], c[1], 64, 1)) for c in cases}
    if not any(got.values()) and not any(fails.get((d, t, 64, 1)) for d, t in cases):
        return
    posts = {c: statistics.median(mp_posts[(c[0], c[1], 64, 1)]) if mp_posts.get((c[0], c[1], 64, 1)) else None
             for c in cases}
    add("### Receiving: ordinary receive WRs against multi-packet WRs")
    add("")
    add("`tests/progs/sroce_mp_rate.c`: one RC QP, 64-byte SENDs, up to 128 outstanding, posted 16 at a")
    add("time, every 16th signaled. The receiving QP takes them into ordinary receive WRs of 64 bytes")
    add("(256 posted, each reposted as its completion is polled), or into multi-packet WRs of 1 MiB")
    add("with 4 KiB alignment (issue 19's Example B, `Documentation/mp-wr.md`: 256 packets a WR; 4")
    add("posted, each reposted on its `CONSUMED` completion). Every message's length and number and")
    add("every 32nd message's bytes are checked. Received messages per second over the middle of the")
    add("run, in millions, and the receive WRs posted (`ibv_post_recv`) per received packet over the")
    add("same time. rxe has no multi-packet receive.")
    add("")
    add("| receives | driver | message rate | receive posts per packet | runs ok |")
    add("|---|---|---:|---:|---|")
    names = {"mp_rate_plain": "ordinary, 64 B each", "mp_rate_mp": "multi-packet, 1 MiB / 4 KiB"}

    def rate(x):
        return "-" if x is None else f"{x[0]:.4f} Mpps [{x[1]:.4f}-{x[2]:.4f}]"

    def per(v):
        return "-" if v is None else f"{v:.4f}"
    for c in cases:
        x = got[c]
        n = x[3] if x else 0
        add(f"| {names[c[1]]} | {c[0]} | {rate(x)} | {per(posts[c])} | {n}/{n + fails.get((c[0], c[1], 64, 1), 0)} |")
    pl, mp = ("sroce", "mp_rate_plain"), ("sroce", "mp_rate_mp")
    if got[pl] and got[mp]:
        fewer = f"{posts[pl] / posts[mp]:.0f}x fewer" if posts[pl] and posts[mp] else "-"
        add(f"| multi-packet / ordinary | sroce | {got[mp][0] / got[pl][0]:.2f}x | {fewer} | |")
    rx = ("rxe", "mp_rate_plain")
    if got[mp] and got[rx]:
        add(f"| sroce multi-packet / rxe ordinary | | {got[mp][0] / got[rx][0]:.2f}x | | |")
    add("")


def parse_column(path):
    """sroce_bench_column's result: {"rate": columns/s, "bind_us": the
    window's bind or None}, or None."""
    try:
        lines = open(path, errors="replace").read().splitlines()
    except OSError:
        return None
    out = {"rate": None, "bind_us": None, "wrs": None}
    for i, line in enumerate(lines):
        m = re.match(r"bind: ([0-9.]+) us", line)
        if m:
            out["bind_us"] = float(m.group(1))
        m = re.search(r"(\d+) SGE\(s\) per WR, (\d+) WR\(s\) per column", line)
        if m:
            out["wrs"] = (int(m.group(1)), int(m.group(2)))
        if line.startswith("#rows") and i + 1 < len(lines):
            f = lines[i + 1].split()
            try:
                out["rate"] = float(f[3])
            except (IndexError, ValueError):
                return None
    return out if out["rate"] is not None else None


def parse_perftest(path, test, bytes_):
    """The result row of a perftest client's output, as a dict, or None.

    Bandwidth: bytes, iterations, BW peak, BW average [MB/sec], MsgRate [Mpps].
    Latency: bytes, iterations, t_min, t_max, t_typical, t_avg, t_stdev,
    99%, 99.9% (TSC cycles: in-vm.sh passes -C).
    The row is the last line whose first two fields are integers and whose
    first is the message size, after the matching header line."""
    try:
        text = open(path, errors="replace").read()
    except OSError:
        return None
    lat = test in LAT_TESTS
    header = None
    row = None
    for line in text.splitlines():
        s = line.strip()
        if s.startswith("#bytes"):
            header = s
            continue
        if header is None:
            continue
        f = s.split()
        if len(f) < 5 or not f[0].isdigit() or not f[1].isdigit() or int(f[0]) != bytes_:
            continue
        row = (header, f)
    if row is None:
        return None
    header, f = row

    def num(x):
        try:
            v = float(x)
        except ValueError:
            return None
        return v if v == v and v not in (float("inf"), float("-inf")) else None

    if lat:
        if "t_typical" not in header or len(f) < 6:
            return None
        # in-vm.sh runs the latency tests with -C; perftest 4.5 still
        # labels the columns [usec], so the unit cannot come from the header.
        unit = "cycles"
        return {"iters": int(f[1]), "typical": num(f[4]), "avg": num(f[5]), "unit": unit}
    if "BW average" not in header or len(f) < 5:
        return None
    return {"iters": int(f[1]), "bw": num(f[3]), "rate": num(f[4])}


def read_kv(path):
    kv = {}
    if os.path.exists(path):
        for line in open(path):
            k, _, v = line.rstrip("\n").partition(" ")
            kv.setdefault(k, v)
            if k == "mtu":
                kv["mtu " + v.split()[0]] = v.split()[-1]
    return kv


def fmt(v, lat):
    if v is None:
        return "-"
    if lat:
        return f"{v:.0f}" if v >= 100 else f"{v:.1f}"
    return f"{v:.1f}" if v < 100 else f"{v:.0f}"


def main():
    run, docdir = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
    vm = os.path.join(run, "vm")
    if not os.path.exists(os.path.join(vm, "runs.tsv")):
        vm = run
    machine = read_kv(os.path.join(vm, "machine.txt"))
    host = read_kv(os.path.join(run, "host.txt"))
    tsc = None
    try:
        tsc = float(machine.get("tsc_mhz", ""))
    except ValueError:
        pass

    # (driver, test, bytes, qps) -> list of values; failures counted apart.
    vals, fails, binds, col_wrs, loss_ctrs, mp_posts = {}, {}, {}, {}, {}, {}
    for line in open(os.path.join(vm, "runs.tsv")):
        f = line.rstrip("\n").split("\t")
        if len(f) < 7:
            continue
        drv, test, bytes_, qps, _run, status, raw = f[:7]
        key = (drv, test, int(bytes_), int(qps))
        if test in LOSS_TESTS:
            r = parse_loss(os.path.join(vm, raw)) if status == "0/0" else None
            if r is None:
                fails[key] = fails.get(key, 0) + 1
            else:
                vals.setdefault(key, []).append(r["secs"])
                if r["probes"] is not None:
                    loss_ctrs.setdefault(key, []).append((r["probes"], r["timeouts"], r["resent"]))
            continue
        if test in COLUMN_TESTS:
            r = parse_column(os.path.join(vm, raw)) if status == "0/0" else None
        else:
            r = parse_perftest(os.path.join(vm, raw), test, int(bytes_)) if status == "0/0" else None
        v = None
        if r is not None and test in COLUMN_TESTS:
            v = r["rate"] if r["rate"] and r["rate"] > 0 else None
            if r["wrs"]:
                col_wrs.setdefault((test, int(bytes_)), set()).add(r["wrs"])
            if v is not None and r["bind_us"] is not None:
                binds.setdefault(key, []).append(r["bind_us"])
        elif r is not None:
            if test in LAT_TESTS:
                v = r["typical"]
                if v is not None and r["unit"] == "cycles":
                    v = v / tsc if tsc else None
            else:
                v = r["rate"] if test in POST_TESTS + MP_TESTS else r["bw"]
                if v is not None and v <= 0:
                    v = None  # perftest printed a row but measured nothing
                if v is not None and test in MP_TESTS:
                    per = parse_mp_posts(os.path.join(vm, raw))
                    if per is None:
                        v = None
                    else:
                        mp_posts.setdefault(key, []).append(per)
        if v is None:
            fails[key] = fails.get(key, 0) + 1
        else:
            vals.setdefault(key, []).append(v)

    cases = []
    for test in BW_TESTS:
        for s in (64, 4096, 65536):
            cases.append((test, s, 1))
        for q in (2, 4, 8):
            cases.append((test, 4096, q))
    for test in LAT_TESTS:
        cases.append((test, 8, 1))

    def stat(key):
        v = vals.get(key, [])
        if not v:
            return None
        return statistics.median(v), min(v), max(v), len(v)

    rows = []
    for test, s, q in cases:
        a, b = stat(("sroce", test, s, q)), stat(("rxe", test, s, q))
        if a is None and b is None and not fails.get(("sroce", test, s, q)) and not fails.get(("rxe", test, s, q)):
            continue  # not run (a filtered run)
        rows.append((test, s, q, a, b))

    lines = []
    add = lines.append
    add("# Benchmarks: sroce against rdma_rxe")
    add("")
    add("Generated by `make bench` (scripts/bench.sh, scripts/bench/in-vm.sh, scripts/bench/report.py)")
    add(f"on {host.get('date', '?')}, from commit `{host.get('commit', '?')}`. Reproduce with:")
    add("")
    add("```sh")
    add(host.get("command", "make bench"))
    add("```")
    add("")
    if host.get("filter", ".") != ".":
        add(f"**Partial run:** only the cases matching `{host.get('filter')}` (`--filter`); run `make bench` for")
        add("the whole table.")
        add("")
    if host.get("recovered"):
        add("**Rebuilt from the run's log:** a path bug (fixed since) kept in-vm.sh's raw files out of")
        add("vm-run's output folder; the table was rebuilt from each run's result row in the VM's")
        add("output.log (the same numbers perftest printed) and the TSC frequency from its dmesg.")
        add("")
    add("## Machine")
    add("")
    add(f"- Host: {host.get('nproc', '?')} CPUs, {host.get('cpu', '?')}; load average at the start "
        f"{host.get('load', '?')} (the build machine is shared with other jobs).")
    if host.get("vm_lock", "").strip():
        add("- The VM waited for the machine's VM lock and ran alone among VMs (other jobs still ran).")
    else:
        add("- The VM ran without the machine's VM lock, concurrently with other agents' VM runs on the same")
        add("  two cores: the figures are noisy; the ratios come from interleaved runs.")
    add(f"- Guest: one qemu VM, TCG (no KVM), `-cpu max -smp 2`, {machine.get('nproc', '?')} vCPUs "
        f"({machine.get('cpu', '?')}), kernel {machine.get('kernel', '?')}, perftest {machine.get('perftest', '?')}.")
    if "sroce_params" in machine:
        add(f"- sroce module parameters: `{machine['sroce_params'].strip() or '(none)'}`.")
    if "sq_pollers" in machine:
        n = machine["sq_pollers"].strip()
        add(f"- SQ poller threads running: {n}" + (" (doorbell mode)." if n == "0" else "."))
    if "icrc_limit_mb_s_two_cpus" in machine:
        add(f"- The physical limit this boot measured at load (`<debugfs>/sroce/icrc`): memcpy "
            f"{machine.get('icrc_ns_per_4k_memcpy', '?')} ns and the ICRC ({machine.get('icrc_impl', '?')}) "
            f"{machine.get('icrc_ns_per_4k_accel') if machine.get('icrc_impl', 'crc32_le') != 'crc32_le' else machine.get('icrc_ns_per_4k_table', '?')} ns "
            f"per 4 KiB; each payload byte is copied and CRCed by both ends, so one CPU doing all of it moves at "
            f"most {machine['icrc_limit_mb_s_one_cpu']} MB/s and two CPUs splitting it "
            f"{machine['icrc_limit_mb_s_two_cpus']} MB/s.")
    add(f"- ksoftirqd: {machine.get('ksoftirqd', '?')}; server pinned to vCPU 0, client to vCPU 1.")
    add(f"- Active MTU: sroce {machine.get('mtu sroce1', '?')}, rxe {machine.get('mtu rxe1', '?')} "
        "(veth MTU 9000).")
    add(f"- Runs per figure: {host.get('runs', '?')}, interleaved (sroce, rxe, sroce, rxe, ...); bandwidth "
        f"runs `-D {host.get('duration', '?')} -f 1`, latency runs `-n {host.get('lat_iters', '?')}`.")
    add("")
    add("## Topology")
    add("")
    add("Both drivers run as two hosts on their own veth pair (MTU 9000), server on one end, client on")
    add("the other; every packet crosses the veth and the IP stack. sroce: namespaces `h1` and `h2`. rxe")
    add("on 6.1 works only in the initial namespace (its UDP socket and its route look-ups are there), so")
    add("its two devices are on `veth-ra`/`veth-rb` in init_net, with policy routes that send the traffic")
    add("between their two addresses over the veth instead of the local shortcut. Neither takes rxe's")
    add("same-device loopback. perftest: `-F -u 18`, IPv4 GIDs, no rdma_cm; the server is pinned to vCPU 0,")
    add("the client to vCPU 1, and the ksoftirqd threads run at SCHED_FIFO 50 (see Latency below).")
    add("")
    add("## Results")
    add("")
    add("Median of the runs, with the spread (min-max) below it in brackets. Bandwidth is perftest's")
    add("\"BW average\" in MB/s (10^6 bytes); latency is \"t_typical\" (the median exchange) in µs, taken")
    add("in TSC cycles (`-C`) and converted with the guest kernel's TSC calibration, because perftest's")
    add("own clock estimate fails under TCG. Ratio: sroce / rxe (above 1 is better for bandwidth, below 1")
    add("is better for latency). A failed run is counted in the last column and left out of the median.")
    add("")
    add("| test | size | QPs | sroce | rxe | sroce / rxe | runs ok (sroce, rxe) |")
    add("|---|---:|---:|---:|---:|---:|---|")
    for test, s, q, a, b in rows:
        lat = test in LAT_TESTS
        unit = "µs" if lat else "MB/s"

        def cell(x):
            if x is None:
                return "-"
            return f"{fmt(x[0], lat)} {unit} [{fmt(x[1], lat)}-{fmt(x[2], lat)}]"

        ratio = f"{a[0] / b[0]:.2f}" if a and b and b[0] else "-"
        sz = f"{s // 1024} KiB" if s >= 1024 else f"{s} B"
        na = a[3] if a else 0
        nb = b[3] if b else 0
        ok = f"{na}/{na + fails.get(('sroce', test, s, q), 0)}, {nb}/{nb + fails.get(('rxe', test, s, q), 0)}"
        add(f"| {test} | {sz} | {q} | {cell(a)} | {cell(b)} | {ratio} | {ok} |")
    add("")

    post = [(t, stat(("sroce", t, 64, 1)), stat(("rxe", t, 64, 1))) for t in POST_TESTS]
    if any(a or b for _, a, b in post):
        add("### Posting: `ibv_post_send`, the `ibv_wr_*` builders and the interface families")
        add("")
        add("`tests/progs/sroce_post_rate.c`: one RC QP, 64-byte RDMA WRITEs, up to 128 outstanding, posted")
        add("16 at a time (one `ibv_post_send` chain, one `ibv_wr_start` .. `ibv_wr_complete`, or 16")
        add("`write_pending` of an unsignalled and a signalled RDMA family table and one `flush`), every")
        add("16th signaled; completed WRITEs per second over the middle of the run, in millions. rxe's")
        add("builders are librxe's; rxe has no families.")
        add("")
        add("| posting | sroce | rxe | sroce / rxe |")
        add("|---|---:|---:|---:|")
        names = {"post_rate_post": "`ibv_post_send`", "post_rate_wr": "`ibv_wr_*`",
                 "post_rate_family": "families (`write_pending` + `flush`)"}
        for t, a, b in post:
            def c(x):
                return "-" if x is None else f"{x[0]:.3f} Mpps [{x[1]:.3f}-{x[2]:.3f}]"
            ratio = f"{a[0] / b[0]:.2f}" if a and b and b[0] else "-"
            add(f"| {names[t]} | {c(a)} | {c(b)} | {ratio} |")
        add("")

    add_mp_rate_section(add, stat, fails, mp_posts)

    col_rows = [(rows, t, stat(("sroce", t, rows * 8, 1)), stat(("rxe", t, rows * 8, 1)))
                for rows in COLUMN_ROWS for t in COLUMN_TESTS]
    col_rows = [x for x in col_rows if x[2] or x[3] or any(
        fails.get((d, x[1], x[0] * 8, 1)) for d in ("sroce", "rxe"))]
    if col_rows:
        add("### Sending a matrix column: window, SGE list, packing")
        add("")
        add("`tests/progs/sroce_bench_column.c`: one column of a ROWS x ROWS matrix of 8-byte cells (one")
        add("MR) goes by RDMA WRITE to a contiguous buffer of the peer, three ways: **window**, a")
        add("non-contiguous memory window (seed 003, `srocedv_bind_mw`, an interleaved layout of ROWS")
        add("8-byte items, ROWS * 8 bytes apart) bound before the run with `IBV_ACCESS_LOCAL_WRITE`,")
        add("its key the lkey of one SGE {0, ROWS * 8} in one WRITE; **SGE list**, one SGE per cell, in as")
        add("many WRITEs as the QP's `max_send_sge` requires (the SGEs x WRs column), posted as one chain with")
        add("the last signaled; **pack**, a memcpy loop gathering the column into a registered buffer,")
        add("then one WRITE. 16 columns in flight, one signaled WR per column, the same column every time,")
        add("path MTU the ports' active MTU; completed columns per second over the middle of each run")
        add("(one process holding both ends, pinned to vCPU 1), and the microseconds per column that makes")
        add("(the median's inverse). The last column of every run is compared at the peer. rxe has no")
        add("non-contiguous windows, so its window rows are empty. \"vs pack\": the way's rate over the")
        add("pack way's, same driver and size.")
        add("")
        add("| rows | way | SGEs x WRs per column | sroce columns/s | sroce µs/column | sroce vs pack | rxe columns/s | rxe µs/column | rxe vs pack | runs ok (sroce, rxe) |")
        add("|---:|---|---|---:|---:|---:|---:|---:|---:|---|")
        names = {"column_mw": "window (lkey)", "column_sge": "SGE list", "column_pack": "pack (memcpy)"}

        def crate(x):
            if x is None:
                return "-"
            f = (lambda v: f"{v:.0f}" if v >= 100 else f"{v:.1f}")
            return f"{f(x[0])} [{f(x[1])}-{f(x[2])}]"

        def cus(x):
            return "-" if x is None else (f"{1e6 / x[0]:.0f}" if 1e6 / x[0] >= 100 else f"{1e6 / x[0]:.1f}")

        for rows, t, a, b in col_rows:
            pa = stat(("sroce", "column_pack", rows * 8, 1))
            pb = stat(("rxe", "column_pack", rows * 8, 1))
            va = f"{a[0] / pa[0]:.2f}" if a and pa else "-"
            vb = f"{b[0] / pb[0]:.2f}" if b and pb else "-"
            na = a[3] if a else 0
            nb = b[3] if b else 0
            fa = fails.get(("sroce", t, rows * 8, 1), 0)
            fb = fails.get(("rxe", t, rows * 8, 1), 0)
            okb = f"{nb}/{nb + fb}" if t != "column_mw" else "-"
            shapes = sorted(col_wrs.get((t, rows * 8), ()))
            shape = ", ".join(f"{sg} x {n}" for sg, n in shapes) or "-"
            add(f"| {rows} | {names[t]} | {shape} | {crate(a)} | {cus(a)} | {va} | {crate(b)} | {cus(b)} | {vb} | "
                f"{na}/{na + fa}, {okb} |")
        add("")
        bl = [(rows, statistics.median(binds[("sroce", "column_mw", rows * 8, 1)])) for rows in COLUMN_ROWS
              if binds.get(("sroce", "column_mw", rows * 8, 1))]
        if bl:
            add("Binding the window to the column, `srocedv_bind_mw` from the post to its completion (before")
            add("the timed part, not in the rate; each run rebinds it 9 times after the first bind and takes the")
            add("median; the median of the runs' medians): "
                + ", ".join(f"{us:.0f} µs at {rows} rows" for rows, us in bl)
                + ".")
            add("Sending a different column each time would add a rebind per column.")
            add("")

    loss_rows = [(p, stat(("sroce", f"loss_{p}", 300000, 1)), stat(("rxe", f"loss_{p}", 300000, 1)))
                 for p in LOSS_PCTS]
    if any(a or b for _, a, b in loss_rows):
        add("### Loss recovery")
        add("")
        add("`tests/progs/sroce_integrity`: 40 operations (WRITE, READ, SEND both ways and FETCH_ADD, up to")
        add("300 KB over several SGEs, every byte and every atomic result checked; seed 7) over rdma_cm")
        add("between the two hosts of each driver, with netem loss on both ends of the veth (QP1, the CM's")
        add("MADs, spared), timeout 16 (268 ms) and retry_cnt 7; the client's seconds. \"vs clean\" is the")
        add("driver's own clean median. sroce's counters are both devices' deltas, the median of the runs.")
        add("")
        add("| loss | sroce s | sroce vs clean | rxe s | rxe vs clean | sroce / rxe | sroce tail probes, timeouts, resent packets | runs ok (sroce, rxe) |")
        add("|---:|---:|---:|---:|---:|---:|---|---|")
        clean_a, clean_b = loss_rows[0][1], loss_rows[0][2]

        def secs(x):
            return "-" if x is None else f"{x[0]:.2f} [{x[1]:.2f}-{x[2]:.2f}]"

        def vs(x, c):
            return "-" if x is None or c is None or not c[0] else f"{x[0] / c[0]:.1f}x"
        for p, a, b in loss_rows:
            key_a = ("sroce", f"loss_{p}", 300000, 1)
            c = loss_ctrs.get(key_a, [])
            ctr = "-" if not c else ", ".join(str(int(statistics.median(v))) for v in zip(*c))
            ratio = f"{a[0] / b[0]:.2f}" if a and b and b[0] else "-"
            na, nb = (a[3] if a else 0), (b[3] if b else 0)
            fa, fb = fails.get(key_a, 0), fails.get(("rxe", f"loss_{p}", 300000, 1), 0)
            add(f"| {p}% | {secs(a)} | {vs(a, clean_a)} | {secs(b)} | {vs(b, clean_b)} | {ratio} | {ctr} | "
                f"{na}/{na + fa}, {nb}/{nb + fb} |")
        add("")

    have_plot = any(stat((d, t, sz, 1)) for d in ("sroce", "rxe") for t in BW_TESTS for sz in (64, 4096, 65536))
    if have_plot:
        add("![Bandwidth against message size, sroce and rxe](benchmarks.svg)")
        add("")
    add_profile_section(add, vm)
    add_qp_churn_section(add, vm)
    add_post_ir_section(add, vm)
    intf = os.path.join(run, "intf.tsv")
    if os.path.exists(intf):
        add_intf_section(add, intf)
    add("## Host micro-benchmark (the core's packet path, one core)")
    add("")
    micro = os.path.join(run, "micro.tsv")
    if os.path.exists(micro):
        add("`build/host/bench_packet` (tests/host/bench_packet.cpp, `make bench-host`): 4 KiB payloads,")
        add("best of interleaved rounds, on the build machine (not the VM):")
        add("")
        add("| path | MB/s | of memcpy |")
        add("|---|---:|---:|")
        what = {
            "memcpy": "memcpy of the payload",
            "crc32_le": "CRC-32 alone, slice-by-8 (Linux 6.1's crc32_le algorithm)",
            "zlib_crc32": "CRC-32 alone, zlib (reference)",
            "send": "send: headers + copy + ICRC (the core's path)",
            "send_fused": "send: headers + copy fused with the CRC",
            "recv": "receive: parse + ICRC check + place",
            "crc32_pclmul": "CRC-32 alone, PCLMUL folding (the kernel's crc32-pclmul technique)",
            "send_pclmul": "send with the PCLMUL CRC",
            "send_pclmul_fused": "send with the copy fused into the PCLMUL CRC",
        }
        for line in open(micro):
            f = line.split("\t")
            if len(f) < 4 or f[0] == "name":
                continue
            add(f"| {what.get(f[0], f[0])} | {float(f[2]):.0f} | {100 * float(f[3]):.1f}% |")
    else:
        add("(not run)")
    add("")
    # Hand-written analysis that stays valid across re-runs.
    notes = os.path.join(os.path.dirname(os.path.abspath(__file__)), "notes.md")
    if os.path.exists(notes):
        lines.append(open(notes).read().rstrip("\n"))
    open(os.path.join(docdir, "benchmarks.md"), "w").write("\n".join(lines) + "\n")

    if not have_plot:
        return
    # The plot: bandwidth (median, min-max bars) against size, 1 QP.
    dat = os.path.join(run, "plot.dat")
    with open(dat, "w") as out:
        idx = 0
        titles = []
        for test in BW_TESTS:
            for drv in ("sroce", "rxe"):
                out.write(f"# {drv} {test}\n")
                for s in (64, 4096, 65536):
                    st = stat((drv, test, s, 1))
                    if st:
                        out.write(f"{s} {st[0]} {st[1]} {st[2]}\n")
                out.write("\n\n")
                titles.append((idx, f"{drv} {test.replace('_', ' ')}", drv))
                idx += 1
    gp = os.path.join(run, "plot.gp")
    svg = os.path.join(docdir, "benchmarks.svg")
    with open(gp, "w") as g:
        g.write('set terminal svg size 820,480 dynamic font "sans,11" background "white"\n')
        g.write(f'set output "{svg}"\n')
        g.write('set title "Bandwidth against message size (1 QP, median and min-max of the runs)"\n')
        g.write('set xlabel "message size (bytes)"\nset ylabel "MB/s"\n')
        g.write("set logscale xy\nset xtics (\"64\" 64, \"4 KiB\" 4096, \"64 KiB\" 65536)\n")
        g.write("set xrange [40:110000]\nset key outside right\nset grid\n")
        styles = {"ib_send_bw": 7, "ib_write_bw": 5, "ib_read_bw": 9}
        parts = []
        for idx, title, drv in titles:
            test = BW_TESTS[idx // 2]
            color = "#c0392b" if drv == "sroce" else "#2c3e50"
            dash = 1 if drv == "sroce" else 2
            parts.append(f'"{dat}" index {idx} using 1:2:3:4 with yerrorlines lw 2 dt {dash} '
                         f'lc rgb "{color}" pt {styles[test]} title "{title}"')
        g.write("plot " + ", \\\n     ".join(parts) + "\n")
    subprocess.run(["gnuplot", gp], check=True)


if __name__ == "__main__":
    main()
