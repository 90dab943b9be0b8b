"""A warm apply does not read every file a rewrite searches: a file whose fingerprint is as when
it was last looked at keeps its verdict (taken by a rewrite or not); a changed file, or one
changed too recently to trust its time stamps, is read again."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

import patchkit.workspace.tree as tree_module
from patchkit.engine.rewrite import outcome
from patchkit.engine.rewrite.select import Selector, from_counts
from patchkit.engine.series import Blobs
from patchkit.errors import PatchkitError
from patchkit.ops.apply_tree import apply
from patchkit.project.load import load_project
from patchkit.workspace.reset import reset
from patchkit.workspace.tree import Tree, checkout_tree
from tests.engine.test_rewrite_moves import OPS, SEARCHING
from tests.ops.test_rebase import MOD, Releases

SELECTOR = Selector("Bump", "pkg/mod.py", ("pkg/**/*.py",), (), from_counts({"compute": 1}))
COMPUTE = b"def compute(a, b):\n    return a + b\n"


class Files:
    """A reader, a lister and a fingerprinter over files in memory, counting reads."""

    def __init__(self, files: dict[str, bytes], changed_ns: int) -> None:
        self.files, self.reads, self.changed_ns = dict(files), [], dict.fromkeys(files, changed_ns)

    def read(self, path: str) -> bytes | None:
        self.reads.append(path)
        return self.files.get(path)

    def listing(self, directory: str) -> list[str]:
        return sorted(p for p in self.files if p.startswith(directory + "/"))

    def fingerprint(self, path: str) -> tuple[int, ...] | None:
        data = self.files.get(path)
        return () if data is None else (len(data), hash(data), self.changed_ns[path], 0)

    def taken(self) -> dict[str, list[str]]:
        self.reads = []
        found = outcome._taken("key", [SELECTOR], self.read, self.listing, self.fingerprint)
        return {path: [s.rewrite for s in chosen] for path, chosen in found.items()}


def test_unchanged_files_keep_their_verdict_and_a_changed_one_is_read() -> None:
    old = time.time_ns() - 10**10
    tree = Files({"pkg/mod.py": COMPUTE, "pkg/a.py": b"X = 1\n", "pkg/b.py": b"Y = 2\n"}, old)
    assert tree.taken() == {"pkg/mod.py": ["Bump"]}
    assert sorted(tree.reads) == ["pkg/a.py", "pkg/b.py", "pkg/mod.py"]
    assert tree.taken() == {"pkg/mod.py": ["Bump"]} and tree.reads == []  # all kept
    tree.files["pkg/b.py"] = b"Y = 2\n" + COMPUTE  # now defines compute too
    assert tree.taken() == {"pkg/mod.py": ["Bump"], "pkg/b.py": ["Bump"]}
    assert tree.reads == ["pkg/b.py"]
    del tree.files["pkg/a.py"]
    tree.files["pkg/c.py"] = COMPUTE
    tree.changed_ns["pkg/c.py"] = old
    assert set(tree.taken()) == {"pkg/mod.py", "pkg/b.py", "pkg/c.py"}
    assert tree.reads == ["pkg/c.py"]


def test_a_file_changed_within_two_seconds_is_read_every_time() -> None:
    tree = Files({"pkg/mod.py": COMPUTE, "pkg/a.py": b"X = 1\n"}, time.time_ns())
    tree.changed_ns["pkg/mod.py"] -= 10**10
    tree.taken()
    tree.taken()
    assert tree.reads == ["pkg/a.py"]  # its time stamps may not move on its next change


def test_no_fingerprint_means_read() -> None:
    tree = Files({"pkg/mod.py": COMPUTE}, time.time_ns() - 10**10)
    found = outcome._taken("key", [SELECTOR], tree.read, tree.listing, None)
    assert list(found) == ["pkg/mod.py"] and tree.reads == ["pkg/mod.py"]


# -- on a checkout -------------------------------------------------------------------------------


def _apply(rel: Releases, tree: Tree) -> list[str]:
    project = load_project(rel.root)
    blobs = Blobs([rel.upstream.path])
    try:
        done = apply(
            tree=tree, entry=project.entry("demo"), patches=project.patches("demo"), blobs=blobs
        )
    finally:
        blobs.close()
    return list(done.written)


def test_a_searched_file_edited_after_a_warm_apply_is_looked_at_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """After warm applies kept every verdict, a file that comes to define the anchor makes the
    rewrite ambiguous; a kept verdict would have applied it to one file, silently."""
    monkeypatch.setattr(outcome, "_SETTLED_NS", -(10**12))  # trust every time stamp
    monkeypatch.setattr(tree_module, "stat_is_fresh", lambda path: True)  # a local disk
    rel = Releases(tmp_path, {"pkg/mod.py": MOD, "pkg/other.py": "X = 1\n"})
    rel.rewrite("bump", SEARCHING)
    tree = checkout_tree(rel.upstream.path, "demo")
    assert _apply(rel, tree) == ["pkg/mod.py"]  # cold: the rewrite runs, results cached
    reset(tree=tree)
    reads: list[str] = []
    real_read = Tree.read
    monkeypatch.setattr(Tree, "read", lambda self, p: reads.append(p) or real_read(self, p))
    assert _apply(rel, tree) == ["pkg/mod.py"]  # warm: verdicts kept for every file
    assert "pkg/other.py" in reads
    reset(tree=tree)
    reads.clear()
    assert _apply(rel, tree) == ["pkg/mod.py"]
    assert "pkg/other.py" not in reads  # its verdict was kept: not read
    reset(tree=tree)
    (rel.upstream.path / "pkg/other.py").write_text("X = 1\n\n\n" + OPS)
    with pytest.raises(PatchkitError) as failed:
        _apply(rel, tree)
    assert "pkg/other.py" in str(failed.value.results)  # type: ignore[attr-defined]


def test_a_tree_fingerprint_moves_with_every_write(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from testing.builders import Upstream

    monkeypatch.setattr(tree_module, "stat_is_fresh", lambda path: True)  # a local disk

    up = Upstream(tmp_path / "up")
    up.commit({"pkg/a.py": "a\n"})
    tree = checkout_tree(up.path, "demo")
    first = tree.fingerprint("pkg/a.py")
    assert first and tree.fingerprint("pkg/a.py") == first
    (up.path / "pkg/a.py").write_text("bb\n")  # written in place: another size
    second = tree.fingerprint("pkg/a.py")
    assert second and second != first
    (up.path / "pkg/new.py").write_text("b\n")
    (up.path / "pkg/new.py").replace(up.path / "pkg/a.py")  # a writer's replace: a new inode
    assert tree.fingerprint("pkg/a.py") not in (first, second)
    assert tree.fingerprint("pkg/gone.py") == () and tree.fingerprint("pkg/a.py/x") == ()
    (up.path / "link.py").symlink_to(up.path / "pkg/a.py")
    assert tree.fingerprint("link.py") is None  # not a plain file: the read says why


def test_bytes_read_earlier_are_never_paired_with_a_later_fingerprint(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An apply reads each file once. A file saved after that read but before a later rewrite
    looks at it has a new fingerprint and old bytes: no verdict may be kept from that pair."""
    from patchkit.ops.apply_tree import _Seen
    from testing.builders import Upstream

    monkeypatch.setattr(outcome, "_SETTLED_NS", -(10**12))  # trust every time stamp
    monkeypatch.setattr(tree_module, "stat_is_fresh", lambda path: True)  # a local disk
    up = Upstream(tmp_path / "up")
    up.commit({"pkg/mod.py": COMPUTE, "pkg/x.py": "X = 1\n"})
    tree = checkout_tree(up.path, "demo")
    seen = _Seen(tree)
    assert seen.read("pkg/x.py") == b"X = 1\n"  # an earlier rewrite of the series read it
    (up.path / "pkg/x.py").write_bytes(b"X = 1\n\n\n" + COMPUTE)  # saved meanwhile
    first = outcome._taken("k", [SELECTOR], seen.read, tree.files_under, seen.fingerprint)
    assert set(first) == {"pkg/mod.py"}  # this command works on what it read
    again = _Seen(tree)
    found = outcome._taken("k", [SELECTOR], again.read, tree.files_under, again.fingerprint)
    assert set(found) == {"pkg/mod.py", "pkg/x.py"}
