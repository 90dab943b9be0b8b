"""A block inserted where upstream inserted lines of its own at the same point: blank lines tell
which side it keeps (the line it sticks to at base), or the conflict stands."""

from __future__ import annotations

from pathlib import Path

from patchkit.outcome import Outcome, Rule
from tests.conftest import dedent
from tests.engine.test_placement import ported

NOTES = dedent(
    """
    Release Notes
    =============

    .. toctree::
       :maxdepth: 1

       release.1.0.0
       release.0.19.1
       release.0.19.0
    """
)


def test_a_list_entry_stays_above_the_line_it_preceded(tmp_path: Path) -> None:
    """The newer release went above the same entry upstream: the block sticks to the entry
    below it (no blank line between them at base), after upstream's line."""
    patched = NOTES.replace("   release.1.0.0\n", "   release.1.0.1\n   release.1.0.0\n")
    upstream = NOTES.replace("   release.1.0.0\n", "   release.1.1.0\n   release.1.0.0\n")
    report, text = ported(tmp_path, "doc/release.rst", NOTES, patched, upstream)
    assert report.outcome is Outcome.CARRIED, report.result.details
    assert "release.1.1.0\n   release.1.0.1\n   release.1.0.0\n" in text
    (mark,) = report.result.placements
    assert mark.rule is Rule.PARAGRAPH
    assert "trailing" in mark.note


SPEC = dedent(
    """
    Name: ucx
    License: BSD
    URL: http://www.openucx.org
    Source: https://example.org/ucx.tar.gz

    ExclusiveArch: aarch64 ppc64le x86_64

    BuildRequires: numactl-devel
    BuildRequires: automake autoconf libtool
    """
)


def test_a_paragraph_of_its_own_never_splits_upstreams(tmp_path: Path) -> None:
    """A paragraph inserted after a blank line; upstream put a comment right above the line
    below (one paragraph with it): the block goes after the blank line, not between them."""
    new = "BuildRoot: %(mktemp -ud)\n\n"
    patched = SPEC.replace("\nExclusiveArch", f"\n{new}ExclusiveArch")
    upstream = SPEC.replace("\nExclusiveArch", "\n# only these architectures\nExclusiveArch")
    report, text = ported(tmp_path, "ucx.spec.in", SPEC, patched, upstream)
    assert report.outcome is Outcome.CARRIED, report.result.details
    assert text == upstream.replace("\n# only", f"\n{new}# only")
    (mark,) = report.result.placements
    assert mark.rule is Rule.PARAGRAPH
    assert "leading" in mark.note


FLAGS = dedent(
    """
    options that are always too hard:
      -fdump-
      -MJ
      --config-system-dir=
      --config-user-dir=
    """
)


def test_an_entry_in_a_paragraph_both_sides_stick_to_stays_a_conflict(tmp_path: Path) -> None:
    """No blank line around the block: it sticks to both sides, upstream's line took one of
    those places; which goes first is a guess, so the conflict stands."""
    patched = FLAGS.replace("  -MJ\n", "  -fcallgraph-info=\n  -MJ\n")
    upstream = FLAGS.replace("  -MJ\n", "  -Yc\n  -MJ\n")
    report, _ = ported(tmp_path, "flags.txt", FLAGS, patched, upstream)
    assert report.outcome is Outcome.CONFLICT


def test_two_paragraphs_at_one_point_stay_a_conflict(tmp_path: Path) -> None:
    """The block and upstream's lines are both whole paragraphs at one point: either order
    keeps every paragraph whole, so the conflict stands."""
    patched = SPEC.replace("\nExclusiveArch", "\nBuildRoot: %(mktemp -ud)\n\nExclusiveArch")
    upstream = SPEC.replace("\nExclusiveArch", "\nPrefix: /usr\n\nExclusiveArch")
    report, _ = ported(tmp_path, "ucx.spec.in", SPEC, patched, upstream)
    assert report.outcome is Outcome.CONFLICT


CONFIG = dedent(
    """
    static int read_on_variable(const char *section, char *name)
    {
    \tgit_buf buf = GIT_BUF_INIT;

    \tGIT_UNUSED(line);
    \tGIT_UNUSED(line_len);

    \tgit_buf_puts(&buf, section);
    \tgit_buf_putc(&buf, '.');
    \treturn append(&buf, name);
    }

    static int read_on_comment(const char *line)
    {
    \tGIT_UNUSED(line);
    \tGIT_UNUSED(line_len);

    \treturn 0;
    }
    """
)


