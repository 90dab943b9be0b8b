"""A three-way merge where upstream deleted, or edited inside, lines the patch deletes or keeps:
the engine's last pass (:mod:`patchkit.engine.diff.lastpass`), after a line merge, a merge by
statements and one with upstream's renames all conflicted.

Each side's changes are read from the base (spans of base lines, or points where lines go in).
An upstream change that neither shares a base line with a change of the patch nor touches one
is made as it is. Upstream lines put in right beside the patch's change are first read along
equal lines (a blank line) to a place beside none of its changes, passing none of them, when
there is one. Every other upstream change must be one of these, else the conflict stands:

- **a deletion already made**: upstream deleted lines the patch deletes too, with none of the
  patch's new lines in their place: gone once, nothing of either side lost (a file the patch
  rewrites down to a few lines, some of whose other lines upstream had deleted);
- **a deleted context between the patch's deletions**: upstream deleted lines the patch keeps
  as they were, and the patch deletes the line right above them and the one right below, new
  lines of the patch coming right below none of them: they stay deleted (a call the release
  never had, between calls the patch replaces). Never when they bind a name (a declaration, an
  assignment, an import) the patch's new lines beside them name; without a grammar, never when
  a new line of the patch names a word of the deleted lines that upstream's text no longer has
  (a new make target depending on the deleted one), unless that new line repeats a deleted
  line word for word (a key the file's entries share);
- **a deleted end of the file** (whole files only): upstream deleted the patch's context from
  right below its insertion to the end of the file, and the insertion is a paragraph of its own
  (it opens with a blank line, read so along an equal line above it when it was written below
  one): it goes at the file's end. Inserted lines anywhere else beside or inside a deletion
  upstream made (a context line above them gone: they may need it) leave the conflict;
- **an edit inside what the patch deletes**: upstream rewrote lines that all lie in a run the
  patch deletes, whose new lines there name none of the names of those lines (else the patch
  may have rewritten the same statement: ``return 1`` became ``return 2`` there and ``return
  9`` upstream, a conflict), no new line of the patch anywhere in it is one of the base lines
  upstream edited up to renamed names, strings and numbers (``retries = 3`` written
  ``attempts = 3``, a statement moved lower: the patch kept it), the patch writes new lines in
  the run's place (deleted with nothing there, the code may have moved to a place this merge
  does not see: another scope, another file), the rewrite took no name away (a literal, an
  operator, a name added: never a renamed callee, which the patch's own lines may need too)
  and it is whole syntax on both
  sides (every node of the base across the rewritten lines lies inside that run or holds all
  of it; every node of upstream's new lines lies inside them or holds them all): **upstream's
  edit is dropped**, deleted with the statement it lies in, as the patch deletes that whole
  statement. Never without a grammar, and never when upstream's new lines bind a name the
  result still names;
- **an import the patch deleted as unused** (Python): the patch deletes an import line, and no
  line of its result outside the imports names what that line bound; upstream changed the
  line, the patch names none of its names in new lines, and the merged file uses every name
  upstream's line binds: upstream's line stays, and **the patch's deletion of it is dropped**
  (made, it would leave names the file uses unbound).

Anything else (upstream inserting lines beside or inside the patch's change, rewriting lines
the patch keeps or rewrites, two sides putting lines in at one point) is ``None``.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from patchkit.engine.diff.bindings import Parsed, parsed
from patchkit.engine.diff.parse import split_lines
from patchkit.engine.diff.statements import Change, both_changes


def _overlap(a: Change, b: Change) -> bool:
    return a.start < b.end and b.start < a.end


def _near(a: Change, b: Change) -> bool:
    """The two share a base line, or one's span or point lies at the other's edge."""
    return _overlap(a, b) or a.end == b.start or b.end == a.start or a.start == b.start


def _inside(point: int, span: Change) -> bool:
    return span.start < point < span.end


def _after(point: int, span: Change) -> bool:
    """``point`` lies inside ``span`` or right below its last line."""
    return span.start < point <= span.end


@dataclass
class _Merge:
    path: str
    base: list[bytes]
    ours: list[bytes]
    theirs: list[bytes]
    patch: list[Change]
    whole_file: bool  # the texts are whole files (not one scope of each)
    upstream: Sequence[Change] = ()  # upstream's changes, from the base
    made: list[Change] = field(default_factory=list)  # upstream's changes that stay
    dropped: list[Change] = field(default_factory=list)  # upstream's edits the patch deletes
    sides: dict[str, Parsed | None] = field(default_factory=dict)
    imported: set[bytes] = field(default_factory=set)  # names of upstream's imports kept

    def side(self, name: str) -> Parsed | None:
        if name not in self.sides:
            lines = {"base": self.base, "ours": self.ours, "theirs": self.theirs}[name]
            self.sides[name] = parsed(self.path, lines)
        return self.sides[name]

    def deleted(self) -> set[int]:
        return {row for p in self.patch for row in range(p.start, p.end)}

    def run_of(self, row: int, deleted: set[int]) -> tuple[int, int]:
        """The run of base rows the patch deletes that holds ``row``."""
        lo, hi = row, row + 1
        while lo - 1 in deleted:
            lo -= 1
        while hi in deleted:
            hi += 1
        return lo, hi

    # -- upstream's change deleted lines ---------------------------------------------------
    def deletion(self, up: Change) -> bool:
        for i, p in enumerate(self.patch):
            if p.start < p.end and _overlap(up, p) and p.lines:
                return False  # the patch rewrote what upstream deleted: no sure result
            if p.start == p.end and _inside(p.start, up):
                slid = self.slide(p)
                if slid is None:
                    return False
                self.patch[i] = p = slid
            if p.lines and _after(p.start, up):
                return False  # new lines right below deleted ones may have needed them
        added = {m for p in self.patch if _near(up, p) for m in _names(p.lines)}
        base = self.side("base")
        if added and base is not None and base.binds(up.start, up.end) & added:
            return False
        deleted = self.deleted()
        rows = [r for r in range(up.start, up.end) if r not in deleted]
        if rows and base is None and self.gone(up) & self.named(up):
            return False  # no grammar: the patch's new lines may name what upstream deleted
        for lo, hi in _runs(rows):
            if not ((lo - 1 in deleted and hi in deleted) or self.paragraph_end(up, lo, hi)):
                return False
        self.made += [Change(r, r + 1, (), 0) for r in rows]
        return True

    def added(self) -> list[bytes]:
        return [line for p in self.patch for line in p.lines]

    def gone(self, up: Change) -> set[bytes]:
        """The names of the lines ``up`` deletes that upstream's text no longer has."""
        return _names(self.base[up.start : up.end]) - _names(self.ours)

    def named(self, up: Change) -> set[bytes]:
        """The names of the patch's new lines, but those that repeat one of the lines ``up``
        deletes word for word (a key such as ``win_ping:``: a form the file uses, naming
        nothing of what went)."""
        same = {line.strip() for line in self.base[up.start : up.end]}
        return _names([line for line in self.added() if line.strip() not in same])

    def paragraph_end(self, up: Change, lo: int, hi: int) -> bool:
        """Upstream deleted the patch's context from ``lo`` to the end of the file, and the
        one change of the patch beside it inserts a paragraph of its own (opening with a
        blank line) right above: it goes at the file's end."""
        near = [p for p in self.patch if _near(up, p)]
        if not self.whole_file or hi != len(self.base) or lo != up.start or len(near) != 1:
            return False
        lines, at = near[0].lines, near[0].start
        return (
            at == lo == near[0].end
            and bool(lines)
            and not lines[0].strip()
            and any(line.strip() for line in lines)
        )

    def slide(self, p: Change) -> Change | None:
        """The patch's insertion ``p`` moved along equal lines to the one place that is not
        inside a run upstream deleted; None when no such place, or several."""
        deletions = [u for u in self.upstream if not u.lines]
        fit = [c for c in _places(self.base, p) if not any(_after(c.start, u) for u in deletions)]
        return fit[0] if len(fit) == 1 else None

    def cleared(self, up: Change) -> Change | None:
        """Upstream's insertion ``up`` moved along equal lines, over none the patch changes,
        to a place beside none of the patch's changes (any such place gives one text)."""
        for c in _places(self.base, up):
            lo, hi = sorted((c.start, up.start))
            crossed = any(
                (p.start < hi and lo < p.end) or (p.lines and lo <= p.start <= hi)
                for p in self.patch
            )
            if not crossed and not any(_near(c, p) for p in self.patch):
                return c
        return None

    # -- upstream's change rewrote lines ---------------------------------------------------
    def rewrite(self, up: Change) -> bool:
        deleted = self.deleted()
        if not all(r in deleted for r in range(up.start, up.end)):
            return False
        if self.kept_import(up):
            return True
        if _names(self.base[up.start : up.end]) - _names(up.lines):
            return False  # upstream took a name away (a renamed callee): the patch may need it
        if self.rewritten(up):
            return False  # both sides rewrote one statement: a conflict, as git says
        lo, hi = self.run_of(up.start, deleted)
        if not any(p.lines for p in self.patch if _near(Change(lo, hi, (), 0), p)):
            return False  # nothing written in its place: it may live on elsewhere (moved)
        base, ours = self.side("base"), self.side("ours")
        if base is None or ours is None:
            return False
        new = (up.new_at, up.new_at + len(up.lines))
        if not base.whole((up.start, up.end), self.run_of(up.start, deleted)):
            return False
        if not ours.whole(new, new):
            return False
        self.dropped.append(up)
        return True

    def rewritten(self, up: Change) -> bool:
        """The patch's new lines over ``up`` name a name of the base lines upstream edited
        there (``return 1`` became ``return 2`` in the patch and ``return 9`` upstream;
        ``foo(a, b)`` became ``bar(a, b, c)``), or a new line of the patch anywhere is one of
        those base lines up to renamed names, strings and numbers (``retries = 3`` written
        ``attempts = 3``, a call moved lower): the patch may have written that statement anew
        or moved it rather than deleted it, and both sides' edits of it are a conflict."""
        new = _names([line for p in self.patch if _overlap(up, p) for line in p.lines])
        if new & _names(self.base[up.start : up.end]):
            return True
        shapes = {_shape(line) for line in self.base[up.start : up.end]} - {b""}
        return any(_shape(line) in shapes for line in self.added())

    def kept_import(self, up: Change) -> bool:
        """Python: ``up`` rewrote an import line the patch deletes as unused, and the rest of
        the file still uses every name upstream's line binds: upstream's line stays."""
        base, ours, theirs = self.side("base"), self.side("ours"), self.side("theirs")
        if base is None or ours is None or theirs is None or base.language != "python":
            return False
        hits = [p for p in self.patch if _near(up, p)]
        if len(hits) != 1 or (hits[0].start, hits[0].end, hits[0].lines) != (up.start, up.end, ()):
            return False
        new = (up.new_at, up.new_at + len(up.lines))
        if not (base.imports_only(up.start, up.end) and ours.imports_only(*new)):
            return False
        gone, kept = base.binds(up.start, up.end), ours.binds(*new)
        added = {m for p in self.patch for m in _names(p.lines)}
        if not kept or theirs.used() & gone or (gone | kept) & added:
            return False
        self.imported |= kept  # each to be used by the result (:func:`_checked`)
        self.patch.remove(hits[0])
        self.made.append(up)
        return True


