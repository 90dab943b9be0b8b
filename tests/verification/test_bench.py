"""The benchmark harness on a CPU: the timing loop, the statistics and the regression flag with a
fake timer; the worker protocol; fallbacks where the unpatched tree cannot run a case; the
``[[bench]]`` metadata; and one end-to-end run through real worker processes on two trees."""

from __future__ import annotations

import io
import json
import re
import sys
import textwrap
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import pytest

from patchkit.errors import ConfigError
from patchkit.model import BenchCase, BenchFallback, BenchMetric, BenchSpec
from patchkit.project.benchspec import load_benches
from patchkit.verification.bench import (
    Plan,
    Rounds,
    SampleError,
    Setup,
    compare,
    in_metric,
    is_slower,
    quantile,
    relative_iqr,
    round_ratios,
)
from patchkit.verification.bench_run import compare_case, to_bench_record
from patchkit.verification.bench_worker import Worker, serve


class FakeTimer:
    """Hands out scripted times (ms per call), in order, and counts the calls it timed."""

    def __init__(self, times: list[float]) -> None:
        self.script = list(times)
        self.calls = 0

    def times(self, fn: Callable[[], object], reps: int) -> list[float]:
        found = []
        for _ in range(reps):
            fn()
            self.calls += 1
            found.append(self.script.pop(0) if len(self.script) > 1 else self.script[0])
        return found

    def sync(self) -> None:
        pass

    kind = "eager"

    def release(self) -> None:
        self.released = getattr(self, "released", 0) + 1

    def capture(self, fn: Callable[[], object]) -> tuple[Callable[[], object], str]:
        return fn, "graph"


class FakeSide:
    """A tree whose calls take ``ms`` each (a list: one value per round), logging the order."""

    def __init__(self, name: str, ms: list[float], log: list[str], fails: str = "") -> None:
        self.name, self.ms, self.log, self.fails = name, ms, log, fails
        self.args: dict[str, Any] = {}
        self.setups = 0

    def setup(self, args: Mapping[str, Any], warmup: int) -> Setup:
        self.args = dict(args)
        self.setups += 1
        if self.fails and not args.get("stand_in"):
            return Setup(False, error=self.fails)
        return Setup(
            True, label=f"{self.name} {sorted(args.items())}", work=64, cold_s=3.0, timing="graph"
        )

    def sample(self, reps: int) -> list[float]:
        self.log.append(self.name)
        value = self.ms[min(self.log.count(self.name) - 1, len(self.ms) - 1)]
        if value < 0:
            raise SampleError("the worker exited: CUDA error: an illegal memory access")
        return [value] * reps


PLAN = Plan(rounds=4, reps=3)


def _compare(before: FakeSide, after: FakeSide, plan: Plan = PLAN) -> Any:
    return compare(
        case="c",
        before=before,
        after=after,
        before_args={},
        after_args={},
        plan=plan,
        metric=BenchMetric.TIME,
        tolerance=0.05,
    )


# -- statistics -------------------------------------------------------------------------------


def test_quantiles_and_spread() -> None:
    assert quantile([4, 1, 3, 2], 0.5) == 2.5
    assert quantile([1, 2, 3, 4, 5], 0.25) == 2
    assert relative_iqr([1, 2, 3, 4, 5]) == pytest.approx(2 / 3)
    with pytest.raises(ValueError):
        quantile([], 0.5)


def test_ratio_is_after_speed_over_before_per_round() -> None:
    rounds = Rounds(before=((2.0, 2.0, 9.0), (4.0,)), after=((1.0,), (4.0, 4.0)))
    assert round_ratios(rounds) == [2.0, 1.0]


def test_metric_units() -> None:
    assert in_metric(2.0, None, BenchMetric.TIME) == 2.0
    assert in_metric(2.0, 64, BenchMetric.TOKENS) == 32_000.0  # 64 tokens per 2 ms
    with pytest.raises(ValueError, match="work"):
        in_metric(2.0, None, BenchMetric.BYTES)


@pytest.mark.parametrize(
    ("ratios", "tolerance", "slower"),
    [
        ([0.96] * 4, 0.05, False),
        ([0.95] * 4, 0.05, False),
        ([0.94] * 4, 0.05, True),
        ([1.5], 0.0, False),
        ([0.5, 0.6, 0.7, 1.0], 0.05, True),  # three rounds in four under 0.95
        ([0.5, 0.6, 1.0, 1.0], 0.05, False),  # a ratio that merely dips: not a regression
        ([], 0.05, False),
    ],
)
def test_regression_flag(ratios: list[float], tolerance: float, slower: bool) -> None:
    assert is_slower(ratios, tolerance) is slower


# -- the timing loop --------------------------------------------------------------------------


