"""Lines a patch inserts right beside a statement upstream rewrote, placed by the intact side
when upstream's rewrite is the same code written again (renamed, reshaped) and the patch names
nothing it moved; every other rewrite there stays a conflict."""

from __future__ import annotations

from pathlib import Path

import pytest

from patchkit.outcome import Outcome, Rule
from tests.conftest import dedent
from tests.engine.test_placement import ported

CREATE = dedent(
    """
    import os

    from perms import MODE_RW


    def create(path):
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(path, MODE_RW & ~umask)
        try:
            os.chown(path, os.geteuid(), os.getegid())
        except OSError:
            pass
        return path
    """
)
SETGID = CREATE.replace(
    "    try:\n        os.chown(path, os.geteuid(), os.getegid())\n",
    "    parent = os.stat(os.path.dirname(path))\n    try:\n"
    "        os.chown(path, os.geteuid(), parent.st_gid)\n",
)


def test_lines_inserted_under_a_renamed_constant_keep_their_place(tmp_path: Path) -> None:
    """Upstream names the mode otherwise (``MODE_RW`` is gone from the file): the line the
    patch inserts under the ``chmod`` reads neither name, so it goes right under upstream's
    ``chmod``, above the ``try`` it was joined to (ansible b0c737dc69's shape)."""
    upstream = CREATE.replace("MODE_RW", "DEFAULT_MODE")
    report, text = ported(tmp_path, "m.py", CREATE, SETGID, upstream)
    assert report.outcome is Outcome.CARRIED, report.result.details
    assert text == SETGID.replace("MODE_RW", "DEFAULT_MODE")
    assert [m.rule for m in report.result.placements] == [Rule.ONE_SIDE]


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("MODE_RW & ~umask", "MODE_RW & ~umask | MODE_X"),  # a name added: not the same code
        ("os.chmod(path, MODE_RW", "os.lchmod(path, MODE_RW"),  # a renamed callee
        ("os.chmod(path, MODE_RW & ~umask)", "os.chmod(path, MODE_RW & ~umask & MODE_RW)"),
    ],
    ids=["a-name-added", "a-renamed-callee", "a-name-repeated"],
)
def test_lines_inserted_beside_another_rewrite_stay_a_conflict(
    tmp_path: Path, old: str, new: str
) -> None:
    report, text = ported(tmp_path, "m.py", CREATE, SETGID, CREATE.replace(old, new))
    assert report.outcome is Outcome.CONFLICT, (report.result.placements, text)


def test_a_rename_whose_old_name_is_still_in_the_file_is_not_the_same_code(
    tmp_path: Path,
) -> None:
    """``MODE_RW`` became ``MODE_RO`` in the ``chmod`` alone: the file still has the old name,
    so it is another value, not the same one renamed."""
    upstream = CREATE.replace("MODE_RW & ~umask", "MODE_RO & ~umask")
    upstream = upstream.replace("import MODE_RW", "import MODE_RO, MODE_RW")
    report, text = ported(tmp_path, "m.py", CREATE, SETGID, upstream)
    assert report.outcome is Outcome.CONFLICT, (report.result.placements, text)


def test_a_line_inserted_beside_a_rename_it_names_stays_a_conflict(tmp_path: Path) -> None:
    patched = SETGID.replace("parent = os.stat(", "parent = MODE_RW and os.stat(")
    upstream = CREATE.replace("MODE_RW", "DEFAULT_MODE")
    report, text = ported(tmp_path, "m.py", CREATE, patched, upstream)
    assert report.outcome is Outcome.CONFLICT, (report.result.placements, text)


PICK = dedent(
    """
    def pick(items, n):
        items.sort()
        first = items[0]
        return first + n
    """
)


def test_a_line_inserted_under_a_call_given_more_stays_a_conflict(tmp_path: Path) -> None:
    """Upstream now sorts the other way; the patch reverses the list right under the sort (and
    changes the last line): a reversed list sorted in reverse is another order, so placing
    the insertion by the file's end would be silently wrong."""
    patched = PICK.replace("items.sort()\n", "items.sort()\n    items.reverse()\n")
    patched = patched.replace("first + n", "first - n")
    upstream = PICK.replace("items.sort()", "items.sort(reverse=True)")
    report, text = ported(tmp_path, "m.py", PICK, patched, upstream)
    assert report.outcome is Outcome.CONFLICT, (report.result.placements, text)


PROCESS = dedent(
    """
    int process(struct worker *worker, int id)
    {
        struct ep *ep;
        int status;

        GET_EP(&ep, worker, id);

        status = send(ep);
        return status;
    }
    """
)
CHECKED = PROCESS.replace("    int status;\n\n", "    int status = 0;\n\n").replace(
    "\n    GET_EP", "\n    if (!allowed(worker, id)) {\n        return -1;\n    }\n    GET_EP"
)
RESHAPED = PROCESS.replace(
    "    GET_EP(&ep, worker, id);", "    ep = GET_EP(worker,\n                id);"
)


def test_a_block_inserted_above_a_reshaped_call_keeps_its_place(tmp_path: Path) -> None:
    """Upstream's macro now returns the endpoint instead of filling it in (the same names,
    numbers and strings): the check the patch inserts above it names no ``ep``, so it goes
    after its intact leading side (openucx 2cc837efee's shape)."""
    report, text = ported(tmp_path, "p.c", PROCESS, CHECKED, RESHAPED)
    assert report.outcome is Outcome.CARRIED, report.result.details
    assert text == CHECKED.replace(
        "    GET_EP(&ep, worker, id);", "    ep = GET_EP(worker,\n                id);"
    )
    assert [m.rule for m in report.result.placements] == [Rule.ONE_SIDE]


