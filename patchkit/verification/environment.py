"""The environment a patch's tests ran in, as recorded with each verification: GPU name and
compute capability, driver, CUDA, torch, triton, Python and platform, probed in the interpreter
the tests run in.

The probe runs ``python -c`` in that interpreter (torch, if importable, names the GPU and its
capability), then asks ``nvidia-smi`` for the driver, and for the GPU itself when torch cannot
see one. Nothing here raises for a missing GPU or tool: absence is a fact to record. Reading
records needs only this module, not the runners (``env``).
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from dataclasses import asdict, dataclass
from typing import Any

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
    match = re.fullmatch(r"\s*(\d{1,4})\.(\d{1,4})\s*", text) if isinstance(text, str) else None
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
