"""What an export leaves for a patch whose change upstream already has where the branch would
start (applying it there changes nothing): no branch and no PR, but ``NOTE.md`` for the person
exporting (where upstream has it, how to retire the patch) and, when an open upstream PR not
ours makes the same change, ``COMMENT.md`` for that PR ("upstream already has this at ...")."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from patchkit.export.prtext import project_name
from patchkit.model import LockEntry, PatchMeta, PrState


@dataclass(frozen=True)
class Absorbed:
    patch_id: str
    where: str  # "FlashInfer main at fb28d7242b35 (upstream's newest)"
    out_dir: Path  # NOTE.md, and COMMENT.md when an open PR is another's
    comment_for: str | None = None  # the open upstream PR the comment is for

    def line(self) -> str:
        comment = f"; COMMENT.md for {self.comment_for}" if self.comment_for else ""
        return f"{self.patch_id}: upstream already has it at {self.where}: NOTE.md{comment} in {self.out_dir}/"


def write_absorbed(
    meta: PatchMeta, entry: LockEntry, *, where: str, upstream: str, out_dir: Path
) -> Absorbed:
    """``NOTE.md`` (and ``COMMENT.md`` for another author's open PR) in ``out_dir``."""
    up = meta.upstream
    open_pr = up.pr if up.state is PrState.OPEN and up.ours is not True else None
    name = project_name(entry.name)
    at = f"{upstream[:12]} ({where})" if upstream else where
    note = [
        f"# {meta.title or meta.id}",
        f"Upstream {name} already has this change at {at}: applied there it changes nothing, so "
        "no branch and no pull request were made.",
    ]
    if open_pr:
        note.append(f"COMMENT.md beside this note is a comment for {open_pr}, the open upstream "
                    "PR making the same change.")  # fmt: skip
    note.append(
        f"Retire the patch once the pin is there: `patchkit rebase --target {entry.name} --onto "
        "<that release or commit>` reports it absorbed, with the `patchkit retire` command."
    )
    out_dir.mkdir(parents=True, exist_ok=True)
    for stale in ("COMMIT_MSG", "PR_TITLE", "PR_BODY.md", f"{meta.id}.patch"):  # an earlier
        (out_dir / stale).unlink(missing_ok=True)  # export's branch texts (export.json stays)
    (out_dir / "NOTE.md").write_text("\n\n".join(note) + "\n")
    comment = out_dir / "COMMENT.md"
    if open_pr:
        comment.write_text(
            f"Upstream {name} already has this change at {at}: applied there, it changes "
            "nothing. This PR may no longer be needed.\n"
        )
    else:
        comment.unlink(missing_ok=True)
    return Absorbed(meta.id, where, out_dir, open_pr)
