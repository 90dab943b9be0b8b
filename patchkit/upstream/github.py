"""The GitHub CLI (``gh``), found and checked once at the edge and passed in: patchkit never
talks to GitHub otherwise, and tests put a fake ``gh`` on ``PATH``.

Without ``gh``, or with ``gh`` not logged in, :meth:`Gh.find` raises :class:`ConfigError`
(exit 2) saying how to get it; a ``gh`` call that fails is a :class:`SourceError` (exit 3)."""

from __future__ import annotations

import json
import logging
import re
import selectors
import shutil
import subprocess
import time
from collections.abc import Sequence
from pathlib import Path
from typing import IO, Any

from patchkit.errors import ConfigError, SourceError
from patchkit.trust.envvars import seconds

log = logging.getLogger("patchkit.upstream.github")
TIMEOUT_S = 120.0  # PATCHKIT_GH_TIMEOUT overrides it: the longest one `gh` call may take
MAX_OUTPUT_BYTES = 64 * 1024 * 1024  # a `gh` answer (a PR's diff too) larger is refused
MAX_JSON_BYTES = 32 * 1024 * 1024  # a `gh --json` answer larger than this is refused
MAX_JSON_DEPTH = 32  # arrays and objects inside each other: gh's answers use five


def slug(repository: str) -> str:
    """``owner/name`` of a GitHub repository URL (``https://github.com/vllm-project/vllm``)."""
    text = repository.strip().rstrip("/").removesuffix(".git")
    match = re.search(r"github\.com[/:]([^/]+/[^/]+)$", text)
    return match.group(1) if match else "/".join(text.split("/")[-2:])


class Gh:
    """One ``gh`` executable, logged in."""

    def __init__(self, path: str) -> None:
        self.path = path

    @classmethod
    def find(cls, why: str = "searching upstream for pull requests") -> Gh:
        path = shutil.which("gh")
        if path is None:
            raise ConfigError(
                f"{why} needs the GitHub CLI `gh`, which is not installed",
                hint="install it (https://cli.github.com), then `gh auth login`",
            )
        gh = cls(path)
        proc = gh._run(["auth", "status"])
        if proc.returncode != 0:
            raise ConfigError(
                f"{why} needs the GitHub CLI logged in: `gh auth status` says "
                f"{(proc.stderr or proc.stdout).strip() or 'not logged in'}",
                hint="run `gh auth login` (or set GH_TOKEN), then try again",
            )
        return gh

    def _run(
        self, args: Sequence[str], cwd: Path | None = None
    ) -> subprocess.CompletedProcess[str]:
        log.debug("$ gh %s", " ".join(args))
        limit = seconds("PATCHKIT_GH_TIMEOUT", TIMEOUT_S)
        command = f"`gh {' '.join(args[:2])}`"
        try:
            with subprocess.Popen(
                [self.path, *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=cwd
            ) as proc:
                out, err, why = _bounded(proc, time.monotonic() + limit)
                if why:
                    proc.kill()
                returncode = proc.wait()
        except OSError as exc:
            raise SourceError(f"{command} could not run: {exc}") from None
        if why:
            raise SourceError(
                f"{command} {why}; stopped",
                hint="check `gh auth status` and the network; PATCHKIT_GH_TIMEOUT sets the "
                f"limit in seconds (default {TIMEOUT_S:g})",
            )
        # a PR diff may hold bytes of any encoding
        text = out.decode("utf-8", errors="replace"), err.decode("utf-8", errors="replace")
        return subprocess.CompletedProcess([self.path, *args], returncode, *text)

    def text(self, *args: str, cwd: Path | None = None) -> str:
        proc = self._run(args, cwd)
        if proc.returncode != 0:
            raise SourceError(
                f"`gh {' '.join(args)}` failed (exit {proc.returncode}): "
                f"{(proc.stderr or proc.stdout).strip()}",
                hint="check `gh auth status` and the repository name, then try again",
            )
        return proc.stdout

    def json(self, *args: str) -> Any:
        """The JSON ``gh`` prints, within :data:`MAX_JSON_BYTES` and :data:`MAX_JSON_DEPTH`
        (integers within Python's 4300 digits); anything else is a SourceError naming the
        command and the limit, never a crash."""
        out = self.text(*args)
        command = f"`gh {' '.join(args[:2])}`"
        if len(out) > MAX_JSON_BYTES:
            raise SourceError(
                f"{command} printed {len(out)} characters, over the limit of {MAX_JSON_BYTES} "
                "(MAX_JSON_BYTES); nothing was read"
            )
        try:
            value = json.loads(out)
        except (ValueError, RecursionError) as exc:  # not JSON, an integer of 4300+ digits
            reason = str(exc)[:120] if isinstance(exc, ValueError) else "nested too deep"
            raise SourceError(f"{command} printed no JSON patchkit reads ({reason})") from None
        if _depth(value) > MAX_JSON_DEPTH:
            raise SourceError(
                f"{command} printed JSON nested deeper than {MAX_JSON_DEPTH} levels "
                "(MAX_JSON_DEPTH); nothing was read"
            )
        return value


def _bounded(proc: subprocess.Popen[bytes], deadline: float) -> tuple[bytes, bytes, str]:
    """What ``proc`` prints on stdout and stderr, read as it comes until both end; with why it
    was stopped instead: past ``deadline``, or more than :data:`MAX_OUTPUT_BYTES`."""
    got: dict[IO[bytes], bytearray] = {}
    with selectors.DefaultSelector() as selector:
        for stream in (proc.stdout, proc.stderr):
            assert stream is not None
            selector.register(stream, selectors.EVENT_READ)
            got[stream] = bytearray()
        while selector.get_map():
            left = deadline - time.monotonic()
            if left <= 0:
                return b"", b"", "gave no answer in time"
            for key, _ in selector.select(left):
                chunk = key.fileobj.read1(65536)  # type: ignore[union-attr]
                if not chunk:
                    selector.unregister(key.fileobj)
                got[key.fileobj].extend(chunk)  # type: ignore[index]
            if sum(map(len, got.values())) > MAX_OUTPUT_BYTES:
                return b"", b"", f"printed more than {MAX_OUTPUT_BYTES} bytes (MAX_OUTPUT_BYTES)"
    out, err = (bytes(got[s]) for s in (proc.stdout, proc.stderr))  # type: ignore[index]
    return out, err, ""


def _depth(value: Any) -> int:
    """How deep arrays and objects nest in ``value`` (walked without recursion)."""
    deepest, stack = 0, [(value, 1)]
    while stack:
        item, level = stack.pop()
        children = (
            item.values() if isinstance(item, dict) else item if isinstance(item, list) else None
        )
        if children is None:
            continue
        deepest = max(deepest, level)
        if deepest > MAX_JSON_DEPTH:
            return deepest
        stack.extend((child, level + 1) for child in children)
    return deepest
