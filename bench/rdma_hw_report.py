#!/usr/bin/env python3
"""bench/rdma_hw.sh's table: one row per run, the rdma/udp ratios per size, perftest's limit.

Usage: rdma_hw_report.py WORK_DIR NODES "SIZE..." REPS CLK_TCK. Exit 1 if a run's nodes delivered
different histories (order hashes or counts differ) or a run's output is missing."""
import json
import re
import statistics
import sys
from pathlib import Path


def load(path):
    with open(path) as f:
        return json.load(f)


def run_row(work, transport, size, rep, nodes, clk_tck):
    name = f"{transport}-{size}-{rep}"
    tp = [load(work / f"tp-{name}-{n}.json") for n in range(1, nodes + 1)]
    bench_cpu = sum(float((work / f"tp-{name}-{n}.cpu").read_text()) for n in range(1, nodes + 1))
    daemon_cpu = int((work / f"tp-{name}.daemon-ticks").read_text()) / clk_tck
    delivered = sum(r["messages_delivered"] for r in tp)
    lat = load(work / f"lat-{name}-{nodes}.json")
    return {
        "transport": transport, "size": size, "rep": rep,
        "msgs": statistics.mean(r["msgs_per_s"] for r in tp),
        "mb": statistics.mean(r["mb_per_s"] for r in tp),
        "cpu_us": (daemon_cpu + bench_cpu) * 1e6 / delivered if delivered else float("nan"),
        "p50": lat.get("p50_us", float("nan")), "p99": lat.get("p99_us", float("nan")),
        "same": len({r["order_hash"] for r in tp}) == 1 and len({r["messages_delivered"] for r in tp}) == 1,
    }


def perftest(work, kind, size):
    """The average of perftest's duration run (--report_gbits: Gb/s; latency: µs), or "-".

    Its table: a header of names apart by two spaces or more ("#bytes", "BW average[Gb/sec]",
    "t_avg[usec]"...), then a row of numbers that starts with the size."""
    path = work / f"perf-{kind}-{size}.txt"
    if not path.exists():
        return "-"
    names, want = None, ("BW average[Gb/sec]",) if kind == "bw" else ("t_avg[usec]", "t_typical[usec]")
    for line in path.read_text(errors="replace").splitlines():
        if "#bytes" in line:
            names = re.split(r"\s{2,}", line.strip())
        elif names and line.split() and line.split()[0] == str(size):
            values = line.split()
            for name in want:
                if name in names and names.index(name) < len(values):
                    return values[names.index(name)]
    return "-"


def ratio(a, b):
    return f"{a / b:.2f}" if b else "-"


def main():
    work, nodes, sizes, reps, clk_tck = Path(sys.argv[1]), int(sys.argv[2]), sys.argv[3].split(), int(sys.argv[4]), int(sys.argv[5])
    rows, ok = [], True
    for size in sizes:
        for rep in range(1, reps + 1):
            for transport in ("rdma", "udp"):
                try:
                    rows.append(run_row(work, transport, int(size), rep, nodes, clk_tck))
                except (OSError, ValueError, KeyError) as e:
                    print(f"rdma_hw: run {transport}-{size}-{rep}: no result ({e})")
                    ok = False
    print(f"\n{nodes} nodes, all sending (msgs/s and MB/s delivered at each node, mean over nodes; CPU per delivered "
          f"message: every daemon and bench, user + system, over every node's deliveries); latency: node {nodes} "
          "alone sending at a fixed rate.\n")
    print("| transport | size B | rep | msgs/s | MB/s | CPU µs/msg | p50 µs | p99 µs | histories equal |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---|")
    for r in rows:
        ok = ok and r["same"]
        print(f"| {r['transport']} | {r['size']} | {r['rep']} | {r['msgs']:.0f} | {r['mb']:.1f} | {r['cpu_us']:.2f} | "
              f"{r['p50']:.0f} | {r['p99']:.0f} | {'yes' if r['same'] else 'NO'} |")
    print("\n| size B | rdma/udp msgs/s | rdma/udp CPU per msg | rdma/udp p50 | rdma/udp p99 | ib_send_bw Gb/s (RC) | ib_send_lat µs (RC) |")
    print("|---:|---:|---:|---:|---:|---:|---:|")
    for size in sizes:
        by = {t: [r for r in rows if r["size"] == int(size) and r["transport"] == t] for t in ("rdma", "udp")}
        if not by["rdma"] or not by["udp"]:
            continue
        mean = {t: {k: statistics.mean(r[k] for r in by[t]) for k in ("msgs", "cpu_us", "p50", "p99")} for t in by}
        perf = (perftest(work, "bw", size), perftest(work, "lat", size))
        print(f"| {size} | {ratio(mean['rdma']['msgs'], mean['udp']['msgs'])} | {ratio(mean['rdma']['cpu_us'], mean['udp']['cpu_us'])} | "
              f"{ratio(mean['rdma']['p50'], mean['udp']['p50'])} | {ratio(mean['rdma']['p99'], mean['udp']['p99'])} | {perf[0]} | {perf[1]} |")
    if not any((work / f"perf-bw-{size}.txt").exists() for size in sizes):
        print("\nperftest is not installed (apt-get install perftest): no limit beside rtotem's figures.")
    print(f"\nrdma_hw: {'PASS' if ok else 'FAIL'}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
