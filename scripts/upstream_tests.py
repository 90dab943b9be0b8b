"""Run a patch's upstream test (``[export.test]``) in a checkout of its exported commit and
record the result, keyed by the exported tree, in ``patchsets/<set>/upstream-tests/results.json``
(what ``export-pr`` shows in the PR text), or in ``--out`` (a JSON list, merged later with
``--merge``).

    python scripts/upstream_tests.py run --patch ID --tree DIR --commit SHA [--out FILE]
    python scripts/upstream_tests.py merge FILE... --checkout REPO   # commit -> tree, record

``run`` records the commit it ran on; ``merge`` (where the exported branches are) turns each
commit into its tree id and adds the runs to the tracked results. Used by
``scripts/upstream_tests_gpu.sh`` on a GPU machine."""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import asdict, replace
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from patchkit.export.upstream_test import UpstreamRun, record, run_in  # noqa: E402
from patchkit.gitrepo import GitRepo  # noqa: E402
from patchkit.ops.context import load_project  # noqa: E402


def run(args: argparse.Namespace) -> int:
    meta = load_project(ROOT).patch(args.patch)
    result = run_in(Path(args.tree).resolve(), meta, tree="")
    entry = {"patch": meta.id, "commit": args.commit, **asdict(result)}
    print(json.dumps(entry, indent=2), flush=True)
    out = Path(args.out)
    runs = json.loads(out.read_text()) if out.is_file() else []
    out.write_text(json.dumps([*runs, entry], indent=2) + "\n")
    return 0 if result.result == "passed" else 1


def merge(args: argparse.Namespace) -> int:
    project = load_project(ROOT)
    with GitRepo(Path(args.checkout)) as repo:
        for file in args.files:
            for entry in json.loads(Path(file).read_text()):
                commit = repo.resolve(entry["commit"])
                tree = repo.text("rev-parse", f"{commit}^{{tree}}") if commit else None
                if tree is None:
                    print(f"{entry['patch']}: {entry['commit']} is not in {args.checkout}")
                    continue
                fields = {k: entry.get(k, "") for k in UpstreamRun.__dataclass_fields__}
                run_ = replace(UpstreamRun(**fields), tree=tree)
                print(
                    f"{entry['patch']}: {run_.result} ({run_.detail}) -> {record(project.patch(entry['patch']), run_)}"
                )
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="verb", required=True)
    r = sub.add_parser("run")
    r.add_argument("--patch", required=True)
    r.add_argument("--tree", required=True)
    r.add_argument("--commit", required=True)
    r.add_argument("--out", required=True)
    m = sub.add_parser("merge")
    m.add_argument("files", nargs="+")
    m.add_argument("--checkout", required=True)
    args = parser.parse_args()
    return run(args) if args.verb == "run" else merge(args)


if __name__ == "__main__":
    raise SystemExit(main())
