"""``[export]`` of a patch's metadata: what fixes its exported commit (identity, date) and the
test its PR adds to upstream's own suite::

    [export]
    identity = "Jane Doe <jane@example.com>"  # author, committer and DCO sign-off
    date = "2026-11-23T00:00:00Z"  # author and committer date (ISO 8601)

    [export.test]
    file = "upstream-tests/<id>.diff"  # a unified diff against upstream's tree,
                                       # relative to the set directory
    run = ["tests/attention/test_x.py", "-k", "group_size_16"]  # pytest args at the tree root
    gpu = true  # export runs a CPU test on the exported branch; a GPU one is "not run" there
    min_capability = "8.0"
    noconftest = false

With ``identity`` and ``date`` set, the same patch on the same pinned commit gives the same
commit id on any machine, whoever runs the export (``--identity`` still wins)."""

from __future__ import annotations

import re
from datetime import datetime
from pathlib import Path
from typing import Any

from patchkit.errors import ConfigError, shown
from patchkit.model import ExportSpec, UpstreamTest
from patchkit.tomlschema import Table

_IDENTITY = re.compile(r"^[^<>]+ <[^<>\s]+@[^<>\s]+>$")
_KEYS = {"identity", "date", "test"}
_TEST_KEYS = {"file", "run", "gpu", "min_capability", "noconftest"}


def load_export(raw: dict[str, Any], path: Path, set_root: Path) -> ExportSpec:
    table = raw.get("export", {})
    if not isinstance(table, dict):
        raise ConfigError(f"{path}: [export] must be a table (identity, date, test)")
    unknown = sorted(set(table) - _KEYS)
    if unknown:
        raise ConfigError(f"{path}: [export] has unknown keys {unknown}: use {sorted(_KEYS)}")
    identity = table.get("identity") or None
    if identity is not None and not (isinstance(identity, str) and _IDENTITY.match(identity)):
        raise ConfigError(
            f"{path}: [export] identity {shown(identity)} must look like 'Name <email>'"
        )
    return ExportSpec(identity, _date(table.get("date"), path), _test(table, path, set_root))


def _date(value: Any, path: Path) -> str | None:
    if value is None:
        return None
    text = value.isoformat() if isinstance(value, datetime) else value  # TOML datetimes too
    try:
        parsed = datetime.fromisoformat(str(text).replace("Z", "+00:00"))
    except ValueError:
        parsed = None
    if parsed is None or parsed.tzinfo is None:
        raise ConfigError(
            f"{path}: [export] date {shown(str(value))} must be an ISO 8601 time with its zone, "
            'like "2026-11-23T00:00:00Z"'
        )
    return parsed.isoformat()


def _test(table: dict[str, Any], path: Path, set_root: Path) -> UpstreamTest | None:
    test = table.get("test")
    if test is None:
        return None
    if not isinstance(test, dict):
        raise ConfigError(f"{path}: [export.test] must be a table (file, run, gpu)")
    unknown = sorted(set(test) - _TEST_KEYS)
    if unknown:
        raise ConfigError(f"{path}: [export.test] has unknown keys {unknown}")
    file, run = test.get("file"), test.get("run")
    if not isinstance(file, str) or not file:
        raise ConfigError(f"{path}: [export.test] file must name the test's diff or rewrite")
    where = (set_root / file).resolve()
    if not where.is_file():
        raise ConfigError(f"{path}: [export.test] file {shown(file)}: no such file {where}")
    if where.suffix == ".py":
        raise ConfigError(
            f"{path}: [export.test] file {shown(file)} is a rewrite; the upstream test must be a "
            "unified diff against upstream's tree",
            hint="make the test change in a checkout and save `git diff` as upstream-tests/<id>.diff",
        )
    if not (isinstance(run, list) and run and all(isinstance(a, str) and a for a in run)):
        raise ConfigError(
            f'{path}: [export.test] run must be pytest arguments, like ["tests/test_x.py"]'
        )
    return UpstreamTest(
        file=where,
        run=tuple(run),
        gpu=Table(test, path, "export.test").flag("gpu", False),
        min_capability=_capability(test.get("min_capability"), path),
        noconftest=Table(test, path, "export.test").flag("noconftest", False),
    )


def _capability(value: Any, path: Path) -> tuple[int, int] | None:
    if value in (None, ""):
        return None
    match = re.fullmatch(r"(\d{1,4})\.(\d{1,4})", str(value))
    if not match:
        raise ConfigError(f'{path}: [export.test] min_capability must look like "9.0"')
    return int(match.group(1)), int(match.group(2))
