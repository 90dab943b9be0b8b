"""``patchkit import`` on each source form, on a three-release stand-in for vLLM."""

from __future__ import annotations

import json
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
import tomlkit

from patchkit.cli import main
from patchkit.outcome import Outcome
from patchkit.project import edits
from patchkit.project.sets import load_patchset, read_toml
from testing.builders import run_git
from tests.conftest import dedent
from tests.importers.conftest import MODEL_V11, Releases3

SITE = "usr/local/lib/python3.12/dist-packages"


def _site_diff(old: str, new: str, path: str = "vllm/model.py") -> str:
    """A diff as a container mod carries it: site-packages paths, no git headers, no index."""
    import difflib

    lines = difflib.unified_diff(
        old.splitlines(keepends=True),
        new.splitlines(keepends=True),
        f"a/{SITE}/{path}",
        f"b/{SITE}/{path}",
    )
    return "".join(lines)


def test_mod_with_site_packages_paths_is_mapped_and_applies_at_the_lock(
    releases3: Releases3, tmp_path: Path
) -> None:
    lock_text = releases3.file_at("v1.2", "vllm/model.py")
    mod = tmp_path / "mods" / "fix-run"
    mod.mkdir(parents=True)
    (mod / "fix.patch").write_text(_site_diff(lock_text, lock_text.replace("return 2", "return 3")))
    (mod / "run.sh").write_text(
        dedent(
            """
            #!/bin/bash
            # Make run() return 3 on GB10.
            # See https://github.com/vllm-project/vllm/issues/123
            set -e
            patch -p1 -d / < /workspace/mods/fix-run/fix.patch
            pip install --no-deps triton==3.6
            """
        )
    )
    report = releases3.import_(mod)
    [patch] = report.patches
    assert (patch.form, patch.outcome, patch.base) == ("container-mod", "applied", "1.2")
    assert patch.files == ("vllm/model.py",)
    assert patch.untranslated == ()  # pip install is the patch's requirement, not a step left
    root = releases3.set_dir()
    assert 'Requires = "triton==3.6"' in (root / "patches" / "fix-run.toml").read_text()
    diff = (root / "patches" / "fix-run.patch").read_text()
    assert "+++ b/vllm/model.py" in diff and "+        return 3" in diff
    meta = read_toml(root / "patches" / "fix-run.toml")
    assert meta["title"] == "Make run() return 3 on GB10"
    assert meta["issues"] == ["https://github.com/vllm-project/vllm/issues/123"]
    assert (root / "origin" / "fix-run" / "run.sh").read_bytes() == (mod / "run.sh").read_bytes()
    assert load_patchset(root).patches[0].id == "fix-run"  # a set patchkit can load


def test_abbreviated_index_finds_its_base_among_releases_and_is_carried(
    releases3: Releases3, tmp_path: Path
) -> None:
    up = releases3.upstream.path
    run_git(up, "checkout", "-q", "v1.1")
    (up / "vllm" / "model.py").write_text(MODEL_V11.replace("self.b = None", "self.b = []"))
    diff = run_git(up, "diff")  # abbreviated index line, as people paste them
    run_git(up, "checkout", "-q", "--", ".")
    run_git(up, "checkout", "-q", "main")
    assert b"index " in diff and b".." in diff
    (tmp_path / "b.patch").write_bytes(diff)
    report = releases3.import_(tmp_path / "b.patch")
    [patch] = report.patches
    assert patch.form == "git-diff"
    assert patch.base == "v1.1"
    assert patch.base_how.startswith("index lines match v1.1")
    assert patch.outcome is Outcome.CARRIED  # v1.2 moved the lines: carried to the lock
    written = (releases3.set_dir() / "patches" / "b.patch").read_text()
    lock_blob = run_git(up, "rev-parse", "v1.2:vllm/model.py").decode().strip()
    assert f"index {lock_blob}.." in written  # full index, at the lock
    meta = read_toml(releases3.set_dir() / "patches" / "b.toml")
    assert meta["imported"]["base"] == "v1.1"


