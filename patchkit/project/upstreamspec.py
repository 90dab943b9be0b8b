"""``[upstream]`` of a patch's metadata: the upstream pull request for the same fix, as the
upstream check or an import recorded it::

    [upstream]
    pr = "https://github.com/OWNER/REPO/pull/N"
    state = "open"  # none, open, merged or closed
    checked = "YYYY-MM-DD"  # when the state was last looked up
    author = "login"  # the PR's author
    ours = true  # whether that author is the exporter
    merge_commit = "<40 hex>"  # a merged PR's merge commit upstream
    released_in = "0.20.0"  # the first release that has it

    [[upstream.related]]  # other PRs in the same files and code
    pr = "https://github.com/OWNER/REPO/pull/M"
    state = "merged"
    why = "the same change"

Errors name the file and the key."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from patchkit.errors import ConfigError
from patchkit.model import PrState, RelatedPr, UpstreamPr
from patchkit.tomlschema import Table

DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")
PR_URL = re.compile(r"^https://github\.com/[\w.-]+/[\w.-]+/pull/\d+$")
COMMIT = re.compile(r"^[0-9a-f]{40}$")
VERSION = re.compile(r"^[0-9][0-9A-Za-z.+-]{0,63}$")
LOGIN = re.compile(r"^[A-Za-z0-9](?:[A-Za-z0-9-]{0,38})(?:\[bot\])?$")


def load_upstream(meta: Table) -> UpstreamPr:
    """``[upstream] pr = URL, state = "none|open|merged|closed", checked = "YYYY-MM-DD"``."""
    table, path = meta.table("upstream", what=" (pr, state, checked)").raw, meta.path
    keys = {"pr", "state", "checked", "author", "ours", "related", "merge_commit", "released_in"}
    unknown = sorted(set(table) - keys)
    if unknown:
        raise ConfigError(
            f"{path}: [upstream] has unknown keys {unknown}: use pr, state, checked, author, "
            "ours, related, merge_commit, released_in"
        )
    try:
        state = PrState(table.get("state", "none"))
    except ValueError:
        raise ConfigError(
            f"{path}: [upstream] state {table.get('state')!r} must be none, open, merged or closed"
        ) from None
    pr = table.get("pr") or None
    if pr is not None and not (isinstance(pr, str) and PR_URL.match(pr)):
        raise ConfigError(
            f"{path}: [upstream] pr {pr!r} must be a GitHub pull request URL "
            "(https://github.com/OWNER/REPO/pull/N)"
        )
    if state is not PrState.NONE and pr is None:
        raise ConfigError(f'{path}: [upstream] state = "{state.value}" needs pr = URL')
    checked = table.get("checked") or None
    if checked is not None and not (isinstance(checked, str) and DATE.match(checked)):
        raise ConfigError(f"{path}: [upstream] checked {checked!r} must be a date YYYY-MM-DD")
    author = table.get("author") or None
    if author is not None and not (isinstance(author, str) and LOGIN.match(author)):
        raise ConfigError(f"{path}: [upstream] author {author!r} must be a GitHub login")
    ours = table.get("ours")
    if ours is not None and not isinstance(ours, bool):
        raise ConfigError(f"{path}: [upstream] ours must be true or false")
    related = tuple(_related(item, path) for item in _items(table.get("related", []), path))
    return UpstreamPr(pr, state, checked, author, ours, related, *_merged(table, path))


def _merged(table: dict[str, Any], path: Path) -> tuple[str | None, str | None]:
    """``merge_commit`` (a full commit id) and ``released_in`` (a version) of a merged PR."""
    commit, release = table.get("merge_commit") or None, table.get("released_in") or None
    if commit is not None and not (isinstance(commit, str) and COMMIT.match(commit)):
        raise ConfigError(f"{path}: [upstream] merge_commit {commit!r} must be a commit id")
    if release is not None and not (isinstance(release, str) and VERSION.match(release)):
        raise ConfigError(f"{path}: [upstream] released_in {release!r} must be a version")
    return commit, release


def _items(value: object, path: Path) -> list[dict[str, Any]]:
    if not isinstance(value, list) or not all(isinstance(v, dict) for v in value):
        raise ConfigError(f"{path}: [upstream] related must be a list of tables {{pr, state, why}}")
    return value


def _related(item: dict[str, Any], path: Path) -> RelatedPr:
    """One ``[[upstream.related]]``: ``pr`` (URL), ``state`` (open|merged|closed), ``why``."""
    pr, why = item.get("pr"), item.get("why", "")
    state = item.get("state")
    if set(item) - {"pr", "state", "why"} or not isinstance(pr, str) or not PR_URL.match(pr):
        raise ConfigError(f"{path}: [upstream] related {item!r}: needs pr = URL, state, why")
    if state not in ("open", "merged", "closed", None) or not isinstance(why, str):
        raise ConfigError(f"{path}: [upstream] related {pr}: state must be open, merged or closed")
    return RelatedPr(pr, PrState(state or "none"), " ".join(why.split()))
