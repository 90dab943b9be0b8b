"""Computed cells, kept so a cell already computed for the same patch bytes, release and engine
is never computed again: one small SQLite file in the cache, ``<cache>/matrix/cells.sqlite``
(key -> the cell's JSON). Readers and writers may run at once; a write is one transaction."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterable, Mapping
from pathlib import Path

from patchkit.cache import Cache
from patchkit.matrix.cells import CellValue

_SCHEMA = "CREATE TABLE IF NOT EXISTS cells (key TEXT PRIMARY KEY, value TEXT NOT NULL)"


class CellStore:
    def __init__(self, path: Path | None = None) -> None:
        self.path = path or Cache.current().matrix()
        self._db = sqlite3.connect(self.path, timeout=30)
        self._db.execute(_SCHEMA)

    def get_many(self, keys: Iterable[str]) -> dict[str, CellValue]:
        found = {}
        for key in keys:
            row = self._db.execute("SELECT value FROM cells WHERE key = ?", (key,)).fetchone()
            if row is not None:
                found[key] = CellValue.from_json(json.loads(row[0]))
        return found

    def put_many(self, cells: Mapping[str, CellValue]) -> None:
        rows = [(k, json.dumps(v.to_json(), sort_keys=True)) for k, v in cells.items()]
        with self._db:
            self._db.executemany("INSERT OR REPLACE INTO cells VALUES (?, ?)", rows)

    def close(self) -> None:
        self._db.close()


class MemoryStore(CellStore):
    """A store that forgets (``--no-reuse``, and tests)."""

    def __init__(self) -> None:
        self.path = Path(":memory:")
        self._db = sqlite3.connect(":memory:")
        self._db.execute(_SCHEMA)
