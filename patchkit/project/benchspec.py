"""``[[bench]]`` in a patch's metadata: a benchmark of the code the patch changes.

```toml
[[bench]]
name = "decode"                               # unique per patch
callable = "tests/bench_decode.py::decode"    # in the set's tests directory
metric = "tokens/s"                           # "time" (ms per call), "tokens/s" or "bytes/s"
tolerance = 0.05                              # after under 95% of before's speed: slower
min_capability = "8.0"                        # gpu = true unless said otherwise
graph = true                                  # time CUDA graph replays (default; else calls)
cases = [{ batch = 1, kv_len = 1024 }, { name = "long", batch = 64, kv_len = 8192 }]

[[bench.fallbacks]]                           # where the unpatched tree cannot run a case
label = "tensor-core decode (any group size)"
args = { tensor_cores = true }
```

The callable takes a case's arguments (a dict) and returns the function to time, or a dict with
``fn``, ``work`` (tokens or bytes per call, for the throughput metrics) and ``label`` (what ran).
Errors name the metadata file and the key (``bench[0].cases[2]``).
"""

from __future__ import annotations

import re
from pathlib import Path, PurePosixPath
from typing import Any

from patchkit.errors import ConfigError, shown
from patchkit.model import Args, BenchCase, BenchFallback, BenchMetric, BenchSpec
from patchkit.tomlschema import Table

KEYS = {
    "name",
    "callable",
    "cases",
    "metric",
    "tolerance",
    "fallbacks",
    "gpu",
    "min_capability",
    "rounds",
    "reps",
    "warmup",
    "graph",
}
CALLABLE = re.compile(r"^(?P<file>[^:]+\.py)::(?P<function>[A-Za-z_][A-Za-z0-9_]*)$")
SCALAR = (str, int, float, bool)


def _args(raw: Any, path: Path, where: str) -> Args:
    if not isinstance(raw, dict):
        raise ConfigError(f"{path}: {where} must be a table of arguments")
    for key, value in raw.items():
        plain = isinstance(value, SCALAR) or (
            isinstance(value, list) and all(isinstance(v, SCALAR) for v in value)
        )
        if not plain:
            raise ConfigError(f"{path}: {where}.{key} must be a string, number, boolean or list")
    return tuple(sorted((k, tuple(v) if isinstance(v, list) else v) for k, v in raw.items()))


def _case(raw: Any, path: Path, where: str) -> BenchCase:
    if not isinstance(raw, dict) or not raw:
        raise ConfigError(f"{path}: {where} must be a non-empty table")
    name = raw.get("name")
    rest = {k: v for k, v in raw.items() if k != "name"}
    args = _args(rest, path, where)
    if name is None:
        name = " ".join(f"{k}={v}" for k, v in args)
    if not isinstance(name, str) or not name:
        raise ConfigError(f"{path}: {where}.name must be a non-empty string")
    return BenchCase(name, args)


def _cases(raw: Any, path: Path, where: str) -> tuple[BenchCase, ...]:
    if not isinstance(raw, list) or not raw:
        raise ConfigError(f"{path}: {where}.cases must be a non-empty list of tables")
    cases = tuple(_case(item, path, f"{where}.cases[{i}]") for i, item in enumerate(raw))
    names = [c.name for c in cases]
    twice = sorted({n for n in names if names.count(n) > 1})
    if twice:
        raise ConfigError(f"{path}: {where}.cases names a case twice: {', '.join(twice)}")
    return cases


def _fallbacks(raw: Any, path: Path, where: str) -> tuple[BenchFallback, ...]:
    if not isinstance(raw, list):
        raise ConfigError(f"{path}: {where}.fallbacks must be a list of tables")
    found = []
    for i, item in enumerate(raw):
        at = f"{where}.fallbacks[{i}]"
        if not isinstance(item, dict) or not isinstance(item.get("label"), str):
            raise ConfigError(f"{path}: {at} needs a label (what upstream offers instead)")
        found.append(BenchFallback(item["label"], _args(item.get("args", {}), path, f"{at}.args")))
    return tuple(found)


