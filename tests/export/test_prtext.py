"""The PR text as a maintainer reads it: inline golden text for one vLLM and one FlashInfer
patch (``pytest --update-golden`` rewrites the constants at the end of this file), honest
claims about where it ran, upstream's title rules and contribution statements, and no words of
the tool that exported it, over the shipped patches too."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from patchkit.errors import ConfigError
from patchkit.export.prtext import Identity, PrText, pinned_label, render, text_input
from patchkit.export.template import load_template
from patchkit.model import LockEntry, PatchMeta, SourceKind, SourceSpec
from patchkit.project.export_settings import load_settings
from patchkit.project.load import load_project
from patchkit.project.sets import load_patchset, patch_digest
from testing.golden import check_inline, literal

HERE = Path(__file__)
ROOT = HERE.parents[2]
ADA = Identity("Ada Lovelace", "ada@example.com")
VLLM = LockEntry(
    "vllm",
    "https://github.com/vllm-project/vllm",
    "0.19.0",
    "2a69949bd",
    SourceSpec(SourceKind.INDEX),
)
FLASHINFER = LockEntry(
    "flashinfer",
    "https://github.com/flashinfer-ai/flashinfer",
    "0.6.6",
    "70b142b75b46",
    SourceSpec(SourceKind.INDEX),
)
VLLM_TEMPLATE = (HERE.parent / "golden" / "vllm_template.md").read_text()
TOOL_WORDS = (
    "patchkit",
    "patch set",
    "patchsets/",
    "rebase bisection",
    "not run\n",
    "scripts/",
    "set test",
    "standalone",
    "downstream copy",
    "the rewrite",
    "opt-in",
    "recording runner",
    "please fill in",
)

SSU_META = '''id = "ssu-sm12x"
target = "vllm"
title = "Use Blackwell selective_state_update tuning on SM12x"
why = """\\
MambaMixer2 sets is_blackwell from capability family 100 only, so SM12x takes the Hopper-era \\
block sizes. Family 120 now gets the Blackwell ones."""
author = "Grace Hopper <grace@example.com>"
issues = ["https://github.com/vllm-project/vllm/issues/41000"]
notes = "A tuning change: correctness does not depend on the block size."

[pr]
tags = ["Hardware][NVIDIA"]
hardware = ["12.0", "12.1"]
since = "v0.11.0 (#24213, which added the Blackwell tuning)"

[[tests]]
where = "upstream"
node = "tests/kernels/mamba/test_mamba_ssm.py::test_selective_state_update"
gpu = true
min_capability = "8.0"

[[tests]]
where = "set"
node = "tests/test_ssu_gate.py"

[upstream]
state = "none"
checked = "2026-11-23"
'''

GQA_META = '''id = "gqa-16"
target = "flashinfer"
title = "Dispatch GQA group size 16 in batch decode"
why = """
The decode kernels dispatch group sizes 1, 2, 3, 4 and 8 only, so group size 16 fails with
`Unsupported group_size: 16`. The fix adds the case."""
author = "Grace Hopper <grace@example.com>"

[pr]
scope = "fix(decode)"

[[tests]]
where = "set"
node = "tests/test_decode_gqa16.py"
gpu = true
min_capability = "8.0"

[upstream]
pr = "https://github.com/flashinfer-ai/flashinfer/pull/3563"
state = "open"
checked = "2026-11-23"
'''

SET_EXPORT = """
[export]
ai_assistance = "AI assistance was used: a coding agent wrote the change and its tests."
trailers = ["Co-authored-by: Claude"]
"""

H200 = {
    "python": "3.12.3",
    "platform": "Linux",
    "gpu": "NVIDIA H200",
    "capability": "9.0",
    "driver": "580.159.04",
    "cuda": "13.0",
    "torch": "2.11.0+cu130",
    "triton": "3.6.0",
}
GB10 = {**H200, "gpu": "NVIDIA GB10", "capability": "12.1"}
CPU = {"python": "3.12.3", "platform": "Linux"}


def make_patch(root: Path, target: str, meta: str, export: str = SET_EXPORT) -> PatchMeta:
    """A one-patch set under ``root`` (the patch's diff is a stand-in: the text never reads it)."""
    patch_id = meta.split('"')[1]
    (root / "patches").mkdir(parents=True)
    (root / "patchset.toml").write_text(
        f'[patchset]\nname = "demo"\nversion = "1"\ntargets = ["{target}"]\n'
        f'series = ["{patch_id}"]\n{export}'
    )
    (root / "patches" / f"{patch_id}.toml").write_text(meta)
    (root / "patches" / f"{patch_id}.patch").write_text(f"a change for {patch_id}\n")
    return load_patchset(root).patches[0]


def record(meta: PatchMeta, entry: LockEntry, env: dict[str, str], **extra: object) -> dict:
    gpu = "gpu" in env
    tests = [
        {"node": t.node, "where": t.where, "result": "passed", "reason": "", "passed": 2}
        if gpu or not t.gpu
        else {"node": t.node, "where": t.where, "result": "not run", "reason": "no GPU"}
        for t in meta.tests
    ]
    return {
        "patch": meta.id,
        "digest": patch_digest(meta),
        "target": entry.name,
        "lock_commit": entry.commit,
        "lock_version": entry.version,
        "tree_commit": entry.commit,
        "result": "passed",
        "reason": "",
        "time": "2026-11-22T03:10:16Z",
        "duration_s": 3.0,
        "environment": env,
        "tests": tests,
        **extra,
    }


def write_records(meta: PatchMeta, *records: dict) -> None:
    (meta.meta_file.parents[1] / "verification.json").write_text(json.dumps(list(records)))


def text(meta: PatchMeta, entry: LockEntry, template: str, files: tuple[str, ...]) -> PrText:
    style = "vllm" if entry.name == "vllm" else "conventional"
    inp = text_input(
        meta, entry, base=pinned_label(entry), files=files, style=style, template=template,
        identity=ADA,
    )  # fmt: skip
    return render(inp)


def ssu(tmp_path: Path, *envs: dict[str, str]) -> PrText:
    meta = make_patch(tmp_path / "set", "vllm", SSU_META)
    write_records(meta, *(record(meta, VLLM, env) for env in envs))
    return text(meta, VLLM, VLLM_TEMPLATE, ("vllm/model_executor/layers/mamba/mamba_mixer2.py",))


def gqa(tmp_path: Path) -> PrText:
    meta = make_patch(tmp_path / "set", "flashinfer", GQA_META)
    h100 = {**H200, "gpu": "NVIDIA H100 80GB HBM3"}
    later = record(meta, FLASHINFER, h100, time="2026-11-23T09:28:48Z")
    write_records(meta, record(meta, FLASHINFER, H200), later)
    template = load_template(None, "flashinfer")
    return text(meta, FLASHINFER, template, ("include/flashinfer/utils.cuh",))


# -- golden ------------------------------------------------------------------------------------
def test_vllm_text_golden(tmp_path: Path, pytestconfig: pytest.Config) -> None:
    pr = ssu(tmp_path, H200, CPU)
    assert pr.title == "[Hardware][NVIDIA] Use Blackwell selective_state_update tuning on SM12x"
    check_inline(pytestconfig, HERE, "VLLM_BODY", pr.body)
    check_inline(pytestconfig, HERE, "VLLM_COMMIT", pr.commit_message)


def test_flashinfer_text_golden(tmp_path: Path, pytestconfig: pytest.Config) -> None:
    pr = gqa(tmp_path)
    assert pr.title == "fix(decode): dispatch GQA group size 16 in batch decode"
    check_inline(pytestconfig, HERE, "FLASHINFER_BODY", pr.body)
    check_inline(pytestconfig, HERE, "FLASHINFER_COMMIT", pr.commit_message)
    check_inline(pytestconfig, HERE, "FLASHINFER_COMMENT", pr.comment)  # for the open #3563


def test_an_h200_record_is_never_an_sm12x_result(tmp_path: Path) -> None:
    body = ssu(tmp_path, H200).body
    assert "**Not run on SM120 or SM121 hardware**" in body
    assert "the GPU results above are from SM90 only" in body
    assert "12.1" not in body and "GB10" not in body


def test_an_sm121_record_is_said_and_only_sm120_is_missing(tmp_path: Path) -> None:
    body = ssu(tmp_path, H200, GB10).body
    assert "- NVIDIA GB10 (compute capability 12.1)" in body
    assert "**Not run on SM120 hardware**" in body
    assert "SM121 hardware" not in body


def test_no_runs_are_not_results(tmp_path: Path) -> None:
    body = ssu(tmp_path).body
    assert "Not yet run on this version of the change at vLLM 0.19.0" in body
    assert "**Not run on SM120 or SM121 hardware**, which this change is for." in body


def test_stale_and_failed_records(tmp_path: Path) -> None:
    meta = make_patch(tmp_path / "set", "vllm", SSU_META)
    stale = record(meta, VLLM, GB10, digest="0" * 64)
    other = record(meta, VLLM, GB10, lock_commit="ffffffffff")
    failed = record(meta, VLLM, H200, result="failed", reason="1 of 2 tests failed")
    write_records(meta, stale, other, failed)
    body = text(meta, VLLM, VLLM_TEMPLATE, ("x.py",)).body
    assert "GB10" not in body  # a record of another version or commit proves nothing here
    assert "2026-11-22: **failed** (1 of 2 tests failed)" in body


def test_the_upstream_test_the_pr_adds_is_in_the_plan(tmp_path: Path) -> None:
    (tmp_path / "set" / "upstream-tests").mkdir(parents=True)
    (tmp_path / "set" / "upstream-tests" / "t.diff").write_text("a test\n")
    added = (
        '\n[export.test]\nfile = "upstream-tests/t.diff"\n'
        'run = ["tests/kernels/test_ssu.py", "-k", "sm12x"]\ngpu = true\nmin_capability = "9.0"\n'
    )
    meta = make_patch(tmp_path / "set", "vllm", SSU_META + added)
    body = text(meta, VLLM, VLLM_TEMPLATE, ("x.py",)).body
    assert "```bash\npython -m pytest tests/kernels/test_ssu.py -k sm12x\npython -m pytest " in body
    assert "`tests/kernels/test_ssu.py -k sm12x` needs a CUDA GPU of compute capability 9.0" in body


def test_a_gpu_test_with_no_capability_needs_a_cuda_gpu(tmp_path: Path) -> None:
    """Said as a sentence (it read "`... -k sm12x` GPU.")."""
    (tmp_path / "set" / "upstream-tests").mkdir(parents=True)
    (tmp_path / "set" / "upstream-tests" / "t.diff").write_text("a test\n")
    added = '\n[export.test]\nfile = "upstream-tests/t.diff"\nrun = ["tests/t.py"]\ngpu = true\n'
    meta = make_patch(tmp_path / "set", "vllm", SSU_META + added)
    body = text(meta, VLLM, VLLM_TEMPLATE, ("x.py",)).body
    assert "`tests/t.py` needs a CUDA GPU.\n" in body


def test_a_title_over_72_is_refused(tmp_path: Path) -> None:
    meta = make_patch(
        tmp_path / "set",
        "vllm",
        SSU_META.replace('"Hardware][NVIDIA"', '"Perf", "Hardware][NVIDIA"'),
    )
    with pytest.raises(ConfigError, match="77 characters") as err:
        text(meta, VLLM, VLLM_TEMPLATE, ("x.py",))
    assert str(meta.meta_file) in err.value.message


def test_set_without_export_settings_has_no_statement(tmp_path: Path) -> None:
    meta = make_patch(tmp_path / "set", "vllm", SSU_META, export="")
    pr = text(meta, VLLM, VLLM_TEMPLATE, ("x.py",))
    assert "AI assistance" not in pr.body and "Co-authored-by: Claude" not in pr.commit_message


@pytest.mark.parametrize(
    ("table", "message"),
    [
        ("ai_assistance = 1", "must be a string"),
        ('trailers = ["Claude"]', "'Key: value'"),
        ('trailer = ["A: b"]', "unknown keys"),
    ],
)
def test_bad_export_settings(tmp_path: Path, table: str, message: str) -> None:
    (tmp_path / "patchset.toml").write_text(f"[patchset]\nname = 'x'\n[export]\n{table}\n")
    with pytest.raises(ConfigError, match=message):
        load_settings(tmp_path)


# -- the shipped patches -----------------------------------------------------------------------
def shipped() -> list[tuple[PatchMeta, LockEntry]]:
    project = load_project(ROOT)
    return [(p, project.entry(p.target)) for s in project.sets for p in s.patches]


@pytest.mark.parametrize("patch", shipped(), ids=lambda p: p[0].id)
def test_shipped_texts_are_upstream_ready(patch: tuple[PatchMeta, LockEntry]) -> None:
    meta, entry = patch
    template = VLLM_TEMPLATE if entry.name == "vllm" else load_template(None, entry.name)
    pr = text(meta, entry, template, meta.files or ("a/file",))
    assert len(pr.title) <= 72
    for part in (pr.body, pr.commit_message, pr.comment):
        found = [w for w in (*TOOL_WORDS, meta.id, meta.set_name) if w in part.lower()]
        assert not found, f"{meta.id}: the text names the tool: {found}"
    for para in pr.body.split("\n\n"):  # no hard line break inside a paragraph of prose
        lines = para.splitlines()
        if not any(
            line.startswith(("-", "#", "`", "|", "<", "*", "Run on", "AI")) for line in lines
        ):
            assert len(lines) <= 1, f"{meta.id}: a hard line break in {para!r}"
    assert "AI assistance was used" in pr.body
    if meta.upstream.number:
        assert f"#{meta.upstream.number}" in pr.body
    ran = {r.capability for r in text_input(
        meta, entry, base="", files=(), style="", template="", identity=ADA
    ).facts.verification.runs}  # fmt: skip
    for cap in meta.pr_hardware:
        said = f"SM{cap[0]}{cap[1]}"
        assert (cap in ran) != (
            f"Not run on {said}" in pr.body or f" or {said} hardware" in pr.body
        )


# -- the golden mechanism itself ---------------------------------------------------------------
@pytest.mark.parametrize("value", ["", "a\n", 'ends with a quote"', 'x """ y \\ z\n', "📌 é\n"])
def test_literal_round_trips(value: str) -> None:
    import ast

    assert ast.literal_eval(literal(value)) == value


def test_golden_fails_on_change_and_the_flag_rewrites(tmp_path: Path) -> None:
    module = tmp_path / "test_x.py"
    module.write_text('A = """\\\nold\n"""\nB = 1\n')

    class Config:
        def __init__(self, update: bool) -> None:
            self.update = update

        def getoption(self, name: str) -> bool:
            return self.update

    with pytest.raises(AssertionError, match="--update-golden"):
        check_inline(Config(False), module, "A", "new 📌\n")  # type: ignore[arg-type]
    check_inline(Config(True), module, "A", "new 📌\n")  # type: ignore[arg-type]
    check_inline(Config(False), module, "A", "new 📌\n")  # type: ignore[arg-type]
    assert module.read_text().endswith('"""\nB = 1\n')


VLLM_BODY = """\
<!-- markdownlint-disable -->

## Purpose

MambaMixer2 sets is_blackwell from capability family 100 only, so SM12x takes the Hopper-era block sizes. Family 120 now gets the Blackwell ones.

The problem began in v0.11.0 (#24213, which added the Blackwell tuning); it is present in vLLM 0.19.0 (commit 2a69949bd). Changes `vllm/model_executor/layers/mamba/mamba_mixer2.py`.

Addresses #41000

Not a duplicate: as of 2026-11-23, no open or merged vLLM PR makes this change.

AI assistance was used: a coding agent wrote the change and its tests.

## Test Plan

```bash
python -m pytest tests/kernels/mamba/test_mamba_ssm.py::test_selective_state_update
```

`tests/kernels/mamba/test_mamba_ssm.py::test_selective_state_update` needs a CUDA GPU of compute capability 8.0 or newer.

## Test Result

Run on vLLM 0.19.0 (commit 2a69949bd) with this change applied:

- NVIDIA H200 (compute capability 9.0); driver 580.159.04, CUDA 13.0, torch 2.11.0+cu130, triton 3.6.0, Python 3.12.3, 2026-11-22: **passed**; not proven (never run without the change)
  - `tests/kernels/mamba/test_mamba_ssm.py::test_selective_state_update`: passed (2 passed)
  - `test_ssu_gate.py` (not in this PR): passed (2 passed)
- CPU only (no GPU); Python 3.12.3, 2026-11-22: **passed**; not proven (never run without the change)
  - `tests/kernels/mamba/test_mamba_ssm.py::test_selective_state_update`: not run (no GPU)
  - `test_ssu_gate.py` (not in this PR): passed (2 passed)

**Not run on SM120 or SM121 hardware**, which this change is for: the GPU results above are from SM90 only.

**Caveats:** A tuning change: correctness does not depend on the block size.

---
<details>
<summary> Essential Elements of an Effective PR Description Checklist </summary>

- [x] The purpose of the PR, such as "Fix some issue (link existing issues this PR will resolve)".
- [x] The test plan, such as providing test command.
- [ ] The test results, such as pasting the results comparison before and after, or e2e results
- [ ] (Optional) The necessary documentation update, such as updating `supported_models.md` and `examples` for a new model.
- [ ] (Optional) Release notes update. If your change is user facing, please update the release notes draft in the [Google Doc](https://docs.google.com/document/d/1YyVqrgX4gHTtrstbq8oWUImOyPCKSGnJ7xtTpmXzlRs/edit?tab=t.0).
</details>

**BEFORE SUBMITTING, PLEASE READ <https://docs.vllm.ai/en/latest/contributing>** (anything written below this line will be removed by GitHub Actions)
"""
VLLM_COMMIT = """\
[Hardware][NVIDIA] Use Blackwell selective_state_update tuning on SM12x

MambaMixer2 sets is_blackwell from capability family 100 only, so SM12x
takes the Hopper-era block sizes. Family 120 now gets the Blackwell
ones.

Addresses #41000

Co-authored-by: Claude
Co-authored-by: Grace Hopper <grace@example.com>
Signed-off-by: Ada Lovelace <ada@example.com>
"""
FLASHINFER_BODY = """\
## 📌 Description

The decode kernels dispatch group sizes 1, 2, 3, 4 and 8 only, so group size 16 fails with `Unsupported group_size: 16`. The fix adds the case.

Present in FlashInfer 0.6.6 (commit 70b142b75b46). Changes `include/flashinfer/utils.cuh`.

## 🔍 Related Issues

- #3563 (open as of 2026-11-23) proposes the same change; what follows is offered for it.

## 🚀 Pull Request Checklist

Thank you for contributing to FlashInfer! Before we review your pull request, please make sure the following items are complete.

### ✅ Pre-commit Checks

- [ ] I have installed `pre-commit` by running `pip install pre-commit` (or used your preferred method).
- [ ] I have installed the hooks with `pre-commit install`.
- [ ] I have run the hooks manually with `pre-commit run --all-files` and fixed any reported issues.

> If you are unsure about how to set up `pre-commit`, see [the pre-commit documentation](https://pre-commit.com/).

## 🧪 Tests

- [ ] Tests have been added or updated as needed.
- [ ] All tests are passing (`unittest`, etc.).

**Test plan:**

No test in FlashInfer's own suite covers this change yet.

**Test result:**

Run on FlashInfer 0.6.6 (commit 70b142b75b46) with this change applied:

- NVIDIA H100 80GB HBM3 (compute capability 9.0); driver 580.159.04, CUDA 13.0, torch 2.11.0+cu130, triton 3.6.0, Python 3.12.3, 2026-11-23: **passed**; not proven (never run without the change)
  - `test_decode_gqa16.py` (not in this PR): passed (2 passed)
- NVIDIA H200 (compute capability 9.0); driver 580.159.04, CUDA 13.0, torch 2.11.0+cu130, triton 3.6.0, Python 3.12.3, 2026-11-22: **passed**; not proven (never run without the change)
  - `test_decode_gqa16.py` (not in this PR): passed (2 passed)

## Reviewer Notes

AI assistance was used: a coding agent wrote the change and its tests.
"""
FLASHINFER_COMMIT = """\
fix(decode): dispatch GQA group size 16 in batch decode

The decode kernels dispatch group sizes 1, 2, 3, 4 and 8 only, so group
size 16 fails with `Unsupported group_size: 16`. The fix adds the case.

Co-authored-by: Claude
Co-authored-by: Grace Hopper <grace@example.com>
"""
FLASHINFER_COMMENT = """\
We carry the same change downstream; here is what we found and tested, offered for this PR rather than as another one.

The decode kernels dispatch group sizes 1, 2, 3, 4 and 8 only, so group size 16 fails with `Unsupported group_size: 16`. The fix adds the case.

Present in FlashInfer 0.6.6 (commit 70b142b75b46). Changes `include/flashinfer/utils.cuh`.

**Test plan**

No test in FlashInfer's own suite covers this change yet.

**Test result**

Run on FlashInfer 0.6.6 (commit 70b142b75b46) with this change applied:

- NVIDIA H100 80GB HBM3 (compute capability 9.0); driver 580.159.04, CUDA 13.0, torch 2.11.0+cu130, triton 3.6.0, Python 3.12.3, 2026-11-23: **passed**; not proven (never run without the change)
  - `test_decode_gqa16.py` (ours, not upstream): passed (2 passed)
- NVIDIA H200 (compute capability 9.0); driver 580.159.04, CUDA 13.0, torch 2.11.0+cu130, triton 3.6.0, Python 3.12.3, 2026-11-22: **passed**; not proven (never run without the change)
  - `test_decode_gqa16.py` (ours, not upstream): passed (2 passed)

AI assistance was used: a coding agent wrote the change and its tests.
"""
