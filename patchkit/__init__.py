"""patchkit: keep downstream source patches for vLLM and FlashInfer alive.

The Python API is the verbs of the command line, as typed functions with keyword-only arguments
that return result values (``docs/api.md``)::

    import patchkit

    project = patchkit.load_project(Path("."))
    done = patchkit.apply(project=project, target="vllm")
    for result in done.report.results:
        print(result.patch_id, result.outcome.value)

Names are imported on first use, so ``import patchkit`` costs nothing a command does not need.
"""

from __future__ import annotations

import importlib

TYPE_CHECKING = False  # typing is not imported at run time: a warm run does without it
if TYPE_CHECKING:
    from typing import Any

__version__ = "0.1.0"

# public name -> "module:attribute"
_API = {
    # verbs
    "fetch": "patchkit.ops.fetch:fetch_target",
    "apply": "patchkit.ops.apply:apply_target",
    "status": "patchkit.ops.status:status_target",
    "reset": "patchkit.ops.reset:reset_target",
    "show": "patchkit.ops.show:show_patch",
    "record": "patchkit.ops.record:record_target",
    "verify": "patchkit.ops.verify:verify_target",
    "port": "patchkit.ops.port:port",
    "rebase": "patchkit.ops.rebase:rebase",
    "continue_rebase": "patchkit.ops.rebase:continue_rebase",
    "abort_rebase": "patchkit.ops.rebase:abort_rebase",
    "retire": "patchkit.ops.retire:retire",
    "export_pr": "patchkit.ops.export_pr:export_pr",
    "upstream_check": "patchkit.ops.upstream_check:upstream_check",
    "import_patches": "patchkit.ops.import_:import_patches",
    "export_series": "patchkit.ops.export_series:export_series_target",
    # the project and where to work
    "load_project": "patchkit.project.load:load_project",
    "Project": "patchkit.project.load:Project",
    "Where": "patchkit.ops.context:Where",
    # results
    "Outcome": "patchkit.outcome:Outcome",
    "PatchResult": "patchkit.outcome:PatchResult",
    "TargetApply": "patchkit.ops.apply:TargetApply",
    "ApplyReport": "patchkit.ops.apply_tree:ApplyReport",
    "StatusReport": "patchkit.ops.status:StatusReport",
    "ResetReport": "patchkit.workspace.reset:ResetReport",
    "RecordReport": "patchkit.ops.record:RecordReport",
    "PortReport": "patchkit.ops.port:PortReport",
    "RebaseReport": "patchkit.rebasing.report:RebaseReport",
    "RetireReport": "patchkit.ops.retire:RetireReport",
    "VerifyReport": "patchkit.verification.run:VerifyReport",
    "ExportReport": "patchkit.export.results:ExportReport",
    "UpstreamCheckReport": "patchkit.ops.upstream_check:UpstreamCheckReport",
    "ImportReport": "patchkit.ops.import_:ImportReport",
    "SeriesExport": "patchkit.ops.export_series:SeriesExport",
    # errors: one family, each with its exit code
    "PatchkitError": "patchkit.errors:PatchkitError",
    # writing rewrites
    "Rewrite": "patchkit.engine.rewrite.base:Rewrite",
}

__all__ = [
    "ApplyReport",
    "ExportReport",
    "ImportReport",
    "Outcome",
    "PatchResult",
    "PatchkitError",
    "PortReport",
    "Project",
    "RebaseReport",
    "RecordReport",
    "ResetReport",
    "RetireReport",
    "Rewrite",
    "SeriesExport",
    "StatusReport",
    "TargetApply",
    "UpstreamCheckReport",
    "VerifyReport",
    "Where",
    "__version__",
    "abort_rebase",
    "apply",
    "continue_rebase",
    "export_pr",
    "export_series",
    "fetch",
    "import_patches",
    "load_project",
    "port",
    "rebase",
    "record",
    "reset",
    "retire",
    "show",
    "status",
    "upstream_check",
    "verify",
]


def __getattr__(name: str) -> Any:
    spec = _API.get(name)
    if spec is None:
        raise AttributeError(f"module 'patchkit' has no attribute {name!r}")
    module, attribute = spec.split(":")
    value = getattr(importlib.import_module(module), attribute)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(__all__)


if TYPE_CHECKING:  # what type checkers and editors see
    from patchkit.engine.rewrite.base import Rewrite
    from patchkit.errors import PatchkitError
    from patchkit.export.results import ExportReport
    from patchkit.ops.apply import TargetApply
    from patchkit.ops.apply import apply_target as apply
    from patchkit.ops.apply_tree import ApplyReport
    from patchkit.ops.context import Where
    from patchkit.ops.export_pr import export_pr
    from patchkit.ops.export_series import SeriesExport
    from patchkit.ops.export_series import export_series_target as export_series
    from patchkit.ops.fetch import fetch_target as fetch
    from patchkit.ops.import_ import ImportReport, import_patches
    from patchkit.ops.port import PortReport, port
    from patchkit.ops.rebase import abort_rebase, continue_rebase, rebase
    from patchkit.ops.record import RecordReport
    from patchkit.ops.record import record_target as record
    from patchkit.ops.reset import reset_target as reset
    from patchkit.ops.retire import RetireReport, retire
    from patchkit.ops.show import show_patch as show
    from patchkit.ops.status import StatusReport
    from patchkit.ops.status import status_target as status
    from patchkit.ops.upstream_check import UpstreamCheckReport, upstream_check
    from patchkit.ops.verify import verify_target as verify
    from patchkit.outcome import Outcome, PatchResult
    from patchkit.project.load import Project, load_project
    from patchkit.rebasing.report import RebaseReport
    from patchkit.verification.run import VerifyReport
    from patchkit.workspace.reset import ResetReport
