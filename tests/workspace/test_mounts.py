"""The verdict cache trusts ``lstat`` only on local file systems: network mounts may answer from
an attribute cache, so a file changed on another machine could keep its old fingerprint."""

from __future__ import annotations

from pathlib import Path

import pytest

import patchkit.workspace.mounts as mounts
import patchkit.workspace.tree as tree_module
from patchkit.workspace.tree import Tree

TABLE = """\
22 1 8:1 / / rw,relatime - ext4 /dev/sda1 rw
30 22 0:50 / /mnt/shared rw,relatime - nfs4 server:/export rw,vers=4.2
31 22 0:51 / /mnt/shared/local rw - tmpfs tmpfs rw
32 22 0:52 / /mnt/with\\040space rw - fuse.sshfs host: rw
"""


@pytest.fixture
def table(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    path = tmp_path / "mountinfo"
    path.write_text(TABLE)
    monkeypatch.setattr(mounts, "MOUNTINFO", str(path))
    mounts.stat_is_fresh.cache_clear()
    yield path
    mounts.stat_is_fresh.cache_clear()


def test_network_mounts_are_not_trusted_local_ones_are(table: Path) -> None:
    assert mounts.stat_is_fresh("/home/me/vllm")
    assert not mounts.stat_is_fresh("/mnt/shared/vllm")  # NFS
    assert mounts.stat_is_fresh("/mnt/shared/local/vllm")  # the deepest mount decides
    assert not mounts.stat_is_fresh("/mnt/with space/vllm")  # sshfs, its name unescaped
    assert mounts.stat_is_fresh("/mnt/sharedx/vllm")  # a name that only starts the same


def test_an_unreadable_mount_table_trusts_nothing(table: Path) -> None:
    table.unlink()
    assert not mounts.stat_is_fresh("/home/me/vllm")


def test_a_tree_on_a_network_mount_gives_no_fingerprint(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "a.py").write_text("a\n")
    tree = Tree(tmp_path, tmp_path / ".state", "demo")
    monkeypatch.setattr(tree_module, "stat_is_fresh", lambda path: True)
    assert tree.fingerprint("a.py")
    monkeypatch.setattr(tree_module, "stat_is_fresh", lambda path: False)
    assert tree.fingerprint("a.py") is None  # read every time, as before the cache
