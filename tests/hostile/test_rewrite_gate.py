"""A rewrite module from a patch set is checked as text before anything of it runs: one that
imports ``os``, calls ``__import__``/``eval``/``open``, climbs dunder attributes or frames,
imports a private part of libcst or patchkit, or hides code in a string annotation is refused
(a failed patch naming the file and line; exit 6) and the planted command never runs."""

from __future__ import annotations

from pathlib import Path

import pytest

from patchkit.engine.rewrite.load import load_rewrites
from patchkit.errors import ConfigError
from testing.builders import Scenario
from tests.hostile.common import run

HEAD = "from __future__ import annotations\nimport libcst as cst\n"
HEAD += "from patchkit.engine.rewrite import Rewrite\n"
CLASS = "class R(Rewrite):\n    path = 'm.py'\n    anchors = {'f': 1}\n"


def evil(marker: Path) -> dict[str, str]:
    touch = f"touch {marker}"
    return {
        "import os": f"import os\nos.system({touch!r})\n",
        "__import__": f"__import__('os').system({touch!r})\n",
        "from-import subprocess": f"from subprocess import run\nrun(['sh', '-c', {touch!r}])\n",
        "eval": f"eval(\"__import__('os').system({touch!r})\")\n",
        "exec in a method": CLASS + f"    def leave_Name(self, o, u):\n        exec({touch!r})\n",
        "open": f"open({str(marker)!r}, 'w').write('x')\n",
        "getattr": "getattr(cst, 'tool')\n",
        "dunder climb": "().__class__.__bases__[0].__subclasses__()\n",
        "frame globals": "g = (x for x in ())\nb = g.gi_frame.f_globals\n",
        "module attribute": "import typing\ntyping.sys.modules['os'].system('true')\n",
        "denied typing name": "from typing import get_type_hints\n",
        "libcst submodule": "import libcst.tool\n",
        "private rewrite module": "from patchkit.engine.rewrite import run\n",
        "relative import": "from . import x\n",
        "module passed around": "c = cst\n",
        "string annotation": CLASS
        + "    def f(self, x: \"__import__('os')\") -> None:\n        pass\n",
        "match attribute": "match 1:\n    case int(__class__=c):\n        pass\n",
        "print to the terminal": "print('\\x1b]0;owned\\x07')\n",
        "__builtins__": "__builtins__['exec']('x = 1')\n",
        "forward ref evaluated": "import typing\ntyping.get_args(typing.Optional["
        f"\"__import__('os').system({touch!r})\"])[0]._evaluate({{}}, {{}}, frozenset())\n",
        "singledispatch register": "import functools\nimport typing\ndef f(x): pass\n"
        f"def g(x: typing.List[\"__import__('os').system({touch!r})\"]): pass\n"
        "functools.singledispatch(f).register(g)\n",
        "private attribute": "x = cst.Module([])._private\n",
        "string in a subscript": "x = {'a': 1}['a']\n",
        "dunder method": CLASS + "    def __exit__(self, *a):\n        return True\n",
        "bare except": "try:\n    pass\nexcept:\n    pass\n",
        "except BaseException": "try:\n    pass\nexcept BaseException:\n    pass\n",
        "except a tuple": "try:\n    pass\nexcept (ValueError, SystemExit):\n    pass\n",
        "names KeyboardInterrupt": "E = KeyboardInterrupt\n",
    }


@pytest.mark.parametrize("case", list(evil(Path("/m"))))
def test_a_rewrite_that_reaches_for_code_is_refused_before_it_runs(
    tmp_path: Path, case: str
) -> None:
    marker = tmp_path / "PLANTED-COMMAND-RAN"
    module = tmp_path / "r1.py"
    module.write_text(
        HEAD + evil(marker)[case] + ("" if "class R" in evil(marker)[case] else CLASS)
    )
    with pytest.raises(ConfigError, match=r"r1\.py: line \d+: .*the rewrite was not run"):
        load_rewrites(module)
    assert not marker.exists()


def test_the_cli_reports_the_refusal_as_a_failed_patch_and_runs_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    s = Scenario(tmp_path / "work", {"m.py": "def f():\n    return 1\n"})
    marker = tmp_path / "PLANTED-COMMAND-RAN"
    s.project.add_rewrite("r1", HEAD + f"__import__('os').system('touch {marker}')\n" + CLASS)
    assert run(s, "apply") == 6
    assert run(s, "status") in (0, 2, 6)
    said = capsys.readouterr()
    assert "r1.py: line 4: it names '__import__'" in said.out + said.err
    assert not marker.exists()


def test_the_shipped_rewrites_pass_the_gate() -> None:
    root = Path(__file__).resolve().parents[2] / "patchsets"
    modules = sorted(root.glob("*/patches/*.py"))
    assert modules
    for module in modules:
        assert load_rewrites(module), module
