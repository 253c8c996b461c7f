#!/usr/bin/env python3
"""bench/compare's arithmetic: the watch-mode checks the harness polls, and the markdown report.

  report.py watched N FILE...          exit 0 once every watcher has seen a group of N members
  report.py detected N T0_NS FILE...   for the survivors of node N's kill at T0: "node ms" lines
                                       (from the kill to the group change without node N); exit 1
                                       while one of them has not seen it yet
  report.py allocs S1 S2 S3 LABEL      rtotemd's heap allocations per delivered message between
                                       stats samples S1 and S2 (S3, taken right after S2, measures
                                       what asking costs); one results line, or none without the
                                       counter
  report.py costs C1 C2 N1 N2 LABEL    a throughput run's costs between CPU samples C1 and C2
                                       (compare.sh's cpu_sample) and node 1's counters N1 and N2
                                       taken with them (node1_count; none for raw): one results
                                       line, or none when a process went meanwhile
  report.py report OUT_DIR             OUT_DIR/results.jsonl + meta.txt -> markdown on stdout

A row's value per run is the mean over its nodes (throughput: what each node delivered per second;
latency and idle: the sender's own samples, per sender; failure: the slowest survivor); over repetitions, the median and
the range. "best" compares each system's best configuration for that row, as issue 6 asks; the
baseline (rtotem-base, another rtotem build) is no part of rtotem's best, and is compared with it
in a column of its own.
"""
import json
import re
import statistics
import sys
from collections import defaultdict
from pathlib import Path


def watch_lines(path):
    path = Path(path)
    if not path.exists():
        return  # the watcher has not started yet
    for line in path.read_text().splitlines():
        try:
            event = json.loads(line)
        except json.JSONDecodeError:
            continue  # a line cut short by the kill
        if event.get("event") == "group":
            yield event


def node_of(path):
    return int(re.search(r"watch-(\d+)\.jsonl$", str(path)).group(1))


def watched(n, files):
    return all(any(len(e["members"]) == n for e in watch_lines(f)) for f in files)


def detected(n, t0, files):
    found = []
    for f in files:
        if node_of(f) == n:
            continue  # the killed node's own watcher
        change = next((e for e in watch_lines(f) if e["realtime_ns"] > t0 and
                       any(left[0] == n and left[2] == "nodedown" for left in e["left"])), None)
        if change is None:
            return None
        found.append((node_of(f), (change["realtime_ns"] - t0) / 1e6))
    return found


def allocs(files, label):
    try:
        s1, s2, s3 = (json.loads(Path(f).read_text()) for f in files)
    except (OSError, json.JSONDecodeError):
        return
    a = [s["process"]["heap_allocations"] for s in (s1, s2, s3)]
    if None in a:
        return  # a daemon built without the counter
    delivered = s2["protocol"]["messages_delivered"] - s1["protocol"]["messages_delivered"]
    counted = max(0, (a[1] - a[0]) - (a[2] - a[1]))
    print(f'{{{label}, "allocs": {counted}, "delivered": {delivered}}}')


def cpu_sample(path):
    """compare.sh's cpu_sample: (time s, {(kind, node): CPU seconds or None})."""
    lines = Path(path).read_text().split("\n")
    t, clk = lines[0].split()
    cpu = {}
    for line in filter(None, lines[1:]):
        kind, node, ticks = line.split()
        cpu[(kind, int(node))] = None if ticks == "-" else int(ticks) / int(clk)
    return float(t), cpu


def node1_counts(path):
    """compare.sh's node1_count: {counter: value}, without those a build lacks; {} without any."""
    try:
        text = Path(path).read_text()
    except OSError:
        return {}  # raw: no daemon
    if text.lstrip().startswith("{"):  # rtotemctl --json stats
        try:
            s = json.loads(text)
        except json.JSONDecodeError:
            return {}
        found = {"delivered": s.get("protocol", {}).get("messages_delivered"),
                 "tx_calls": s.get("link", {}).get("tx_calls"), "tx_packets": s.get("link", {}).get("tx_packets")}
        return {k: v for k, v in found.items() if v is not None}
    m = re.search(r"\.dispatched \(u64\) = (\d+)", text)  # corosync-cmapctl, the client's connection
    return {"delivered": int(m.group(1))} if m else {}


