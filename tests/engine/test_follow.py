"""Following the definition, not the file: a hunk's function gone from its file (the file kept
or not, a module turned package) is found by name and body across the tree and merged scope
against scope; context lines upstream changed inside it next to the patch's own lines are
merged, not refused."""

from __future__ import annotations

from pathlib import Path

from patchkit.ops.port import port
from patchkit.outcome import Outcome
from testing.builders import Upstream, run_git
from tests.conftest import dedent

ROUTER = dedent(
    """
    class Router:
        def __init__(self, experts, top_k):
            self.experts = experts
            self.top_k = top_k
            self.gate = make_gate(experts)

        def route(self, x):
            scores = self.gate(x)
            weights, ids = scores.topk(self.top_k)
            return weights.softmax(-1), ids

        def describe(self):
            return f"router over {self.experts} experts, top {self.top_k}"
    """
)
EXPERTS = dedent(
    """
    class Experts:
        def forward(self, x):
            hidden = self.up(x)
            hidden = self.act(hidden)
            return self.down(hidden)
    """
)
PATCHED = EXPERTS.replace("hidden = self.act(hidden)", "hidden = self.act(hidden) * self.scale")


def test_a_module_turned_package_is_followed_to_the_file_its_class_went_to(
    tmp_path: Path,
) -> None:
    """moe.py became moe/ with one file per class; git pairs moe.py with moe/router.py (most
    alike), not where Experts went; upstream also renamed the callee on the line above."""
    up = Upstream(tmp_path / "up")
    module = "import torch\n\n\n" + ROUTER + "\n\n" + EXPERTS
    base = up.commit({"pkg/moe.py": module}, "base")
    patch = tmp_path / "scale.patch"
    patch.write_bytes(up.diff_of({"pkg/moe.py": module.replace(EXPERTS, PATCHED)}))
    run_git(up.path, "rm", "-q", "pkg/moe.py")
    moved = EXPERTS.replace("self.up(x)", "self.up_proj(x)")
    init = "from .experts import Experts\nfrom .router import Router\n"
    files = {"pkg/moe/__init__.py": init, "pkg/moe/router.py": "import torch\n\n\n" + ROUTER}
    up.commit(files | {"pkg/moe/experts.py": "import torch\n\n\n" + moved}, "split")

    report = port(patch_file=patch, base_commit=base, checkout=up.path, explain=True)

    assert report.outcome is Outcome.CARRIED, report.result.details
    assert (up.path / "pkg/moe/experts.py").read_text() == "import torch\n\n\n" + moved.replace(
        "hidden = self.act(hidden)", "hidden = self.act(hidden) * self.scale"
    )
    assert (up.path / "pkg/moe/router.py").read_text() == "import torch\n\n\n" + ROUTER
    (mark,) = report.result.placements
    assert (mark.path, mark.moved_from) == ("pkg/moe/experts.py", "pkg/moe.py")
    assert mark.scope == ("class Experts", "def forward")


UTIL = dedent(
    """
    import math


    def helper(values):
        return [v for v in values if v is not None]


    def compute(values, scale):
        kept = helper(values)
        total = math.fsum(kept)
        total = total * scale
        return total
    """
)


