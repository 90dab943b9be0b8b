"""Upstream deleted, or edited inside, lines the patch deletes or keeps: the last pass merges
it when one result is sure (:mod:`patchkit.engine.diff.deletions`), and the conflict stands
in the look-alike cases where it is not.

Each case on a small repository through ``port``; each merged one conflicts on a line merge
(and so did on every pass before this one)."""

from __future__ import annotations

from pathlib import Path

from patchkit.engine.diff.deletions import merge_over_deletions
from patchkit.engine.diff.lastpass import slid
from patchkit.engine.diff.parse import parse_diff
from patchkit.ops.port import port
from patchkit.outcome import Outcome
from testing.builders import Upstream
from tests.conftest import dedent
from tests.engine.test_placement import ported

# -- a deletion already made: a file the patch rewrites whole -------------------------------
LISTS = dedent(
    """
    # Checks the dialects.

    set(dialects 11 14 17 20)

    # an old compiler cannot read dialect 11
    if (OLD_COMPILER)
      list(FILTER dialects EXCLUDE REGEX "^11$")
    endif()

    add_custom_target(test.dialects)

    foreach (dialect ${dialects})
      add_library("test.cpp${dialect}" OBJECT test.cpp)
      add_dependencies(test.dialects "test.cpp${dialect}")
    endforeach()
    """
)
REWRITTEN = (
    "add_custom_target(test.dialects)\n\nadd_subdirectory(arch)\nadd_subdirectory(dialect)\n"
)
WITHOUT_OLD = LISTS.replace(
    '# an old compiler cannot read dialect 11\nif (OLD_COMPILER)\n  list(FILTER dialects EXCLUDE REGEX "^11$")\nendif()\n\n',
    "",
)


def test_a_file_the_patch_rewrites_whose_lines_upstream_deleted_is_the_patch_s(
    tmp_path: Path,
) -> None:
    report, text = ported(tmp_path, "CMakeLists.txt", LISTS, REWRITTEN, WITHOUT_OLD)
    assert report.outcome is Outcome.CARRIED, report.result.details
    assert text == REWRITTEN


def test_a_rewrite_of_lines_upstream_deleted_stays_a_conflict(tmp_path: Path) -> None:
    # the patch rewrites the very block upstream deleted (its new lines stand in its place)
    patched = LISTS.replace("if (OLD_COMPILER)", "if (OLD_COMPILER OR OTHER)")
    report, text = ported(tmp_path, "CMakeLists.txt", LISTS, patched, WITHOUT_OLD)
    assert report.outcome is Outcome.CONFLICT
    assert text == WITHOUT_OLD


# -- a deleted context: the patch keeps a line upstream deleted -----------------------------
LOAD_C = dedent(
    """
    int helper(void) {
        return 0;
    }

    /* Load a module. */
    int load(struct ctx *c) {
        c->name = NULL;
        c->flags = 0;
        c->argc = 0;
        c->argv = NULL;
        c->loaded = 0;
        log_start(c);
        if (init(c) != 0) {
            drop_commands(c);
            drop_shared(c);
            drop_categories(c);
            drop_configs(c);
            free_module(c);
            return -1;
        }
        return 0;
    }
    """
)
CLEANUP = "void cleanup(struct ctx *c) {\n    drop_commands(c);\n    drop_shared(c);\n}\n\n"


def _load_patched(text: str) -> str:
    text = text.replace("/* Load a module. */\n", CLEANUP + "/* Load a module. */\n")
    text = text.replace(
        "        drop_commands(c);\n        drop_shared(c);\n", "        cleanup(c);\n"
    )
    return text.replace("        drop_configs(c);\n", "")


def test_a_line_the_patch_keeps_that_upstream_deleted_stays_deleted(tmp_path: Path) -> None:
    upstream = LOAD_C.replace("        drop_categories(c);\n", "")
    report, text = ported(tmp_path, "load.c", LOAD_C, _load_patched(LOAD_C), upstream)
    assert report.outcome is Outcome.CARRIED, report.result.details
    assert text == _load_patched(upstream)


def test_a_deleted_declaration_the_patch_s_new_lines_use_stays_a_conflict(
    tmp_path: Path,
) -> None:
    base = LOAD_C.replace("drop_categories(c);", "int n = categories(c);")
    patched = _load_patched(base).replace("cleanup(c);", "cleanup(c, n);")
    upstream = base.replace("        int n = categories(c);\n", "")
    report, text = ported(tmp_path, "load.c", base, patched, upstream)
    assert report.outcome is Outcome.CONFLICT
    assert text == upstream