def costs(cpu_files, count_files, label):
    try:
        (t1, c1), (t2, c2) = (cpu_sample(f) for f in cpu_files)
    except (OSError, ValueError):
        return
    if c1.keys() != c2.keys() or None in c1.values() or None in c2.values():
        return  # a daemon or client went (or was never found): the window is not whole
    row = {"window_s": round(t2 - t1, 6)}
    for kind in ("daemon", "client"):
        row[f"{kind}_cpu_s"] = [round(c2[k] - c1[k], 3) for k in sorted(c1) if k[0] == kind]
    n1, n2 = (node1_counts(f) for f in count_files)
    for key in n1.keys() & n2.keys():
        row[f"node1_{key}"] = n2[key] - n1[key]
    print(f'{{{label}, {json.dumps(row)[1:]}')


# ---------------------------------------------------------------- the report

def config_name(r):
    if r["system"] == "raw":
        return "raw UDP, sendmmsg/recvmmsg (a datagram per entry)"
    crypto = ", crypto" if r["crypto"] == "on" else ""
    mtu = f', netmtu {r["netmtu"]}' if r.get("netmtu") else ""
    system = {"rtotem-base": f'rtotem baseline {r.get("build") or "?"}',
              "rtotem-cpg": "rtotem, cpg-bench on drop-in libcpg,"}.get(r["system"], r["system"])
    return f'{system} {r["transport"]}{crypto}{mtu} ({r["sched_seen"] or r["sched"]})'


def noisy_name(r):
    """config_name, and whether the run had --noise's load beside it: the cost tables' rows."""
    return config_name(r) + (", under noise" if r.get("noise") == "on" else "")


SYSTEM_ORDER = {"rtotem": 0, "rtotem-cpg": 1, "rtotem-base": 2, "corosync": 3}


def size_name(b):
    if b == 0:
        return "–"
    if b >= 1 << 20 or b == 1047552:
        return f"{b / (1 << 20):.0f} MiB" if b % (1 << 20) == 0 else f"{b / 1024:.0f} KiB"
    return f"{b // 1024} KiB" if b >= 1024 and b % 1024 == 0 else f"{b} B"


def per_run(results, row, value):
    """{(nodes, bytes, sender, noise): {config: [value per repetition]}}, and the runs whose check
    failed. sender: the node that sent, for the rows with one sender (latency, idle); else 0. noise:
    "on" for a run under --noise's load, else "off"."""
    runs = defaultdict(list)
    for r in results:
        if r["row"] == row:
            runs[(r["nodes"], r["bytes"], r.get("sender", 0), r.get("noise", "off"), config_name(r), r["rep"],
                  r["system"])].append(r)
    table = defaultdict(lambda: defaultdict(list))
    systems = {}
    bad = []
    for (nodes, size, sender, noise, config, rep, system), rs in sorted(runs.items()):
        problem = check(row, rs, nodes)
        if problem:
            from_ = f" from node {sender}" if sender else ""
            under = " under noise" if noise == "on" else ""
            bad.append(f"{row} N={nodes} {size_name(size)}{from_}{under} {config} rep {rep}: {problem}")
            continue
        table[(nodes, size, sender, noise)][config].append(value(rs))
        systems[config] = system
    return table, systems, bad


def senders_own(key):
    """A one-sender row's value: the sender's own samples (node 1's, in results without a sender)."""
    return lambda rs: next(r[key] for r in rs if r["client_node"] == rs[0].get("sender", 1))


def check(row, rs, nodes):
    if row == "idlecpu":
        return None if rs[0]["ok"] else "a daemon went during the idle sample"
    if row == "failure":
        return None if len(rs) == nodes - 1 else f"{len(rs)} of {nodes - 1} survivors saw node {nodes} go"
    if len(rs) != nodes or not all(r["ok"] for r in rs):
        return f"{sum(r['ok'] for r in rs)} of {nodes} clients finished and passed their checks"
    if rs[0]["system"] == "raw":
        return None  # no order to check: the row is the wire's limit
    if len({r["order_hash"] for r in rs}) != 1 or len({r["messages_delivered"] for r in rs}) != 1:
        return "nodes delivered different sequences (order hash or count differs)"
    if any(r["ring_changes"] for r in rs):
        return "the ring changed during the run"
    return None


def cell(values, fmt):
    med = statistics.median(values)
    if len(values) == 1:
        return fmt(med)
    return f"{fmt(med)} ({fmt(min(values))}–{fmt(max(values))})"