def _callable(raw: Any, path: Path, where: str) -> str:
    match = CALLABLE.match(raw) if isinstance(raw, str) else None
    if match is None:
        raise ConfigError(
            f'{path}: {where}.callable must look like "tests/bench_x.py::function" (got {shown(raw)})'
        )
    file = PurePosixPath(match.group("file"))
    if file.is_absolute() or ".." in file.parts:
        raise ConfigError(f"{path}: {where}.callable must be a file inside the set directory")
    return str(raw)


def _number(raw: dict[str, Any], key: str, default: float, path: Path, where: str) -> float:
    value = raw.get(key, default)
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ConfigError(f"{path}: {where}.{key} must be a number (got {shown(value)})")
    return float(value)


def _count(raw: dict[str, Any], key: str, default: int, path: Path, where: str) -> int:
    value = raw.get(key, default)
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ConfigError(f"{path}: {where}.{key} must be a whole number >= 1 (got {shown(value)})")
    return value


def _capability(raw: Any, path: Path, where: str) -> tuple[int, int] | None:
    if raw in (None, ""):
        return None
    match = re.fullmatch(r"(\d{1,4})\.(\d{1,4})", str(raw))
    if not match:
        raise ConfigError(f'{path}: {where}.min_capability must look like "9.0"')
    return int(match.group(1)), int(match.group(2))


def _metric(raw: Any, path: Path, where: str) -> BenchMetric:
    try:
        return BenchMetric(raw)
    except ValueError:
        known = ", ".join(repr(m.value) for m in BenchMetric)
        raise ConfigError(
            f"{path}: {where}.metric must be one of {known} (got {shown(raw)})"
        ) from None


def _one(raw: Any, path: Path, index: int) -> BenchSpec:
    where = f"bench[{index}]"
    if not isinstance(raw, dict):
        raise ConfigError(f"{path}: {where} must be a table")
    unknown = sorted(set(raw) - KEYS)
    if unknown:
        raise ConfigError(f"{path}: {where} has unknown keys {', '.join(unknown)}")
    tolerance = _number(raw, "tolerance", 0.05, path, where)
    if not 0 <= tolerance < 1:
        raise ConfigError(f"{path}: {where}.tolerance must be in [0, 1) (a fraction: 0.05 is 5%)")
    name = raw.get("name", f"bench{index}")
    if not isinstance(name, str) or not name:
        raise ConfigError(f"{path}: {where}.name must be a non-empty string")
    return BenchSpec(
        name=name,
        callable=_callable(raw.get("callable"), path, where),
        cases=_cases(raw.get("cases"), path, where),
        metric=_metric(raw.get("metric", "time"), path, where),
        tolerance=tolerance,
        fallbacks=_fallbacks(raw.get("fallbacks", []), path, where),
        gpu=Table(raw, path, where).flag("gpu", True),
        min_capability=_capability(raw.get("min_capability"), path, where),
        rounds=_count(raw, "rounds", 8, path, where),
        reps=_count(raw, "reps", 20, path, where),
        warmup=_count(raw, "warmup", 10, path, where),
        graph=Table(raw, path, where).flag("graph", True),
    )


def load_benches(raw: dict[str, Any], path: Path) -> tuple[BenchSpec, ...]:
    """The ``[[bench]]`` tables of one patch's metadata ``raw`` (read from ``path``)."""
    items = raw.get("bench", [])
    if not isinstance(items, list):
        raise ConfigError(f"{path}: bench must be an array of tables ([[bench]])")
    benches = tuple(_one(item, path, i) for i, item in enumerate(items))
    names = [b.name for b in benches]
    if len(set(names)) != len(names):
        raise ConfigError(f"{path}: two [[bench]] tables have the same name")
    return benches