def test_alternates_before_and_after_and_stops_when_stable() -> None:
    log: list[str] = []
    before, after = FakeSide("before", [2.0], log), FakeSide("after", [1.0], log)
    result = _compare(before, after)
    assert before.setups == after.setups == 4  # the cold one, then once more each later round
    # ABBA..., the minimum rounds (the ratio is steady); each side set up again every round
    assert log == ["before", "after", "after", "before"] * 2
    assert result.status == "compared" and result.timing == "graph"
    assert result.ratio == 2.0 and result.ratio_spread == 0.0 and not result.slower
    assert result.before.value == 2.0 and result.after.value == 1.0
    assert result.before.samples == 12 and result.after.cold_s == 3.0


def test_a_case_that_cannot_be_set_up_again_fails() -> None:
    log: list[str] = []
    after = FakeSide("after", [1.0], log)
    before = FakeSide("before", [1.0], log)
    original = before.setup
    before.setup = lambda args, warmup: (  # type: ignore[method-assign]
        original(args, warmup) if before.setups == 0 else Setup(False, error="CUDA OOM")
    )
    result = _compare(before, after)
    assert result.status == "failed" and result.reason == "set up again: CUDA OOM"


def test_noisy_rounds_add_rounds_up_to_four_times_the_minimum() -> None:
    log: list[str] = []
    noisy = [1.0, 2.0, 1.0, 3.0, 1.0, 2.5] * 10
    result = _compare(FakeSide("before", noisy, log), FakeSide("after", [1.0], log))
    assert result.rounds == 16  # 4 rounds asked for, never stable: 4 x 4
    assert result.ratio_spread > 0.02


def test_a_slower_patch_is_flagged() -> None:
    log: list[str] = []
    result = _compare(FakeSide("before", [1.0], log), FakeSide("after", [1.25], log))
    assert result.ratio == pytest.approx(0.8)
    assert result.slower


def test_unpatched_that_cannot_run_the_case_is_not_compared() -> None:
    log: list[str] = []
    before = FakeSide("before", [1.0], log, fails="RuntimeError: Unsupported group_size: 16")
    result = _compare(before, FakeSide("after", [1.0], log))
    assert result.status == "not compared" and result.after_cold_s == 3.0
    assert result.reason == "unpatched: RuntimeError: Unsupported group_size: 16"
    assert log == []  # nothing timed


def test_patched_that_cannot_run_fails_and_a_dying_worker_fails() -> None:
    log: list[str] = []
    broken = FakeSide("after", [1.0], log, fails="ImportError: no module named flashinfer")
    assert _compare(FakeSide("before", [1.0], log), broken).status == "failed"
    dying = _compare(FakeSide("before", [1.0], log), FakeSide("after", [1.0, -1.0], log))
    assert dying.status == "failed" and "illegal memory access" in dying.reason


def test_fallbacks_stand_in_where_unpatched_cannot_run() -> None:
    spec = BenchSpec(
        name="decode",
        callable="tests/bench.py::decode",
        cases=(BenchCase("b64", (("batch", 64),)),),
        metric=BenchMetric.TOKENS,
        fallbacks=(BenchFallback("tensor cores", (("stand_in", True),)),),
        rounds=2,
        reps=2,
    )
    log: list[str] = []
    before = FakeSide("before", [4.0], log, fails="RuntimeError: Unsupported group_size: 16")
    after = FakeSide("after", [1.0], log)
    (found,) = compare_case(spec, spec.cases[0], before, after)
    assert found.status == "compared" and found.ratio == 4.0
    assert found.after.cold_s == 3.0 and found.after_cold_s == 3.0  # from the first setup
    assert found.compared_with == "unpatched, fallback: tensor cores"
    assert "Unsupported group_size: 16" in found.reason
    assert before.args == {"batch": 64, "stand_in": True} and after.args == {"batch": 64}
    record = to_bench_record(spec, found)
    assert record.before == 16_000.0 and record.after == 64_000.0  # tokens/s
    assert record.before_label.startswith("before") and not record.slower


# -- the worker -------------------------------------------------------------------------------


def _bench_file(tmp_path: Path, body: str) -> Path:
    path = tmp_path / "bench_x.py"
    path.write_text(textwrap.dedent(body))
    return path