_STEPS = 64  # rows an insertion is read along equal lines at most, each way


def _places(base: Sequence[bytes], p: Change) -> list[Change]:
    """Where insertion ``p`` may equally be read (itself included): one row higher while
    the line above equals its last line, one row lower while the line below equals its first
    (``a`` + ``x, a`` reads ``a, x`` + ``a``)."""
    found = [p]
    for step in (-1, 1):
        at, lines = p.start, list(p.lines)
        for _ in range(_STEPS):
            if step < 0 and at > 0 and lines and lines[-1] == base[at - 1]:
                at, lines = at - 1, [base[at - 1], *lines[:-1]]
            elif step > 0 and at < len(base) and lines and lines[0] == base[at]:
                at, lines = at + 1, [*lines[1:], base[at]]
            else:
                break
            found.append(Change(at, at, tuple(lines), 0))
    return found


_NAME = re.compile(rb"[A-Za-z_][A-Za-z0-9_]*")


_TOKEN = re.compile(
    rb'"(?:\\.|[^"\\\n])*"|\'(?:\\.|[^\'\\\n])*\'|[0-9][A-Za-z0-9_.]*|[A-Za-z_][A-Za-z0-9_]*|\S'
)


def _shape(line: bytes) -> bytes:
    """``line``'s tokens with every name, string and number made one token each (``x = 3``
    and ``y = 5`` are one shape), spaces left out."""
    return b" ".join(_kind(token) for token in _TOKEN.findall(line))