TASKS = dedent(
    """
    - hosts: windows
      tasks:
      - name: run a command
        win_shell: whoami

      - name: get the quota
        win_shell: Get-Quota
        register: quota

      - name: reset the quota
        win_shell: Set-Quota {{ quota.stdout }}
    """
)
NEW_TASK = "  - name: test over HTTP\n    win_ping:\n    vars:\n      port: 5985\n\n"


def test_a_paragraph_inserted_before_what_upstream_deleted_goes_where_it_stood(
    tmp_path: Path,
) -> None:
    patched = TASKS.replace("  - name: get the quota", NEW_TASK + "  - name: get the quota")
    upstream = TASKS[: TASKS.index("\n  - name: get the quota")]
    report, text = ported(tmp_path, "tests.yml", TASKS, patched, upstream)
    assert report.outcome is Outcome.CARRIED, report.result.details
    assert text == upstream + "\n" + NEW_TASK.rstrip("\n") + "\n"


def test_lines_inserted_inside_what_upstream_deleted_stay_a_conflict(tmp_path: Path) -> None:
    patched = TASKS.replace("    register: quota\n", "    register: quota\n    retries: 3\n")
    upstream = TASKS[: TASKS.index("\n  - name: get the quota")]
    report, text = ported(tmp_path, "tests.yml", TASKS, patched, upstream)
    assert report.outcome is Outcome.CONFLICT
    assert text == upstream


def test_lines_inserted_below_or_above_context_upstream_deleted_stay_conflicts(
    tmp_path: Path,
) -> None:
    # the lines above the insertion are gone (it may need them), or the entry below it is
    # gone but the file goes on (a person restores it, or not)
    base = "%changelog\n* Mar 2018 1.3.0\n- See NEWS\n* Aug 2017 1.2.1\n- Fedora\n"
    patched = base.replace("%changelog\n", "%changelog\n* Aug 2018 1.3.0\n- gcc-c++\n")
    upstream = base.replace("* Mar 2018 1.3.0\n- See NEWS\n", "")
    report, text = ported(tmp_path / "a", "ucx.spec", base, patched, upstream)
    assert report.outcome is Outcome.CONFLICT
    assert text == upstream
    base = "start\n  set a 1\n  set b 2\n\n  chain\n  wait\n"
    patched = base.replace("\n  chain\n", "\n  ping 3600\n\n  chain\n")
    upstream = base.replace("  set a 1\n  set b 2\n\n", "")
    report, text = ported(tmp_path / "b", "restart.tcl", base, patched, upstream)
    assert report.outcome is Outcome.CONFLICT
    assert text == upstream


# -- an edit inside what the patch deletes ---------------------------------------------------
HOOK_C = dedent(
    """
    static int probe(void) {
        return 0;
    }

    void test_event_failed(void) {
        int status;
        restore_point *rp = 0;

        status = set_events(MUNMAP);
        check(status);

        /* set hook to munmap */
        status = patch_symbol("munmap", hook_munmap, &rp);
        check(status);
        expect_ne((long)rp, 0);

        status = test_events(MUNMAP);
        expect_true(status == UNSUPPORTED);
    }
    """
)


def _hook_patched(text: str) -> str:
    old = (
        '    status = patch_symbol("munmap", hook_munmap, &rp);\n'
        "    check(status);\n"
        "    expect_ne((long)rp, {zero});\n"
    )
    for zero in ("0", "NULL"):
        text = text.replace(
            old.format(zero=zero), '    bistro_patch patch("munmap", hook_munmap);\n'
        )
    return text.replace("    restore_point *rp = 0;\n", "")


def test_an_edit_inside_a_statement_the_patch_deletes_is_deleted_with_it(
    tmp_path: Path,
) -> None:
    upstream = HOOK_C.replace("expect_ne((long)rp, 0);", "expect_ne((long)rp, NULL);")
    report, text = ported(tmp_path, "hook.cc", HOOK_C, _hook_patched(HOOK_C), upstream)
    assert report.outcome is Outcome.CARRIED, report.result.details
    assert text == _hook_patched(upstream)
    assert "NULL" not in text


