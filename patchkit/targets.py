"""What patchkit knows about each upstream project: where a release names its commit, how an
installed distribution lays out the repository's files, and the project's PR conventions.

A target that is not listed here still works from a git checkout; it only lacks these extras.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

_VLLM_COMMIT = re.compile(
    r"""__commit_id__\s*=\s*(?:commit_id\s*=\s*)?['"]g?([0-9a-f]{7,40})['"]"""
)
# FlashInfer names its commit __git_version__ up to 0.6.x and __git_commit__ from 0.7.0 on.
_FI_COMMIT = re.compile(r"""__git_(?:version|commit)__\s*=\s*['"]([0-9a-f]{7,40})['"]""")


@dataclass(frozen=True)
class TargetProfile:
    """What patchkit knows of an upstream project (vLLM, FlashInfer): names, layout, style."""

    name: str
    distribution: str  # name on the package index
    repository: str
    version_file: str  # repository path of the file that names the release's commit
    commit_pattern: re.Pattern[str]
    # Installed layout: repository path prefix -> path inside site-packages.
    installed_map: tuple[tuple[str, str], ...] = ()
    pr_style: str = "vllm"  # "vllm" (bracket tags, DCO) or "conventional" (FlashInfer)
    pins_file: str | None = None  # where the release pins other targets
    pin_patterns: dict[str, str] = field(default_factory=dict)  # other target -> dist name there

    def commit_in(self, text: str) -> str | None:
        match = self.commit_pattern.search(text)
        return match.group(1) if match else None

    def installed_path(self, repo_path: str) -> str | None:
        for prefix, installed in self.installed_map:
            if repo_path == prefix.rstrip("/") or repo_path.startswith(prefix):
                return installed + repo_path[len(prefix) :]
        return None


PROFILES: dict[str, TargetProfile] = {
    "vllm": TargetProfile(
        name="vllm",
        distribution="vllm",
        repository="https://github.com/vllm-project/vllm",
        version_file="vllm/_version.py",
        commit_pattern=_VLLM_COMMIT,
        installed_map=(("vllm/", "vllm/"),),
        pr_style="vllm",
        pins_file="requirements/cuda.txt",
        pin_patterns={"flashinfer": "flashinfer-python"},
    ),
    "flashinfer": TargetProfile(
        name="flashinfer",
        distribution="flashinfer-python",
        repository="https://github.com/flashinfer-ai/flashinfer",
        version_file="flashinfer/_build_meta.py",
        commit_pattern=_FI_COMMIT,
        installed_map=(
            ("flashinfer/", "flashinfer/"),
            ("include/", "flashinfer/data/include/"),
            ("csrc/", "flashinfer/data/csrc/"),
        ),
        pr_style="conventional",
    ),
}


def profile(name: str) -> TargetProfile | None:
    return PROFILES.get(name)


def release_commit(tree: Path, target: str) -> str | None:
    """The upstream commit a source release or installed tree names, if it names one."""
    prof = profile(target)
    if prof is None:
        return None
    version_file = tree / prof.version_file
    if not version_file.is_file():
        return None
    return prof.commit_in(version_file.read_text(errors="replace"))


def pinned_versions(tree: Path, target: str) -> dict[str, str]:
    """Versions of other targets that this tree's requirements pin (``name==version``)."""

    def read(path: str) -> bytes | None:
        file = tree / path
        return file.read_bytes() if file.is_file() else None

    return pins_in(read, target)


def pins_in(read: Callable[[str], bytes | None], target: str) -> dict[str, str]:
    """The same, for a tree seen through a reader (a commit of a repository, say)."""
    prof = profile(target)
    content = read(prof.pins_file) if prof and prof.pins_file else None
    if prof is None or content is None:
        return {}
    text = content.decode(errors="replace")
    pins = {}
    for other, dist in prof.pin_patterns.items():
        match = re.search(rf"^\s*{re.escape(dist)}\s*==\s*([\w.\-+]+)", text, re.MULTILINE)
        if match:
            pins[other] = match.group(1)
    return pins


def commits_match(a: str, b: str) -> bool:
    """Abbreviated commit ids match when one is a prefix of the other (at least 7 digits)."""
    a, b = a.lower().removeprefix("g"), b.lower().removeprefix("g")
    n = min(len(a), len(b))
    return n >= 7 and a[:n] == b[:n]