def _kind(token: bytes) -> bytes:
    head = token[:1]
    if head in (b'"', b"'"):
        return b"s"
    if head.isdigit():
        return b"0"
    return b"a" if head.isalpha() or head == b"_" else token


def _runs(rows: Sequence[int]) -> list[tuple[int, int]]:
    """Consecutive ``rows`` as (first, past-last) runs."""
    runs: list[tuple[int, int]] = []
    for row in rows:
        if runs and runs[-1][1] == row:
            runs[-1] = (runs[-1][0], row + 1)
        else:
            runs.append((row, row + 1))
    return runs


def _names(lines: Sequence[bytes]) -> set[bytes]:
    """Every word of ``lines`` that could name something (more than any grammar would say:
    a name in a comment counts too, and so refuses more)."""
    return {m for line in lines for m in _NAME.findall(line)}


def _composed(base: Sequence[bytes], made: Sequence[Change]) -> list[bytes] | None:
    """``base`` with every change made; None when two share a line or put lines in at one
    point (their order there cannot be told)."""
    ordered = sorted(made, key=lambda c: (c.start, c.end))
    out: list[bytes] = []
    cursor, last = 0, -1
    for change in ordered:
        if change.start < cursor or (change.lines and change.start == last):
            return None
        out += base[cursor : change.start]
        out += change.lines
        cursor = change.end
        last = change.start if change.lines else last
    return out + list(base[cursor:])


