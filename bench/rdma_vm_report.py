#!/usr/bin/env python3
"""The tables of bench/rdma_vm.sh from the VMs' output (bench/rdma_vm_node.sh's files).

Usage: rdma_vm_report.py VM_WORKDIR "SIZE..." UDP_TRANSPORT
Exit 1 if the nodes of a run delivered different histories (order hashes or counts), a node saw
FIFO violations, or the RDMA backend registered memory again after start-up.
"""
import json
import re
import sys
from pathlib import Path

NODES = 3
REPS = (1, 2)


def load(path):
    with open(path) as f:
        return json.load(f)


def run_results(vm, name):
    return [load(vm / f"node{n}" / f"{name}.json") for n in range(NODES)]


def mtu(vm, name):
    """The MTU rtotemd runs with, from its start-up line ("transport T on ..., mtu N")."""
    m = re.search(r"transport \S+ on .*, mtu (\d+)", (vm / "node0" / f"{name}.log").read_text())
    return m.group(1) if m else "?"


def verbs_row(vm, name):
    """Node 1's link counters over one run, per delivered message."""
    before, after = (load(vm / "node0" / f"{name}.{when}.json") for when in ("before", "after"))
    d = {k: after["link"][k] - before["link"][k] for k in after["link"]}
    delivered = after["protocol"]["messages_delivered"] - before["protocol"]["messages_delivered"]
    per = lambda a, b: f"{a / b:.2f}" if b else "-"
    mr = f"{before['link']['mr_registrations']} → {after['link']['mr_registrations']}"
    ok = before["link"]["mr_registrations"] == 1 and after["link"]["mr_registrations"] == 1
    errors = d["tx_completion_errors"] + d["rx_completion_errors"] + d["tx_errors"] + d["rx_errors"]
    return ok, (f"| {name} | {delivered} | {d['tx_packets']} | {per(d['tx_packets'], delivered)} | "
                f"{per(d['tx_packets'], d['tx_calls'])} | {per(d['tx_calls'], d['tx_packets'])} | "
                f"{per(d['tx_inline'], d['tx_packets'])} | {per(d['rx_posted'], delivered)} | "
                f"{per(d['rx_posted'], d['rx_post_calls'])} | {per(d['rx_packets'], d['rx_calls'])} | "
                f"{mr} | {errors} |")


def main():
    vm, sizes, udp = Path(sys.argv[1]), sys.argv[2].split(), sys.argv[3]
    good = True
    print("\nEmulated (qemu TCG without KVM on this host): functional numbers; only the same-run ratio means anything.\n")
    print(f"MTU rtotemd ran with: rdma {mtu(vm, f'rdma-{sizes[0]}-1')}, {udp} {mtu(vm, f'{udp}-{sizes[0]}-1')}\n")
    print("| payload B | run | transport | msgs/s delivered at node 1 / 2 / 3 | messages delivered | EAGAIN | order hashes equal |")
    print("|---:|---:|---|---:|---:|---:|---|")
    means = {}
    for size in sizes:
        for rep in REPS:
            for transport in ("rdma", udp):
                name = f"{transport}-{size}-{rep}"
                r = run_results(vm, name)
                hashes = {x["order_hash"] for x in r}
                counts = {x["messages_delivered"] for x in r}
                fifo = sum(x["fifo_violations"] for x in r)
                same = len(hashes) == 1 and len(counts) == 1 and fifo == 0
                good = good and same
                rates = [x["msgs_per_s"] for x in r]
                means.setdefault((size, transport), []).append(sum(rates) / NODES)
                print(f"| {size} | {rep} | {transport} | {' / '.join(f'{v:.0f}' for v in rates)} | "
                      f"{r[0]['messages_delivered']} | {sum(x['eagain'] for x in r)} | "
                      f"{'yes' if same else 'NO'} ({', '.join(sorted(hashes))}) |")
    print(f"\n| payload B | rdma msgs/s per node (run 1, run 2) | {udp} msgs/s per node (run 1, run 2) | rdma/{udp} |")
    print("|---:|---:|---:|---:|")
    for size in sizes:
        a, b = means[(size, "rdma")], means[(size, udp)]
        ratio = (sum(a) / len(a)) / (sum(b) / len(b)) if sum(b) else float("nan")
        print(f"| {size} | {sum(a) / len(a):.0f} ({a[0]:.0f}, {a[1]:.0f}) | "
              f"{sum(b) / len(b):.0f} ({b[0]:.0f}, {b[1]:.0f}) | {ratio:.2f} |")
    print("\nNode 1's RDMA link counters over each rdma run (after − before), per message the protocol delivered:\n")
    print("| run | messages delivered | send WRs | send WRs per message | WRs per ibv_post_send | signalled fraction | "
          "inline fraction | receive WRs posted per message | WRs per ibv_post_recv | packets per receive poll | "
          "mr_registrations before → after | error completions, tx/rx errors |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|---:|")
    for size in sizes:
        for rep in REPS:
            ok, row = verbs_row(vm, f"rdma-{size}-{rep}")
            good = good and ok
            print(row)
    print("\nrdma_vm: " + ("PASS" if good else "FAIL: histories differ, FIFO broken or memory registered again"))
    return 0 if good else 1


if __name__ == "__main__":
    sys.exit(main())
