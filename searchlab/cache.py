"""The measurement cache: (problem fingerprint, config) -> measurement, shared across runs.

A deterministic problem never measures the same configuration twice (DESIGN.md): the
fingerprint covers the problem's parameters, code version and device models, so a cache
file can be shared by many runs and problems safely. Hits are marked in the run records.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

from searchlab.records import Config, Measurement, measurement_from_dict, measurement_to_dict
from searchlab.store import connect

_SCHEMA = """
CREATE TABLE IF NOT EXISTS cache (
    fingerprint TEXT NOT NULL, config_key TEXT NOT NULL, measurement TEXT NOT NULL, created REAL NOT NULL,
    PRIMARY KEY (fingerprint, config_key));
"""


class SQLiteCache:
    def __init__(self, path: str | Path, fingerprint: str) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.fingerprint = fingerprint
        self._conn = connect(self.path)
        self._conn.executescript(_SCHEMA)
        self.hits = 0

    def get(self, config: Config) -> Measurement | None:
        row = self._conn.execute("SELECT measurement FROM cache WHERE fingerprint=? AND config_key=?",
                                 (self.fingerprint, config.key)).fetchone()
        if row is None:
            return None
        self.hits += 1
        return measurement_from_dict(json.loads(row[0]))

    def put(self, config: Config, measurement: Measurement) -> None:
        self._conn.execute("INSERT OR REPLACE INTO cache VALUES (?, ?, ?, ?)",
                           (self.fingerprint, config.key, json.dumps(measurement_to_dict(measurement), default=str),
                            time.time()))

    def __len__(self) -> int:
        return int(self._conn.execute("SELECT COUNT(*) FROM cache WHERE fingerprint=?", (self.fingerprint,)).fetchone()[0])

    def close(self) -> None:
        self._conn.close()
