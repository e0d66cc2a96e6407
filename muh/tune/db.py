"""The results database: every trial of every tuning run, in SQLite (one file, resumable).

A trial is keyed by what determines its outcome: the spec and algorithm, the element type, the
compiled kernel (``kernel`` = hash of the effective policy and of the rendered kernel source), the
base policy it was compared with, the machine fingerprint (GPU name, driver, toolkit) and the muh
version. Re-running an identical variant reads its row (a cache hit); an interrupted run finds its
rows and continues; adding values to a space adds rows and leaves old ones valid.
Writes are committed one trial at a time, so a crash or Ctrl-C loses at most the trial in flight.
"""

from __future__ import annotations

import json
import sqlite3
import time
from dataclasses import dataclass, field
from pathlib import Path

from muh.tune.measure import Result

SCHEMA_VERSION = 2

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS sessions (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  started TEXT NOT NULL, finished TEXT, status TEXT NOT NULL DEFAULT 'running',
  args TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS trials (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  spec TEXT NOT NULL, algorithm TEXT NOT NULL, dtype TEXT NOT NULL,
  variant TEXT NOT NULL, kernel TEXT NOT NULL, base TEXT NOT NULL,
  fingerprint TEXT NOT NULL, gpu TEXT NOT NULL, driver TEXT NOT NULL, toolkit TEXT NOT NULL,
  muh_version TEXT NOT NULL,
  phase TEXT NOT NULL DEFAULT 'search', round INTEGER NOT NULL DEFAULT 0,
  status TEXT NOT NULL, detail TEXT NOT NULL DEFAULT '',
  sizes TEXT NOT NULL DEFAULT '[]', variant_ns TEXT NOT NULL DEFAULT '[]', base_ns TEXT NOT NULL DEFAULT '[]',
  samples INTEGER NOT NULL DEFAULT 0, device TEXT NOT NULL DEFAULT '',
  score REAL, min REAL, mean REAL, max REAL,
  session INTEGER, created TEXT NOT NULL,
  UNIQUE (spec, algorithm, dtype, kernel, base, fingerprint, muh_version, phase, round)
);
CREATE INDEX IF NOT EXISTS trials_run ON trials (spec, algorithm, dtype, fingerprint, muh_version);
"""


@dataclass(frozen=True)
class RunKey:
    """What every trial of one `muh tune` invocation shares."""

    spec: str
    algorithm: str
    dtype: str
    base: str  # label of the base policy's kernel key
    fingerprint: str
    gpu: str
    driver: str
    toolkit: str
    muh_version: str


@dataclass
class Trial(Result):
    """One stored trial: a variant's measured ``Result`` with the variant and kernel it measured, its
    score against the base (``stats.score``; none unless it ran ok), the phase and round of the run, and
    the GPU that measured it."""

    variant: str = field(kw_only=True)
    kernel: str = field(kw_only=True)
    score: float | None = field(default=None, kw_only=True)
    min: float | None = field(default=None, kw_only=True)
    mean: float | None = field(default=None, kw_only=True)
    max: float | None = field(default=None, kw_only=True)
    phase: str = field(default="search", kw_only=True)
    round: int = field(default=0, kw_only=True)
    device: str = field(default="", kw_only=True)
    """The GPU that measured this trial (name and UUID): with several GPUs, every trial says which one."""


def _now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


class TuneDB:
    def __init__(self, path: str | Path):
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.conn = sqlite3.connect(str(self.path), timeout=30)
        self.conn.execute("PRAGMA journal_mode=WAL")
        self.conn.executescript(_SCHEMA)
        got = self.conn.execute("SELECT value FROM meta WHERE key='schema'").fetchone()
        if got is None:
            self.conn.execute("INSERT INTO meta VALUES ('schema', ?)", (str(SCHEMA_VERSION),))
            self.conn.commit()
        elif int(got[0]) == 1:  # version 1 had no per-trial GPU: add it, keep every trial
            self.conn.execute("ALTER TABLE trials ADD COLUMN device TEXT NOT NULL DEFAULT ''")
            self.conn.execute("UPDATE meta SET value=? WHERE key='schema'", (str(SCHEMA_VERSION),))
            self.conn.commit()
        elif int(got[0]) != SCHEMA_VERSION:
            raise ValueError(f"{self.path}: results database schema {got[0]}, this muh reads {SCHEMA_VERSION}")

    def close(self) -> None:
        self.conn.close()

    # sessions ------------------------------------------------------------------------------------
    def start_session(self, args: dict) -> int:
        cur = self.conn.execute(
            "INSERT INTO sessions (started, args) VALUES (?, ?)", (_now(), json.dumps(args, sort_keys=True))
        )
        self.conn.commit()
        return int(cur.lastrowid)

    def end_session(self, sid: int, status: str) -> None:
        self.conn.execute("UPDATE sessions SET finished=?, status=? WHERE id=?", (_now(), status, sid))
        self.conn.commit()

    # trials --------------------------------------------------------------------------------------
    def put(self, key: RunKey, t: Trial, session: int | None = None) -> None:
        self.conn.execute(
            """INSERT OR REPLACE INTO trials (spec, algorithm, dtype, variant, kernel, base, fingerprint, gpu, driver,
               toolkit, muh_version, phase, round, status, detail, sizes, variant_ns, base_ns, samples, score, min,
               mean, max, session, created, device) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)""",
            (
                key.spec,
                key.algorithm,
                key.dtype,
                t.variant,
                t.kernel,
                key.base,
                key.fingerprint,
                key.gpu,
                key.driver,
                key.toolkit,
                key.muh_version,
                t.phase,
                t.round,
                t.status,
                t.detail,
                json.dumps(t.sizes),
                json.dumps(t.variant_ns),
                json.dumps(t.base_ns),
                t.samples,
                t.score,
                t.min,
                t.mean,
                t.max,
                session,
                _now(),
                t.device,
            ),
        )
        self.conn.commit()

    def get(self, key: RunKey, kernel: str, phase: str = "search", round: int = 0) -> Trial | None:
        row = self.conn.execute(
            f"SELECT {_COLS} FROM trials WHERE spec=? AND algorithm=? AND dtype=? AND kernel=? AND base=? AND "
            f"fingerprint=? "
            "AND muh_version=? AND phase=? AND round=?",
            (key.spec, key.algorithm, key.dtype, kernel, key.base, key.fingerprint, key.muh_version, phase, round),
        ).fetchone()
        return _trial(row) if row else None

    def trials(self, key: RunKey, phase: str = "search") -> list[Trial]:
        rows = self.conn.execute(
            f"SELECT {_COLS} FROM trials WHERE spec=? AND algorithm=? AND dtype=? AND base=? AND fingerprint=? "
            "AND muh_version=? AND phase=? ORDER BY id",
            (key.spec, key.algorithm, key.dtype, key.base, key.fingerprint, key.muh_version, phase),
        ).fetchall()
        return [_trial(r) for r in rows]

    def count(self) -> int:
        return int(self.conn.execute("SELECT COUNT(*) FROM trials").fetchone()[0])


_COLS = (
    "variant, kernel, status, detail, sizes, variant_ns, base_ns, samples, score, min, mean, max, phase, round, device"
)


def _trial(row) -> Trial:
    return Trial(
        row[2],
        row[3],
        json.loads(row[4]),
        json.loads(row[5]),
        json.loads(row[6]),
        row[7],
        variant=row[0],
        kernel=row[1],
        score=row[8],
        min=row[9],
        mean=row[10],
        max=row[11],
        phase=row[12],
        round=row[13],
        device=row[14],
    )
