"""The project as a verb reads it: the lock and the patch sets found from a directory."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from patchkit.errors import ConfigError, shown
from patchkit.model import Lock, LockEntry, PatchMeta, PatchSet
from patchkit.project.lock import find_lock, load_lock, target
from patchkit.project.sets import load_patchsets, select_patches


@dataclass(frozen=True)
class Project:
    """A patch repository: its lock and its patch sets."""

    root: Path
    lock: Lock
    sets: tuple[PatchSet, ...]

    def entry(self, name: str) -> LockEntry:
        return target(self.lock, name)

    def patches(
        self, name: str, *, include: tuple[str, ...] = (), only: tuple[str, ...] = ()
    ) -> list[PatchMeta]:
        return select_patches(list(self.sets), name, include=include, only=only)

    def listed(self, name: str) -> list[PatchMeta]:
        """Every patch for the target, opt-in ones included (for status and reports)."""
        return [p for s in self.sets for p in s.for_target(name)]

    def patch(self, patch_id: str) -> PatchMeta:
        for patch_set in self.sets:
            for meta in patch_set.patches:
                if meta.id == patch_id:
                    return meta
        raise ConfigError(
            f"no patch {shown(patch_id)} in the patch sets under {self.root}/patchsets"
        )


def load_project(start: Path, sets: list[str] | None = None) -> Project:
    lock_path = find_lock(start.resolve())
    root = lock_path.parent
    return Project(root, load_lock(lock_path), tuple(load_patchsets(root, sets)))