def test_replace_script_with_fstring_loop(releases3: Releases3, tmp_path: Path) -> None:
    script = tmp_path / "fix_fields.py"
    script.write_text(
        dedent(
            '''
            """Initialise the model's fields to 0 (https://github.com/vllm-project/vllm/pull/77)."""
            import vllm, os

            PATH = os.path.join(os.path.dirname(vllm.__file__), "model.py")
            with open(PATH) as f:
                code = f.read()
            for name in ["a", "b"]:
                old = f"self.{name} = None"
                new = f"self.{name} = 0  # " + "was None"
                assert old in code, f"{name} not found"
                code = code.replace(old, new)
            with open(PATH, "w") as f:
                f.write(code)
            '''
        )
    )
    report = releases3.import_(script)
    [patch] = report.patches
    assert (patch.form, patch.outcome, patch.base) == ("replace-script", "applied", "1.2")
    diff = (releases3.set_dir() / "patches" / "fix-fields.patch").read_text()
    assert (
        "+        self.a = 0  # was None\n" in diff and "+        self.b = 0  # was None\n" in diff
    )
    meta = read_toml(releases3.set_dir() / "patches" / "fix-fields.toml")
    assert meta["prs"] == ["https://github.com/vllm-project/vllm/pull/77"]


def test_dynamic_script_is_refused_and_nothing_written(
    releases3: Releases3, tmp_path: Path
) -> None:
    script = tmp_path / "dyn.py"
    script.write_text(
        dedent(
            """
            import sys
            path = sys.argv[1]
            code = open(path).read()
            code = code.replace("return 2", "return 3")
            open(path, "w").write(code)
            """
        )
    )
    report = releases3.import_(script)
    [patch] = report.patches
    assert patch.refused and not patch.written
    assert "line 2" in patch.message and "sys.argv[1]" in patch.message
    assert not releases3.set_dir().exists()


def test_script_calling_its_own_function_is_refused(releases3: Releases3, tmp_path: Path) -> None:
    script = tmp_path / "fn.py"
    script.write_text("def patch(p):\n    pass\n\npatch('/x')\n")
    [patch] = releases3.import_(script).patches
    assert patch.refused and "defines patch()" in patch.message


def test_quilt_series_with_dep3_headers(releases3: Releases3, tmp_path: Path) -> None:
    util = releases3.file_at("v1.2", "vllm/util.py")
    quilt = tmp_path / "debian"
    (quilt / "patches").mkdir(parents=True)
    header = dedent(
        """
        Description: helper adds two
         The helper is off by one on GB10.
        Origin: vendor, https://example.com/fix
        Bug: https://github.com/vllm-project/vllm/issues/555
        Forwarded: no
        Author: Dev One <one@example.com>
        Last-Update: 2026-01-02
        ---
        """
    )
    diff = _site_diff(util, util.replace("x + 1", "x + 2"), "vllm/util.py")
    diff = diff.replace(f"{SITE}/", "")  # a quilt patch: a/vllm/util.py
    (quilt / "patches" / "helper.patch").write_text(header + diff)
    (quilt / "patches" / "series").write_text("# the stack\nhelper.patch -p1\n")
    [patch] = releases3.import_(quilt).patches
    assert (patch.form, patch.outcome) == ("quilt-series", "applied")
    meta = read_toml(releases3.set_dir() / "patches" / "helper.toml")
    assert meta["title"] == "helper adds two"
    assert meta["why"] == "The helper is off by one on GB10."
    assert meta["author"] == "Dev One <one@example.com>"
    assert meta["issues"] == ["https://github.com/vllm-project/vllm/issues/555"]
    assert meta["imported"]["fields"]["Origin"] == "vendor, https://example.com/fix"
    assert meta["imported"]["fields"]["Forwarded"] == "no"


def test_already_upstream_script_is_reported_not_written(
    releases3: Releases3, tmp_path: Path
) -> None:
    script = tmp_path / "old.py"
    path = f"/{SITE}/vllm/model.py"
    script.write_text(
        f"code = open({path!r}).read()\n"
        "code = code.replace('return 1', 'return 2')\n"
        f"open({path!r}, 'w').write(code)\n"
    )
    [patch] = releases3.import_(script, max_fetch=0).patches
    # v1.0 holds "return 1": the base is found there, and at the lock it is already in
    assert patch.base == "v1.0" and patch.outcome == "upstreamed"


def test_importing_twice_is_importing_once(releases3: Releases3, tmp_path: Path) -> None:
    util = releases3.file_at("v1.2", "vllm/util.py")
    patch = tmp_path / "u.diff"
    patch.write_text(_site_diff(util, util.replace("y * 2", "y * 4"), "vllm/util.py"))
    first = releases3.import_(patch).patches[0]
    again = releases3.import_(patch).patches[0]
    assert first.written and not again.written
    assert again.outcome == "applied" and again.message == "already imported as u; nothing written"
    assert load_patchset(releases3.set_dir()).patches[0].id == "u"
    assert len(load_patchset(releases3.set_dir()).patches) == 1


