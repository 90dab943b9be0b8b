"""Added lines naming what the target file spells the old way take the target's spelling,
only where the base and target files show that rename line for line."""

from __future__ import annotations

from pathlib import Path

from patchkit.outcome import Outcome
from tests.conftest import dedent
from tests.engine.test_placement import ported

C_BASE = dedent(
    """
    #include "clar_libgit2.h"

    void test_config_read__simple(void)
    {
    \tgit_config *cfg;
    \tgit_buf buf = GIT_BUF_INIT;
    \tcl_git_pass(git_config_open_ondisk(&cfg, "config0"));
    \tgit_config_free(cfg);
    \tgit_buf_dispose(&buf);
    }

    void test_config_read__bom(void)
    {
    \tgit_config *cfg;
    \tgit_buf buf = GIT_BUF_INIT;
    \tcl_git_pass(git_config_open_ondisk(&cfg, "config1"));
    \tgit_config_free(cfg);
    \tgit_buf_dispose(&buf);
    }
    """
)
NEW_TEST = dedent(
    """

    void test_config_read__nosection(void)
    {
    \tgit_config *cfg;
    \tgit_buf buf = GIT_BUF_INIT;
    \tcl_git_pass(git_config_get_string_buf(&buf, cfg, "key"));
    \tgit_buf_dispose(&buf);
    \tgit_config_free(cfg);
    }
    """
)
PATH = "tests/config/read.c"


def test_an_added_call_takes_the_name_the_release_calls_it_by(tmp_path: Path) -> None:
    """The release calls ``git_buf_free`` on every line the base calls ``git_buf_dispose``:
    the new test calls it so too."""
    upstream = C_BASE.replace("git_buf_dispose", "git_buf_free")
    report, text = ported(tmp_path, PATH, C_BASE, C_BASE + NEW_TEST, upstream)
    assert report.outcome is Outcome.CARRIED, report.result.details
    assert text == upstream + NEW_TEST.replace("git_buf_dispose", "git_buf_free")


def test_a_rename_seen_on_one_line_only_is_no_evidence(tmp_path: Path) -> None:
    base = C_BASE.replace(
        "\tgit_buf_dispose(&buf);\n}\n\nvoid test_config_read__bom",
        "}\n\nvoid test_config_read__bom",
    )
    upstream = base.replace("git_buf_dispose", "git_buf_free")
    report, text = ported(tmp_path, PATH, base, base + NEW_TEST, upstream)
    assert report.outcome is Outcome.CARRIED, report.result.details
    assert text == upstream + NEW_TEST


def test_a_name_the_release_still_names_somewhere_is_kept(tmp_path: Path) -> None:
    """The release still names ``git_buf_dispose`` (here in a comment): not gone, not renamed."""
    upstream = C_BASE.replace("git_buf_dispose", "git_buf_free")
    upstream = upstream.replace(
        '#include "clar_libgit2.h"', '#include "clar_libgit2.h"\n/* git_buf_dispose() frees too */'
    )
    report, text = ported(tmp_path, PATH, C_BASE, C_BASE + NEW_TEST, upstream)
    assert report.outcome is Outcome.CARRIED, report.result.details
    assert text == upstream + NEW_TEST


def test_a_name_the_patch_defines_itself_is_kept(tmp_path: Path) -> None:
    """The patch brings ``git_buf_dispose`` itself (it defines it): its calls stay its own."""
    helper = "\nvoid git_buf_dispose(git_buf *buf)\n{\n\tgit_buf_free(buf);\n}\n"
    upstream = C_BASE.replace("git_buf_dispose", "git_buf_free")
    report, text = ported(tmp_path, PATH, C_BASE, C_BASE + helper + NEW_TEST, upstream)
    assert report.outcome is Outcome.CARRIED, report.result.details
    assert text == upstream + helper + NEW_TEST
