#!/usr/bin/env python3
"""Fails when a comment block of a tracked C, C++, CUDA, Python, shell or CMake file is longer than
25 lines: long reasoning belongs in a named Note of at most that length, or in docs/design-notes.md.

A block is a run of consecutive lines that hold only a comment (`//` in C-family files, `#` in the
others; a blank line ends it). Markdown cells of the notebook sources (notebooks/src/*.py, the lines
after `# %% [markdown]`) are prose, not comments, and are skipped.

usage: check_comments.py [--max N] [FILE ...]   (default: every file `git ls-files` lists)
"""
import argparse
import pathlib
import subprocess
import sys

C_FAMILY = {".c", ".cc", ".cpp", ".cxx", ".h", ".hpp", ".cu", ".cuh"}
HASH = {".py", ".sh", ".cmake"}


def comment_prefix(path):
    if path.suffix in C_FAMILY:
        return "//"
    if path.suffix in HASH or path.name == "CMakeLists.txt":
        return "#"
    return None


def long_blocks(path, text, limit):
    """(first line, length) of every comment block of `text` longer than `limit` lines."""
    prefix = comment_prefix(path)
    if prefix is None:
        return []
    notebook = path.parent.name == "src" and path.parent.parent.name == "notebooks"
    found, start, count, markdown = [], 0, 0, False
    for number, line in enumerate(text.splitlines() + [""], 1):
        s = line.strip()
        if notebook and s.startswith("# %%"):
            markdown = s.startswith("# %% [markdown]")
        is_comment = (s.startswith(prefix) and not s.startswith("#!") and not markdown
                      and not (prefix == "#" and s.startswith("# %%")))
        if is_comment:
            if count == 0:
                start = number
            count += 1
            continue
        if count > limit:
            found.append((start, count))
        count = 0
    return found


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--max", type=int, default=25, help="longest allowed block (default 25)")
    ap.add_argument("files", nargs="*", type=pathlib.Path)
    a = ap.parse_args(argv)
    root = pathlib.Path(__file__).resolve().parents[1]
    files = a.files or [root / f for f in subprocess.run(["git", "ls-files"], cwd=root, capture_output=True,
                                                         text=True, check=True).stdout.split()]
    bad = 0
    for path in files:
        if comment_prefix(path) is None or not path.is_file():
            continue
        try:
            text = path.read_text()
        except UnicodeDecodeError:
            continue
        for start, count in long_blocks(path, text, a.max):
            print(f"{path}:{start}: comment block of {count} lines (at most {a.max})")
            bad += 1
    if bad:
        print(f"check_comments.py: {bad} comment block(s) over {a.max} lines", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
