"""A release as people name it: a commit, a tag, a version, or the upstream commit it names."""

from __future__ import annotations

import re

from patchkit.gitrepo import GitRepo
from patchkit.targets import commits_match
from patchkit.trust.gitargs import check_rev

# how a release commit in the cache names the upstream commit it is (``upstream.sources`` writes it)
TRAILER = "Upstream-Commit:"


def resolve_release_ref(repo: GitRepo, ref: str) -> str | None:
    """The commit ``ref`` names in ``repo``: itself (a commit, tag or branch); ``v<ref>`` (the tag
    of a fetched release, so ``0.6.6`` works); ``refs/upstream/tags/<ref>`` (a git mirror's
    tags); or the release commit whose message names upstream commit ``ref`` (or a prefix)."""
    check_rev(ref, where="the release, tag or commit given")
    for candidate in (ref, f"v{ref}", f"refs/upstream/tags/{ref}"):
        found = repo.resolve(candidate)
        if found:
            return found
    if not re.fullmatch(r"[0-9a-fA-F]{7,40}", ref):
        return None
    out = repo.text("log", "--all", "--format=%H%x00%B%x01", f"--grep={TRAILER} {ref.lower()}")
    for entry in out.split("\x01"):
        commit, _, message = entry.strip().partition("\0")
        for line in message.splitlines():
            named = line.removeprefix(TRAILER).strip() if line.startswith(TRAILER) else ""
            if named and commits_match(named, ref):
                return commit
    return None