def test_an_edit_that_declares_a_name_used_later_stays_a_conflict(tmp_path: Path) -> None:
    upstream = HOOK_C.replace("expect_ne((long)rp, 0);", "int saved = (long)rp;").replace(
        "        expect_true(status == UNSUPPORTED);\n",
        "        expect_true(status == UNSUPPORTED);\n        expect_ne(saved, 0);\n",
    )
    upstream = upstream.replace(
        "    expect_true(status == UNSUPPORTED);\n",
        "    expect_true(status == UNSUPPORTED);\n    expect_ne(saved, 0);\n",
    )
    report, text = ported(tmp_path, "hook.cc", HOOK_C, _hook_patched(HOOK_C), upstream)
    assert report.outcome is Outcome.CONFLICT
    assert text == upstream


def test_a_statement_both_sides_rewrote_stays_a_conflict(tmp_path: Path) -> None:
    # the patch rewrote the very statement upstream edited: not a deletion of it
    base = "def tail():\n    return 1\n"
    patched, upstream = base.replace("1", "2"), base.replace("1", "9")
    report, text = ported(tmp_path, "tail.py", base, patched, upstream)
    assert report.outcome is Outcome.CONFLICT
    assert text == upstream
    ours = HOOK_C.replace("expect_ne((long)rp, 0);", "expect_ne((long)rp, NULL);").encode()
    theirs = HOOK_C.replace("expect_ne((long)rp, 0);", "expect_ne((long)rp, -1);").encode()
    assert merge_over_deletions("hook.cc", ours, HOOK_C.encode(), theirs) is None
    theirs = HOOK_C.replace("expect_ne((long)rp, 0);", "check_rp(rp, 2);").encode()
    assert merge_over_deletions("hook.cc", ours, HOOK_C.encode(), theirs) is None


def test_an_edit_reaching_past_what_the_patch_deletes_is_never_dropped() -> None:
    base = HOOK_C.encode()
    theirs = _hook_patched(HOOK_C).encode()
    # upstream joined the deleted check with the next kept statement: its edit spills out
    ours = base.replace(
        b"    expect_ne((long)rp, 0);\n\n    status = test_events(MUNMAP);\n",
        b"    expect_ne((long)rp, 0); status = test_events(MUNMAP | VM);\n",
    )
    assert merge_over_deletions("hook.cc", ours, base, theirs) is None
    # and without a grammar an edit is never dropped
    ours = base.replace(b"expect_ne((long)rp, 0);", b"expect_ne((long)rp, NULL);")
    assert merge_over_deletions("hook.txt", ours, base, theirs) is None
    assert merge_over_deletions("hook.cc", ours, base, theirs) is not None


# -- an import the patch deleted as unused ---------------------------------------------------
LINEAR_PY = dedent(
    """
    from ansible import constants as C
    from ansible.executor.play_iterator import IteratingStates
    from ansible.utils.display import Display


    def lockstep(states):
        return [s for s in states if s == IteratingStates.HANDLERS]


    def run(hosts):
        return len(hosts)
    """
)


def _linear_patched(text: str) -> str:
    text = text.replace("from ansible.executor.play_iterator import IteratingStates\n", "")
    return text.replace("if s == IteratingStates.HANDLERS]", "if s.handlers]")


def _linear_upstream(names: str, use: str) -> str:
    text = LINEAR_PY.replace("import IteratingStates\n", f"import {names}\n").replace(
        "    return len(hosts)\n", f"    return len(hosts) + {use}\n"
    )
    return text


def test_an_import_upstream_changed_and_still_uses_stays(tmp_path: Path) -> None:
    upstream = _linear_upstream(
        "IteratingStates, FailedStates", "IteratingStates.RESCUE + FailedStates.RESCUE"
    )
    report, text = ported(tmp_path, "linear.py", LINEAR_PY, _linear_patched(LINEAR_PY), upstream)
    assert report.outcome is Outcome.CARRIED, report.result.details
    assert text == upstream.replace("if s == IteratingStates.HANDLERS]", "if s.handlers]")


def test_an_import_with_a_name_nothing_uses_any_more_stays_a_conflict(tmp_path: Path) -> None:
    # IteratingStates is used nowhere after the patch: the line may have to lose it
    upstream = _linear_upstream("IteratingStates, FailedStates", "FailedStates.RESCUE")
    report, text = ported(tmp_path, "linear.py", LINEAR_PY, _linear_patched(LINEAR_PY), upstream)
    assert report.outcome is Outcome.CONFLICT
    assert text == upstream