def test_worker_answers_setup_and_sample_with_the_timer(tmp_path: Path) -> None:
    path = _bench_file(
        tmp_path,
        """
        def make(case):
            if case["group"] == 16:
                raise RuntimeError("Error in function at batch_decode.cu:63:\\nUnsupported group_size: 16")
            print("noise the worker must keep off its replies")
            return {"fn": lambda: None, "work": case["group"], "label": "ok"}
        """,
    )
    timer = FakeTimer([0.5, 0.25, 0.125])
    lines = [
        {"op": "setup", "file": str(path), "function": "make", "args": {"group": 16}},
        {"op": "sample", "reps": 2},
        {"op": "setup", "file": str(path), "function": "make", "args": {"group": 8}, "warmup": 4},
        {"op": "sample", "reps": 2},
        {"op": "quit"},
        {"op": "sample", "reps": 2},
    ]
    out = io.StringIO()
    serve(io.StringIO("".join(json.dumps(x) + "\n" for x in lines)), out, Worker(timer))
    replies = [json.loads(line) for line in out.getvalue().splitlines()]
    assert replies[0] == {"ok": False, "error": "RuntimeError: Unsupported group_size: 16"}
    assert replies[1] == {"ok": False, "error": "no case set up"}
    assert replies[2]["ok"] and replies[2]["work"] == 8 and replies[2]["label"] == "ok"
    assert replies[3] == {"ok": True, "times": [0.5, 0.25]}
    assert len(replies) == 4  # nothing after quit
    assert timer.calls == 2


def test_two_trees_through_real_worker_processes(tmp_path: Path) -> None:
    """End to end on the CPU (host clock): the tree first on the path is the one timed."""
    from patchkit.verification.bench_run import run_bench

    for name, ms in (("old", 8), ("new", 1)):
        (tmp_path / name / "speedy").mkdir(parents=True)
        (tmp_path / name / "speedy" / "__init__.py").write_text(
            f"import time\n\ndef work():\n    time.sleep({ms} / 1000)\n"
        )
    set_root = tmp_path / "set"
    (set_root / "tests").mkdir(parents=True)
    (set_root / "patchset.toml").write_text("")
    (set_root / "tests" / "bench_s.py").write_text(
        "def run(case):\n    import speedy\n    return {'fn': speedy.work, 'label': speedy.__file__}\n"
    )
    spec = BenchSpec(
        "sleep",
        "tests/bench_s.py::run",
        (BenchCase("one", ()),),
        gpu=False,
        rounds=2,
        reps=3,
        warmup=1,
    )
    meta = _meta(set_root)
    (record,) = run_bench(
        meta,
        spec,
        before_tree=tmp_path / "old",
        after_tree=tmp_path / "new",
        python=sys.executable,
        logs=tmp_path,
    )
    assert record.status == "compared", record.reason
    assert (
        str(tmp_path / "old") in record.before_label and str(tmp_path / "new") in record.after_label
    )
    # 8 ms against 1 ms; a loaded machine's sleeps overshoot, so only "clearly faster" is asked
    assert record.ratio is not None and record.ratio > 1.5 and not record.slower, record
    assert record.timing == "host"


def _meta(set_root: Path) -> Any:
    from patchkit.model import PatchKind, PatchMeta

    meta_file = set_root / "patches" / "p.toml"
    return PatchMeta("p", "t", "w", "x", PatchKind.DIFF, meta_file, meta_file, "set")


# -- metadata ---------------------------------------------------------------------------------


def test_bench_metadata_is_read_with_defaults() -> None:
    raw = {
        "bench": [
            {
                "name": "decode",
                "callable": "tests/bench_decode.py::decode",
                "metric": "tokens/s",
                "min_capability": "8.0",
                "cases": [{"batch": 1, "kv_len": 1024}, {"name": "long", "batch": 64}],
                "fallbacks": [{"label": "tensor cores", "args": {"tensor_cores": True}}],
            }
        ]
    }
    (spec,) = load_benches(raw, Path("p.toml"))
    assert spec.file == "tests/bench_decode.py" and spec.function == "decode"
    assert [c.name for c in spec.cases] == ["batch=1 kv_len=1024", "long"]
    assert spec.cases[1].as_dict() == {"batch": 64}
    assert spec.metric is BenchMetric.TOKENS and spec.tolerance == 0.05
    assert spec.min_capability == (8, 0) and spec.gpu
    assert spec.fallbacks == (BenchFallback("tensor cores", (("tensor_cores", True),)),)


@pytest.mark.parametrize(
    ("bench", "message"),
    [
        ({"cases": [{"a": 1}]}, "bench[0].callable must look like"),
        ({"callable": "../x.py::f", "cases": [{"a": 1}]}, "inside the set directory"),
        ({"callable": "t/b.py::f", "cases": []}, "bench[0].cases must be a non-empty list"),
        ({"callable": "t/b.py::f", "cases": [{"a": {"b": 1}}]}, "bench[0].cases[0].a must be"),
        ({"callable": "t/b.py::f", "cases": [{"a": 1}, {"a": 1}]}, "names a case twice"),
        ({"callable": "t/b.py::f", "cases": [{"a": 1}], "metric": "fps"}, "bench[0].metric"),
        ({"callable": "t/b.py::f", "cases": [{"a": 1}], "tolerance": 5}, "tolerance must be"),
        ({"callable": "t/b.py::f", "cases": [{"a": 1}], "reps": 0}, "bench[0].reps"),
        ({"callable": "t/b.py::f", "cases": [{"a": 1}], "fallbacks": [{}]}, "needs a label"),
        ({"callable": "t/b.py::f", "cases": [{"a": 1}], "speed": 1}, "unknown keys speed"),
    ],
)
def test_bench_metadata_errors_name_the_file_and_key(bench: dict[str, Any], message: str) -> None:
    with pytest.raises(ConfigError, match=r"p\.toml: .*" + re.escape(message)):
        load_benches({"bench": [bench]}, Path("p.toml"))


