"""Prove each PR's upstream test (``[export.test]``): run it on the pinned upstream tree without
the change and with it, and keep both results with the device and versions, where ``export-pr``
finds them (``patchsets/<set>/upstream-tests/results.json``, keyed by the upstream tree and the
digests of the patch and the test).

    python3 scripts/upstream_tests.py prove --target vllm --checkout DIR [--patch ID]... --out FILE
    python3 scripts/upstream_tests.py merge FILE...     # add runs made elsewhere to the tracked results

``prove`` needs no network: DIR is a git checkout holding the pinned commit (a clone of
upstream, or a bundle of patchkit's cache), and the test's Python packages importable by the
``--python`` that runs it. It exits 0 when every test named failed without the change and passed
with it, 1 otherwise (each line says why). ``scripts/upstream_tests_gpu.sh`` runs it on a GPU
machine; ``merge`` then records what came back."""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import asdict, replace
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from patchkit.errors import PatchkitError  # noqa: E402
from patchkit.export.upstream_test import record, run_from_json  # noqa: E402
from patchkit.ops.export_proof import prove_upstream_tests  # noqa: E402
from patchkit.project.load import load_project  # noqa: E402


def prove(args: argparse.Namespace) -> int:
    project = load_project(Path(args.project))
    proved = prove_upstream_tests(
        project=project,
        target=args.target,
        tree_root=Path(args.checkout).resolve(),
        patch_ids=args.patch or (),
        python=args.python,
        prepare=args.prepare,
    )
    if args.where_note:  # how the runs differ from upstream's CI, said with the device
        proved = [replace(p, run=replace(p.run, where=f"{p.run.where}; {args.where_note}"))
                  for p in proved]  # fmt: skip
    out = [{"patch": p.patch_id, **asdict(p.run)} for p in proved]
    Path(args.out).write_text(json.dumps(out, indent=2, sort_keys=True) + "\n")
    for p in proved:
        r = p.run
        verdict = "proven" if p.proven else "NOT proven"
        print(f"{p.patch_id}: without the change {r.unpatched or '-'}; with it {r.result} "
              f"({r.detail}): {verdict}")  # fmt: skip
    print(f"on {proved[0].run.where if proved else '-'}; written to {args.out}")
    return 0 if proved and all(p.proven for p in proved) else 1


def merge(args: argparse.Namespace) -> int:
    project = load_project(Path(args.project))
    for file in args.files:
        try:
            raw = json.loads(Path(file).read_text())
        except (OSError, ValueError) as err:
            print(f"{file}: not a JSON list of runs: {err}", file=sys.stderr)
            return 2
        for item in raw if isinstance(raw, list) else [raw]:
            try:
                patch_id, run = run_from_json(item, where=file)
                if not run.ran_both:
                    print(f"{patch_id}: not recorded, it did not run both ways ({run.detail})")
                    continue
                path = record(project.patch(patch_id), run)
            except PatchkitError as err:
                print(f"{file}: {err.message}", file=sys.stderr)
                return 2
            print(
                f"{patch_id}: without {run.unpatched}; with {run.result} ({run.detail}) -> {path}"
            )
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--project", default=str(ROOT), help="holds upstream.lock (default: here)")
    sub = parser.add_subparsers(dest="verb", required=True)
    p = sub.add_parser("prove", help="run each upstream test without and with its change")
    p.add_argument("--target", required=True)
    p.add_argument("--checkout", required=True, help="a git checkout holding the pinned commit")
    p.add_argument("--patch", action="append", help="a patch id (repeatable; default: all)")
    p.add_argument("--out", required=True, help="the JSON list of runs written")
    p.add_argument("--python", default=sys.executable, help="the Python that runs the tests")
    p.add_argument(
        "--prepare", default="", help="a shell command run in each checkout before its test"
    )
    p.add_argument(
        "--where-note", default="", help="said after the device in each run's record and PR text"
    )
    m = sub.add_parser("merge", help="add runs from prove's --out files to the tracked results")
    m.add_argument("files", nargs="+")
    args = parser.parse_args()
    return prove(args) if args.verb == "prove" else merge(args)


if __name__ == "__main__":
    raise SystemExit(main())
