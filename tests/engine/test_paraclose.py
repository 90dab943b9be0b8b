"""A block that closed its paragraph, a blank line between it and the call after it, where
upstream rewrote that call right under the paragraph: it still closes the paragraph, its blank
line kept, or the conflict stands."""

from __future__ import annotations

from pathlib import Path

from patchkit.outcome import Outcome, Rule
from tests.conftest import dedent
from tests.engine.test_placement import ported

BASE = dedent(
    """
    #include "cluster.h"

    void send_update(link *l, node *n) {
        if (l == NULL) return;

        block *b = create_block(UPDATE);
        msg *hdr = &b->msg;
        memcpy(hdr->name, n->name, NAMELEN);
        hdr->epoch = htonu64(n->epoch);
        memcpy(hdr->slots, n->slots, sizeof(n->slots));

        send_message(l, b);
        release_block(b);
    }
    """
)
UPSTREAM = dedent(
    """
    #include "cluster.h"

    void send_update(link *l, node *n) {
        msg buf[1];
        msg *hdr = (msg*) buf;

        if (l == NULL) return;
        memcpy(hdr->name, n->name, NAMELEN);
        hdr->epoch = htonu64(n->epoch);
        memcpy(hdr->slots, n->slots, sizeof(n->slots));
        send_message(l, (unsigned char*)buf, ntohl(hdr->totlen));
    }
    """
)
SLOTS = "    memcpy(hdr->slots, n->slots, sizeof(n->slots));\n"
LOOP = (
    "    for (unsigned int i = 0; i < sizeof(n->slots); i++) {\n"
    "        hdr->slots[i] &= ~unclaimed[i];\n"
    "    }\n"
)
PATH = "src/cluster.c"


def test_a_block_closing_its_paragraph_keeps_its_blank_line_above_the_rewritten_call(
    tmp_path: Path,
) -> None:
    report, text = ported(tmp_path, PATH, BASE, BASE.replace(SLOTS, SLOTS + LOOP), UPSTREAM)
    assert report.outcome is Outcome.CARRIED, report.result.details
    assert text == UPSTREAM.replace(SLOTS, SLOTS + LOOP + "\n")
    (mark,) = report.result.placements
    assert mark.rule is Rule.PARAGRAPH
    assert mark.scope == ("send_update",)


def test_another_call_after_the_paragraph_stays_a_conflict(tmp_path: Path) -> None:
    """Upstream wrote a call of something else under the paragraph: nothing says the block
    goes before it rather than after."""
    upstream = UPSTREAM.replace("    send_message(l,", "    log_update(n);\n    send_message(l,")
    report, text = ported(tmp_path, PATH, BASE, BASE.replace(SLOTS, SLOTS + LOOP), upstream)
    assert report.outcome is Outcome.CONFLICT
    assert LOOP not in text


def test_a_call_the_release_still_makes_elsewhere_stays_a_conflict(tmp_path: Path) -> None:
    """The base's call stands elsewhere in the release's file: not the one rewritten here."""
    other = "\nvoid resend(link *l, block *b) {\n    send_message(l, b);\n}\n"
    report, text = ported(
        tmp_path, PATH, BASE + other, BASE.replace(SLOTS, SLOTS + LOOP) + other, UPSTREAM + other
    )
    assert report.outcome is Outcome.CONFLICT
    assert LOOP not in text


def test_a_rewritten_if_is_no_call_and_stays_a_conflict(tmp_path: Path) -> None:
    """``if (`` calls nothing: an ``if`` rewritten under the paragraph is not the same statement."""
    tail = "    send_message(l, b);\n    release_block(b);\n"
    base = BASE.replace(tail, "    if (l->ready) {\n        send_message(l, b);\n    }\n")
    rewritten = "    if (l->ready && buf) {\n        send_message(l, buf);\n    }\n"
    upstream = UPSTREAM.replace(
        "    send_message(l, (unsigned char*)buf, ntohl(hdr->totlen));\n", rewritten
    )
    report, text = ported(tmp_path, PATH, base, base.replace(SLOTS, SLOTS + LOOP), upstream)
    assert report.outcome is Outcome.CONFLICT
    assert LOOP not in text
