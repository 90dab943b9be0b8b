"""A repository (bare or with a work tree) and the git commands run in it: its facts, its
objects (read through one ``cat-file --batch``), history built off to the side (temporary
indexes, ``commit-tree``, ``update-ref``), worktrees, and the remotes an export pushes to.
"""

from __future__ import annotations

import contextlib
import os
import re
import tempfile
from collections.abc import Iterator, Sequence
from pathlib import Path

from patchkit.gitrepo.catfile import CatFile
from patchkit.gitrepo.command import EOO, FIXED_IDENTITY, not_option, run

_MAX_PATHSPECS = 1000  # paths given on one git command line
_FULL_ID = re.compile(r"[0-9a-f]{40}")


class GitRepo:
    """A repository (bare or with a work tree) at ``path``."""

    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        self._batch: CatFile | None = None

    # -- lifecycle ---------------------------------------------------------------------------
    @classmethod
    def init(cls, path: Path, *, bare: bool = False) -> GitRepo:
        path.mkdir(parents=True, exist_ok=True)
        run(["init", "-q", *(["--bare"] if bare else []), "-b", "main", str(path)])
        return cls(path)

    def close(self) -> None:
        if self._batch is not None:
            self._batch.close()
            self._batch = None

    def __del__(self) -> None:
        with contextlib.suppress(Exception):
            self.close()

    def __enter__(self) -> GitRepo:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def git(self, *args: str | os.PathLike[str], **kw: object) -> bytes:
        return run(args, cwd=self.path, **kw).stdout  # type: ignore[arg-type]

    def text(self, *args: str | os.PathLike[str], **kw: object) -> str:
        return self.git(*args, **kw).decode().strip()

    # -- facts -------------------------------------------------------------------------------
    def git_dir(self) -> Path:
        return (self.path / self.text("rev-parse", "--git-dir")).resolve()

    def toplevel(self) -> Path:
        return Path(self.text("rev-parse", "--show-toplevel"))

    def head(self) -> str | None:
        proc = run(["rev-parse", "--verify", "-q", "HEAD"], cwd=self.path, ok_codes=(0, 1))
        return proc.stdout.decode().strip() or None

    def resolve(self, rev: str) -> str | None:
        """The commit ``rev`` names. A full commit id is looked up in the object session (no
        process of its own); names that go through refs are asked of ``rev-parse``."""
        if _FULL_ID.fullmatch(rev):
            found = self._objects().lookup(f"{rev}^{{commit}}")
            return found[0] if found is not None and found[1] == "commit" else None
        proc = run(
            ["rev-parse", "--verify", "-q", EOO, f"{rev}^{{commit}}"],
            cwd=self.path,
            ok_codes=(0, 1),
        )
        return proc.stdout.decode().strip() or None

    def dirty_paths(self, paths: Sequence[str] | None = None) -> list[str]:
        """Paths (relative to the top) with uncommitted changes, untracked files included."""
        args = ["status", "--porcelain=v1", "-z", "--untracked-files=all"]
        if paths is not None and not paths:
            return []
        if paths is not None and len(paths) <= _MAX_PATHSPECS:
            args += ["--", *paths]
        elif paths is not None:  # too many for one command line: ask for all, keep those asked
            wanted = set(paths)
            return [p for p in self.dirty_paths(None) if p in wanted]
        out = self.git(*args).decode(errors="surrogateescape")
        entries = out.split("\0")
        dirty, i = [], 0
        while i < len(entries):
            entry = entries[i]
            if not entry:
                i += 1
                continue
            status, name = entry[:2], entry[3:]
            dirty.append(name)
            if "R" in status and i + 1 < len(entries):
                dirty.append(entries[i + 1])  # a rename (staged or not) changed its old path too
            i += 2 if "R" in status or "C" in status else 1  # they carry the old name next
        return dirty

    def tags(self, pattern: str = "*") -> list[str]:
        return [t for t in self.text("tag", "--list", pattern).splitlines() if t]

    def commit_message(self, rev: str) -> str:
        return self.text("log", "-1", "--format=%B", EOO, rev)

    # -- objects -----------------------------------------------------------------------------
    def _objects(self) -> CatFile:
        if self._batch is None:
            self._batch = CatFile(self.path)
        return self._batch

    def _object(self, name: str) -> tuple[bytes, bytes] | None:
        return self._objects().read(name)

    def read_blob(self, sha: str) -> bytes | None:
        """The content of blob ``sha`` (full id), or None if this repository lacks it."""
        if len(sha) != 40 or not all(c in "0123456789abcdef" for c in sha.lower()):
            return None
        found = self._object(sha)
        return found[1] if found and found[0] == b"blob" else None

    def read_files(self, rev: str, paths: Sequence[str]) -> dict[str, bytes]:
        """The files of ``rev`` among ``paths`` (absent ones left out), read in the one
        ``cat-file --batch`` session (a name holding a newline, which it cannot take, is
        looked up with ``ls-tree``)."""
        found = {}
        odd = [p for p in paths if "\n" in p]
        for path in dict.fromkeys(p for p in paths if "\n" not in p):
            content = self.read_file(rev, path)
            if content is not None:
                found[path] = content
        for name, (_mode, sha) in (self.ls_tree(rev, odd) if odd else {}).items():
            content = self.read_blob(sha) if name in odd else None
            if content is not None:
                found[name] = content
        return found

    def read_file(self, rev: str, path: str) -> bytes | None:
        """The content of ``path`` at ``rev``, or None when it is not a file there."""
        found = self._object(f"{rev}:{path}")
        return found[1] if found and found[0] == b"blob" else None

    def write_blob(self, content: bytes) -> str:
        return self.text("hash-object", "-w", "--stdin", input=content)

    def ls_tree(self, rev: str, paths: Sequence[str] = ()) -> dict[str, tuple[str, str]]:
        """path -> (mode, blob id) for the files of ``rev`` (under ``paths`` if given)."""
        # (after --end-of-options a "--" would be a path: the paths follow the tree directly)
        out = self.git("ls-tree", "-r", "-z", "--full-tree", EOO, rev, *paths)
        result = {}
        for entry in out.decode(errors="surrogateescape").split("\0"):
            if entry:
                meta, name = entry.split("\t", 1)
                mode, _type, sha = meta.split()
                result[name] = (mode, sha)
        return result

    # -- building history --------------------------------------------------------------------
    def commit_directory(
        self, directory: Path, *, parent: str | None, message: str, date: str | None = None
    ) -> str:
        """Commit the whole of ``directory`` as a new commit (a temporary index, no checkout)."""
        env = dict(FIXED_IDENTITY)
        if date:
            env.update({"GIT_AUTHOR_DATE": date, "GIT_COMMITTER_DATE": date})
        with tempfile.TemporaryDirectory(prefix="patchkit-index-") as tmp:
            env["GIT_INDEX_FILE"] = str(Path(tmp) / "index")
            common = [
                "-c",
                "core.autocrlf=false",
                "--git-dir",
                str(self.git_dir()),
                "--work-tree",
                str(directory),
            ]
            run([*common, "add", "-A", "-f", "."], cwd=directory, env=env)
            tree = run([*common, "write-tree"], cwd=directory, env=env).stdout.decode().strip()
        parents = ["-p", not_option(parent)] if parent else []
        return self.text("commit-tree", "--no-gpg-sign", tree, *parents, "-m", message, env=env)

    def refused_branches(self, names: Sequence[str]) -> list[str]:
        """Of ``names``, those git refuses as branch names (``git check-ref-format``)."""
        refused = []
        for name in names:
            proc = run(["check-ref-format", f"refs/heads/{name}"], cwd=self.path, ok_codes=(0, 1))
            if proc.returncode != 0 or name.startswith("-"):
                refused.append(name)
        return refused

    def update_ref(self, ref: str, new: str, old: str | None = None) -> None:
        self.git("update-ref", EOO, ref, new, *([old] if old else []))

    def tag(self, name: str, commit: str) -> None:
        self.git("tag", "-f", EOO, name, commit)

    def add_worktree(self, path: Path, rev: str, *, only: Sequence[str] | None = None) -> None:
        """A linked worktree at ``rev``; with ``only``, a sparse one holding just those files
        (a stopped rebase keeps what a person fixes, not the whole tree)."""
        self.git("worktree", "prune")
        if only is None:
            self.git("worktree", "add", "-f", "--detach", EOO, str(path), rev)
            return
        self.git("worktree", "add", "-f", "--detach", "--no-checkout", EOO, str(path), rev)
        patterns = ["/" + re.sub(r"([*?\[\]!#\\])", r"\\\1", p) for p in only]
        run(
            ["sparse-checkout", "set", "--no-cone", "--stdin"],
            cwd=path,
            input="\n".join(patterns).encode(),
        )
        run(["read-tree", "-mu", "HEAD"], cwd=path)

    def remove_worktree(self, path: Path) -> None:
        """Remove a linked worktree, local changes and all (used by rebase)."""
        self.git("worktree", "remove", "--force", str(path))
        self.git("worktree", "prune")

    def renames(self, old: str, new: str) -> dict[str, str]:
        """Files renamed between two commits (git's rename detection): old path -> new path."""
        out = self.git("diff", "--name-status", "-z", "-M", "--diff-filter=R", EOO, old, new)
        fields = out.decode(errors="surrogateescape").split("\0")
        return {fields[i + 1]: fields[i + 2] for i in range(0, len(fields) - 2, 3) if fields[i]}

    def files_with(
        self, text: str, patterns: Sequence[str] = (), rev: str | None = None
    ) -> list[str]:
        """Tracked files of the work tree (of commit ``rev`` when given) holding ``text`` (a
        fixed string), under ``patterns`` (pathspecs) when given."""
        at = [not_option(rev)] if rev else []  # (git grep takes no --end-of-options)
        proc = run(
            ["grep", "-l", "-z", "-F", "-e", text, *at, "--", *patterns],
            cwd=self.path,
            ok_codes=(0, 1),
        )
        found = [p for p in proc.stdout.decode(errors="surrogateescape").split("\0") if p]
        return [p.removeprefix(f"{rev}:") for p in found] if rev else found

    def rev_list(self, old: str, new: str) -> list[str]:
        """Commits after ``old`` up to ``new``, oldest first, along first parents (rebase)."""
        out = self.text("rev-list", "--reverse", "--first-parent", EOO, f"{old}..{new}")
        return out.split()

    def checkout_detached(self, rev: str) -> None:
        self.git("checkout", "-q", "--detach", not_option(rev))  # (no --end-of-options here)

    # -- export: commits built off to the side, refs, remotes ------------------------------
    def config(self, key: str) -> str | None:
        proc = run(["config", "--get", key], cwd=self.path, ok_codes=(0, 1))
        return proc.stdout.decode().strip() or None

    def tree_with(self, base: str, entries: Sequence[tuple[str, str | None, str]]) -> str:
        """The tree of ``base`` with ``(path, blob id or None to delete, mode)`` entries changed,
        built in a temporary index: the work tree and the real index are never read or written."""
        lines = [
            f"{mode} {blob}\t{path}" if blob else f"0 {'0' * 40}\t{path}"
            for path, blob, mode in entries
        ]
        with tempfile.TemporaryDirectory(prefix="patchkit-index-") as tmp:
            env = {"GIT_INDEX_FILE": str(Path(tmp) / "index")}
            self.git("read-tree", EOO, base, env=env)
            stdin = "".join(f"{line}\0" for line in lines).encode()
            self.git("update-index", "-z", "--index-info", input=stdin, env=env)
            return self.text("write-tree", env=env)

    def commit_tree(
        self, tree: str, parents: Sequence[str], message: str, env: dict[str, str]
    ) -> str:
        """A commit object (unsigned, message verbatim); ``env`` sets identity and dates."""
        parent_args = (a for p in parents for a in ("-p", not_option(p)))
        args = ["commit-tree", "--no-gpg-sign", not_option(tree), *parent_args]
        return self.text(*args, "-F", "-", input=message.encode(), env=env)

    def last_commit_date(self, path: Path) -> str | None:
        """Author date (ISO 8601) of the last commit that touched ``path``; None if none did."""
        proc = run(["log", "-1", "--format=%aI", "--", str(path)], cwd=self.path, ok_codes=(0, 128))
        return proc.stdout.decode().strip() or None

    def remote_push_url(self, name: str) -> str | None:
        proc = run(["remote", "get-url", "--push", name], cwd=self.path, ok_codes=(0, 2, 128))
        if proc.returncode != 0:
            return None
        return proc.stdout.decode().strip() or None

    def checked_out_branches(self) -> list[str]:
        """Refs checked out in any worktree of this repository (``refs/heads/...``)."""
        out = self.text("worktree", "list", "--porcelain")
        return [line.split(" ", 1)[1] for line in out.splitlines() if line.startswith("branch ")]

    def push(
        self,
        remote: str,
        refspecs: Sequence[str],
        *,
        leases: Sequence[str] = (),
        force: bool = False,
    ) -> None:
        """One atomic push; ``leases`` are ``--force-with-lease=<ref>:<expected>`` values."""
        flags = ["--force"] if force else [f"--force-with-lease={lease}" for lease in leases]
        self.git("push", "--atomic", *flags, EOO, remote, *refspecs)

    def format_patch(self, commit: str) -> bytes:
        """``git format-patch -1 --stdout --full-index`` of one commit (stable: no commit id)."""
        return self.git(
            "format-patch",
            "-1",
            "--stdout",
            "--full-index",
            "--zero-commit",
            "--no-signature",
            EOO,
            commit,
        )


@contextlib.contextmanager
def open_repo(path: Path) -> Iterator[GitRepo]:
    repo = GitRepo(path)
    try:
        yield repo
    finally:
        repo.close()
