"""Finding an installed distribution through the interpreter that will run it: a
``python -c`` running ``importlib.metadata`` (the package itself is never imported: vLLM imports
torch), its files and their sha256 from ``RECORD``. :mod:`patchkit.workspace.installed` makes a
tree of it."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from patchkit.errors import TreeError, shown

# Run by the target interpreter: metadata only, never ``import <package>``. The script's own
# directory ('' for -c) is dropped from sys.path so a checkout in the cwd cannot shadow the
# installed distribution.
_PROBE = r"""
import json, sys
if sys.path and sys.path[0] in ("", "."):
    del sys.path[0]
from importlib import metadata
try:
    dist = metadata.distribution(sys.argv[1])
except metadata.PackageNotFoundError:
    print(json.dumps({"found": False, "python": sys.executable}))
    raise SystemExit(0)
files = dist.files
print(json.dumps({
    "found": True,
    "python": sys.executable,
    "name": dist.metadata["Name"],
    "version": dist.version,
    "location": str(dist.locate_file("")),
    "direct_url": dist.read_text("direct_url.json"),
    "files": None if files is None else [
        [str(f), f.hash.mode if f.hash else None, f.hash.value if f.hash else None]
        for f in files
    ],
}))
"""


@dataclass(frozen=True)
class RecordedFile:
    path: str  # relative to site-packages, POSIX
    algorithm: str | None  # "sha256"; None for entries RECORD lists without a hash
    digest: str | None  # urlsafe base64 without padding, as RECORD writes it


@dataclass(frozen=True)
class Distribution:
    """An installed distribution, as its interpreter's metadata describes it."""

    name: str
    version: str
    location: Path  # site-packages (the directory RECORD paths are relative to)
    python: str  # the interpreter that reported it
    files: dict[str, RecordedFile]  # site-packages path -> RECORD entry; in-tree files only

    def directories(self) -> frozenset[str]:
        return frozenset(str(PurePosixPath(p).parent) for p in self.files)


class InstalledError(TreeError):
    """The installed distribution cannot be found or cannot be checked."""


def probe(dist_name: str, python: Path | str) -> dict[str, object]:
    """What ``python``'s importlib.metadata says about ``dist_name`` (raw JSON)."""
    try:
        proc = subprocess.run(
            [str(python), "-c", _PROBE, dist_name],
            capture_output=True,
            text=True,
            check=False,
            timeout=120,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise InstalledError(
            f"cannot run {python} to find {dist_name}: {exc}",
            hint="pass --python PATH of the interpreter the package is installed for",
        ) from None
    if proc.returncode != 0:
        raise InstalledError(
            f"{python} failed while reading the metadata of {dist_name} "
            f"(exit {proc.returncode}): {proc.stderr.strip()[-400:]}",
            hint="pass --python PATH of a working interpreter",
        )
    return _report(proc.stdout, dist_name, python)


def _report(stdout: str, dist_name: str, python: Path | str) -> dict[str, object]:
    """The probe's JSON: its last line (a noisy sitecustomize may print before it)."""
    lines = stdout.strip().splitlines()
    try:
        report = json.loads(lines[-1]) if lines else None
    except json.JSONDecodeError:
        report = None
    if not isinstance(report, dict) or "found" not in report:
        raise InstalledError(
            f"{python} did not report on {dist_name}: {shown(stdout.strip()[-400:])}",
            hint="pass --python PATH of the interpreter the package is installed for",
        )
    return report


def safe_relative(path: str) -> str | None:
    """RECORD paths inside site-packages; scripts (``../../bin/x``) and absolute paths: None."""
    pure = PurePosixPath(path.replace("\\", "/"))
    if pure.is_absolute() or ".." in pure.parts:
        return None
    return str(pure)


def _record(raw_files: Iterable[Sequence[str | None]]) -> dict[str, RecordedFile]:
    files = {}
    for raw_path, algorithm, digest in raw_files:
        path = safe_relative(str(raw_path))
        if path is not None:
            files[path] = RecordedFile(path, algorithm, digest)
    return files


def _is_editable(direct_url: object) -> bool:
    if not isinstance(direct_url, str):
        return False
    try:
        info = json.loads(direct_url)
    except json.JSONDecodeError:
        return False
    return bool(info.get("dir_info", {}).get("editable"))


def find_distribution(dist_name: str, python: Path | str) -> Distribution:
    raw = probe(dist_name, python)
    if not raw["found"]:
        raise InstalledError(
            f"{dist_name} is not installed for {raw['python']}",
            hint=f"install it (`{python} -m pip install {dist_name}`), or pass --python PATH "
            "of the interpreter that has it",
        )
    if _is_editable(raw.get("direct_url")):
        raise InstalledError(
            f"{dist_name} is installed in editable mode for {raw['python']}: its files are "
            "a checkout, not site-packages",
            hint="patch that checkout with --checkout DIR instead of --installed",
        )
    if raw["files"] is None:
        raise InstalledError(
            f"{dist_name} {raw['version']} at {raw['location']} has no RECORD, so patchkit "
            "cannot check its files before patching",
            hint="reinstall it with pip (`pip install --force-reinstall --no-deps ...`)",
        )
    return Distribution(
        name=str(raw["name"]),
        version=str(raw["version"]),
        location=Path(str(raw["location"])).resolve(),
        python=str(raw["python"]),
        files=_record(raw["files"]),  # type: ignore[arg-type]
    )
