"""What a newcomer meets first (issue 15's walk, on temporary repositories): the README's first
command in an empty cache, and every bad input answered with the patch, the file and what to do."""

from __future__ import annotations

from pathlib import Path

import pytest

from patchkit.cli import main
from patchkit.upstream.sources import UpstreamRepo
from testing.builders import Scenario

FILES = {"a.txt": "a one\na two\n", "tool.sh": "#!/bin/sh\n", "sub/f.txt": "f\n"}


def scenario(tmp_path: Path) -> Scenario:
    s = Scenario(tmp_path, FILES)
    s.add("p1", {"a.txt": "a one\na TWO\n"})
    return s


def from_git(s: Scenario) -> None:
    """The lock takes the upstream from a git URL: the tree is fetched into the cache."""
    lock = s.lock_path.read_text()
    path_source = f'{{ kind = "path", path = "{s.upstream.path}" }}'
    assert path_source in lock
    s.lock_path.write_text(lock.replace(path_source, f'{{ kind = "git", url = "{s.root}" }}'))


def test_the_first_apply_and_status_in_an_empty_cache_fetch_the_tree(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    s = scenario(tmp_path)
    from_git(s)
    project = ["--target", "demo", "--project", str(s.project.path)]
    assert main(["status", *project]) == 0  # the cache has no trees/ yet: fetched, not a crash
    assert main(["apply", *project]) == 0
    out = capsys.readouterr()
    assert "internal error" not in out.err
    assert "p1" in out.out


def _new_file(path: bytes) -> bytes:
    return (
        b"diff --git a/" + path + b" b/" + path + b"\nnew file mode 100644\n--- /dev/null\n"
        b"+++ b/" + path + b"\n@@ -0,0 +1 @@\n+x\n"
    )


BAD = {  # diff, exit code, the file the message must name
    "a file under a file": (_new_file(b"a.txt/inner.txt"), 6, "a.txt/inner.txt"),
    "NUL byte": (
        b"--- a/a\x00.txt\n+++ b/a\x00.txt\n@@ -1 +1 @@\n-a one\n+A one\n",
        5,
        "a<NUL>.txt",
    ),
    "over-long name": (_new_file(b"d/" + b"y" * 300 + b"/z.txt"), 5, "d/yyy"),
    "new mode 999999": (
        b"diff --git a/tool.sh b/tool.sh\nold mode 100644\nnew mode 999999\n",
        6,
        "tool.sh",
    ),
    "a symbolic link": (
        b"diff --git a/tool.sh b/tool.sh\nold mode 100644\nnew mode 120000\n",
        6,
        "tool.sh",
    ),
    "a file where a directory is": (_new_file(b"sub"), 6, "sub"),
    "a path out of the tree": (_new_file(b"../escape.txt"), 5, "../escape.txt"),
    "a cut hunk": (b"--- a/a.txt\n+++ b/a.txt\n@@ -1,2 +1,2 @@\n a one\n", 6, "@@ -1,2 +1,2 @@"),
    "no diff at all": (b"\xff\xfe\x00garbage\n", 6, "contains no file changes"),
}


@pytest.mark.parametrize("case", sorted(BAD))
def test_a_bad_patch_is_refused_naming_the_patch_the_file_and_what_to_do(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], case: str
) -> None:
    diff, code, named = BAD[case]
    s = scenario(tmp_path)
    patch = s.set_root / "patches" / "p1.patch"
    patch.write_bytes(diff)
    before = {p: (s.root / p).read_bytes() for p in FILES}
    assert main(["apply", "--target", "demo", "--project", str(s.project.path),
                 "--checkout", str(s.root)]) == code  # fmt: skip
    out = capsys.readouterr()
    said = out.out + out.err
    assert "p1" in said, "the patch is not named"
    assert named in said, "the file is not named"
    assert "what to do:" in out.err and "nothing was written" in out.err
    assert "\\x00" not in said and "Traceback" not in said
    assert said.count(named) == 1, "the reason is said more than once"
    assert {p: (s.root / p).read_bytes() for p in FILES} == before
    assert not (s.root / "a.txt" / "inner.txt").exists() and not (tmp_path / "escape.txt").exists()


def test_after_the_lock_moves_the_cache_tree_follows_it_dropping_only_its_own_patches(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """A rebase moved the lock while the cache's tree has the old lock's patches applied:
    status and apply move the tree (patchkit resets what it applied, and says so)."""
    s = scenario(tmp_path)
    from_git(s)
    project = ["--target", "demo", "--project", str(s.project.path)]
    assert main(["apply", *project]) == 0
    s.upstream.commit({"b.txt": "new upstream file\n"}, "release 1.1")
    s.lock_to_head()
    assert main(["status", *project]) == 0
    assert "reset them (1 file(s)) to move it to the locked 1.1" in caplog.text
    shared = UpstreamRepo.shared_path("demo")
    assert (shared / "a.txt").read_text() == FILES["a.txt"]  # unpatched, at the new lock
    assert (shared / "b.txt").read_text() == "new upstream file\n"
    assert main(["apply", *project]) == 0
    assert (shared / "a.txt").read_text() == "a one\na TWO\n"


def test_an_edit_in_the_cache_tree_is_never_dropped_when_the_lock_moves(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    s = scenario(tmp_path)
    from_git(s)
    project = ["--target", "demo", "--project", str(s.project.path)]
    assert main(["apply", *project]) == 0
    shared = UpstreamRepo.shared_path("demo")
    (shared / "a.txt").write_text("my own edit\n")
    s.upstream.commit({"b.txt": "new upstream file\n"}, "release 1.1")
    s.lock_to_head()
    assert main(["status", *project]) == 4
    err = capsys.readouterr().err
    assert "a.txt" in err and "--force" in err and str(shared) in err
    assert (shared / "a.txt").read_text() == "my own edit\n"


def test_the_readme_table_newcomer_sh_checks_against_is_the_one_the_cli_uses() -> None:
    """scripts/newcomer.sh reads the documented exit codes from the README's line; they are
    exactly the codes patchkit returns."""
    import re

    from patchkit.errors import EXIT_CODES

    root = Path(__file__).resolve().parents[2]
    script = (root / "scripts" / "newcomer.sh").read_text()
    [pattern] = re.findall(r're\.findall\(r"(.+?)", line\)', script)
    line = next(x for x in (root / "README.md").read_text().splitlines() if x.startswith("Exit"))
    assert sorted(int(c) for c in re.findall(pattern, line)) == sorted(EXIT_CODES)
