#!/usr/bin/env python3
"""Every file the documentation names exists (tests/build/run.sh).

  check-doc-paths.py TOP [FILE.md...]   (default: Documentation/*.md, README.md)

A name in backquotes counts when it is a path under one of the tree's
top-level folders (`kmod/core/rx.cpp`, `tests/vm/90-wire-fuzz.sh`; it must
exist as written) or a bare file name with a source or script extension
(`qp.cpp`; some tracked file must have that name). Patterns (`*`, `%`,
`NN`, `{}`, `<>`) and other trees' paths (`drivers/infiniband/...`, `/...`)
are not checked. Prints each missing name as FILE:LINE: NAME; exits 1 if
there is one.
"""
import glob
import os
import re
import subprocess
import sys

ROOTS = ("kmod/", "libuser/", "abi/", "tests/", "scripts/", "Documentation/", ".ci/")
EXTS = (".c", ".cpp", ".h", ".sh", ".py", ".md", ".txt", ".list", ".config")


def main():
    top = sys.argv[1]
    docs = sys.argv[2:] or sorted(glob.glob(os.path.join(top, "Documentation", "*.md"))) + [
        os.path.join(top, "README.md")]
    tracked = subprocess.run(["git", "-C", top, "ls-files"], capture_output=True, text=True).stdout.split()
    names = {os.path.basename(f) for f in tracked}
    missing = 0
    for md in docs:
        with open(md, encoding="utf-8") as f:
            for n, line in enumerate(f, 1):
                for m in re.finditer(r"`([^`\s]+)`", line):
                    p = re.sub(r"[:#(].*$", "", m.group(1).rstrip(".,;)"))
                    if any(c in p for c in "*%{<…") or "NN" in p:
                        continue
                    if p.startswith(ROOTS):
                        ok = os.path.exists(os.path.join(top, p))
                    elif "/" not in p and p.endswith(EXTS) and not p.startswith((".", "-")):
                        ok = p in names
                    else:
                        continue
                    if not ok:
                        print("%s:%d: %s" % (os.path.relpath(md, top), n, p))
                        missing += 1
    sys.exit(1 if missing else 0)


if __name__ == "__main__":
    main()