def test_a_block_opening_a_paragraph_opens_it_after_upstream_rewrote_it(
    tmp_path: Path,
) -> None:
    """The check went right under a blank line, above the paragraph's first line; upstream
    rewrote that paragraph: the check opens it here too (after the intact leading side,
    found once in its own function, not in the look-alike lines of the other)."""
    check = "\tif (!section)\n\t\treturn -1;\n"
    patched = CONFIG.replace("\tgit_buf_puts(", f"{check}\tgit_buf_puts(")
    rewritten = '\tgit__strtolower(name);\n\tgit_buf_printf(&buf, "%s.%s", section, name);\n'
    upstream = CONFIG.replace(
        "\tgit_buf_puts(&buf, section);\n\tgit_buf_putc(&buf, '.');\n", rewritten
    )
    report, text = ported(tmp_path, "src/config_file.c", CONFIG, patched, upstream)
    assert report.outcome is Outcome.CARRIED, report.result.details
    assert text == upstream.replace("\tgit__strtolower(", f"{check}\tgit__strtolower(")
    (mark,) = report.result.placements
    assert mark.rule is Rule.PARAGRAPH
    assert mark.scope == ("read_on_variable",)


def test_a_block_inside_a_paragraph_whose_next_line_was_rewritten_stays_a_conflict(
    tmp_path: Path,
) -> None:
    """No blank line above the block: it sticks to the line above as much as to the one
    below, which upstream rewrote; before or after the rewrite is a guess."""
    check = "\tif (!section)\n\t\treturn -1;\n"
    patched = CONFIG.replace("\tgit_buf_putc(", f"{check}\tgit_buf_putc(")
    upstream = CONFIG.replace("\tgit_buf_putc(&buf, '.');\n", "\tgit_buf_putc(&buf, ':');\n")
    report, _ = ported(tmp_path, "src/config_file.c", CONFIG, patched, upstream)
    assert report.outcome is Outcome.CONFLICT


DOC = dedent(
    """
    notes:
      - The first note, on
        two lines (see bug 1).
      - Another note that
        upstream edits too.
    requirements:
      - python3-dnf
      - dnf >= 2.0.1
    seealso:
      - module: ansible.builtin.package
    """
)


def test_a_block_closing_an_indented_block_closes_it_after_rewrites(tmp_path: Path) -> None:
    """A note appended at the end of the notes (the next line, ``requirements:``, less
    indented); upstream rewrote the line above it and one below: it goes right before the
    line that ends the notes, whose place the lines kept around it confirm."""
    note = "  - A new note,\n    over two lines.\n"
    patched = DOC.replace("requirements:\n", f"{note}requirements:\n")
    upstream = DOC.replace("edits too.", "edited.").replace("python3-dnf", "python-dnf")
    report, text = ported(tmp_path, "docs/dnf.yml", DOC, patched, upstream)
    assert report.outcome is Outcome.CARRIED, report.result.details
    assert text == upstream.replace("requirements:\n", f"{note}requirements:\n")
    (mark,) = report.result.placements
    assert mark.rule is Rule.PARAGRAPH
    assert "ends its indented block" in mark.note


def test_a_block_inside_an_indented_block_with_rewrites_stays_a_conflict(tmp_path: Path) -> None:
    """The note goes between two notes (the next line as indented as it): no line ends a
    block there, and both neighbours were rewritten: the conflict stands."""
    note = "  - A new note,\n    over two lines.\n"
    patched = DOC.replace("  - Another note", f"{note}  - Another note")
    upstream = DOC.replace("(see bug 1)", "(bug 1)").replace("Another note that", "A note that")
    report, _ = ported(tmp_path, "docs/dnf.yml", DOC, patched, upstream)
    assert report.outcome is Outcome.CONFLICT


def test_an_inserted_blank_line_beside_rewritten_lines_never_crashes(tmp_path: Path) -> None:
    """Only a blank line goes in, right above two lines upstream rewrote: no line of the
    block tells its indentation; the conflict stands (it crashed on ``min()`` of nothing)."""
    base = "one\ntwo\nthree\nfour\nfive\nsix\n"
    patched = base.replace("three\n", "three\n\n")
    upstream = base.replace("three\nfour\n", "THREE\nFOUR\n")
    report, text = ported(tmp_path, "notes.txt", base, patched, upstream)
    assert report.outcome is Outcome.CONFLICT
    assert text == upstream


