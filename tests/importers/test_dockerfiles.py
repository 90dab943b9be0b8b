"""Build scripts as they come in vLLM container repositories (issue 26, the second collection):
a Dockerfile read as the shell it stands for (``RUN``, ``WORKDIR``, ``ARG``/``ENV``, ``COPY``
from the build context), ``bash -lc '...'`` scripts inside it, ``git clone --depth 1 --branch
REF URL`` then ``cd`` into the clone, ``pip install`` options that are no requirement, and
launch steps that change no file (``exec python3 -m vllm...``, ``docker build``) — each a patch
or a refusal naming its line, never run."""

from __future__ import annotations

from pathlib import Path

import tomlkit

from patchkit.importers.dockerfile import to_shell
from tests.importers.conftest import Releases3

DOCKERFILE = """\
# syntax=docker/dockerfile:1.7
FROM vllm/vllm-openai:v0.19.0
ARG SITE=/usr/local/lib/python3.12/dist-packages
ENV VLLM_DIR=${SITE}/vllm \\
    OTHER=1
# tune the helper for GB10
RUN --mount=type=cache,target=/root/.cache \\
    sed -i 's/return y \\* 2/return y * 3/' "$VLLM_DIR/util.py"
WORKDIR /workspace
COPY overlay/chat_template.jinja ${VLLM_DIR}/chat_template.jinja
COPY --from=builder /opt/wheels /wheels
RUN pip install --no-cache-dir -r /tmp/req.txt fastsafetensors==0.1.10 .
CMD ["vllm", "serve"]
"""


def _context(tmp_path: Path, dockerfile: str, files: dict[str, str]) -> Path:
    root = tmp_path / "image"
    for name, text in {"Dockerfile": dockerfile, **files}.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    return root / "Dockerfile"


def test_a_dockerfile_keeps_its_lines_as_shell() -> None:
    shell = to_shell(DOCKERFILE.encode()).decode()
    assert shell.count("\n") == DOCKERFILE.count("\n")
    lines = shell.splitlines()
    assert lines[1] == "# FROM vllm/vllm-openai:v0.19.0" and lines[2].startswith("SITE=")
    assert lines[3] == "export VLLM_DIR=${SITE}/vllm \\"
    assert lines[6] == "\\" and lines[7].lstrip().startswith("sed -i")  # --mount dropped
    assert lines[8] == "mkdir -p /workspace && cd /workspace"


def test_a_dockerfile_s_steps_become_patches_and_named_refusals(
    releases3: Releases3, tmp_path: Path
) -> None:
    source = _context(tmp_path, DOCKERFILE, {"overlay/chat_template.jinja": "{{ messages }}\n"})
    report = releases3.import_(source)
    by_files = {p.files: p for p in report.patches}
    assert set(by_files) == {("vllm/util.py",), ("vllm/chat_template.jinja",)}
    assert "+    return y * 3" in by_files[("vllm/util.py",)].diff.decode()
    assert all(p.outcome == "applied" and p.form == "container-mod" for p in report.patches)
    [refused] = report.patches[0].untranslated  # COPY from another image, by its line
    assert refused == "line 11: not translated: COPY --from=builder /opt/wheels /wheels"
    meta = tomlkit.parse(next((releases3.set_dir() / "patches").glob("*.toml")).read_text())
    assert meta.unwrap()["imported"]["fields"]["Requires"] == "fastsafetensors==0.1.10"


def test_bash_c_with_a_shallow_clone_then_the_target_s_own_script(
    releases3: Releases3, tmp_path: Path
) -> None:
    dockerfile = """\
FROM nvidia/cuda:12.9.1-devel
WORKDIR /opt
RUN bash -lc 'set -euo pipefail; \\
  git clone --depth 1 --branch "${VLLM_REF}" https://github.com/vllm-project/vllm.git; \\
  sed -i "s/return 2/return 3/" vllm/vllm/model.py'
WORKDIR /opt/vllm
RUN python use_existing_torch.py && pip install . --no-build-isolation
RUN docker build -t x . && exec python3 -m vllm.entrypoints.openai.api_server --port 8000
"""
    report = releases3.import_(_context(tmp_path, dockerfile, {}))
    [patch] = report.patches
    assert patch.files == ("vllm/model.py",) and "+        return 3" in patch.diff.decode()
    assert patch.untranslated == (
        "line 7: runs the target's own use_existing_torch.py, which import does not redo: "
        "python use_existing_torch.py",
    )


def test_a_build_script_that_changes_nothing_says_its_steps(
    releases3: Releases3, tmp_path: Path
) -> None:
    dockerfile = "FROM x\nRUN curl -sSf https://sh.rustup.rs | sh\nRUN pip freeze > /tmp/f\n"
    [patch] = releases3.import_(_context(tmp_path, dockerfile, {})).patches
    assert patch.refused and "makes no change import can read" in patch.message
    assert patch.untranslated == ("line 2: not translated: curl -sSf https://sh.rustup.rs | sh",)
