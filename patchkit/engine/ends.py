"""The lines two versions of a file share at both ends: what every comparison of a change
skips before it looks at the part between."""

from __future__ import annotations

from collections.abc import Sequence


def common_ends(old: Sequence[bytes], new: Sequence[bytes]) -> tuple[int, int]:
    """(head, tail): how many first and last lines ``old`` and ``new`` share, the tail never
    reaching into the head."""
    shortest = min(len(old), len(new))
    head = 0
    while head < shortest and old[head] == new[head]:
        head += 1
    tail = 0
    while tail < shortest - head and old[-1 - tail] == new[-1 - tail]:
        tail += 1
    return head, tail