def test_a_function_moved_out_of_a_file_that_stays_is_found_in_its_new_file(
    tmp_path: Path,
) -> None:
    """compute moved to stats.py (util.py keeps helper); upstream also changed its signature
    and the line above the patch's line there: the merge of that scope takes both."""
    up = Upstream(tmp_path / "up")
    base = up.commit({"pkg/util.py": UTIL, "pkg/stats.py": "import math\n"}, "base")
    patch = tmp_path / "clamp.patch"
    fixed = UTIL.replace("total = total * scale", "total = min(total * scale, 1e9)")
    patch.write_bytes(up.diff_of({"pkg/util.py": fixed}))
    function = UTIL[UTIL.index("def compute") :]
    upstream = function.replace("math.fsum(kept)", "math.fsum(sorted(kept))").replace(
        "(values, scale)", "(values, scale, *, strict=False)"
    )
    stats = "import math\n\nfrom pkg.util import helper\n\n\n" + upstream
    up.commit({"pkg/util.py": UTIL.replace("\n\n" + function, ""), "pkg/stats.py": stats})

    report = port(patch_file=patch, base_commit=base, checkout=up.path, explain=True)

    assert report.outcome is Outcome.CARRIED, report.result.details
    assert (up.path / "pkg/stats.py").read_text() == stats.replace(
        "total = total * scale", "total = min(total * scale, 1e9)"
    )
    (mark,) = report.result.placements
    assert (mark.path, mark.moved_from) == ("pkg/stats.py", "pkg/util.py")


def test_a_moved_function_found_twice_alike_is_ambiguous(tmp_path: Path) -> None:
    up = Upstream(tmp_path / "up")
    base = up.commit({"pkg/util.py": UTIL}, "base")
    patch = tmp_path / "clamp.patch"
    fixed = UTIL.replace("total = total * scale", "total = min(total * scale, 1e9)")
    patch.write_bytes(up.diff_of({"pkg/util.py": fixed}))
    function = UTIL[UTIL.index("def compute") :].replace("fsum(kept)", "fsum(sorted(kept))")
    up.commit(
        {
            "pkg/util.py": UTIL[: UTIL.index("\n\ndef compute")] + "\n",
            "pkg/a.py": "import math\n\n\n" + function,
            "pkg/b.py": "import math\n\n\n" + function,
        }
    )

    report = port(patch_file=patch, base_commit=base, checkout=up.path)

    assert report.outcome is Outcome.AMBIGUOUS
    assert "pkg/a.py" in report.result.details[0].reason
    assert "pkg/b.py" in report.result.details[0].reason


APPLY = dedent(
    """
    class CtInt8:
        def apply(self, layer, x):
            from kernels import fused_experts

            return fused_experts(x, layer.w13, layer.w2)
    """
)


def test_a_look_alike_under_another_name_is_never_the_home_of_a_moved_method(
    tmp_path: Path,
) -> None:
    """ct_moe.py became ct_moe/; quark.py has a method alike CtInt8.apply under another class,
    and many files define ``apply``: the edit goes to CtInt8 where it moved, never to the
    look-alike the first files searched happen to hold."""
    up = Upstream(tmp_path / "up")
    quark = APPLY.replace("CtInt8", "QuarkInt8")
    others = {
        f"pkg/b{i:02}.py": f"class B{i}:\n    def apply(self, layer, x):\n        return x + {i}\n"
        for i in range(13)
    }
    module = ROUTER + "\n\n" + APPLY  # git pairs ct_moe.py with the bulk: ct_moe/router.py
    base = up.commit({"pkg/ct_moe.py": module, "pkg/a_quark.py": quark, **others}, "base")
    patch = tmp_path / "guard.patch"
    guarded = APPLY.replace("fused_experts\n", "fused_experts\n        assert x.is_contiguous()\n")
    patch.write_bytes(up.diff_of({"pkg/ct_moe.py": ROUTER + "\n\n" + guarded}))
    run_git(up.path, "rm", "-q", "pkg/ct_moe.py")
    moved = "import torch\n\n\n" + APPLY.replace("layer.w2)", "layer.w2, inplace=True)")
    split = {"pkg/ct_moe/__init__.py": "", "pkg/ct_moe/router.py": ROUTER}
    up.commit(split | {"pkg/ct_moe/int8.py": moved}, "split")

    report = port(patch_file=patch, base_commit=base, checkout=up.path)

    assert report.outcome is Outcome.CARRIED, report.result.details
    assert (up.path / "pkg/a_quark.py").read_text() == quark
    assert "assert x.is_contiguous()" in (up.path / "pkg/ct_moe/int8.py").read_text()