# -- records and status -----------------------------------------------------------------------


def _record(bench: tuple[Any, ...], gpu: str = "NVIDIA H100 80GB HBM3") -> Any:
    from patchkit.verification.env import Environment
    from patchkit.verification.records import Record

    env = Environment("3.12.3", "Linux", gpu=gpu, capability=(9, 0), torch="2.11.0")
    return Record(
        "p", "d", "x", "c", "1", None, "passed", "", (), env, "2026-11-23T10:00:00Z", 1.0, bench
    )


def test_figures_round_trip_and_the_latest_per_gpu_kind(tmp_path: Path) -> None:
    from patchkit.verification.records import BenchRecord, add_records, latest_bench, load_records

    fast = BenchRecord("decode", "b1", "tokens/s", "compared", before=1.0, after=2.0, ratio=2.0)
    slow = BenchRecord(
        "decode", "b1", "tokens/s", "compared", before=2.0, after=1.0, ratio=0.5, slower=True
    )
    old, new = _record((fast,)), _record((slow,))
    new = type(new)(**{**new.__dict__, "time": "2026-11-23T11:00:00Z"})
    plain = type(new)(**{**new.__dict__, "time": "2026-11-23T12:00:00Z", "bench": ()})
    add_records(tmp_path, [old, new, plain, _record((fast,), gpu="NVIDIA H200")])
    assert "bench" not in json.loads((tmp_path / "verification.json").read_text())[-1]
    assert {r.bench for r in load_records(tmp_path)} == {(fast,), (slow,), ()}
    latest = latest_bench(load_records(tmp_path))  # the newest *with* figures, per GPU kind
    assert latest["NVIDIA H100 80GB HBM3 (sm_90)"].bench == (slow,)
    assert latest["NVIDIA H200 (sm_90)"].bench == (fast,)


def test_summary_marks_slower_and_names_the_worst_case() -> None:
    from patchkit.verification.records import BenchRecord, bench_summary

    rows = (
        BenchRecord("decode", "b1", "tokens/s", "compared", ratio=1.5),
        BenchRecord(
            "decode",
            "b64",
            "tokens/s",
            "compared",
            "unpatched, fallback: tc",
            ratio=0.3,
            slower=True,
        ),
        BenchRecord("decode", "b8", "tokens/s", "not compared", reason="unpatched: boom"),
    )
    summary = bench_summary(_record(rows))
    assert summary.slower and summary.compared == 2
    assert summary.describe() == (
        "slower: x0.30 (decode: b64; unpatched, fallback: tc) to x1.50, "
        "2 cases on NVIDIA H100 80GB HBM3 (sm_90) 2026-11-23"
    )
    assert not bench_summary(_record(rows[:1])).slower


def test_markdown_table_names_the_device_and_what_was_compared() -> None:
    from patchkit.verification.bench_text import markdown_table, value_text
    from patchkit.verification.records import BenchRecord

    rows = (
        BenchRecord(
            "decode",
            "b64",
            "tokens/s",
            "compared",
            "unpatched, fallback: tensor cores",
            before=1_332_000.0,
            after=662_600.0,
            ratio=0.4975,
            ratio_spread=0.003,
            before_cold_s=22.8,
            after_cold_s=11.2,
            slower=True,
            timing="graph",
        ),
        BenchRecord(
            "moe",
            "sm121",
            "tokens/s",
            "not compared",
            after_cold_s=0.05,
            reason="unpatched: falls back to Marlin | vllm._C",
        ),
    )
    text = markdown_table(_record(rows))
    assert "Measured on NVIDIA H100 80GB HBM3 (sm_90) (torch 2.11.0), 2026-11-23" in text
    assert (
        "| decode: b64 | unpatched, fallback: tensor cores | 1.332 Mtokens/s | 662.6 ktokens/s "
        "| x0.50 **slower** | 0.3% | 22.8 s / 11.2 s | graph |"
    ) in text
    assert (
        "| moe: sm121 | not compared | - | - | - | - | - / 0.1 s | unpatched: falls back to Marlin \\| vllm._C |"
        in text
    )
    assert (
        value_text(0.01234, "time") == "0.01234 ms" and value_text(12.0, "bytes/s") == "12 bytes/s"
    )
