"""Port one diff across every later release of a target, with the placement of each hunk.

    python3 scripts/port_releases.py PATCH --repo DIR --base v0.19.0 [--explain]

``--repo`` is a git checkout holding the release tags (``patchkit fetch`` makes one in the
cache; ``git clone --shared`` it somewhere to keep the cache clean). For each tag after
``--base`` the checkout is put at that tag, the diff is ported through the Python API, and one
line is printed: release, outcome, seconds, and the rules that placed its hunks; ``--explain``
adds a line per hunk. The checkout is left at the last release, patched.
"""

from __future__ import annotations

import argparse
import subprocess
import time
from collections import Counter
from pathlib import Path

from packaging.version import InvalidVersion, Version

from patchkit.cli.explain import placement_line
from patchkit.errors import PatchkitError
from patchkit.ops.port import port


def _git(repo: Path, *args: str) -> str:
    return subprocess.run(
        ["git", *args], cwd=repo, check=True, capture_output=True, text=True
    ).stdout


def _later_tags(repo: Path, base: str) -> list[str]:
    def key(tag: str) -> Version:
        try:
            return Version(tag.lstrip("v"))
        except InvalidVersion:
            return Version("0")

    tags = sorted(_git(repo, "tag", "--list", "v*").split(), key=key)
    return [t for t in tags if key(t) > key(base)]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("patch", type=Path)
    parser.add_argument("--repo", type=Path, required=True)
    parser.add_argument("--base", required=True, help="the release tag the diff was made at")
    parser.add_argument("--explain", action="store_true")
    args = parser.parse_args(argv)
    base = _git(args.repo, "rev-parse", f"{args.base}^{{commit}}").strip()
    print(f"{args.patch.name} made at {args.base}")
    for tag in _later_tags(args.repo, args.base):
        _git(args.repo, "checkout", "-q", "-f", tag)
        _git(args.repo, "clean", "-qfd")
        start = time.perf_counter()
        try:
            report = port(
                patch_file=args.patch, base_commit=base, checkout=args.repo, explain=args.explain
            )
        except PatchkitError as exc:
            print(f"{tag:14} error: {exc.message}")
            continue
        seconds = time.perf_counter() - start
        rules = Counter(m.rule.value for m in report.result.placements)
        tally = ", ".join(f"{n} {rule}" for rule, n in sorted(rules.items()))
        print(f"{tag:14} {report.outcome.value:18} {seconds:6.2f} s  {tally}")
        for mark in report.result.placements if args.explain else ():
            print(f"    {placement_line(mark)}")
        for detail in report.result.details if not report.succeeded else ():
            print(f"    {detail.path} {detail.hunk}: {detail.reason}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
