#!/usr/bin/env python3
"""Closing line of the test run from ctest's JUnit file.

Each test program prints its own "N passed, N failed[, N skipped]" line; the totals add those
up (so a test skipped inside a program because ../shared or node is absent is counted), and a
program that failed or was skipped without printing one counts as one failed/skipped test."""
import re
import sys
import xml.etree.ElementTree as ET

label, junit = sys.argv[1], sys.argv[2]
SUMMARY = re.compile(r"^(?:[\w./-]+: )?(\d+) passed, (\d+) failed(?:, (\d+) skipped)?\s*$", re.M)
passed = failed = skipped = 0
skipped_programs, failed_programs = [], []
for case in ET.parse(junit).getroot().iter("testcase"):
    name = case.get("name")
    status = case.get("status")
    out = "".join(e.text or "" for e in case.iter("system-out"))
    lines = SUMMARY.findall(out)
    bad = case.find("failure") is not None or case.find("error") is not None
    if lines:
        p, f, s = lines[-1]
        passed += int(p)
        failed += int(f)
        skipped += int(s or 0)
        if bad and int(f) == 0:
            failed += 1  # e.g. crashed or leaked after printing its line
    elif status == "notrun":
        skipped += 1
    elif bad:
        failed += 1
    else:
        passed += 1
    if status == "notrun":
        skipped_programs.append(name)
    elif bad:
        failed_programs.append(name)
for n in skipped_programs:
    print(f"  skipped program: {n}")
for n in failed_programs:
    print(f"  FAILED program: {n}")
print(f"{label}: {passed} passed, {failed} failed, {skipped} skipped")
sys.exit(1 if failed or failed_programs else 0)