def _judged(merge: _Merge, upstream: Sequence[Change]) -> bool:
    for up in upstream:
        if not any(_near(up, p) for p in merge.patch):
            merge.made.append(up)
        elif up.start == up.end:
            moved = merge.cleared(up)
            if moved is None:
                return False  # upstream inserted lines beside the patch's change
            merge.made.append(moved)
        elif not (merge.deletion(up) if not up.lines else merge.rewrite(up)):
            return False
    return True


def merge_over_deletions(
    path: str, ours: bytes, base: bytes, theirs: bytes, *, whole_file: bool = False
) -> bytes | None:
    """``ours`` with the change from ``base`` to ``theirs``, merged as the module says; None
    when it cannot be (the conflict stands). ``whole_file``: the three are whole files, not
    one scope of each (a file's end is only known so)."""
    lines = [split_lines(text) for text in (base, ours, theirs)]
    sides = both_changes(*lines)
    if sides is None:
        return None
    upstream, kept = sides
    merge = _Merge(path, lines[0], lines[1], lines[2], kept, whole_file, upstream)
    if not _judged(merge, upstream):
        return None
    out = _composed(lines[0], [*merge.made, *merge.patch])
    return _checked(merge, out) if out is not None else None


def _checked(merge: _Merge, out: list[bytes]) -> bytes | None:
    """The result, unless it names what an upstream edit it dropped bound, or leaves unused
    a name of an upstream import it kept in place of the patch's deletion."""
    result = b"".join(out)
    ours = merge.side("ours")
    bound = {n for up in merge.dropped for n in _bound(ours, up)}
    if any(re.search(rb"\b" + re.escape(n) + rb"\b", result) for n in bound):
        return None
    if merge.imported:
        read = parsed(merge.path, out)
        if read is None or not merge.imported <= read.used():
            return None
    return result


def _bound(side: Parsed | None, up: Change) -> set[bytes]:
    return side.binds(up.new_at, up.new_at + len(up.lines)) if side is not None else set()
