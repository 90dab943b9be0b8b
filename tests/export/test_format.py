"""export-pr formats the exported change with upstream's formatters at the versions upstream's
``.pre-commit-config.yaml`` pins, configured from the base commit; a pinned formatter that
cannot be had stops the export (exit 10) instead of exporting unformatted code."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

from patchkit.errors import FormatterUnavailable
from patchkit.export.tools import pinned_versions
from tests.export.test_export import MOD, Case, fi_case, only, vllm_case


def version_on_path(tool: str) -> str:
    """The version of ``tool`` on PATH: pinning it lets the tests run with no network."""
    exe = shutil.which(tool)
    if exe is None:
        pytest.skip(f"{tool} is not installed")  # a dev dependency (ruff) or optional tool
    out = subprocess.run([exe, "--version"], capture_output=True, text=True, check=True).stdout
    match = re.search(r"\d+\.\d+\.\d+", out)
    assert match, out
    return match.group(0)


def pre_commit(**pins: str) -> str:
    repos = {"ruff": "astral-sh/ruff-pre-commit", "clang-format": "pre-commit/mirrors-clang-format"}
    lines = ["repos:"]
    for tool, version in pins.items():
        lines += [
            f"  - repo: https://github.com/{repos[tool]}",
            "    # a comment",
            f"    rev: v{version}",
        ]
        lines += ["    hooks:", f"      - id: {tool}"]
    return "\n".join(lines) + "\n"


def test_pins_are_read_from_pre_commit_config() -> None:
    text = pre_commit(ruff="0.14.0", **{"clang-format": "21.1.2"}).encode()
    assert pinned_versions(text) == {"ruff": "0.14.0", "clang-format": "21.1.2"}
    assert pinned_versions(b"repos:\n- repo: https://github.com/crate-ci/typos\n  rev: v1\n") == {}
    assert pinned_versions(None) == {}


def test_ruff_at_the_pinned_version_formats_the_exported_python(tmp_path: Path) -> None:
    version = version_on_path("ruff")
    case = Case(
        tmp_path, "vllm", {"pkg/mod.py": MOD, ".pre-commit-config.yaml": pre_commit(ruff=version)}
    )
    case.add("ugly", {"pkg/mod.py": MOD + "\n\nh = {  'a':1}\n"}, 'title = "H"\nwhy = "h"\n')
    export = only(case.export("ugly"))
    assert 'h = {"a": 1}' in case.git("show", f"{export.commit}:pkg/mod.py")
    assert export.formatting == (f"ruff {version}: reformatted pkg/mod.py (the patch's lines)",)


def test_formatters_touch_only_the_patch_lines(tmp_path: Path) -> None:
    version = version_on_path("ruff")
    upstream = "import os\nx = {  'a':1}\ny = {  'b':1}\n"  # not clean by this ruff
    case = Case(
        tmp_path, "vllm", {"m.py": upstream, ".pre-commit-config.yaml": pre_commit(ruff=version)}
    )
    case.add("p", {"m.py": upstream.replace("'b':1", "'b':2")}, 'title = "P"\nwhy = "p"\n')
    export = only(case.export("p"))
    assert case.git("show", f"{export.commit}:m.py") == "import os\nx = {  'a':1}\ny = {\"b\": 2}"
    (note,) = export.formatting
    assert note.startswith(f"ruff {version}: reformatted m.py") and "fixes were not applied" in note


def test_the_bases_config_is_used_not_the_checkouts(tmp_path: Path) -> None:
    version = version_on_path("ruff")
    files = {"m.py": "x = 1\n", ".pre-commit-config.yaml": pre_commit(ruff=version)}
    case = Case(tmp_path, "vllm", files)
    long_line = "y = [" + ", ".join(f"'v{i}'" for i in range(20)) + "]\n"
    case.add("p", {"m.py": "x = 1\n" + long_line}, 'title = "P"\nwhy = "p"\n')
    # an uncommitted config in the checkout must not change the export
    (case.upstream.path / "pyproject.toml").write_text("[tool.ruff]\nline-length = 400\n")
    export = only(case.export("p"))
    assert case.git("show", f"{export.commit}:m.py").count("\n") > 3  # wrapped at 88


def test_an_unpinned_formatter_is_not_run(tmp_path: Path) -> None:
    case = vllm_case(tmp_path)
    case.add("ugly", {"pkg/mod.py": MOD + "\n\nh = {  'a':1}\n"}, 'title = "H"\nwhy = "h"\n')
    export = only(case.export("ugly"))
    assert "h = {  'a':1}" in case.git("show", f"{export.commit}:pkg/mod.py")
    assert export.formatting == (
        "ruff: not run (upstream's .pre-commit-config.yaml at the base pins none)",
    )


def test_a_pinned_formatter_that_cannot_be_installed_stops_the_export(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PATCHKIT_TOOLS_OFFLINE", "1")
    files = {"pkg/mod.py": MOD, ".pre-commit-config.yaml": pre_commit(ruff="0.0.1")}
    case = Case(tmp_path, "vllm", files)
    case.add("ugly", {"pkg/mod.py": MOD + "\nh = 1\n"}, 'title = "H"\nwhy = "h"\n')
    with pytest.raises(FormatterUnavailable) as caught:
        case.export("ugly")
    assert caught.value.exit_code == 10
    assert "ruff 0.0.1" in caught.value.message
    assert case.git("branch", "--list", "test/*") == ""  # nothing exported


def test_a_formatter_failing_on_the_file_stops_the_export(tmp_path: Path) -> None:
    version = version_on_path("ruff")
    files = {"m.py": "x = 1\n", ".pre-commit-config.yaml": pre_commit(ruff=version)}
    case = Case(tmp_path, "vllm", files)
    case.add("broken", {"m.py": "x = 1\ndef (:\n"}, 'title = "B"\nwhy = "b"\n')
    with pytest.raises(FormatterUnavailable, match=r"failed on m\.py"):
        case.export("broken")


def test_clang_format_runs_with_the_bases_style(tmp_path: Path) -> None:
    version = version_on_path("clang-format")
    style = "BasedOnStyle: Google\nColumnLimit: 100\n"
    files = {
        "a.cu": "int f() { return 1; }\n",
        ".clang-format": style,
        ".pre-commit-config.yaml": pre_commit(**{"clang-format": version}),
    }
    case = Case(tmp_path, "flashinfer", files)
    case.add(
        "p", {"a.cu": "int f() { return 1; }\nint g(  ) {return 2;}\n"}, 'title = "G"\nwhy = "g"\n'
    )
    export = only(case.export("p"))
    assert case.git("show", f"{export.commit}:a.cu").endswith("int g() { return 2; }")
    assert export.formatting == (f"clang-format {version}: reformatted a.cu (the patch's lines)",)


def test_clang_format_needs_the_bases_style(tmp_path: Path) -> None:
    version = version_on_path("clang-format")
    case = fi_case(tmp_path)
    config = pre_commit(**{"clang-format": version})
    case.base = case.upstream.commit({".pre-commit-config.yaml": config}, "pin")
    export = only(case.export("decode-gqa-group-size-16", onto=case.base))
    (note,) = export.formatting
    assert note == "clang-format: not run (no .clang-format in the tree at the base)"
