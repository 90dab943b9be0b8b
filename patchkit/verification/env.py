"""Where and how a patch's tests run: the environment (GPU name and compute capability, driver,
CUDA, torch, triton, Python and platform, probed in the interpreter the tests run in), and the
runners that execute a ``TestJob`` (pytest in a subprocess, with a JUnit report to read back).

The probe runs ``python -c`` in that interpreter (torch, if importable, names the GPU and its
capability), then asks ``nvidia-smi`` for the driver, and for the GPU itself when torch cannot
see one. Nothing here raises for a missing GPU or tool: absence is a fact to record.

Runners sit behind ``Runner`` (``run(TestJob) -> JobResult``), so a backend that spreads jobs
over GPU hosts (Ray) can replace ``LocalRunner``; jobs and results are plain, picklable values.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import tempfile
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:  # the JUnit reader's tools load when a report is read, not for a record
    import xml.etree.ElementTree as ET

PROBE = r"""
import json, platform
info = {"python": platform.python_version(), "platform": platform.platform()}
try:
    import torch
    info["torch"] = torch.__version__
    info["cuda"] = torch.version.cuda
    if torch.cuda.is_available():
        index = torch.cuda.current_device()
        info["gpu"] = torch.cuda.get_device_name(index)
        info["capability"] = "%d.%d" % torch.cuda.get_device_capability(index)
except Exception as exc:
    info["torch_error"] = "%s: %s" % (type(exc).__name__, exc)
try:
    import triton
    info["triton"] = triton.__version__
except Exception:
    pass
print(json.dumps(info))
"""
_SMI = ["--query-gpu=name,compute_cap,driver_version", "--format=csv,noheader"]


@dataclass(frozen=True)
class Environment:
    """One machine and software stack, as recorded with each verification."""

    python: str  # "3.12.3"
    platform: str  # platform.platform() of the interpreter's host
    gpu: str | None = None  # "NVIDIA H200"; None: no GPU visible
    capability: tuple[int, int] | None = None  # (9, 0)
    driver: str | None = None  # "580.159.04"
    cuda: str | None = None  # torch.version.cuda
    torch: str | None = None
    triton: str | None = None

    @property
    def kind(self) -> str:
        """What makes two runs comparable: the GPU and its capability, or "cpu"."""
        if self.gpu is None:
            return "cpu"
        return f"{self.gpu} (sm_{_cap_text(self.capability, '')})"

    def describe(self) -> str:
        parts = [self.kind if self.gpu else "no GPU", f"python {self.python}"]
        for name in ("driver", "cuda", "torch", "triton"):
            value = getattr(self, name)
            if value:
                parts.append(f"{name} {value}")
        return ", ".join(parts)

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        data["capability"] = _cap_text(self.capability) if self.capability else None
        return data

    @classmethod
    def from_json(cls, raw: dict[str, Any]) -> Environment:
        return cls(**{**raw, "capability": parse_capability(raw.get("capability"))})


def _cap_text(cap: tuple[int, int] | None, sep: str = ".") -> str:
    return "?" if cap is None else f"{cap[0]}{sep}{cap[1]}"


def capability_text(cap: tuple[int, int]) -> str:
    return _cap_text(cap)


def parse_capability(text: object) -> tuple[int, int] | None:
    match = re.fullmatch(r"\s*(\d+)\.(\d+)\s*", text) if isinstance(text, str) else None
    return (int(match.group(1)), int(match.group(2))) if match else None


def _run(argv: list[str], timeout: float) -> str | None:
    try:
        done = subprocess.run(argv, capture_output=True, text=True, timeout=timeout, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return done.stdout if done.returncode == 0 else None


def _python_facts(python: str) -> dict[str, Any]:
    out = _run([python, "-c", PROBE], timeout=120)
    if not out:
        return {}
    try:
        data = json.loads(out.strip().splitlines()[-1])
    except (json.JSONDecodeError, IndexError):
        return {}
    return data if isinstance(data, dict) else {}


def _smi_facts() -> dict[str, str]:
    smi = shutil.which("nvidia-smi")
    out = _run([smi, *_SMI], timeout=30) if smi else None
    if not out or not out.strip():
        return {}
    fields = [f.strip() for f in out.strip().splitlines()[0].split(",")]
    if len(fields) != 3:
        return {}
    return {"gpu": fields[0], "capability": fields[1], "driver": fields[2]}


def probe_environment(python: str) -> Environment:
    """The environment tests run in with ``python``: what its torch and nvidia-smi see."""
    facts, smi = _python_facts(python), _smi_facts()
    return Environment(
        python=str(facts.get("python", "unknown")),
        platform=str(facts.get("platform", "unknown")),
        gpu=facts.get("gpu") or smi.get("gpu"),
        capability=parse_capability(facts.get("capability") or smi.get("capability")),
        driver=smi.get("driver"),
        cuda=facts.get("cuda"),
        torch=facts.get("torch"),
        triton=facts.get("triton"),
    )


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
