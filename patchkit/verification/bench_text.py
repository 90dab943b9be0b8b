"""Benchmark figures as text for people: a Markdown before/after table of one record, for a PR's
test-result section (``export-pr``) or a matrix page. The record names the device and versions;
the table names what each case was compared with."""

from __future__ import annotations

from patchkit.verification.records import BenchRecord, Record


def value_text(value: float | None, metric: str) -> str:
    """1.332e6 tokens/s -> "1.332 Mtokens/s"; 0.0123 ms -> "0.0123 ms"."""
    if value is None:
        return "-"
    if metric == "time":
        return f"{value:.4g} ms"
    for scale, prefix in ((1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k")):
        if value >= scale:
            return f"{value / scale:.4g} {prefix}{metric}"
    return f"{value:.4g} {metric}"


def _pct(value: float | None) -> str:
    return "-" if value is None else f"{value * 100:.1f}%"


def _cold(b: BenchRecord) -> str:
    return " / ".join("-" if s is None else f"{s:.1f} s" for s in (b.before_cold_s, b.after_cold_s))


def _row(b: BenchRecord) -> str:
    if b.status != "compared" or b.ratio is None:
        cells = [f"{b.bench}: {b.case}", b.status, "-", "-", "-", "-", _cold(b), b.reason]
    else:
        ratio = f"x{b.ratio:.2f}" + (" **slower**" if b.slower else "")
        cells = [
            f"{b.bench}: {b.case}",
            b.compared_with,
            value_text(b.before, b.metric),
            value_text(b.after, b.metric),
            ratio,
            _pct(b.ratio_spread),
            _cold(b),
            b.timing,
        ]
    return "| " + " | ".join(c.replace("|", "\\|") for c in cells) + " |"


def markdown_table(record: Record) -> str:
    """The record's figures; ratio is after's speed over before's (above 1: faster)."""
    env = record.environment
    versions = ", ".join(
        f"{name} {getattr(env, name)}"
        for name in ("driver", "cuda", "torch", "triton")
        if getattr(env, name)
    )
    head = [
        f"Measured on {env.kind} ({versions}), {record.time[:10]}: unpatched (before) against "
        "patched (after), alternating rounds in one GPU session; ratio is after's speed over "
        "before's, spread the interquartile range of the per-round ratios.",
        "",
        "| case | compared with | before | after | ratio | spread | cold before / after "
        "| timing or why |",
        "|---|---|---|---|---|---|---|---|",
    ]
    return "\n".join([*head, *(_row(b) for b in record.bench)]) + "\n"
