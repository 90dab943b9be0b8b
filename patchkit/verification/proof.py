"""Proof: a patch's tests must fail without the patch and pass with it.

``verify`` runs each patch's tests twice in one run: on the patched tree, and on the unpatched
tree (a worktree at the lock, or ``--baseline DIR``). The pair is judged here:

- ``proven``: the tests pass with the patch, and at least one of them fails without it;
- ``proves nothing``: they pass with the patch and without it, so they cannot catch its loss;
- ``failed``: they fail with the patch;
- ``not run``: with the patch they could not run, or without it nothing could (the reason says).

The unpatched run is kept in the record (``Record.unpatched``) and reused while the patch, its
tests and the lock are unchanged (``reusable``), so a second ``verify`` does not run it again.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from patchkit.model import PatchMeta
from patchkit.verification.records import Proof as Proof
from patchkit.verification.records import Record, TestRecord


@dataclass(frozen=True)
class ProofVerdict:
    proof: Proof
    reason: str


def tests_digest(meta: PatchMeta, set_root: Path) -> str:
    """The sha256 of the patch's test declarations and of the set's test files they name: a
    changed test is proven again."""
    digest = hashlib.sha256()
    for spec in meta.tests:
        digest.update(f"{spec.where}\0{spec.node}\0{spec.gpu}\0{spec.min_capability}\0".encode())
        path = set_root / spec.node.split("::")[0]
        if spec.where == "set" and path.is_file():
            digest.update(hashlib.sha256(path.read_bytes()).digest())
    return digest.hexdigest()


def _failed_without(test: TestRecord) -> str:
    return f"{test.node}: {test.reason}" if test.reason else test.node


def judge(patched: Sequence[TestRecord], unpatched: Sequence[TestRecord]) -> ProofVerdict:
    """Proof from one patch's tests: with the patch (``patched``), without it (``unpatched``,
    in the same order; empty when the unpatched tree could not be had)."""
    ran = [t for t in patched if t.result != "not run"]
    failed = [t for t in patched if t.result == "failed"]
    if failed:
        return ProofVerdict(Proof.FAILED, "; ".join(_failed_without(t) for t in failed))
    if not ran:
        reasons = dict.fromkeys(t.reason for t in patched if t.reason)
        return ProofVerdict(Proof.NOT_RUN, "; ".join(reasons) or "no tests declared")
    without = {t.node: t for t in unpatched}
    pairs = [(t, without.get(t.node)) for t in ran]
    red = [u for _, u in pairs if u is not None and u.result == "failed"]
    if red:
        return ProofVerdict(
            Proof.PROVEN, "fails without the patch: " + "; ".join(_failed_without(u) for u in red)
        )
    green = [u for _, u in pairs if u is not None and u.result == "passed"]
    if green and len(green) == len(pairs):
        return ProofVerdict(
            Proof.PROVES_NOTHING,
            "passes without the patch too: " + ", ".join(u.node for u in green),
        )
    why = dict.fromkeys(u.reason for _, u in pairs if u is not None and u.reason)
    if not unpatched:
        why = {"no unpatched run": None}
    return ProofVerdict(
        Proof.NOT_RUN, "passes with the patch; without it not run: " + "; ".join(why)
    )


def proof_of(record: Record) -> Proof | None:
    """The record's proof; None for a record made before proofs were kept."""
    return Proof(record.proof) if record.proof else None


def proof_text(record: Record) -> str:
    """What ``status``, the matrix and PR texts say of one record: its proof ("proven",
    "proves nothing", ...), or for an older record its bare result marked unproven."""
    proof = proof_of(record)
    if proof is None:
        return f"{record.result}, unproven" if record.result == "passed" else record.result
    return proof.value


def reusable(
    records: Iterable[Record], *, digest: str, lock_commit: str, tests: str, kind: str
) -> Record | None:
    """The newest of ``records`` (oldest first) whose unpatched run still holds: the same
    patch file, tests, locked commit and environment kind."""
    found = None
    for record in records:
        if (
            record.unpatched
            and record.digest == digest
            and record.tests_digest == tests
            and record.lock_commit == lock_commit
            and record.environment.kind == kind
        ):
            found = record
    return found