def best(table_row, systems, system, higher_is_better):
    medians = [statistics.median(v) for c, v in table_row.items() if systems[c] == system and v]
    if not medians:
        return None
    return max(medians) if higher_is_better else min(medians)


def ratio_text(table_row, systems, higher_is_better, other="corosync", ours="rtotem"):
    ours, theirs = (best(table_row, systems, s, higher_is_better) for s in (ours, other))
    if ours is None or theirs is None or theirs == 0:
        return "–"
    return f"**{ours / theirs:.2f}**"


def table(title, table_, systems, fmt, higher_is_better, note):
    configs = sorted(systems, key=lambda c: (SYSTEM_ORDER.get(systems[c], 3), c))
    # Ratio columns beyond rtotem / corosync, each only when its rows ran.
    others = [(s, name) for s, name in (("rtotem-base", "baseline best"), ("raw", "raw UDP"))
              if s in systems.values()]
    # The same client binary (cpg-bench) on both: rtotem through the drop-in libcpg against Corosync.
    cpg = "rtotem-cpg" in systems.values()
    by_sender = any(sender for (_, _, sender, _) in table_)
    by_noise = any(noise == "on" for (_, _, _, noise) in table_)
    lines = [f"### {title}", "", note, "",
             "| N | size | " + ("sender | " if by_sender else "") + ("noise | " if by_noise else "") +
             " | ".join(configs) +
             " | rtotem best / corosync best |" +
             ("" if not cpg else " rtotem via libcpg / corosync best |") +
             "".join(f" rtotem best / {name} |" for _, name in others),
             "|---|---:|" + ("---:|" if by_sender else "") + ("---|" if by_noise else "") +
             "---:|" * (len(configs) + 1 + cpg + len(others))]
    for key in sorted(table_):
        nodes, size, sender, noise = key
        row = table_[key]
        cells = [cell(row[c], fmt) if row.get(c) else "–" for c in configs]
        lines.append(f"| {nodes} | {size_name(size)} | " + (f"{sender} | " if by_sender else "") +
                     (f"{noise} | " if by_noise else "") + " | ".join(cells) +
                     f" | {ratio_text(row, systems, higher_is_better)} |" +
                     ("" if not cpg else f" {ratio_text(row, systems, higher_is_better, ours='rtotem-cpg')} |") +
                     "".join(f" {ratio_text(row, systems, higher_is_better, s)} |" for s, _ in others))
    return lines + [""]


