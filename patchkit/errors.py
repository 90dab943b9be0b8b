"""One error family. Every expected failure is a PatchkitError with a message that names the
file, patch or commit involved and says what to do next; the CLI turns it into a message and an
exit code, never a traceback."""

from __future__ import annotations


class PatchkitError(Exception):
    """Base of every expected error. ``exit_code`` is what the CLI returns."""

    exit_code = 1
    default_hint: str | None = None  # what to do, when the raiser has nothing more precise

    def __init__(self, message: str, *, hint: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint if hint is not None else self.default_hint

    def __str__(self) -> str:
        return self.message if not self.hint else f"{self.message}\n  hint: {self.hint}"


class ConfigError(PatchkitError):
    """A command line or a file patchkit reads (lock, manifest, patch metadata) it cannot act on:
    a missing or malformed key, an unknown target or patch, nothing to continue. Names the file
    and the key, or the argument."""

    exit_code = 2


class SourceError(PatchkitError):
    """Upstream sources could not be fetched or identified."""

    exit_code = 3


class GitError(PatchkitError):
    """A git command failed; carries the command, exit code and stderr."""

    exit_code = 3


class TreeError(PatchkitError):
    """The tree is not in a state patchkit may touch (dirty, wrong commit, user edits)."""

    exit_code = 4


class TreeBusy(PatchkitError):
    """Another patchkit process is changing the same tree; nothing was done."""

    exit_code = 9


class UnsafePathError(PatchkitError):
    """A patch names a path outside the tree (``..``, absolute, through a symlink)."""

    exit_code = 5
    default_hint = (
        "nothing was written; fix the path in the patch's `diff --git`/`---`/`+++` lines: a "
        "patch may only name files inside the tree, each name shorter than 256 bytes, no NUL"
    )


class PatchFailed(PatchkitError):
    """One or more patches could not be applied; nothing was written."""

    exit_code = 6


class MalformedPatch(PatchFailed):
    """A diff lost some of its content (a mangled hunk header, a cut hunk): nothing applied."""


class UnsupportedChange(PatchFailed):
    """A diff asks for what patchkit never writes: links, submodules, setuid or odd modes."""


class VerificationFailed(PatchkitError):
    """A patch's tests failed."""

    exit_code = 7


class FormatterUnavailable(PatchkitError):
    """A formatter upstream pins (its ``.pre-commit-config.yaml``) could not be installed or
    run at that version: nothing is exported rather than unformatted or differently formatted
    code."""

    exit_code = 10


class RebaseStopped(PatchkitError):
    """A rebase stopped for a person: conflicts or ambiguity were reported."""

    exit_code = 8


EXIT_CODES = {
    0: "success",
    2: "usage or configuration error (arguments, upstream.lock, patchset.toml, patch metadata)",
    3: "source or git error (fetch, download, git command)",
    4: "tree refused (uncommitted changes, other commit, edited patched files)",
    5: "unsafe path in a patch",
    6: "a patch failed to apply, or is not a valid patch (nothing written)",
    7: "verification failed",
    8: "rebase stopped for a person (conflict report written)",
    9: "busy: another patchkit command is changing the same tree (nothing was done; retry)",
    10: "a formatter upstream pins could not be installed or run (nothing was exported)",
    11: 'applied, but left out a patch that may fail (on_failure = "skip", --keep-going)',
    70: "internal error (a bug in patchkit: please report it with the crash log)",
    130: "interrupted",
}


class ImportRefused(PatchkitError):
    """A source given to ``patchkit import`` cannot be read without running it (a dynamic
    script), or names files outside the target. Names the source, the line and the way out."""

    exit_code = 2


_NAMES = {"\0": "NUL", "\t": "TAB", "\n": "LF", "\r": "CR", "\x1b": "ESC"}


def shown(value: object) -> str:
    """A value as a message shows it to a person, not as Python's repr: text in quotes with
    control characters named (``<NUL>``), ``nothing`` for None, bytes decoded."""
    if value is None:
        return "nothing"
    if isinstance(value, bytes):
        value = value.decode("utf-8", errors="replace")
    if not isinstance(value, str):
        return str(value)
    text = "".join(
        ch if ch.isprintable() else f"<{_NAMES.get(ch, f'U+{ord(ch):04X}')}>" for ch in value
    )
    return f"'{text}'"


class CacheUntrusted(ConfigError):
    """patchkit's cache (or a directory or key file in it) belongs to another user or can be
    written by others: nothing is read from it or written to it. Names the path and the fix."""


class ClusterUnreachable(ConfigError):
    """``--ray ADDRESS``: no Ray cluster answered there within the connect timeout."""


class AlreadyUpstream(PatchFailed):
    """``export-pr``: the change is already in the upstream code the branch would be based on
    (applying it changes nothing): no PR, a note (and a comment for an open PR) instead."""


class UnprovenTest(PatchFailed):
    """``export-pr``: the PR's upstream test does not show the fix (it passes without the change
    too, or fails with it): that patch gets no branch, the others go on."""


class SettingRefused(ConfigError):
    """A ``PATCHKIT_*`` environment variable holds no value patchkit can use (``0`` for a time
    limit, ``-1``, ``nan``, ``ten``): names the variable and the values it takes. A setting of
    the whole command, never one patch's failure: the command stops (exit 2)."""
