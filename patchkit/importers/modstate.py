"""What reading one container mod keeps: where the script stands (its directory, the
target's checkout it cloned), what it found, and what it refused, with the helpers every kind
of step uses (a file of the mod, the comments above a step, a refusal by line)."""

from __future__ import annotations

import posixpath
from dataclasses import dataclass, field, replace
from pathlib import Path

from patchkit.importers.meta import comment_meta, parse_dep3
from patchkit.importers.model import Candidate, Meta
from patchkit.importers.selfcheck import SelfCheck
from patchkit.importers.shell import Script, Step, display, known

QUIET = {
    "set", "echo", "exit", "true", ":", "printf", "trap", "grep", "test", "[", "[[", "ls",
    "mkdir", "which", "command", "type", "sleep", "wc", "head", "tail", "function", "return",
    "local", "shopt", "umask", "pushd", "popd", "unset", "env", "nproc", "date", "uname", "id",
    "apt-get", "apt", "yum", "dnf", "apk", "curl", "wget", "uv", "source", ".", "chmod", "chown",
    "nvidia-smi", "sha256sum", "md5sum", "du", "df", "free", "tar", "unzip", "cmake", "make",
    "ninja", "conda", "mamba", "ccache", "sync", "read", "wait", "kill", "tee", "xargs",
    "ps", "pgrep", "pkill", "nohup", "update-alternatives", "clang", "gcc", "nvcc", "ldconfig",
    "awk", "cut", "sort", "uniq", "basename", "dirname", "realpath", "readlink", "seq", "stat",
    "break", "continue", "shift", "disown", "useradd", "groupadd", "usermod",
}  # fmt: skip  # steps that change no file of the target (setup, checks, output)


@dataclass
class Mod:
    root: Path  # the mod directory
    target: str
    script: Script
    cwd: str = "/"
    found: list[Candidate] = field(default_factory=list)
    untranslated: list[str] = field(default_factory=list)
    requires: list[str] = field(default_factory=list)
    checks: list[tuple[int, SelfCheck]] = field(default_factory=list)  # (patches before, check)
    noted: list[str] = field(default_factory=list)  # requirements and checks, as written
    clones: dict[str, str] = field(default_factory=dict)  # directory -> URL (git clone)
    checkout: str | None = None  # the target's checkout the script is in (a build script)
    depth: int = 0  # bash -c scripts being read inside each other

    @property
    def run_sh(self) -> Path:
        return self.script.path


def refuse(mod: Mod, step: Step, why: str) -> None:
    line = f"line {step.line}: {display(why)}: {step.text.strip()}"
    if line not in mod.untranslated:  # the commands of one pipeline: said once
        mod.untranslated.append(line)


def mod_file(mod: Mod, name: str, step: Step) -> Path | None:
    """A file of the mod that the step names (by its path in the mod, or its name there)."""
    if not known(name):
        refuse(mod, step, "a file computed at run time")
        return None
    root = mod.root.resolve()
    candidates = [Path(name), root / name, root / posixpath.basename(name)]
    for found in candidates:
        try:
            resolved = found.resolve()
        except OSError:
            continue
        if resolved.is_file() and resolved.is_relative_to(root) and not found.is_symlink():
            return resolved
    refuse(mod, step, f"names {name}, which is not a file of {mod.root}")
    return None


def in_mod(mod: Mod, name: str) -> bool:
    path = mod.root / name
    return known(name) and path.is_file() and path.resolve().is_relative_to(mod.root.resolve())


def _comments(mod: Mod, line: int) -> list[str]:
    """The comment block right above ``line``, then the script's header comments."""
    above: list[str] = []
    at = line - 1
    while at in mod.script.comments:
        above.insert(0, mod.script.comments[at])
        at -= 1
    first = min((s.line for s in mod.script.steps), default=line)
    header = [
        t for n, t in sorted(mod.script.comments.items()) if n < first and not t.startswith("!")
    ]
    return above + [h for h in header if h not in above]


def step_meta(mod: Mod, step: Step, preamble: str, stem: str) -> Meta:
    from_patch = parse_dep3(preamble) if preamble.strip() else Meta()
    own = comment_meta(_comments(mod, step.line), fallback_title=stem)
    meta = own
    if from_patch.title:
        meta = replace(from_patch, issues=from_patch.issues + own.issues, prs=own.prs)
    if step.tolerated:
        fields = {**meta.fields, "Tolerated": f"run.sh line {step.line} goes on when it fails"}
        meta = replace(meta, fields=fields)
    return meta