def report(out):
    out = Path(out)
    results = [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines() if line.strip()]
    lines = ["## bench/compare", "", "```", (out / "meta.txt").read_text().rstrip(), "```", ""]
    bad = []

    def mean_over_nodes(key):
        return lambda rs: statistics.mean(r[key] for r in rs)

    t, systems, b = per_run(results, "throughput", mean_over_nodes("msgs_per_s"))
    bad += b
    lines += table("Throughput: messages/s delivered at each node (all nodes sending)", t, systems,
                   lambda v: f"{v:,.0f}", True,
                   "Each node's deliveries per second (total order, all senders), mean over the "
                   "nodes; median (range) over repetitions. Every node's order hash and count agreed (raw UDP: "
                   "no order to check; what each node received from the others, times N/(N-1)).")
    t, systems, _ = per_run(results, "throughput", mean_over_nodes("mb_per_s"))
    lines += table("Throughput: MB/s delivered at each node", t, systems, lambda v: f"{v:,.1f}", True,
                   "The same runs in 10^6 bytes per second.")
    for key, name in (("p50_us", "p50"), ("p99_us", "p99"), ("p999_us", "p99.9")):
        t, systems, b = per_run(results, "latency", senders_own(key))
        if key == "p50_us":
            bad += b
        lines += table(f"Latency {name}, µs (one node sends at a low rate, all nodes deliver)", t, systems,
                       lambda v: f"{v:,.0f}", False,
                       "Send-to-self-delivery at the sender, timed from the first mcast attempt; node 1 is "
                       "the ring's representative, node N is not; samples: " + samples_note(results, "latency") + ".")
    for key, name in (("p50_us", "median"), ("max_us", "max")):
        t, systems, b = per_run(results, "idle", senders_own(key))
        if key == "p50_us":
            bad += b
        if t:
            lines += table(f"Idle ring, {name} µs (each node in turn sends one 64 B message every 250 ms)", t,
                           systems, lambda v: f"{v:,.0f}", False,
                           "Send-to-self-delivery of a message sent on an idle ring: 250 ms apart, longer than "
                           "either system's token hold; samples: " + samples_note(results, "idle") + ".")
    t, systems, b = per_run(results, "linkfail", lambda rs: max(r["max_gap_us"] for r in rs) / 1e3)
    bad += b
    if t:
        lines += table("Link 0 failure: longest delivery gap, ms (two links)", t, systems, lambda v: f"{v:,.0f}", False,
                       "Node 1 sends 1 KiB messages at 1000/s for 9 s; node N's link 0 is cut at about 3 s of "
                       "the run and restored 3 s later; the longest time between two deliveries at the "
                       "slowest node. A run whose ring changed is listed under Runs left out.")
    t, systems, b = per_run(results, "linksteady", lambda rs: max(r["max_gap_us"] for r in rs) / 1e3)
    bad += b
    if t:
        lines += table("Two links, no failure: longest delivery gap, ms (the control)", t, systems,
                       lambda v: f"{v:,.0f}", False,
                       "The same load as the row above, in the same cluster just before it, with no cut: "
                       "the gap this machine's scheduling alone makes.")
    t, systems, b = per_run(results, "idlecpu", lambda rs: statistics.mean(rs[0]["cpu_us_per_s"]))
    bad += b
    if t:
        lines += table("Idle ring: CPU per daemon, µs per second", t, systems, lambda v: f"{v:,.0f}", False,
                       "No client: each daemon's CPU time over the sample (all threads), mean over the "
                       "daemons. What a cluster with nothing to say costs its nodes.")
    t, systems, b = per_run(results, "failure", lambda rs: max(r["detection_ms"] for r in rs))
    bad += b
    lines += table("Failure detection, ms (kill -9 of node N's daemon)", t, systems, lambda v: f"{v:,.0f}", False,
                   "From the kill to the group change at the slowest survivor; token 1000 ms and "
                   "consensus 1200 ms on both systems.")
    lines += cost_tables(results)
    lines += alloc_table(results)
    lines += ["### Runs left out", ""] + ([f"- {x}" for x in bad] if bad else ["None: every run passed its checks."])
    print("\n".join(lines))


def alloc_table(results):
    rows = defaultdict(lambda: [0, 0])
    for r in results:
        if r["row"] == "allocs":
            cell_ = rows[(r["nodes"], r["bytes"], noisy_name(r))]
            cell_[0] += r["allocs"]
            cell_[1] += r["delivered"]
    if not rows:
        return []
    lines = ["### rtotemd heap allocations per delivered message (node 1, mid-run)", "",
             "Counted by the daemon's allocation counter between two stats samples inside each "
             "throughput run (the sampling connection's own allocations taken off), summed over "
             "repetitions.", "", "| N | size | configuration | allocations | messages delivered | per message |",
             "|---|---:|---|---:|---:|---:|"]
    for (nodes, size, config), (a, d) in sorted(rows.items()):
        lines.append(f"| {nodes} | {size_name(size)} | {config} | {a:,} | {d:,} | {a / d if d else float('nan'):.6f} |")
    return lines + [""]


def passed_throughput_runs(results):
    """{(nodes, bytes, config, rep): the run's client lines}, for the throughput runs that passed."""
    runs = defaultdict(list)
    for r in results:
        if r["row"] == "throughput":
            runs[(r["nodes"], r["bytes"], noisy_name(r), r["rep"])].append(r)
    return {k: rs for k, rs in runs.items() if not check("throughput", rs, k[0])}


