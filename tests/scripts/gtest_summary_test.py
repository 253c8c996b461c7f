#!/usr/bin/env python3
"""scripts/lib/gtest_summary.py on made-up test runs: the counts, the exit status, and each
failure's own output printed last, where a CI log cut to its tail still shows it."""
import json
import subprocess
import sys
import tempfile
from pathlib import Path

summary = Path(sys.argv[1])


def run(build):
    done = subprocess.run([sys.executable, str(summary), str(build)],
                          capture_output=True, text=True)
    return done.returncode, done.stdout


def expect(condition, what, output):
    if not condition:
        print(f"FAIL: {what}\n--- summary printed ---\n{output}")
        sys.exit(1)


with tempfile.TemporaryDirectory() as scratch:
    build = Path(scratch) / "build"
    (build / "gtest-xml").mkdir(parents=True)
    (build / "meson-logs").mkdir()
    (build / "gtest-xml" / "unit_x.xml").write_text(
        '<testsuites><testsuite name="S">'
        '<testcase classname="S" name="Holds" result="completed"/>'
        '<testcase classname="S" name="Breaks" result="completed">'
        '<failure message="expected 3, got 4"/></testcase>'
        '<testcase classname="S" name="Skipped" result="skipped"><skipped/></testcase>'
        '</testsuite></testsuites>')
    noisy = "\n".join(f"line {i}" for i in range(1, 101)) + "\nnetns-cluster: FAIL: the reason\n"
    runs = [
        {"name": "unit-x", "command": ["/b/unit_x"], "result": "FAIL", "stdout": ""},
        {"name": "netns", "command": ["/b/netns.sh"], "result": "FAIL", "stdout": noisy},
        {"name": "docs", "command": ["/b/check.py"], "result": "OK", "stdout": "fine\n"},
        {"name": "rdma", "command": ["/b/vm.sh"], "result": "SKIP", "stdout": ""},
    ]
    # Two meson test runs of one build, as scripts/test's stages make: both are counted.
    (build / "meson-logs" / "testlog-quick.json").write_text(
        "\n".join(map(json.dumps, runs[:2])) + "\n")
    (build / "meson-logs" / "testlog-rest.json").write_text(
        "\n".join(map(json.dumps, runs[2:])) + "\n")

    status, out = run(build)
    lines = out.splitlines()
    expect(status == 1, "exit status 1 when a test failed", out)
    # The binary that failed counts once more beside its failed case: it may have crashed after it.
    expect(lines[-1] == "2 passed, 3 failed, 2 skipped", "the closing counts", out)
    expect("FAILED build/unit_x: S.Breaks" in out and "    expected 3, got 4" in out,
           "a GoogleTest case's failure message under its name", out)
    expect(lines[-2] == "    netns-cluster: FAIL: the reason",
           "a failed meson test's last line just above the counts", out)
    expect("    line 72" in lines and "    line 71" not in lines,
           "only the last 30 lines of its output", out)
    expect("fine" not in out, "nothing from a test that passed", out)

    for report in (build / "gtest-xml").glob("*.xml"):
        report.unlink()
    for log in (build / "meson-logs").glob("testlog*.json"):
        log.unlink()
    (build / "meson-logs" / "testlog.json").write_text(json.dumps(runs[2]) + "\n")
    status, out = run(build)
    expect(status == 0 and out.splitlines() == ["1 passed, 0 failed, 0 skipped"],
           "a clean run: one line, status 0", out)
print("gtest_summary: PASS")
