"""A patch set's ``[export]`` table (in ``patchsets/<set>/patchset.toml``): what every pull
request of the set says about how it was made.

```toml
[export]
# The statement vLLM's AGENTS.md asks of AI-assisted work, in the PR text as written here
# (one paragraph; "" or absent: no statement).
ai_assistance = "AI assistance was used: ..."
# Commit trailers added to each exported commit, before the sign-off ("Key: value").
trailers = ["Co-authored-by: Claude"]
```
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from patchkit.errors import ConfigError, shown
from patchkit.project.sets import MANIFEST
from patchkit.tomlread import read_toml

_TRAILER = re.compile(r"^[A-Za-z][A-Za-z-]*: \S.*$")
KEYS = ("ai_assistance", "trailers")


@dataclass(frozen=True)
class ExportSettings:
    ai_assistance: str = ""  # the statement on AI assistance; "" when the set gives none
    trailers: tuple[str, ...] = ()  # "Co-authored-by: Claude"


def load_settings(set_root: Path) -> ExportSettings:
    """The ``[export]`` table of the set at ``set_root`` (defaults when it has none)."""
    manifest = set_root / MANIFEST
    table = read_toml(manifest).get("export", {})
    if not isinstance(table, dict):
        raise ConfigError(f"{manifest}: [export] must be a table ({', '.join(KEYS)})")
    unknown = sorted(set(table) - set(KEYS))
    if unknown:
        raise ConfigError(f"{manifest}: [export] has unknown keys {unknown}: use {', '.join(KEYS)}")
    statement = table.get("ai_assistance", "")
    if not isinstance(statement, str):
        raise ConfigError(f"{manifest}: [export] ai_assistance must be a string")
    trailers = table.get("trailers", [])
    bad = [t for t in trailers if not isinstance(t, str) or not _TRAILER.match(t)]
    if not isinstance(trailers, list) or bad:
        raise ConfigError(
            f"{manifest}: [export] trailers must be a list of 'Key: value' lines "
            f"(got {shown(bad or trailers)})"
        )
    return ExportSettings(" ".join(statement.split()), tuple(trailers))
