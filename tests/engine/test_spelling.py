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


FETCH_PY = dedent(
    """
    import requests


    def fetch(url):
        timeout = 3
        log("fetching")
        print(timeout)
        log("fetched")
        return requests.get(url)


    def post(url, data):
        resp = requests.post(url, data)
        return resp


    def main():
        a = 1
        b = 2
        c = 3
        d = 4
        e = 5
        f = 6
        g = 7
        post("u", None)
        h = 8
        return a
    """
)


def test_a_member_or_keyword_of_the_spelling_a_local_lost_is_kept(tmp_path: Path) -> None:
    """Upstream renamed a local ``timeout`` of fetch(); another API's ``.timeout`` and
    ``timeout=`` in the lines post() gets are not that local (an independent review's case)."""
    upstream = FETCH_PY.replace("timeout", "deadline")
    add = "    resp = requests.post(url, data)\n    print(resp.timeout, requests.Session(timeout=1))\n"
    patched = FETCH_PY.replace("    resp = requests.post(url, data)\n", add)
    report, text = ported(tmp_path, "m.py", FETCH_PY, patched, upstream)
    assert text in (upstream, upstream.replace("    resp = requests.post(url, data)\n", add))
    assert "resp.deadline" not in text and "Session(deadline" not in text, report.outcome


def test_a_name_the_patch_also_uses_in_a_hunk_that_removes_lines_is_kept(tmp_path: Path) -> None:
    """The patch's new helper(timeout=5) is called as helper(timeout=2) in a hunk that
    removes a line (never respelled): one name is never split between two spellings."""
    upstream = FETCH_PY.replace("timeout", "deadline")
    helper = "    return resp\n\n\ndef helper(timeout=5):\n    return timeout * 2\n"
    patched = FETCH_PY.replace("    return resp\n", helper).replace(
        '    post("u", None)\n', "    helper(timeout=2)\n"
    )
    report, text = ported(tmp_path, "m.py", FETCH_PY, patched, upstream)
    assert "def helper(deadline" not in text, report.outcome


def test_a_c_member_of_the_spelling_a_local_lost_is_kept(tmp_path: Path) -> None:
    base = dedent(
        """
        #include "hdr.h"

        int read_all(int fd, char *buf)
        {
            int len = 0;
            log_msg("reading");
            len += read(fd, buf, 16);
            log_msg("read");
            return len;
        }

        void fill(struct hdr *hdr, int n)
        {
            hdr->kind = 1;
            hdr->flags = 0;
        }
        """
    )
    upstream = base.replace("len", "nbytes")
    add = "    hdr->flags = 0;\n    hdr->len = n;\n"
    report, text = ported(
        tmp_path, "m.c", base, base.replace("    hdr->flags = 0;\n", add), upstream
    )
    assert report.outcome is Outcome.CARRIED
    assert text == upstream.replace("    hdr->flags = 0;\n", add)
