"""Nothing that goes upstream names this tool, a patch id or a set: the branch (shown in the
PR), the commit message, the PR title and body, the comment for an open PR. The branch prefix
is the user's (``--branch-prefix``, else ``git config patchkit.branchPrefix``), none by default."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from tests.export.test_export import Case, fi_case, only, vllm_case


def _upstream_texts(case: Case, patch_id: str) -> list[str]:
    export = only(case.export(patch_id))
    text = export.text
    message = case.git("log", "-1", "--format=%B", export.branch)
    return [export.branch, message, text.title, text.body, text.comment]


@pytest.mark.parametrize("make", [vllm_case, fi_case])
def test_no_tool_word_patch_id_or_set_name_goes_upstream(
    tmp_path: Path, make: Callable[[Path], Case]
) -> None:
    case = make(tmp_path)
    case.git("config", "--unset", "patchkit.branchPrefix")
    patch_id = "fix-f" if case.target == "vllm" else "decode-gqa-group-size-16"
    texts = _upstream_texts(case, patch_id)
    assert "/" not in texts[0]  # no prefix unless the user gives one
    for text in texts:
        for word in ("patchkit", patch_id, "demo"):  # "demo": the set's name
            assert word not in text.lower(), (word, text)


def test_the_branch_prefix_comes_from_the_option_else_git_config(tmp_path: Path) -> None:
    case = vllm_case(tmp_path)
    case.git("config", "patchkit.branchPrefix", "ada/")
    assert only(case.export("fix-f")).branch == "ada/fix-the-off-by-one-in-f"
    given = only(case.export("fix-f", branch_prefix="fix/"))
    assert given.branch == "fix/fix-the-off-by-one-in-f"
    assert case.git("rev-parse", given.branch) == given.commit
