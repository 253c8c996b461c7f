#!/usr/bin/env python3
"""Checks the man pages: each one is ASCII and renders without a single groff warning (-ww) and
within 80 columns; and rtotem.conf(5) describes every key conf/rtotem.conf documents, as a .TP
term under the .SS heading named after its section ("totem", "totem.interface"...).

Usage: check_pages.py --conf conf/rtotem.conf --conf-page rtotem.conf.5 PAGE...
Exits 0 when all is well, 1 with one line per fault, 77 (meson's SKIP) without groff."""
import argparse
import re
import shutil
import subprocess
import sys


def conf_keys(path):
    """(section path, key) of every key the example file sets, or shows commented out as
    '# key: value' (one space after the '#': the file's prose indents its lists further)."""
    keys, open_sections = set(), []
    with open(path, encoding="utf-8") as f:
        for line in f:
            if m := re.match(r"^\s*([A-Za-z0-9_.-]+)\s*\{\s*$", line):
                open_sections.append(m.group(1))
            elif re.match(r"^\s*\}\s*$", line):
                open_sections.pop()
            elif m := (re.match(r"^\s*([A-Za-z0-9_]+):(\s|$)", line) or re.match(r"^\s*# ([a-z0-9_]+):\s", line)):
                keys.add((".".join(open_sections), m.group(1)))
    return keys


def macro_args(text):
    """The arguments of a roff macro line: words, or double-quoted strings."""
    return [a if not a.startswith('"') else a[1:-1] for a in re.findall(r'"[^"]*"|\S+', text)]


def plain(word):
    return re.sub(r"\\f[A-Z]|\\f\(..|\\&", "", word).replace("\\-", "-")


def page_terms(path):
    """{.SS heading: the bold words of each .TP term under it}."""
    terms, heading, after_tp = {}, None, False
    with open(path, encoding="ascii") as f:
        for line in f:
            line = line.rstrip("\n")
            if line.startswith(".SS ") or line.startswith(".SH "):
                heading = plain(" ".join(macro_args(line[4:]))) if line.startswith(".SS ") else None
                terms.setdefault(heading, set())
            elif line == ".TP":
                after_tp = True
                continue
            elif after_tp and heading is not None:
                macro, _, rest = line.partition(" ")
                args = macro_args(rest)
                if macro == ".B":
                    terms[heading].add(plain(" ".join(args)))
                elif macro in (".BR", ".BI"):
                    terms[heading].update(plain(a) for a in args[0::2])
            after_tp = False
    return terms


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--conf", required=True)
    parser.add_argument("--conf-page", required=True)
    parser.add_argument("pages", nargs="+")
    args = parser.parse_args()
    groff = shutil.which("groff")
    if groff is None:
        print("SKIP: no groff (Debian: groff-base)")
        return 77
    faults = []
    for page in args.pages:
        with open(page, "rb") as f:
            text = f.read()
        if any(b > 0x7F for b in text):
            faults.append(f"{page}: not ASCII (write special characters as roff escapes)")
        if b"@" in text:
            faults.append(f"{page}: an '@' left: a configure_file variable not substituted?")
        run = subprocess.run([groff, "-man", "-ww", "-Tutf8", "-P", "-c", "-rLL=80n", page], capture_output=True,
                             text=True)
        for warning in run.stderr.splitlines():
            faults.append(f"{page}: groff: {warning}")
        if run.returncode != 0:
            faults.append(f"{page}: groff exited {run.returncode}")
        # Filled text wraps; what does not (examples, synopses) must fit a terminal of 80 columns.
        for number, line in enumerate(re.sub(r".\x08", "", run.stdout).splitlines(), 1):
            if len(line) > 80:
                faults.append(f"{page}: rendered line {number} is {len(line)} columns wide: {line.strip()[:40]}...")
    terms = page_terms(args.conf_page)
    for section, key in sorted(conf_keys(args.conf)):
        if section not in terms:
            faults.append(f"{args.conf_page}: no '.SS {section}' for {args.conf}'s section {section}")
        elif key not in terms[section]:
            faults.append(f"{args.conf_page}: {section}.{key}, documented in {args.conf}, is not described")
    for fault in faults:
        print(fault)
    print(f"{len(args.pages)} pages, {len(conf_keys(args.conf))} keys of {args.conf}: "
          f"{'ok' if not faults else f'{len(faults)} faults'}")
    return 1 if faults else 0


if __name__ == "__main__":
    sys.exit(main())