def test_a_block_inserted_above_a_reshaped_call_naming_what_moved_stays_a_conflict(
    tmp_path: Path,
) -> None:
    """The inserted check reads ``ep``, the name upstream's rewrite moved (filled in by the
    call, then assigned its result): the two are not apart."""
    patched = CHECKED.replace("allowed(worker, id)", "allowed(worker, ep)")
    report, text = ported(tmp_path, "p.c", PROCESS, patched, RESHAPED)
    assert report.outcome is Outcome.CONFLICT, (report.result.placements, text)


CONFIGURE = dedent(
    """
    AC_PREREQ([2.63])

    define([scm_r], esyscmd([sh -c "git rev-parse --short=7 HEAD"]))
    define([ver_major], 1)
    define([ver_minor], 3)
    define([ts], esyscmd([sh -c "date +%Y%m%d%H%M%S"]))
    define([revcount], esyscmd([git rev-list HEAD | wc -l]))

    # This is the API version (see libtool library versioning)
    # current:rev:age
    define([libucx_so_version], 0:0:0)
    """
)
PATCH_VERSION = CONFIGURE.replace(
    "define([ver_minor], 3)\n", "define([ver_minor], 3)\ndefine([ver_patch], 0)\n"
).replace("define([revcount], esyscmd([git rev-list HEAD | wc -l]))\n", "")


def test_a_line_inserted_under_a_new_version_number_keeps_its_place(tmp_path: Path) -> None:
    """A file without a grammar: upstream's minor version is 2, the patch adds the patch
    version right under it. Upstream's line gives another number, the patch's lines name
    nothing it holds, and the base's own lines bound upstream's line above: placed by the
    intact trailing side (openucx 7a0decce8c's shape)."""
    upstream = CONFIGURE.replace("[ver_minor], 3", "[ver_minor], 2")
    report, text = ported(tmp_path, "configure.ac", CONFIGURE, PATCH_VERSION, upstream)
    assert report.outcome is Outcome.CARRIED, report.result.details
    assert text == PATCH_VERSION.replace("[ver_minor], 3", "[ver_minor], 2")
    assert [m.rule for m in report.result.placements] == [Rule.ONE_SIDE]


@pytest.mark.parametrize(
    ("patched", "upstream"),
    [
        # the inserted line reads the name whose value upstream changed
        (
            PATCH_VERSION.replace("[ver_patch], 0", "[ver_patch], ver_minor"),
            CONFIGURE.replace("[ver_minor], 3", "[ver_minor], 2"),
        ),
        # upstream added a line beside the rewritten one: above or below it is a guess
        (
            PATCH_VERSION,
            CONFIGURE.replace("[ver_minor], 3)\n", "[ver_minor], 2)\ndefine([ver_rc], 1)\n"),
        ),
        # the patch rewrote the line beside upstream's, not only inserted one
        (
            PATCH_VERSION.replace("define([ts]", "define([stamp]"),
            CONFIGURE.replace("[ver_minor], 3", "[ver_minor], 2"),
        ),
    ],
    ids=["reads-the-name", "a-line-added-beside", "rewrites-the-line-beside"],
)
def test_lines_beside_a_new_version_number_refuse_without_a_grammar(
    tmp_path: Path, patched: str, upstream: str
) -> None:
    report, text = ported(tmp_path, "configure.ac", CONFIGURE, patched, upstream)
    assert report.outcome is Outcome.CONFLICT, (report.result.placements, text)


def test_a_line_inserted_under_a_call_given_another_value_reading_its_receiver_refuses(
    tmp_path: Path,
) -> None:
    """``items.pop(0)`` became ``items.pop(1)``: the patch's line under it reads ``items``,
    which the call changes; not apart."""
    base = "def take(items):\n    head = items.pop(0)\n    size = 1\n    return head\n"
    patched = base.replace("    size", "    rest = len(items)\n    size")
    patched = patched.replace("return head", "return head, rest")
    upstream = base.replace("pop(0)", "pop(1)")
    report, text = ported(tmp_path, "m.py", base, patched, upstream)
    assert report.outcome is Outcome.CONFLICT, (report.result.placements, text)


def test_a_line_inserted_beside_a_new_key_that_names_the_old_key_stays_a_conflict(
    tmp_path: Path,
) -> None:
    """Upstream's "max_conn" became "max_connections"; the patch's default under it still
    sets "max_conn" (an independent review's case): not apart from the rewrite."""
    base = dedent(
        """
        DEFAULTS = {}


        def configure(cfg):
            host = cfg.get("host")
            conns = cfg.get("max_conn")
            try:
                port = int(cfg.get("port"))
            except ValueError:
                port = 0
            return host, conns, port
        """
    )
    upstream = base.replace('"max_conn"', '"max_connections"')
    patched = base.replace(
        '    conns = cfg.get("max_conn")\n',
        '    conns = cfg.get("max_conn")\n    DEFAULTS["max_conn"] = 5\n',
    ).replace("port = 0", "port = 80")
    report, text = ported(tmp_path, "m.py", base, patched, upstream)
    assert report.outcome is Outcome.CONFLICT
    assert text == upstream


def test_a_line_inserted_beside_a_new_version_that_copies_the_old_one_stays_a_conflict(
    tmp_path: Path,
) -> None:
    patched = CONFIGURE.replace(
        "define([ver_minor], 3)\n", "define([ver_minor], 3)\ndefine([ver_string], [1.3.0])\n"
    ).replace("define([revcount], esyscmd([git rev-list HEAD | wc -l]))\n", "")
    upstream = CONFIGURE.replace("[ver_minor], 3", "[ver_minor], 2")
    report, text = ported(tmp_path, "configure.ac", CONFIGURE, patched, upstream)
    assert report.outcome is Outcome.CONFLICT
    assert text == upstream
