"""How a patch's tests run: the runners that execute a ``TestJob`` (pytest in a subprocess, with
a JUnit report to read back), and what a run's output says about the environment it lacked.
The environment itself (GPU, capability, driver, versions) is ``environment``, re-exported here.

Runners sit behind ``Runner`` (``run(TestJob) -> JobResult``), so a backend that spreads jobs
over GPU hosts (Ray) can replace ``LocalRunner``; jobs and results are plain, picklable values.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from patchkit.verification.environment import (
    Environment,
    capability_text,
    parse_capability,
    probe_environment,
)

if TYPE_CHECKING:  # the JUnit reader's tools load when a report is read, not for a record
    import xml.etree.ElementTree as ET

__all__ = ["Environment", "capability_text", "parse_capability", "probe_environment"]


# -- running tests --------------------------------------------------------------------------

DEFAULT_TIMEOUT_S = 1800.0


@dataclass(frozen=True)
class TestJob:
    """One pytest run: some of one patch's tests, all with the same root and options."""

    patch_id: str
    nodes: tuple[str, ...]  # pytest node ids, relative to ``rootdir``
    rootdir: Path  # the set directory, or the tree root for upstream tests
    python: str  # the interpreter to run pytest with
    pythonpath: tuple[Path, ...]  # put first on sys.path: the patched tree
    noconftest: bool = False  # upstream conftests import too much
    gpu: bool = False  # needs a GPU host (for runners that place jobs)
    min_capability: tuple[int, int] | None = None
    timeout_s: float = DEFAULT_TIMEOUT_S


@dataclass(frozen=True)
class JobResult:
    returncode: int
    junit_xml: str | None  # the report pytest wrote; None: it wrote none
    output: str  # the tail of pytest's stdout and stderr
    duration_s: float
    error: str | None = None  # the run itself broke: timed out, interpreter missing


class Runner(Protocol):
    def run(self, job: TestJob) -> JobResult: ...


def pytest_argv(job: TestJob, junit: Path) -> list[str]:
    argv = [job.python, "-m", "pytest", "-p", "no:cacheprovider", "--rootdir", str(job.rootdir)]
    argv += [f"--junitxml={junit}", "-o", "junit_family=xunit1", "-q", "-rs"]
    return [*argv, *(["--noconftest"] if job.noconftest else []), *job.nodes]


def job_environ(job: TestJob, base: dict[str, str] | None = None) -> dict[str, str]:
    env = dict(os.environ if base is None else base)
    paths = [str(p) for p in job.pythonpath] + (
        [env["PYTHONPATH"]] if env.get("PYTHONPATH") else []
    )
    env["PYTHONPATH"] = os.pathsep.join(paths)
    env["PYTHONDONTWRITEBYTECODE"] = "1"  # leave no __pycache__ in the tree
    return env


def _tail(text: str | bytes | None, limit: int = 4000) -> str:
    if isinstance(text, bytes):
        text = text.decode(errors="replace")
    return (text or "")[-limit:]


@dataclass(frozen=True)
class LocalRunner:
    """Runs each job as a subprocess here; a timed-out job is killed with its whole group."""

    def run(self, job: TestJob) -> JobResult:
        with tempfile.TemporaryDirectory(prefix="patchkit-verify-") as tmp:
            junit = Path(tmp) / "junit.xml"
            start = time.monotonic()
            try:
                code, output, error = _run_group(pytest_argv(job, junit), job)
            except OSError as exc:
                return JobResult(-1, None, "", 0.0, f"cannot run {job.python}: {exc.strerror}")
            xml = junit.read_text() if junit.is_file() else None
            return JobResult(code, xml, output, time.monotonic() - start, error)


def _run_group(argv: list[str], job: TestJob) -> tuple[int, str, str | None]:
    proc = subprocess.Popen(
        argv,
        cwd=job.rootdir,
        env=job_environ(job),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    try:
        out, _ = proc.communicate(timeout=job.timeout_s)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        out, _ = proc.communicate()
        return -1, _tail(out), f"timed out after {job.timeout_s:.0f} s"
    return proc.returncode, _tail(out), None


@dataclass(frozen=True)
class CaseResult:
    node: str
    outcome: str  # "passed", "failed", "error", "skipped"
    message: str = ""


# -- reading the JUnit report -----------------------------------------------------------------

_IMPORT_SKIP = re.compile(r"could not import '([^']+)': (.*)", re.S)


def parse_junit(xml_text: str) -> list[CaseResult]:
    import xml.etree.ElementTree as ET

    return [_case(el) for el in ET.fromstring(xml_text).iter("testcase")]


def _case(el: ET.Element) -> CaseResult:
    node = junit_nodeid(el)
    for tag, outcome in (("failure", "failed"), ("error", "error"), ("skipped", "skipped")):
        child = el.find(tag)
        if child is not None:
            return CaseResult(node, outcome, _message(child))
    return CaseResult(node, "passed")


def _message(child: ET.Element) -> str:
    message, text = child.get("message", ""), (child.text or "").strip()
    if message == "collection skipped":  # text is the repr of (path, line, "Skipped: why")
        import ast

        try:
            why = ast.literal_eval(text)[2]
        except (ValueError, SyntaxError, IndexError, TypeError):
            return text
        return str(why).removeprefix("Skipped: ")
    return message or text


def junit_nodeid(el: ET.Element) -> str:
    """The pytest node id back from an xunit1 testcase (``file``, ``classname``, ``name``)."""
    file, classname, name = el.get("file", ""), el.get("classname", ""), el.get("name", "")
    if not classname:  # a collection report: the module itself
        return file or name
    module = re.sub(r"\.py$", "", file).replace("/", ".")
    rest = classname[len(module) :].lstrip(".") if file and classname.startswith(module) else ""
    return "::".join([file or classname, *(rest.split(".") if rest else []), name])


def skip_reason(message: str) -> str:
    """ "dependency missing: torch" for an importorskip; the skip message otherwise."""
    match = _IMPORT_SKIP.search(message)
    if not match:
        return message.strip() or "skipped"
    name, why = match.group(1), match.group(2).strip()
    plain = why in (f"No module named '{name}'", "")
    return f"dependency missing: {name}" + ("" if plain else f" ({why.splitlines()[0]})")


# What makes a test unable to run here, as opposed to a test that ran and failed: a module the
# tests import (or their conftest.py) is not installed for the interpreter, or there is no GPU.
_MISSING_MODULE = re.compile(r"(?:ModuleNotFoundError|ImportError): No module named '([\w.]+)'")
_NO_GPU = re.compile(
    r"Found no NVIDIA driver|no CUDA GPUs are available|CUDA driver initialization failed|"
    r"Torch not compiled with CUDA enabled|libcuda\.so[.\d]*: cannot open shared object file"
)


def environment_problem(output: str, errors: Sequence[str] = ()) -> str | None:
    """ "dependency missing: X" or "no GPU" when a collection error or a test's error shows the
    environment cannot run the tests at all; None when nothing says so."""
    for text in (*errors, output):
        missing = _MISSING_MODULE.search(text)
        if missing:
            return f"dependency missing: {missing.group(1).split('.')[0]}"
        if _NO_GPU.search(text):
            return "no GPU"
    return None
