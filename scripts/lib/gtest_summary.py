#!/usr/bin/env python3
"""Sums the GoogleTest XML reports of a test run into one closing line: 'N passed, N failed'."""
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

passed = failed = skipped = 0
failures = []
for folder in sys.argv[1:]:
    for report in sorted(Path(folder).glob("*.xml")):
        for case in ET.parse(report).getroot().iter("testcase"):
            name = f"{report.parent.parent.name}/{report.stem}: {case.get('classname')}.{case.get('name')}"
            if case.find("failure") is not None:
                failed += 1
                failures.append(name)
            elif case.get("result") == "skipped" or case.find("skipped") is not None:
                skipped += 1
            else:
                passed += 1
for name in failures:
    print(f"FAILED {name}")
print(f"{passed} passed, {failed} failed, {skipped} skipped")
sys.exit(1 if failed or passed == 0 else 0)
