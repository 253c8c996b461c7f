#!/usr/bin/env python3
"""Every commit a document cites (BENCHMARKS.md: "at 5a45be8") is an ancestor of HEAD.

A figure is only as good as the commit that reproduces it; a hash from a branch that was rebased
before it merged, or that never left this clone, points nowhere in a user's clone, even when the
local object store still has it. Exits 77 (skipped) outside a git checkout or in a shallow one.
Usage: check_commits.py REPO DOC..."""
import re
import subprocess
import sys

# 7 to 12 hex digits with a letter and a digit in them, not part of a longer word or a 0x number.
HASH = re.compile(r"(?<![0-9A-Za-z_x])(?=[0-9a-f]*[a-f])(?=[0-9a-f]*[0-9])[0-9a-f]{7,12}(?![0-9A-Za-z_])")


def git(repo, *args):
    return subprocess.run(["git", "-C", repo, *args], capture_output=True, text=True)


def main():
    repo, docs = sys.argv[1], sys.argv[2:]
    inside = git(repo, "rev-parse", "--is-shallow-repository")
    if inside.returncode != 0 or inside.stdout.strip() != "false":
        print("not a full git checkout: commit citations not checked")
        return 77
    missing = 0
    cited = 0
    for doc in docs:
        with open(doc, encoding="utf-8") as f:
            for number, line in enumerate(f, 1):
                for h in HASH.findall(line):
                    cited += 1
                    if git(repo, "merge-base", "--is-ancestor", h, "HEAD").returncode != 0:
                        print(f"{doc}:{number}: {h} is not a commit of this history")
                        missing += 1
    print(f"{cited} commit citations in {len(docs)} documents, {missing} missing")
    return 1 if missing else 0


if __name__ == "__main__":
    sys.exit(main())
