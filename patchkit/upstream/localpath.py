"""A lock's ``source = { kind = "path", path = ... }``: the local checkout (or unpacked source
release) a target comes from, which ``fetch`` hands back and ``apply`` then writes into. A
lock is data anyone may share, so the path is checked where it is read: resolved against the
lock's own directory (never the current one), every link followed, it must not be the file
system's root, the home directory or a directory above it, the project (or a directory above
it), nor inside a git directory; and a directory that is there must be the top of a checkout
(it holds ``.git``) or of the target's source release (it holds the file naming its commit)."""

from __future__ import annotations

import os
from pathlib import Path

from patchkit.errors import ConfigError, shown
from patchkit.targets import profile
from patchkit.trust.paths import at_or_inside, names_git_dir


def local_source(raw: object, *, lock: Path, where: str) -> str | None:
    """``raw`` (``where``'s ``source.path``, ``where`` being ``targets.NAME``) as the absolute,
    resolved path of the tree (None when not given); ConfigError naming the lock and the key
    when it may not be one."""
    key = f"{lock}: {where}.source.path"
    if raw is None or raw == "":
        return None
    if not isinstance(raw, str):
        raise ConfigError(f"{key} must be text (got {shown(raw)})")
    if any(not ch.isprintable() for ch in raw):
        raise _refused(key, raw, "it holds control characters", where)
    written = os.path.normpath(os.path.join(lock.parent.absolute(), os.path.expanduser(raw)))
    real = os.path.realpath(written)
    for place in dict.fromkeys((written, real)):
        problem = _problem(place, os.path.realpath(lock.parent))
        if problem is not None:
            through = f" (through a link: {written} leads to {real})" if place != written else ""
            raise _refused(key, raw, problem + through, where)
    target = where.split(".", 1)[-1]
    if os.path.isdir(real) and not _is_tree_top(real, target):
        why = f"{real} is the top of no checkout (no .git in it) nor of a {target} release"
        raise _refused(key, raw, why, where)
    return real


def _problem(place: str, project: str) -> str | None:
    """Why the absolute ``place`` can be no target's tree, or None."""
    home = os.path.realpath(os.path.expanduser("~"))
    if place == os.sep:
        return "it is the file system's root"
    if names_git_dir(place):
        return f"{place} is inside a git directory"
    if at_or_inside(project, place):
        return f"{place} is the project ({project}) or a directory above it"
    if at_or_inside(home, place):
        return f"{place} is the home directory or a directory above it"
    return None


def _is_tree_top(directory: str, target: str) -> bool:
    if os.path.lexists(os.path.join(directory, ".git")):
        return True
    found = profile(target)
    return found is not None and os.path.isfile(os.path.join(directory, found.version_file))


def _refused(key: str, raw: str, why: str, where: str) -> ConfigError:
    target = where.split(".", 1)[-1]
    return ConfigError(
        f"{key} {shown(raw)} is refused: {why}",
        hint=f"point it at the top directory of a checkout of {target} (or of its source "
        'release) outside the project, or use kind = "index" or "git"',
    )
