"""Paths named by input, end to end: a patch's metadata naming a file outside its set, and a
diff writing into the checkout's git directory through a symlink the tree already has."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from patchkit.errors import ConfigError, UnsafePathError
from patchkit.gitrepo import blob_id
from patchkit.ops.port import port
from patchkit.project.sets import load_patchset
from patchkit.workspace.tree import checkout_tree
from testing.builders import Scenario, run_git, snapshot

FILES = {"a": "a one\na two\n"}


@pytest.mark.parametrize("named", ["{outside}", "../../../outside.patch", "../demo2/x.patch"])
def test_patch_file_outside_its_set_is_refused_at_load(tmp_path: Path, named: str) -> None:
    s = Scenario(tmp_path, FILES)
    s.add("p1", {"a": "a one\na TWO\n"})
    outside = tmp_path / "outside.patch"
    outside.write_bytes((s.set_root / "patches" / "p1.patch").read_bytes())
    meta = s.set_root / "patches" / "p1.toml"
    meta.write_text(meta.read_text() + f'file = "{named.format(outside=outside)}"\n')
    with pytest.raises(UnsafePathError, match=r"p1\.toml: key `file`") as info:
        load_patchset(s.set_root)
    assert info.value.exit_code == 5


HOOK = b"#!/bin/sh\ntouch pwned\n"


def _through_link(s: Scenario, link: str, inner: str) -> bytes:
    """A tree whose last commit has ``link -> .git``, and a diff creating ``link/inner``."""
    os.symlink(".git", s.root / link)
    run_git(s.root, "add", link)
    run_git(s.root, "commit", "-qm", "a link to the git directory")
    s.lock_to_head()
    blob = blob_id(HOOK)
    lines = [f"+{line}" for line in HOOK.decode().splitlines()]
    return (
        f"diff --git a/{link}/{inner} b/{link}/{inner}\nnew file mode 100755\n"
        f"index {'0' * 40}..{blob}\n--- /dev/null\n+++ b/{link}/{inner}\n"
        f"@@ -0,0 +1,{len(lines)} @@\n" + "\n".join(lines) + "\n"
    ).encode()


@pytest.mark.parametrize("inner", ["hooks/post-checkout", "config", "info/attributes"])
def test_apply_never_writes_the_git_dir_through_a_symlink(tmp_path: Path, inner: str) -> None:
    s = Scenario(tmp_path, FILES)
    s.project.add_diff("evil", _through_link(s, "gitlink", inner))
    before, config = snapshot(s.root), (s.root / ".git" / "config").read_bytes()
    with pytest.raises(UnsafePathError, match="inside a git directory") as info:
        s.apply()
    assert info.value.exit_code == 5
    assert not (s.root / ".git" / "hooks" / "post-checkout").exists()
    assert (s.root / ".git" / "config").read_bytes() == config
    assert not (s.root / ".git" / "info" / "attributes").exists()
    assert snapshot(s.root) == before


def test_port_never_writes_the_git_dir_through_a_symlink(tmp_path: Path) -> None:
    s = Scenario(tmp_path, FILES)
    patch = tmp_path / "evil.patch"
    patch.write_bytes(_through_link(s, "gitlink", "hooks/post-checkout"))
    before = snapshot(s.root)
    with pytest.raises(UnsafePathError, match="inside a git directory"):
        port(patch_file=patch, base_commit=s.upstream.head(), checkout=s.root)
    assert not (s.root / ".git" / "hooks" / "post-checkout").exists()
    assert snapshot(s.root) == before


@pytest.mark.parametrize("name", ["../../x", "a/b", "..", "-x", "x\\ny"])
def test_set_name_that_is_no_name_is_refused_at_load(tmp_path: Path, name: str) -> None:
    s = Scenario(tmp_path, FILES)
    s.add("p1", {"a": "a one\na TWO\n"})
    manifest = s.set_root / "patchset.toml"
    manifest.write_text(manifest.read_text().replace('name = "demo"', f'name = "{name}"'))
    with pytest.raises(ConfigError, match=r"patchset\.toml: key `name`: set name .* is refused"):
        load_patchset(s.set_root)


def test_port_base_that_looks_like_an_option_is_refused(tmp_path: Path) -> None:
    s = Scenario(tmp_path, FILES)
    patch = tmp_path / "p.patch"
    patch.write_bytes(s.upstream.diff_of({"a": "a one\na TWO\n"}))
    marker = tmp_path / "written"
    with pytest.raises(ConfigError, match="the release, tag or commit given: revision") as info:
        port(patch_file=patch, base_commit=f"--output={marker}", checkout=s.root)
    assert info.value.exit_code == 2 and not marker.exists()


def test_set_target_that_is_no_name_is_refused_at_load(tmp_path: Path) -> None:
    s = Scenario(tmp_path, FILES)
    s.add("p1", {"a": "a one\na TWO\n"})
    manifest = s.set_root / "patchset.toml"
    manifest.write_text(manifest.read_text().replace('targets = ["demo"]', 'targets = ["../../x"]'))
    with pytest.raises(ConfigError, match=r"patchset\.toml: key `targets`: target '\.\./\.\./x'"):
        load_patchset(s.set_root)


PARTS = ["a", "x", "gitlink", ".git", "hooks", "config", "sub", "..", ".", "out", "wt"]


@settings(
    max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(st.lists(st.sampled_from(PARTS), min_size=1, max_size=5))
def test_no_path_a_tree_accepts_resolves_outside_or_into_a_git_dir(
    tmp_path: Path, parts: list[str]
) -> None:
    base = tmp_path / "t"
    if not base.exists():
        s = Scenario(base, {"a": "1\n", "sub/x": "2\n"})
        (base / "outside").mkdir()
        for name, target in {
            "gitlink": ".git",
            "sub/hooks": "../.git/hooks",
            "out": "../outside",
        }.items():
            os.symlink(target, s.root / name)
        os.symlink(s.root / ".git", s.root / "wt")  # absolute
    tree = checkout_tree(base / "upstream", "demo")
    root = os.path.realpath(tree.root)
    try:
        place = tree.disk_path("/".join(parts))
    except UnsafePathError:
        return
    assert place.name not in (".", "..")
    resolved = os.path.join(os.path.realpath(place.parent), place.name)
    assert resolved.startswith(root + os.sep)
    assert ".git" not in resolved[len(root) :].split(os.sep)