# -- reading an insertion along equal lines --------------------------------------------------
def test_an_insertion_reads_the_same_one_line_higher_along_a_blank_line() -> None:
    diff = b"--- a/t.yml\n+++ b/t.yml\n@@ -1,3 +1,5 @@\n a\n \n+x\n+\n b\n"
    (fp,) = parse_diff(diff, Path("t.patch"))
    (hunk,) = fp.hunks
    up = slid(hunk, -1)
    assert up is not None
    assert [k for k, _ in up.ops] == [" ", "+", "+", " ", " "]
    assert up.old == hunk.old and up.new == hunk.new and up.added == (b"\n", b"x\n")
    assert slid(hunk, 1) is None  # "x" is not "b": it cannot move down


# -- an edit the patch did not plainly delete: renamed, moved, or named by its new lines -----
FETCH_PY = dedent(
    """
    import requests


    def fetch(url):
        retries = 3
        for _ in range(retries):
            requests.get(url)
        return url
    """
)


def test_an_edit_on_a_line_the_patch_renamed_in_stays_a_conflict(tmp_path: Path) -> None:
    # the patch's `attempts = 3` is upstream's `retries = 3` renamed: dropping 5 loses it
    patched = FETCH_PY.replace("retries", "attempts")
    upstream = FETCH_PY.replace("retries = 3", "retries = 5")
    report, text = ported(tmp_path / "a", "m.py", FETCH_PY, patched, upstream)
    assert report.outcome is Outcome.CONFLICT
    assert text == upstream
    base = 'DEFAULTS = {\n    "timeout": 30,\n    "retries": 3,\n}\n'
    patched, upstream = base.replace('"timeout"', '"deadline"'), base.replace("30", "60")
    report, text = ported(tmp_path / "b", "m.py", base, patched, upstream)
    assert report.outcome is Outcome.CONFLICT
    assert text == upstream


def test_an_edit_of_a_statement_the_patch_moved_lower_stays_a_conflict(tmp_path: Path) -> None:
    base = dedent(
        """
        def setup(app):
            app.register("metrics", 30)
            app.start()
            app.wait()
            app.serve()
            return app
        """
    )
    line = '    app.register("metrics", 30)\n'
    patched = base.replace(line, "").replace("    return app\n", line + "    return app\n")
    upstream = base.replace("30", "45")
    report, text = ported(tmp_path, "m.py", base, patched, upstream)
    assert report.outcome is Outcome.CONFLICT
    assert text == upstream


CLAMP = dedent(
    """
    import os


    def keep(x):
        return x


    def clamp(value, low, high):
        if value < low:
            return low
        if value > high:
            return high - 1
        return value
    """
)


def test_an_edit_of_a_function_the_patch_moved_to_another_file_stays_a_conflict(
    tmp_path: Path,
) -> None:
    # the patch deletes clamp() here and writes it in helpers.py: upstream's fix must not go
    up = Upstream(tmp_path / "up")
    up.commit({"util.py": CLAMP, "helpers.py": "from util import keep\n"}, "base")
    moved = CLAMP[CLAMP.index("\n\n\ndef clamp") :]
    patch = tmp_path / "p.patch"
    patch.write_bytes(
        up.diff_of(
            {"util.py": CLAMP.replace(moved, "\n"), "helpers.py": "from util import keep\n" + moved}
        )
    )
    base = up.head()
    up.commit({"util.py": CLAMP.replace("return high - 1", "return high")}, "fix clamp")
    report = port(patch_file=patch, base_commit=base, checkout=up.path)
    assert report.outcome is not Outcome.CARRIED
    assert "return high\n" in (up.path / "util.py").read_text()


def test_a_paragraph_naming_a_tail_upstream_deleted_stays_a_conflict(tmp_path: Path) -> None:
    # no grammar: the new target depends on `install`, which upstream deleted
    base = "all:\n\tcc -o app app.c\n\nclean:\n\trm -f app\n\ninstall:\n\tcp app /usr/bin/app\n"
    extra = "\ninstall-extra: install\n\tcp app.conf /etc/app.conf\n"
    patched = base.replace("\ninstall:", extra + "\ninstall:")
    upstream = base.replace("\ninstall:\n\tcp app /usr/bin/app\n", "")
    upstream = upstream.replace("cc -o app", "cc -O2 -o app")
    report, text = ported(tmp_path, "rules.mk", base, patched, upstream)
    assert report.outcome is Outcome.CONFLICT
    assert text == upstream