def test_base_given_and_blob_ids_matching_several_releases(
    releases3: Releases3, tmp_path: Path
) -> None:
    up = releases3.upstream.path
    util = releases3.file_at("v1.0", "vllm/util.py")  # the same in every release
    (up / "vllm" / "util.py").write_text(util.replace("x + 1", "x + 9"))
    (tmp_path / "u.patch").write_bytes(run_git(up, "diff"))
    run_git(up, "checkout", "-q", "--", ".")
    [found] = releases3.import_(tmp_path / "u.patch", dry_run=True).patches
    assert found.base == "1.2"  # the lock: nearest of the three that hold this blob
    assert "(also v1.1, v1.0; the nearest the lock taken)" in found.base_how
    [given] = releases3.import_(tmp_path / "u.patch", base="v1.0", dry_run=True).patches
    assert (given.base, given.base_how, given.outcome) == ("v1.0", "given (--base v1.0)", "applied")
    assert not releases3.set_dir().exists()  # --dry-run writes nothing


def test_cli_import_report_and_exit_codes(
    releases3: Releases3, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    good = tmp_path / "good.py"
    good.write_text(
        "P = '/site-packages/vllm/util.py'\ncode = open(P).read()\n"
        "code = code.replace('x + 1', 'x + 3')\nopen(P, 'w').write(code)\n"
    )
    (tmp_path / "bad.py").write_text("import os\nP = os.environ['X']\n")
    argv = [
        "import",
        str(good),
        "-t",
        "vllm",
        "--into",
        "s",
        "--project",
        str(releases3.project.path),
    ]
    assert main([*argv, "--json"]) == 0
    shown = json.loads(capsys.readouterr().out)
    assert [(p["id"], p["form"], p["outcome"]) for p in shown["patches"]] == [
        ("good", "replace-script", "applied")
    ]
    assert main(["import", str(good), str(tmp_path / "bad.py"), *argv]) == 2  # refused, named
    assert "bad.py line 2" in capsys.readouterr().err
    out = tmp_path / "series"
    series = ["export-series", str(out), "-t", "vllm", "--format", "quilt"]
    series += ["--project", str(releases3.project.path), "--set", "s"]
    series += ["--checkout", str(releases3.upstream.path)]
    assert main(series) == 0
    assert (out / "series").read_text() == "good.patch\n"


def test_script_over_several_files_in_a_loop(releases3: Releases3, tmp_path: Path) -> None:
    script = tmp_path / "two.py"
    script.write_text(
        dedent(
            """
            from pathlib import Path
            ROOT = Path("/usr/lib/python3/dist-packages/vllm")
            for name, old, new in [("model.py", "return 2", "return 4"), ("util.py", "y * 2", "y * 5")]:
                path = ROOT / name
                code = path.read_text()
                code = code.replace(old, new)
                path.write_text(code)
            """
        )
    )
    [patch] = releases3.import_(script).patches
    assert (patch.outcome, patch.files) == ("applied", ("vllm/model.py", "vllm/util.py"))
    assert (
        "+        return 4\n" in patch.diff.decode()
        and "+    return y * 5\n" in patch.diff.decode()
    )


class _SlowToml:
    """tomlkit, with a pause after each parse: a read-modify-write of a manifest is held open
    long enough for a second import to do the same, unless imports take turns."""

    def __getattr__(self, name: str) -> object:
        return getattr(tomlkit, name)

    def parse(self, text: str) -> tomlkit.TOMLDocument:
        doc = tomlkit.parse(text)
        time.sleep(1.0)
        return doc


def test_two_imports_into_one_set_at_once_both_land(
    releases3: Releases3, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(edits, "tomlkit", _SlowToml())
    util = releases3.file_at("v1.2", "vllm/util.py")
    model = releases3.file_at("v1.2", "vllm/model.py")
    (tmp_path / "one.diff").write_text(
        _site_diff(util, util.replace("y * 2", "y * 6"), "vllm/util.py")
    )
    (tmp_path / "two.diff").write_text(_site_diff(model, model.replace("return 2", "return 7")))
    with ThreadPoolExecutor(2) as pool:
        reports = list(pool.map(releases3.import_, [tmp_path / "one.diff", tmp_path / "two.diff"]))
    assert all(r.patches[0].written for r in reports)
    assert sorted(p.id for p in load_patchset(releases3.set_dir()).patches) == ["one", "two"]
