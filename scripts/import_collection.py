#!/usr/bin/env python3
"""Import a collection of real container mods, one source at a time, and print one row per
source: the changes it makes, the patches import made of them (and how many apply at the lock),
the steps it refused by name, and the exit code (70 would be a crash: the summary counts them).

    python3 scripts/import_collection.py COLLECTION_DIR --target vllm [--project .]

A source is each mod directory (holding ``run.sh``), each ``*.sh`` script under COLLECTION_DIR
that no ``run.sh`` runs by name, and each Dockerfile (``Dockerfile``, ``Dockerfile.x``). Every import is a ``--dry-run``: nothing is written to the project. The
collections are public repositories brought by the reader, never committed here.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

OK_AT_LOCK = {"applied", "carried", "upstreamed", "partly-upstreamed"}


def sources(root: Path) -> list[Path]:
    mods = sorted(p.parent for p in root.rglob("run.sh"))
    scripts = sorted(p for p in root.rglob("*.sh") if p.name != "run.sh" and not _run_by(p, mods))
    dockerfiles = sorted(p for p in root.rglob("*") if p.is_file() and _is_dockerfile(p.name))
    return mods + scripts + dockerfiles


def _run_by(path: Path, mods: list[Path]) -> bool:
    """A script of a mod that its run.sh names (read with the mod, not on its own)."""
    return any(
        path.is_relative_to(d) and path.name in (d / "run.sh").read_text(errors="replace")
        for d in mods
    )


def _is_dockerfile(name: str) -> bool:
    return name == "Dockerfile" or name.startswith("Dockerfile.") or name.endswith(".dockerfile")


def import_one(source: Path, target: str, project: Path, timeout: float) -> dict[str, object]:
    argv = [sys.executable, "-m", "patchkit", "-q", "import", str(source), "--target", target,
            "--into", "collection", "--dry-run", "--json", "--project", str(project)]  # fmt: skip
    try:
        proc = subprocess.run(argv, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return {"source": str(source), "exit": "timeout"}
    row: dict[str, object] = {"source": str(source), "exit": proc.returncode}
    try:
        report = json.loads(proc.stdout)
    except ValueError:
        row["error"] = (proc.stderr.strip().splitlines() or ["no output"])[-1]
        return row
    patches = [p for p in report["patches"] if p["outcome"] != "refused"]
    refused_whole = [  # a source refused whole, not step by step (a mod that changes
        p["message"]  # nothing import reads lists its refused steps in "untranslated")
        for p in report["patches"]
        if p["outcome"] == "refused"
        and not p["untranslated"]
        and "makes no change" not in p["message"]
    ]
    steps = list(
        dict.fromkeys(s for src in report.get("sources", []) for s in src["not_translated"])
    )
    row.update(
        patches=len(patches),
        at_lock=sum(p["outcome"] in OK_AT_LOCK for p in patches),
        not_translated=len(steps) + len(refused_whole),
        refusals=steps + refused_whole,
        outcomes=[f"{p['id']}: {p['outcome']}" for p in patches],
    )
    return row


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("collection", type=Path)
    parser.add_argument("--target", default="vllm")
    parser.add_argument("--project", type=Path, default=Path.cwd())
    parser.add_argument("--timeout", type=float, default=600.0)
    parser.add_argument("--details", action="store_true", help="also each refusal and outcome")
    args = parser.parse_args(argv)
    rows = [
        import_one(s, args.target, args.project, args.timeout) for s in sources(args.collection)
    ]
    print(f"{'source':60} {'changes':>7} {'patches':>7} {'at lock':>7} {'refused':>7} {'exit':>5}")
    for row in rows:
        name = str(Path(str(row["source"])).relative_to(args.collection.resolve()
                   if Path(str(row["source"])).is_absolute() else args.collection))  # fmt: skip
        patches, refused = int(row.get("patches", 0)), int(row.get("not_translated", 0))
        print(f"{name:60} {patches + refused:>7} {patches:>7} {row.get('at_lock', 0):>7} "
              f"{refused:>7} {row['exit']!s:>5}")  # fmt: skip
        if args.details:
            for line in [*row.get("outcomes", []), *row.get("refusals", [])]:  # type: ignore[misc]
                print(f"    {line}")
            if "error" in row:
                print(f"    error: {row['error']}")
    crashed = sum(row["exit"] == 70 for row in rows)
    hung = sum(row["exit"] == "timeout" for row in rows)
    total = sum(int(r.get("patches", 0)) for r in rows)
    print(f"{len(rows)} sources, {total} patches, exit 70: {crashed}, timed out: {hung}")
    return 1 if crashed or hung else 0


if __name__ == "__main__":
    raise SystemExit(main())
