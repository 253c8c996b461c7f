#!/usr/bin/env python3
"""Sums a test run into one closing line, 'N passed, N failed, N skipped': the GoogleTest cases
from their XML reports, plus every meson test that is not a GoogleTest binary (the simulator sweep),
and any test binary that failed without writing a report (a crash, a timeout). A binary run as
several meson tests names each report 'binary@part.xml'. Each failure's own words come last, just
above the closing line, where a CI log cut to its tail still shows why: a GoogleTest case's failure
message, or the last lines a failed meson test printed."""
import json
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

passed = failed = skipped = 0
failures = []
TAIL = 30  # lines of a failed test's output shown


def tail(text, lines=TAIL):
    return "\n".join("    " + line for line in (text or "").rstrip().splitlines()[-lines:])


for build in map(Path, sys.argv[1:]):
    reported = set()
    for report in sorted((build / "gtest-xml").glob("*.xml")):
        reported.add(report.stem.split("@")[0])  # 'binary@part': one report per part of a binary
        for case in ET.parse(report).getroot().iter("testcase"):
            name = f"{build.name}/{report.stem}: {case.get('classname')}.{case.get('name')}"
            if case.find("failure") is not None:
                failed += 1
                failures.append((name, case.find("failure").get("message", "")))
            elif case.get("result") == "skipped" or case.find("skipped") is not None:
                skipped += 1
            else:
                passed += 1
    # One log per meson test run: scripts/test runs a build's suites in stages (--logbase).
    tests = [json.loads(line) for log in sorted((build / "meson-logs").glob("testlog*.json"))
             for line in log.read_text().splitlines()]
    for test in tests:
        binary = Path(test["command"][0]).name
        if binary in reported and test["result"] == "OK":
            continue  # counted case by case above
        if test["result"] in ("OK", "EXPECTEDFAIL"):
            passed += 1
        elif test["result"] == "SKIP":
            skipped += 1
        else:
            failed += 1
            failures.append((f"{build.name}: {test['name']} ({test['result']})",
                             (test.get("stdout") or "") + (test.get("stderr") or "")))
for name, output in failures:
    print(f"FAILED {name}")
    if output.strip():
        print(tail(output))
print(f"{passed} passed, {failed} failed, {skipped} skipped")
sys.exit(1 if failed or passed == 0 else 0)