PKG = dedent(
    """
    Name: pkg
    Version: @VERSION@

    License: BSD
    URL: http://example.org
    Source: http://example.org/archive/v@VERSION@.tar.gz

    ExclusiveArch: aarch64 ppc64le x86_64

    BuildRequires: numactl-devel
    BuildRequires: automake autoconf libtool
    """
)
BUILDROOT = PKG.replace(
    "tar.gz\n\n", "tar.gz\n\nBuildRoot: %(mktemp -ud %{_tmppath}/%{name}-XXXXXX)\n\n"
)
MOVED = PKG.replace("archive/v@VERSION@", "releases/download/v@VERSION@/pkg-@VERSION@").replace(
    "ExclusiveArch", "# only these architectures\nExclusiveArch"
)


def test_a_paragraph_of_its_own_stays_between_the_same_two_paragraphs(tmp_path: Path) -> None:
    """Upstream rewrote the line above the new paragraph and put a comment above the line
    below it: the block was a paragraph of its own (blank lines either side), so it goes
    between the same two paragraphs here, before upstream's comment (openucx 9656f369b7)."""
    report, text = ported(tmp_path, "pkg.spec.in", PKG, BUILDROOT, MOVED)
    assert report.outcome is Outcome.CARRIED, report.result.details
    assert text == MOVED.replace(
        "tar.gz\n\n", "tar.gz\n\nBuildRoot: %(mktemp -ud %{_tmppath}/%{name}-XXXXXX)\n\n"
    )
    (mark,) = report.result.placements
    assert mark.rule is Rule.PARAGRAPH
    assert "between them" in mark.note


def test_a_paragraph_of_its_own_refuses_when_upstream_put_a_paragraph_between(
    tmp_path: Path,
) -> None:
    """Upstream put a paragraph of its own between the two: before or after it is a guess."""
    upstream = MOVED.replace("# only", "Requires: libfoo\n\n# only")
    report, text = ported(tmp_path, "pkg.spec.in", PKG, BUILDROOT, upstream)
    assert report.outcome is Outcome.CONFLICT, (report.result.placements, text)


def test_a_paragraph_of_its_own_refuses_where_the_paragraphs_now_touch(tmp_path: Path) -> None:
    """Upstream joined the two paragraphs (no blank line between them): no place is a
    paragraph of its own any more."""
    upstream = MOVED.replace("tar.gz\n\n# only", "tar.gz\n# only")
    report, text = ported(tmp_path, "pkg.spec.in", PKG, BUILDROOT, upstream)
    assert report.outcome is Outcome.CONFLICT, (report.result.placements, text)


def test_a_paragraph_of_its_own_needs_each_neighbour_once_in_the_file(tmp_path: Path) -> None:
    """The paragraph below's only line stands twice here: which pair of paragraphs is the
    block's cannot be told."""
    upstream = MOVED + "\nExclusiveArch: aarch64 ppc64le x86_64\n"
    report, text = ported(tmp_path, "pkg.spec.in", PKG, BUILDROOT, upstream)
    assert report.outcome is Outcome.CONFLICT, (report.result.placements, text)


def test_a_paragraph_of_its_own_refuses_when_upstream_moved_the_blank_line(
    tmp_path: Path,
) -> None:
    """Upstream rewrote the line above the new paragraph and moved the blank line above it
    (now joined to the line below): between the anchors is one blank run as at base, but the
    paragraphs are not the base's, and the check would go before `b` is assigned."""
    base = dedent(
        """
        def f(path):
            a = load(path)
            b = a + 1

            return b
        """
    )
    patched = base.replace("    b = a + 1\n\n", "    b = a + 1\n\n    check(b)\n\n")
    upstream = base.replace(
        "    a = load(path)\n    b = a + 1\n\n", "    a = load(path)\n\n    b = a + 2\n"
    )
    report, text = ported(tmp_path, "m.py", base, patched, upstream)
    assert report.outcome is Outcome.CONFLICT, text
    assert "check(b)" not in text
