"""Where code moved between two commits of upstream history: the one moved-code finder (a
:class:`~patchkit.engine.relocate.Finder`) of rebase, its bisection, the matrix and port. Light:
git only, so ``port`` imports no package-index client."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from patchkit.gitrepo import GitRepo


@dataclass
class HistoryFinder:
    """Where moved code went between commit ``old`` and commit ``new`` (None: the checkout's
    files as they are, its renames counted up to HEAD): git's renames, files holding a scope's
    first line. Asked only when a file or a scope is gone; the one finder of rebase, its
    bisection, the matrix and port."""

    repo: GitRepo
    old: str
    new: str | None = None
    _renames: dict[str, str] | None = None

    def renamed(self, path: str) -> str | None:
        if self._renames is None:
            self._renames = self.repo.renames(self.old, self.new or "HEAD")
        return self._renames.get(path)

    def files_with(self, text: str, patterns: Sequence[str]) -> list[str]:
        return self.repo.files_with(text, patterns, rev=self.new)