def cost_tables(results):
    """Per delivered message, from the "costs" lines of sample_costs and their throughput runs."""
    runs = passed_throughput_runs(results)
    cpu = defaultdict(lambda: defaultdict(list))  # (nodes, bytes, config) -> measure -> per rep
    system_of = {}  # config -> system
    checks = []
    for r in results:
        key = (r["nodes"], r["bytes"], noisy_name(r))
        rs = runs.get(key + (r["rep"],)) if r["row"] == "costs" else None
        if not rs:
            continue  # its run failed its checks (listed under "Runs left out")
        # Every node delivers the same sequence: node 1's count times N. Raw UDP has no daemon to
        # count: its clients' rates (over their whole runs) times the window.
        estimate = sum(x["msgs_per_s"] for x in rs) * r["window_s"]
        node1 = r.get("node1_delivered")
        delivered = node1 * r["nodes"] if node1 else estimate
        if delivered <= 0:
            continue
        if node1 and estimate > 0:
            checks.append(estimate / delivered)
        m = cpu[key]
        system_of[key[2]] = r["system"]
        daemon, client = sum(r["daemon_cpu_s"]), sum(r["client_cpu_s"])
        if r["daemon_cpu_s"]:
            m["daemon"].append(daemon / delivered * 1e6)
        m["client"].append(client / delivered * 1e6)
        m["total"].append((daemon + client) / delivered * 1e6)
        m["cores"].append((daemon + client) / r["window_s"])
        calls, packets = r.get("node1_tx_calls"), r.get("node1_tx_packets")  # rtotem only
        if node1 and calls is not None and packets is not None:
            m["tx_calls"].append(calls / node1)
            m["tx_packets"].append(packets / node1)
            if calls:
                m["batch"].append(packets / calls)
    if not cpu:
        return []

    def cells(m, measures, fmt):
        return " | ".join(cell(m[x], fmt) if m.get(x) else "–" for x in measures)

    order = sorted(cpu, key=lambda k: (k[0], k[1], SYSTEM_ORDER.get(system_of[k[2]], 3), k[2]))
    check_text = (f" (The clients' mean rates over their whole runs times the window would have given "
                  f"{min(checks):.2f}–{max(checks):.2f} of that count.)" if checks else "")
    lines = ["### Throughput cost: CPU time per delivered message, µs", "",
             "User + system CPU time (/proc/PID/stat, all threads) of the N daemons and, apart, of the N "
             "bench clients, between two samples in the middle of each throughput run, over the messages "
             "delivered meanwhile summed over the nodes: node 1's daemon's count times N (rtotem: "
             "protocol.messages_delivered; corosync: the bench client's IPC connection's `dispatched`; raw "
             f"UDP, no daemon: the clients' rates times the window).{check_text} Cores busy: daemons and "
             "clients together, CPU seconds per second of the window. Median (range) over repetitions.", "",
             "| N | size | configuration | daemons | clients | daemons + clients | cores busy |",
             "|---|---:|---|---:|---:|---:|---:|"]
    for key in order:
        lines.append(f"| {key[0]} | {size_name(key[1])} | {key[2]} | "
                     f"{cells(cpu[key], ('daemon', 'client', 'total'), lambda v: f'{v:,.2f}')} | "
                     f"{cells(cpu[key], ('cores',), lambda v: f'{v:.2f}')} |")
    sends = [k for k in order if cpu[k].get("tx_calls")]
    if sends:
        lines += ["", "### Throughput cost: rtotemd's sends per delivered message (node 1)", "",
                  "Node 1's link.tx_calls (sendmmsg calls) and link.tx_packets (datagrams) over its "
                  "protocol.messages_delivered, between the same two samples (rtotemctl stats). "
                  "Median (range) over repetitions.", "",
                  "| N | size | configuration | sendmmsg calls / message | datagrams / message | datagrams / call |",
                  "|---|---:|---|---:|---:|---:|"]
        for key in sends:
            lines.append(f"| {key[0]} | {size_name(key[1])} | {key[2]} | "
                         f"{cells(cpu[key], ('tx_calls', 'tx_packets', 'batch'), lambda v: f'{v:.3f}')} |")
    return lines + [""]


def samples_note(results, row):
    by_size = defaultdict(set)
    for r in results:
        if r["row"] == row and r["client_node"] == r.get("sender", 1) and "samples" in r:
            by_size[r["bytes"]].add(r["samples"])
    return "; ".join(f"{size_name(b)}: {min(s):,}–{max(s):,}" for b, s in sorted(by_size.items())) or "none"


def main(argv):
    if len(argv) >= 3 and argv[1] == "watched":
        return 0 if watched(int(argv[2]), argv[3:]) else 1
    if len(argv) >= 4 and argv[1] == "detected":
        found = detected(int(argv[2]), int(argv[3]), argv[4:])
        if found is None:
            return 1
        for node, ms in found:
            print(node, f"{ms:.1f}")
        return 0
    if len(argv) == 6 and argv[1] == "allocs":
        allocs(argv[2:5], argv[5])
        return 0
    if len(argv) == 7 and argv[1] == "costs":
        costs(argv[2:4], argv[4:6], argv[6])
        return 0
    if len(argv) == 3 and argv[1] == "report":
        report(argv[2])
        return 0
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
