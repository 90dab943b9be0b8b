"""``[upstream]`` in a patch's metadata: a merged upstream PR refuses the export, an open one
turns the text into a comment for it; malformed tables are clear configuration errors."""

from __future__ import annotations

from datetime import date
from pathlib import Path

import pytest

from patchkit.errors import ConfigError
from patchkit.project.sets import load_patch
from tests.export.test_export import VLLM_META, vllm_case, write_record

PR = "https://github.com/vllm-project/vllm/pull/41233"


def upstream(state: str, pr: str = PR) -> str:
    return VLLM_META + f'\n[upstream]\npr = "{pr}"\nstate = "{state}"\nchecked = "2026-11-23"\n'


def test_merged_named_patch_is_refused_naming_the_pr(tmp_path: Path) -> None:
    case = vllm_case(tmp_path)
    case.set_meta("fix-f", upstream("merged"))
    with pytest.raises(ConfigError, match="PR #41233") as err:
        case.export("fix-f")
    assert err.value.exit_code == 2
    assert case.git("branch", "--list", "test/*") == ""


def test_merged_patch_of_a_series_is_left_out_and_said(tmp_path: Path) -> None:
    case = vllm_case(tmp_path)
    case.set_meta("fix-f", upstream("merged"))
    report = case.export()
    assert report.exports == ()
    assert report.left_out == (f"fix-f: merged upstream in {PR}",)


def test_open_pr_gets_a_comment_not_a_new_pr(tmp_path: Path) -> None:
    case = vllm_case(tmp_path)
    case.set_meta("fix-f", upstream("open"))
    write_record(case, "fix-f")  # a run of the set's own test: said as ours, not "this PR"'s
    (export,) = case.export("fix-f").exports
    assert export.comment_for == PR
    comment = (export.out_dir / "COMMENT.md").read_text()
    assert comment.startswith("We carry the same change downstream; here is what we found")
    assert "## Purpose" not in comment and "**Test result**" in comment
    assert "this PR" not in comment.partition("**Test result**")[2]  # another's PR: our test
    assert f"{PR} (open as of 2026-11-23) proposes the same change" in export.text.body
    case.set_meta("fix-f", upstream("closed"))
    (export,) = case.export("fix-f").exports
    assert export.comment_for is None
    assert not (export.out_dir / "COMMENT.md").exists()


@pytest.mark.parametrize(
    ("table", "message"),
    [
        ('state = "gone"\npr = "' + PR + '"', "must be none, open, merged or closed"),
        ('state = "open"', "needs pr = URL"),
        ('pr = "#41233"', "GitHub pull request URL"),
        ('checked = "yesterday"', "must be a date"),
        ("prr = 1", "unknown keys"),
    ],
)
def test_bad_upstream_tables_are_config_errors(tmp_path: Path, table: str, message: str) -> None:
    meta = tmp_path / "p.toml"
    (tmp_path / "p.patch").write_text("")
    meta.write_text(f'id = "p"\ntarget = "vllm"\ntitle = "t"\nwhy = "w"\n[upstream]\n{table}\n')
    with pytest.raises(ConfigError, match=message):
        load_patch(meta, "demo", ("vllm",))


def test_our_own_open_pr_is_updated_not_commented_on_as_a_duplicate(tmp_path: Path) -> None:
    case = vllm_case(tmp_path)
    meta = f'prs = ["{PR}"]\n' + upstream("open") + 'author = "ada"\nours = true\n'
    case.set_meta("fix-f", meta)
    (export,) = case.export("fix-f").exports
    assert export.comment_for is None and export.pr_url == PR
    assert not (export.out_dir / "COMMENT.md").exists()
    assert f"this updates {PR}, our own PR" in export.text.body
    assert "proposes the same change" not in export.text.body


@pytest.mark.parametrize("ours", ["ours = false\n", ""])  # another's, or not known to be ours
def test_another_authors_open_pr_never_yields_this_updates(tmp_path: Path, ours: str) -> None:
    """Even named in ``prs``, an open PR not recorded as ours gets a comment draft (what our
    run adds), and no text says it "updates" it."""
    case = vllm_case(tmp_path)
    case.set_meta("fix-f", f'prs = ["{PR}"]\n' + upstream("open") + f'author = "bob"\n{ours}')
    (export,) = case.export("fix-f").exports
    assert export.comment_for == PR
    comment = (export.out_dir / "COMMENT.md").read_text()
    assert "**Test result**" in comment
    for text in (export.text.body, export.text.commit_message, comment):
        assert "updates" not in text
    assert f"{PR} by @bob (open as of 2026-11-23) proposes the same change" in export.text.body


def test_not_a_duplicate_only_after_a_recent_check_and_related_prs_are_listed(
    tmp_path: Path,
) -> None:
    case = vllm_case(tmp_path)
    related = (
        '[[upstream.related]]\npr = "https://github.com/vllm-project/vllm/pull/41398"\n'
        'state = "merged"\nwhy = "changes mod.py (g)"\n'
    )
    stale = VLLM_META + '\n[upstream]\nstate = "none"\nchecked = "2020-01-01"\n' + related
    case.set_meta("fix-f", stale)
    (export,) = case.export("fix-f").exports
    assert "Not a duplicate" not in export.text.body
    listed = "Related upstream PRs in the same code: {} (merged; changes mod.py (g))."
    assert listed.format("https://github.com/vllm-project/vllm/pull/41398") in export.text.body
    today = date.today().isoformat()
    case.set_meta("fix-f", stale.replace("2020-01-01", today))
    (export,) = case.export("fix-f").exports
    assert f"Not a duplicate: as of {today}, no open or merged vLLM PR" in export.text.body


def test_a_related_pr_of_unknown_state_is_listed_without_one(tmp_path: Path) -> None:
    """No "state not recorded": upstream reads the PR's own state on GitHub."""
    case = vllm_case(tmp_path)
    related = (
        '[[upstream.related]]\npr = "https://github.com/vllm-project/vllm/pull/39628"\n'
        'why = "selective_state_update tuning"\n'
    )
    case.set_meta("fix-f", VLLM_META + '\n[upstream]\nstate = "none"\n' + related)
    (export,) = case.export("fix-f").exports
    said = "https://github.com/vllm-project/vllm/pull/39628 (selective_state_update tuning)."
    assert f"Related upstream PRs in the same code: {said}" in export.text.body
