"""The diff engine on real trees: exact, by unique context, three-way, already applied; unsafe
paths and ambiguity refused with nothing written; line endings, modes, renames round-trip."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from patchkit.engine.diff.parse import parse_diff
from patchkit.errors import PatchkitError, UnsafePathError, UnsupportedChange
from patchkit.ops.apply_tree import ApplyFailed
from patchkit.outcome import Outcome, Step
from testing.builders import Scenario, git_status, snapshot

BODY = "".join(f"line{i}\n" for i in range(1, 21))
FUNC = "def f(x):\n    a = x\n    b = a * 2\n    c = b + 1\n    d = c - 3\n    return d\n"


def refused(scenario: Scenario, error: type[Exception] = ApplyFailed) -> pytest.ExceptionInfo:
    """Apply must fail with ``error`` and leave every file and ``git status`` as they were."""
    before, status = snapshot(scenario.root), git_status(scenario.root)
    with pytest.raises(error) as info:
        scenario.apply(allow_other_commit=True)
    assert snapshot(scenario.root) == before
    assert git_status(scenario.root) == status
    return info


def only_result(info: pytest.ExceptionInfo):  # type: ignore[no-untyped-def]
    (result,) = info.value.results
    return result


# -- ambiguity, three-way, already applied ---------------------------------------------------


def test_context_found_twice_in_a_changed_file_is_ambiguous_and_nothing_written(
    tmp_path: Path,
) -> None:
    s = Scenario(tmp_path, {"m.py": "x = 0\n\n" + FUNC})
    s.add("p", {"m.py": "x = 0\n\n" + FUNC.replace("b + 1", "b + 2")})
    s.upstream.commit({"m.py": "x = 0\n\n# legacy copy\n" + FUNC + "\n" + FUNC})
    result = only_result(refused(s))
    assert result.outcome is Outcome.AMBIGUOUS
    assert "2 places" in result.details[0].reason


def test_moved_code_with_unrelated_change_nearby_is_carried_by_three_way_merge(
    tmp_path: Path,
) -> None:
    s = Scenario(tmp_path, {"m.txt": BODY})
    s.add("p", {"m.txt": BODY.replace("line10\n", "line10 patched\n")})
    moved = "new1\nnew2\n" + BODY.replace("line8\n", "line8 upstream\n")
    s.upstream.commit({"m.txt": moved})
    (result,) = s.apply(allow_other_commit=True).results
    assert (result.outcome, result.step) == (Outcome.CARRIED, Step.THREE_WAY)
    assert s.read("m.txt") == moved.replace("line10\n", "line10 patched\n").encode()


def test_real_conflict_reports_labelled_markers_and_writes_nothing(tmp_path: Path) -> None:
    s = Scenario(tmp_path, {"m.txt": BODY})
    s.add("p", {"m.txt": BODY.replace("line10\n", "line10 patched\n")})
    s.upstream.commit({"m.txt": "new\n" + BODY.replace("line10\n", "line10 upstream\n")})
    result = only_result(refused(s))
    assert (result.outcome, result.step) == (Outcome.CONFLICT, Step.THREE_WAY)
    (conflicted,) = result.conflicted
    text = conflicted.content.decode()
    for marker in ("<<<<<<< tree", "||||||| base ", "=======", ">>>>>>> patch p"):
        assert marker in text
    assert "line10 upstream" in text and "line10 patched" in text


def test_change_already_in_the_file_is_upstreamed_and_not_applied_twice(tmp_path: Path) -> None:
    s = Scenario(tmp_path, {"m.txt": BODY})
    patched = BODY.replace("line10\n", "line10 patched\n")
    s.add("p", {"m.txt": patched})
    s.upstream.commit({"m.txt": patched})
    s.lock_to_head()
    report = s.apply()
    assert [(r.outcome, r.step) for r in report.results] == [(Outcome.UPSTREAMED, Step.PROBE)]
    assert report.written == ()
    assert s.read("m.txt") == patched.encode()


def test_moved_change_already_present_is_upstreamed(tmp_path: Path) -> None:
    s = Scenario(tmp_path, {"m.txt": BODY})
    patched = BODY.replace("line10\n", "line10 patched\n")
    s.add("p", {"m.txt": patched})
    s.upstream.commit({"m.txt": "header\n" + patched})
    s.lock_to_head()
    assert [r.outcome for r in s.apply().results] == [Outcome.UPSTREAMED]
    assert s.read("m.txt") == ("header\n" + patched).encode()


def test_reformatted_version_of_the_added_lines_counts_as_upstreamed(tmp_path: Path) -> None:
    base = "def f():\n    x = 1\n    return x\n"
    s = Scenario(tmp_path, {"m.py": base})
    s.add("p", {"m.py": "def f():\n    x = 1\n    y = compute(x, 2)\n    return x\n"})
    reformatted = "def f():\n    x = 1\n    y = compute(\n        x,  2\n    )\n    return x\n"
    s.upstream.commit({"m.py": reformatted})
    s.lock_to_head()
    report = s.apply()
    assert [r.outcome for r in report.results] == [Outcome.UPSTREAMED]
    assert s.read("m.py") == reformatted.encode()


# -- unsafe paths ----------------------------------------------------------------------------


def _traversal(s: Scenario, outside: Path) -> None:
    s.project.add_diff(
        "p", b"--- a/../outside.txt\n+++ b/../outside.txt\n@@ -1 +1 @@\n-keep\n+evil\n"
    )


def _absolute(s: Scenario, outside: Path) -> None:
    name = str(outside).encode()
    s.project.add_diff("p", b"--- " + name + b"\n+++ " + name + b"\n@@ -1 +1 @@\n-keep\n+evil\n")


def _through_dir_symlink(s: Scenario, outside: Path) -> None:
    os.symlink(outside.parent, s.root / "link")
    s.upstream.commit({}, "a link to outside")
    s.lock_to_head()
    s.project.add_diff(
        "p", b"--- a/link/outside.txt\n+++ b/link/outside.txt\n@@ -1 +1 @@\n-keep\n+evil\n"
    )


def _file_symlink(s: Scenario, outside: Path) -> None:
    os.symlink(outside, s.root / "alias.txt")
    s.upstream.commit({}, "a file link to outside")
    s.lock_to_head()
    s.project.add_diff("p", b"--- a/alias.txt\n+++ b/alias.txt\n@@ -1 +1 @@\n-keep\n+evil\n")


UNSAFE = [_traversal, _absolute, _through_dir_symlink, _file_symlink]


def unsafe_scenario(tmp_path: Path, make) -> tuple[Scenario, Path]:  # type: ignore[no-untyped-def]
    s = Scenario(tmp_path, {"a.txt": "a\n"})
    outside = tmp_path / "outside.txt"  # beside the checkout: ../outside.txt from its root
    outside.write_text("keep\n")
    make(s, outside)
    return s, outside


@pytest.mark.parametrize("make", UNSAFE, ids=lambda f: f.__name__.strip("_"))
def test_unsafe_path_is_refused_and_nothing_outside_is_touched(tmp_path: Path, make) -> None:  # type: ignore[no-untyped-def]
    s, outside = unsafe_scenario(tmp_path, make)
    info = refused(s, PatchkitError)
    assert outside.read_text() == "keep\n"
    text = str(info.value) + " ".join(r.message for r in getattr(info.value, "results", ()))
    assert "outside" in text or "symlink" in text or "leaves the tree" in text


@pytest.mark.parametrize("make", UNSAFE, ids=lambda f: f.__name__.strip("_"))
def test_unsafe_path_raises_unsafe_path_error(tmp_path: Path, make) -> None:  # type: ignore[no-untyped-def]
    s, outside = unsafe_scenario(tmp_path, make)
    refused(s, UnsafePathError)
    assert outside.read_text() == "keep\n"


# -- line endings, file kinds ----------------------------------------------------------------


def round_trip(s: Scenario) -> tuple[dict, dict]:
    """Apply then reset; the snapshots after apply and after reset (reset must restore)."""
    before, status = snapshot(s.root), git_status(s.root)
    assert all(r.outcome.ok for r in s.apply().results)
    applied = snapshot(s.root)
    s.reset()
    assert snapshot(s.root) == before
    assert git_status(s.root) == status
    return before, applied


def test_crlf_file_keeps_its_line_endings_through_apply_and_reset(tmp_path: Path) -> None:
    s = Scenario(tmp_path, {"w.txt": b"a\r\nb\r\nc\r\n"})
    s.add("p", {"w.txt": b"a\r\nB\r\nc\r\nd\r\n"})
    _, applied = round_trip(s)
    assert applied["w.txt"][0] == b"a\r\nB\r\nc\r\nd\r\n"


def test_file_without_final_newline_is_patched_and_restored(tmp_path: Path) -> None:
    s = Scenario(tmp_path, {"a.txt": "a\nb", "z.txt": "z"})
    s.add("p", {"a.txt": "a\nc", "z.txt": "z\nmore\n"})
    _, applied = round_trip(s)
    assert applied["a.txt"][0] == b"a\nc"
    assert applied["z.txt"][0] == b"z\nmore\n"


def test_new_file_is_created_and_reset_removes_it_with_its_directory(tmp_path: Path) -> None:
    s = Scenario(tmp_path, {"a.txt": "a\n"})
    s.add("p", {"pkg/sub/new.py": "print('hi')\n"})
    _, applied = round_trip(s)
    assert applied["pkg/sub/new.py"][0] == b"print('hi')\n"
    assert not (s.root / "pkg").exists()


def test_deleted_file_is_removed_and_reset_brings_it_back(tmp_path: Path) -> None:
    s = Scenario(tmp_path, {"a.txt": "a\n", "gone.txt": "bye\n"})
    s.add_edit("p", lambda root: os.remove(root / "gone.txt"))
    _, applied = round_trip(s)
    assert "gone.txt" not in applied


def test_rename_moves_the_file_and_reset_moves_it_back(tmp_path: Path) -> None:
    s = Scenario(tmp_path, {"old.txt": "one\ntwo\nthree\n"})
    s.add_edit("p", lambda root: os.rename(root / "old.txt", root / "new.txt"))
    assert b"rename from old.txt" in (s.set_root / "patches" / "p.patch").read_bytes()
    _, applied = round_trip(s)
    assert "old.txt" not in applied
    assert applied["new.txt"][0] == b"one\ntwo\nthree\n"


def _make_executable(root: Path) -> None:
    os.chmod(root / "run.sh", 0o755)


def test_mode_change_makes_the_file_executable(tmp_path: Path) -> None:
    s = Scenario(tmp_path, {"run.sh": "echo hi\n"})
    s.add_edit("p", _make_executable)
    s.apply()
    assert snapshot(s.root)["run.sh"][1] == 0o755


def test_reset_undoes_a_mode_change(tmp_path: Path) -> None:
    s = Scenario(tmp_path, {"run.sh": "echo hi\n"})
    s.add_edit("p", _make_executable)
    round_trip(s)


def test_rename_keeps_the_executable_bit(tmp_path: Path) -> None:
    s = Scenario(tmp_path, {"run.sh": "echo hi\n"})
    _make_executable(s.root)
    s.upstream.commit({}, "executable")
    s.lock_to_head()
    s.add_edit("p", lambda root: os.rename(root / "run.sh", root / "go.sh"))
    s.apply()
    assert snapshot(s.root)["go.sh"][1] == 0o755


def test_git_binary_patch_is_refused_naming_the_patch_file(tmp_path: Path) -> None:
    s = Scenario(tmp_path, {"a.txt": "a\n"})
    patch = s.add("p", {"blob.bin": bytes(range(256))})
    with pytest.raises(UnsupportedChange, match="GIT binary patch") as info:
        parse_diff(patch.read_bytes(), patch)
    assert str(patch) in info.value.message
    result = only_result(refused(s))
    assert result.outcome is Outcome.FAILED
    assert str(patch) in result.message and "binary" in result.message


def test_pure_mode_change_and_rename_are_applied_as_written(tmp_path: Path) -> None:
    s = Scenario(tmp_path, {"run.sh": "echo hi\n", "old.txt": "x\n"})
    s.add_edit("mode", _make_executable)
    s.add_edit("move", lambda root: os.rename(root / "old.txt", root / "new.txt"))
    assert [r.outcome for r in s.apply().results] == [Outcome.APPLIED, Outcome.APPLIED]


# -- found in review: each of these once reported a wrong result as success ----------------------
@pytest.mark.parametrize(
    "target", [".git/hooks/post-checkout", ".git/config", "sub/.GIT/config"], ids=str
)
def test_a_patch_never_writes_inside_git(tmp_path: Path, target: str) -> None:
    s = Scenario(tmp_path, {"a.txt": "a\n"})
    patch = s.add("evil", {"a.txt": "b\n"})
    patch.write_text(patch.read_text().replace("a.txt", target))
    before = snapshot(s.root / ".git")
    with pytest.raises(UnsafePathError, match=r"inside \.git"):
        s.apply()
    assert snapshot(s.root / ".git") == before


def test_hunks_that_find_the_same_lines_are_not_spliced_over_each_other(tmp_path: Path) -> None:
    def lines(*xs: str) -> str:
        return "".join(x + "\n" for x in xs)

    filler = [f"f{i}" for i in range(8)]
    base = lines("a1", "a2", "a3", "X", "c1", "c2", "Y", *filler, "X", "c1", "c2", "Y", "d1", "d2")
    s = Scenario(tmp_path, {"o.txt": base})
    s.add(
        "ov", {"o.txt": base.replace("X\n", "X-new\n", 1)[::-1].replace("\nY", "\nwen-Y", 1)[::-1]}
    )
    s.upstream.commit({"o.txt": lines("a1", "a2", "a3", "X", "c1", "c2", "Y", "d1", "d2")})
    s.lock_to_head()
    before = snapshot(s.root)
    result = only_result(refused(s))
    assert result.outcome is Outcome.CONFLICT  # was: carried, with the second change lost
    assert snapshot(s.root) == before


def test_a_rename_onto_an_existing_file_is_a_conflict(tmp_path: Path) -> None:
    s = Scenario(tmp_path, {"A.txt": "alpha\nbeta\n"})
    s.add_edit("mv", lambda root: os.rename(root / "A.txt", root / "B.txt"))
    s.upstream.commit({"B.txt": "upstream's own B\n"})
    s.lock_to_head()
    result = only_result(refused(s))
    assert result.outcome is Outcome.CONFLICT and "already exists" in result.details[0].reason
    assert s.read("B.txt") == b"upstream's own B\n"


def test_duplicated_code_stays_ambiguous_when_a_merge_would_take_over(tmp_path: Path) -> None:
    block = "def f():\n    x = 1\n    y = 2\n    return x\n"
    s = Scenario(tmp_path, {"m.py": "head\n" + block + "tail\n"})
    s.add("p", {"m.py": "head\n" + block.replace("y = 2", "y = 3") + "tail\n"})
    s.upstream.commit({"m.py": "new head\n" + block + "mid\n" + block + "tail\n"})
    s.lock_to_head()
    assert only_result(refused(s)).outcome is Outcome.AMBIGUOUS
